"""The Index, Retrieval and Reflexive functions (Definitions F.1-F.3, Listing 1)
and the multi-hop solvers of the number and letter tasks (Appendix B).

Tokens are plain Python values, so any alphabet works:

* Number task / Index: a token is an *integer* when it is an ``int`` or a string
  of decimal digits (``"7"``, ``"12"``); anything else is a symbol of ALPH
  (``"C"``, ``"aa"``).
* Letter task / Retrieval: a token is a pair ``(left, right)``: either a
  2-tuple or a string read as its first character and the rest (``"C2"`` is
  ``("C", "2")``, ``"a10"`` is ``("a", "10")``).  The right part decides the kind:
  integer (``"C2"``, in ALPH x INT, answered by itself) or symbol (``"FA"``, in
  ALPH x ALPH, a pointer to the token whose left part is ``A``).

Positions in error messages are 0-based, as in the paper's figures.

Two readings of the paper differ and we follow the Definition:
* Definition F.2 searches ``k <= j`` (a token may match itself, e.g. ``aa``);
  Listing 1 scans ``range(n)`` (strictly earlier).  They differ only on tokens
  whose two letters are equal.
* Listing 1 reads ``seq[n - i]`` even when ``n - i < 0`` (Python then wraps
  around to the end).  Definition F.1 asks only n > m and says "sigma_(j-i) if it is a
  letter, sigma_j otherwise": read literally, an integer that points before the start has no
  sigma_(j-i) in ALPH, so it stays itself.  ``index`` raises there by default (the package's
  reading: valid inputs have every integer pointing inside, as the task data do);
  ``index(seq, literal=True)`` is the literal reading (claims C4-index and C4-index-literal).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "is_integer_token",
    "split_pair",
    "index",
    "retrieval",
    "reflexive",
    "iterate",
    "solve_number",
    "solve_letter",
]


def is_integer_token(token) -> bool:
    """True for INT tokens (an ``int`` or a decimal string); False for symbols."""
    kind = type(token)  # the two common exact types first (millions of calls in the brute forces)
    if kind is str:
        return token.isascii() and token.isdigit()
    if kind is int:
        return True
    if isinstance(token, bool):
        return False
    if isinstance(token, int):
        return True
    return isinstance(token, str) and token.isascii() and token.isdigit()


def int_value(token) -> int:
    return token if isinstance(token, int) else int(token)


def split_pair(token, position: int | None = None):
    """A letter-task token as ``(left, right)``."""
    if isinstance(token, tuple) and len(token) == 2:
        return token
    if isinstance(token, str) and len(token) >= 2:
        return token[0], token[1:]
    where = "" if position is None else f" at position {position}"
    raise ValueError(
        f"token {token!r}{where} is not a pair: expected a 2-tuple or a string of "
        f"at least 2 characters (left symbol, then right symbol or integer)"
    )


def _check_nonempty(seq) -> list:
    if isinstance(seq, str):
        raise ValueError("expected a sequence of tokens, got one string; split it first (e.g. s.split())")
    seq = list(seq)
    if not seq:
        raise ValueError("the sequence is empty: the functions are defined for length n >= 1")
    return seq


def _index_target(seq: list, position: int, literal: bool = False) -> int | None:
    """Where the integer at ``position`` points, or a ValueError naming why it cannot
    (``literal``: None before the start instead of an error)."""
    offset = int_value(seq[position])
    if offset < 1:
        raise ValueError(
            f"integer {seq[position]!r} at position {position} is not in INT = [m]: offsets must be >= 1"
        )
    target = position - offset
    if target < 0 and literal:
        return None
    if target < 0:
        raise ValueError(
            f"integer {seq[position]!r} at position {position} points to position "
            f"{target}, before the start of the sequence (allowed offsets: 1..{position})"
        )
    return target


def index(seq: Sequence, literal: bool = False) -> list:
    """Selective Index (Definition F.1), applied at every position simultaneously.

    An integer ``i`` at position ``j`` becomes ``seq[j - i]`` when that token is a
    symbol of ALPH and stays ``i`` otherwise; symbols map to themselves.  An integer
    pointing before the start raises ValueError, unless ``literal`` (F.1 read literally:
    there is no letter there, so it stays ``i``).
    """
    seq = _check_nonempty(seq)
    out = list(seq)
    for j, token in enumerate(seq):
        if is_integer_token(token):
            k = _index_target(seq, j, literal)
            if k is not None and not is_integer_token(seq[k]):
                out[j] = seq[k]
    return out


def retrieval_match(seq: list, pairs: list, j: int):
    """The token ``seq[k]``, ``k <= j``, whose left part equals ``pairs[j]``'s right part."""
    wanted = pairs[j][1]
    matches = [k for k in range(j + 1) if pairs[k][0] == wanted]
    if not matches:
        raise ValueError(
            f"token {seq[j]!r} at position {j} has no match: no token at positions "
            f"0..{j} starts with {wanted!r}"
        )
    distinct = {seq[k] for k in matches}
    if len(distinct) > 1:
        shown = ", ".join(f"{seq[k]!r}@{k}" for k in matches)
        raise ValueError(
            f"the sequence is not proper at position {j}: token {seq[j]!r} matches different tokens {shown}"
        )
    return seq[matches[0]]


def retrieval(seq: Sequence) -> list:
    """Retrieval (Definition F.2): each ALPH x ALPH token becomes the token at
    ``k <= j`` whose left symbol equals its right symbol; ALPH x INT tokens stay.

    Raises ValueError on inputs that are not proper (no match, or two different
    matching tokens).
    """
    seq = _check_nonempty(seq)
    pairs = [split_pair(token, j) for j, token in enumerate(seq)]
    out = list(seq)
    for j, (_, right) in enumerate(pairs):
        if not is_integer_token(right):
            out[j] = retrieval_match(seq, pairs, j)
    return out


def reflexive(seq: Sequence) -> list:
    """Reflexive (Definition F.3): the identity."""
    return list(_check_nonempty(seq))


def iterate(function, seq: Sequence, times: int) -> list:
    """``function`` applied ``times`` times (the depth rows of Figures 3C/3D)."""
    if times < 0:
        raise ValueError(f"times must be >= 0, got {times}")
    seq = _check_nonempty(seq)
    for _ in range(times):
        seq = function(seq)
    return seq


def solve_number(tokens: Sequence) -> tuple:
    """Answer and hop count of a number-task input (Appendix B.1).

    Starting from the query (the last token, an integer), hop back by the integer
    found at each position until a symbol is reached: that symbol is the answer,
    the number of jumps is the hop count.  Equals ``index`` applied ``hops`` times,
    read at the last position.
    """
    seq = _check_nonempty(tokens)
    position = len(seq) - 1
    if not is_integer_token(seq[position]):
        raise ValueError(
            f"the query {seq[position]!r} at position {position} is not an integer: "
            f"number-task queries are in INT = [m]"
        )
    hops = 0
    while is_integer_token(seq[position]):
        position = _index_target(seq, position)
        hops += 1
    return seq[position], hops


def solve_letter(tokens: Sequence) -> tuple:
    """Answer and hop count of a letter-task input (Appendix B.2).

    From the query (an ALPH x ALPH token), move to the token whose left symbol
    equals the current right symbol, until an ALPH x INT token is reached.
    Only the path is required to be unique: distractors off the path may repeat.
    """
    seq = _check_nonempty(tokens)
    pairs = [split_pair(token, j) for j, token in enumerate(seq)]
    position = len(seq) - 1
    if is_integer_token(pairs[position][1]):
        raise ValueError(
            f"the query {seq[position]!r} at position {position} is not a letter-letter "
            f"token: letter-task queries are in ALPH x ALPH"
        )
    hops = 0
    visited = set()
    while not is_integer_token(pairs[position][1]):
        if position in visited:
            raise ValueError(
                f"the chain from the query returns to position {position} "
                f"({seq[position]!r}): it never reaches an ALPH x INT token"
            )
        visited.add(position)
        answer = retrieval_match(seq, pairs, position)
        position = max(k for k in range(position + 1) if seq[k] == answer)
        hops += 1
    return seq[position], hops
