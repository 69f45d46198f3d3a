"""Listing 1 of the paper (Section 3.2, page 6), transcribed line by line, Python semantics kept.

The package's own functions (``theory.functions``) follow Definitions F.1-F.2; these keep what
the listing's Python does, so claims can say where the two part:

* ``index``: ``seq[n - i]`` with ``n - i < 0`` is Python's negative index, the token
  ``i - n`` places from the END of the sequence (Definition F.1 has no sigma_(j-i) there);
* ``retrieval``: scans ``range(n)``, strictly earlier positions, and takes the FIRST match
  (``break``), so it answers on every input, proper or not (Definition F.2 asks one matching
  token at positions <= j, else Retrieval is undefined).

Tokens as in ``theory.functions``: an integer token is an int or a decimal string; a pair is
a 2-tuple or a string (left = first character, right = the rest).
"""

from __future__ import annotations

from theory.functions import int_value, is_integer_token, split_pair

__all__ = ["index", "retrieval"]


def index(seq) -> list:
    """Listing 1's ``index``: for n in range(len(seq)): if is_number(seq[n]): i = seq[n];
    if is_letter(seq[n - i]): out[n] = seq[n - i]."""
    seq = list(seq)
    out = list(seq)
    for n in range(len(seq)):
        if is_integer_token(seq[n]):
            i = int_value(seq[n])
            if not is_integer_token(seq[n - i]):  # Python: n - i < 0 reads from the end
                out[n] = seq[n - i]
    return out


def retrieval(seq) -> list:
    """Listing 1's ``retrieval``: for n: if is_letter(seq[n]) (a letter-letter pair): for i in
    range(n): if seq[i][0] == seq[n][1]: out[n] = seq[i]; break."""
    seq = list(seq)
    pairs = [split_pair(x, j) for j, x in enumerate(seq)]
    out = list(seq)
    for n in range(len(seq)):
        if not is_integer_token(pairs[n][1]):
            for i in range(n):
                if pairs[i][0] == pairs[n][1]:
                    out[n] = seq[i]
                    break
    return out
