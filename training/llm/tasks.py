"""The 1-hop task variants put to frontier LLMs (Section 3.7, Appendix H, Table 2).

A target window of ``target_window`` tokens and one query token at the end:

* number: the window holds single letters a..z; the query is an integer q in
  1..target_window; the answer is the token q positions left of the query.
* letter: the window holds letter+digit tokens (letters a..z, digits 1..9, as in
  Table 2's examples such as ``w9 t7 l5 ... gk``, rather than the a..h / 1..8 of the
  trained task); the query is a pair Q1 Q2 and the answer is the window token whose
  first character is Q2.  Only the answer's first letter is made unique in the
  window; other letters may repeat (Table 2's examples repeat them too, e.g. ``l5 ...
  l6``), which is also the only option once the window exceeds 26 tokens.  Q1 is
  any letter other than Q2 (Table 2: ``gk`` with ``g1`` in the window; a query Q2 Q2
  would match itself).

Answer positions are uniform over the window.  The paper does not say how the
sequences were drawn beyond this; these choices follow its examples.
"""

from __future__ import annotations

import string

import numpy as np

LLM_TARGET_WINDOWS = (12, 16, 24, 32, 48, 64, 80, 100, 150, 200, 300)  # Appendix H
LLM_SEEDS = (0, 1, 2, 3, 4)  # "using the run number as the random seed"; the numbering base is not stated
_LETTERS = np.array(list(string.ascii_lowercase))
_DIGITS = np.array([str(d) for d in range(1, 10)])
MAX_LLM_WINDOW = 100_000


def one_hop_llm(task: str, target_window: int, count: int, seed: int) -> tuple[list[list[str]], list[str]]:
    """``count`` 1-hop sequences (token lists, query last) and their answers."""
    if task not in ("number", "letter"):
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    if (
        isinstance(target_window, bool)
        or not isinstance(target_window, (int, np.integer))
        or not 1 <= target_window <= MAX_LLM_WINDOW
    ):
        raise ValueError(f"target_window must be an integer in 1..{MAX_LLM_WINDOW}, got {target_window!r}")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    rng = np.random.default_rng(seed)
    n = int(target_window)
    rows = np.arange(count)
    answer_at = rng.integers(0, n, size=count)
    if task == "number":
        window = _LETTERS[rng.integers(0, 26, size=(count, n))]
        query = (n - answer_at).astype(str)[:, None]
    else:
        answer_letter = rng.integers(0, 26, size=count)
        # Other window letters: uniform over the 25 letters that are not the answer's.
        others = rng.integers(0, 25, size=(count, n))
        others += others >= answer_letter[:, None]
        others[rows, answer_at] = answer_letter
        window = np.char.add(_LETTERS[others], _DIGITS[rng.integers(0, 9, size=(count, n))])
        q1 = rng.integers(0, 25, size=count)
        q1 += q1 >= answer_letter
        query = np.char.add(_LETTERS[q1], _LETTERS[answer_letter])[:, None]
    sequences = np.concatenate([window, query], axis=1).tolist()
    answers = window[rows, answer_at].tolist()
    return sequences, answers
