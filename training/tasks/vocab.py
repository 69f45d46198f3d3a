"""Token vocabularies of the two tasks (Appendix B) and the id arithmetic the
vectorised generators rely on.

The id order is part of the data format (it is written to every run's
``vocab.json`` and baked into every cached dataset), so it is fixed here once:

* number task, 136 tokens: ``a``..``z`` (ids 0-25), then the 94 bigrams ``aa``..``dp``
  in lexicographic order (ids 26-119), then the integers ``1``..``16`` (ids 120-135);
* letter task, 128 tokens: ``a1``..``h8`` letter-major (id = 8 * letter + digit - 1,
  ids 0-63), then ``aa``..``hh`` (id = 64 + 8 * first + second, ids 64-127).
"""

from __future__ import annotations

import string

# Layout shared by both tasks: 8 target tokens, 8 pre-target tokens, 1 query (Appendix B).
TARGET_LEN = 8
PRETARGET_LEN = 8
SEQ_LEN = TARGET_LEN + PRETARGET_LEN + 1
QUERY_POS = SEQ_LEN - 1
MAX_HOPS = 4
ALL_HOPS = (1, 2, 3, 4)

# Number task.
NUMBER_ALPH_SIZE = 120
NUMBER_INT_MAX = 16
NUMBER_INT_BASE = NUMBER_ALPH_SIZE - 1  # id of integer v is NUMBER_INT_BASE + v

# Letter task.
LETTERS = "abcdefgh"
LETTER_ALPH_SIZE = len(LETTERS)
LETTER_INT_MAX = 8
LETTER_TARGET_COUNT = LETTER_ALPH_SIZE * LETTER_INT_MAX  # 64 letter+int tokens, ids 0..63
LETTER_PAIR_BASE = LETTER_TARGET_COUNT  # letter+letter tokens start here


def _number_alph() -> list[str]:
    singles = list(string.ascii_lowercase)
    bigrams = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase]
    # "aa".."dp" is a prefix of the lexicographic bigram list: 26 * 3 + 16 = 94 tokens.
    bigrams = bigrams[: bigrams.index("dp") + 1]
    return singles + bigrams


def number_vocab() -> list[str]:
    """The 136 number-task tokens in id order."""
    return _number_alph() + [str(v) for v in range(1, NUMBER_INT_MAX + 1)]


def letter_vocab() -> list[str]:
    """The 128 letter-task tokens in id order."""
    targets = [f"{a}{d}" for a in LETTERS for d in range(1, LETTER_INT_MAX + 1)]
    pairs = [a + b for a in LETTERS for b in LETTERS]
    return targets + pairs


def number_int_id(value):
    """Id of the integer token ``value`` (1..16); works on numpy arrays."""
    return NUMBER_INT_BASE + value


def letter_target_id(letter, digit_index):
    """Id of the letter+int token (letter index 0..7, digit index 0..7 for 1..8)."""
    return letter * LETTER_INT_MAX + digit_index


def letter_pair_id(first, second):
    """Id of the letter+letter token (both letter indices 0..7)."""
    return LETTER_PAIR_BASE + first * LETTER_ALPH_SIZE + second


assert len(number_vocab()) == NUMBER_ALPH_SIZE + NUMBER_INT_MAX == 136
assert len(letter_vocab()) == 2 * LETTER_TARGET_COUNT == 128
