"""Vectorised numpy generators of the 17-token number and letter sequences (Appendix B).

Everything is a pure function of its arguments and a ``numpy.random.Generator``,
so a seed fixes the output bit for bit (PCG64 and the Generator methods used here
give the same streams on every platform; numpy does not promise stream stability
across *major* versions, which is why the dataset cache records the generator
version and the numpy version).

Layout (0-based): target window 0..7, pre-target window 8..15, query 16.
Token ids follow ``training.tasks.vocab``.  Nothing here calls the slow reference
solvers of ``theory.functions``; the tests re-solve every sequence with them.
"""

from __future__ import annotations

import numpy as np

from .vocab import (
    LETTER_ALPH_SIZE,
    LETTER_INT_MAX,
    LETTER_PAIR_BASE,
    NUMBER_ALPH_SIZE,
    NUMBER_INT_BASE,
    NUMBER_INT_MAX,
    PRETARGET_LEN,
    QUERY_POS,
    SEQ_LEN,
    TARGET_LEN,
    letter_pair_id,
    letter_target_id,
    number_int_id,
)

# Bump whenever a change makes any generator emit different data for the same seed:
# cached datasets carry it in their manifest and are rebuilt when it differs.
GENERATOR_VERSION = 1

# Extra target symbols (length extension) are drawn per block of rows from their own
# seeded stream, so a caller that streams rows block by block (the CLI) gets exactly
# the tokens that one in-memory call would give, and the core 17 tokens never depend on K.
EXTRA_BLOCK = 1024
_EXTRA_TAG = 0x5E7E
_EXTRA_DRAW_ELEMENTS = 1 << 22  # bounds the memory of one random draw for huge K


def class_sizes(count: int, classes: int, start: int = 0) -> list[int]:
    """Split ``count`` into ``classes`` sizes differing by at most one; the
    remainder goes to classes ``start, start + 1, ...`` (cyclically)."""
    base, extra = divmod(count, classes)
    sizes = [base] * classes
    for r in range(extra):
        sizes[(start + r) % classes] += 1
    return sizes


def balanced_cells(count: int, n_values: int, n_positions: int, rng: np.random.Generator):
    """Answer values and answer positions for ``count`` rows of one hop class.

    Row ``c`` gets cell ``c mod (V * P)`` of a Latin ordering: value ``cell mod V``,
    position ``(cell // V + cell) mod P``.  When P divides V this ordering is a
    bijection onto V x P, and every *prefix* (indeed every cyclic window of whole
    V-blocks) is as balanced as it can be: each value, each position and each
    (value, position) cell occurs floor or ceil of its fair share.  So exact balance
    holds whenever the count allows it, and a split taken as a contiguous range of
    rows inherits the property.  Random relabelling of values and positions keeps
    all those counts while letting a short batch see random values.
    """
    if n_values % n_positions:
        raise ValueError(
            f"balanced_cells needs the positions ({n_positions}) to divide the values ({n_values})"
        )
    cell = np.arange(count, dtype=np.int64) % (n_values * n_positions)
    value = cell % n_values
    position = (cell // n_values + cell) % n_positions
    return rng.permutation(n_values)[value], rng.permutation(n_positions)[position]


def chain_positions(count: int, hop: int, rng: np.random.Generator) -> np.ndarray:
    """The ``hop - 1`` intermediate positions of each chain: a uniformly random
    set of distinct pre-target positions, in strictly decreasing order (the chain
    walks backwards from the query)."""
    if hop == 1:
        return np.empty((count, 0), dtype=np.int64)
    keys = rng.random((count, PRETARGET_LEN))
    chosen = np.argsort(keys, axis=1, kind="stable")[:, : hop - 1] + TARGET_LEN
    return -np.sort(-chosen, axis=1)


def fill_number(hop: int, values: np.ndarray, positions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Number-task sequences with the given answer letters (ids 0..119) at the given
    target positions, each reached from the query in exactly ``hop`` hops."""
    count = len(values)
    rows = np.arange(count)[:, None]
    out = np.empty((count, SEQ_LEN), dtype=np.int64)
    out[:, :TARGET_LEN] = rng.integers(0, NUMBER_ALPH_SIZE, size=(count, TARGET_LEN))
    out[rows[:, 0], positions] = values
    # Off-chain integers: any offset that stays inside the sequence (1..i at position i,
    # capped by |INT| = 16).  The chain is read only at its own positions, so these
    # cannot change the answer or the hop count, whatever they point at.
    highs = np.minimum(np.arange(TARGET_LEN, QUERY_POS), NUMBER_INT_MAX)
    out[:, TARGET_LEN:QUERY_POS] = number_int_id(rng.integers(1, highs + 1, size=(count, PRETARGET_LEN)))
    chain = np.concatenate(
        [np.full((count, 1), QUERY_POS), chain_positions(count, hop, rng), np.asarray(positions)[:, None]],
        axis=1,
    )
    # Each chain position holds the distance to the next one; the largest is 16 - 0 = 16.
    out[rows, chain[:, :-1]] = number_int_id(chain[:, :-1] - chain[:, 1:])
    return out


def fill_letter(hop: int, values: np.ndarray, positions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Letter-task sequences with the given answer tokens (ids 0..63) at the given
    target positions, each reached from the query in exactly ``hop`` hops.

    A random permutation of the 8 letters per row, with the answer letter moved to
    slot ``hop - 1``, gives the chain letters L1..L_hop (slots 0..hop-1, distinct)
    and the distractor letters (the other 8 - hop slots).  Every token off the path,
    the query included, starts with a distractor letter, so each lookup of a chain
    letter has exactly one candidate: the path is unique.
    """
    count = len(values)
    rows = np.arange(count)
    answer_letter = np.asarray(values) // LETTER_INT_MAX
    perm = np.argsort(rng.random((count, LETTER_ALPH_SIZE)), axis=1, kind="stable")
    slot = np.argmax(perm == answer_letter[:, None], axis=1)
    perm[rows, slot] = perm[rows, hop - 1]
    perm[rows, hop - 1] = answer_letter
    free = perm[:, hop:]

    def distractor_letters(width: int) -> np.ndarray:
        pick = rng.integers(0, LETTER_ALPH_SIZE - hop, size=(count, width))
        return np.take_along_axis(free, pick, axis=1)

    out = np.empty((count, SEQ_LEN), dtype=np.int64)
    out[:, :TARGET_LEN] = letter_target_id(
        distractor_letters(TARGET_LEN), rng.integers(0, LETTER_INT_MAX, size=(count, TARGET_LEN))
    )
    out[rows, positions] = values
    # Distractor pairs may point at any letter (a chain letter included): they are off the path.
    out[:, TARGET_LEN:QUERY_POS] = letter_pair_id(
        distractor_letters(PRETARGET_LEN), rng.integers(0, LETTER_ALPH_SIZE, size=(count, PRETARGET_LEN))
    )
    out[:, QUERY_POS] = letter_pair_id(distractor_letters(1)[:, 0], perm[:, 0])
    hops_at = chain_positions(count, hop, rng)
    for k in range(hop - 1):
        out[rows, hops_at[:, k]] = letter_pair_id(perm[:, k], perm[:, k + 1])
    return out


def follow_paths(task_name: str, inputs: np.ndarray):
    """Follow every row's path in numpy over the effective window (the last 17 tokens).

    Returns (answer position within the effective window, hop count, chain-letter
    mask (rows, 8) for the letter task or None).  A fast mirror of the reference
    solvers of theory.functions, which the tests hold it to; ValueError when a path
    breaks.
    """
    eff = np.asarray(inputs)[:, -SEQ_LEN:]
    count = len(eff)
    rows = np.arange(count)
    pos = np.full(count, QUERY_POS)
    hops = np.zeros(count, dtype=np.int64)
    if task_name == "number":
        for _ in range(SEQ_LEN):
            token = eff[rows, pos]
            active = token > NUMBER_INT_BASE
            if not active.any():
                return pos, hops, None
            pos = np.where(active, pos - (token - NUMBER_INT_BASE), pos)
            hops += active
            if (pos < 0).any():
                raise ValueError("not number-task sequences: an integer points before the effective window")
        raise ValueError("not number-task sequences: a path never reaches a letter")  # pragma: no cover
    is_pair = eff >= LETTER_PAIR_BASE
    first = np.where(is_pair, (eff - LETTER_PAIR_BASE) // LETTER_ALPH_SIZE, eff // LETTER_INT_MAX)
    second = np.where(is_pair, (eff - LETTER_PAIR_BASE) % LETTER_ALPH_SIZE, -1)
    if not is_pair[:, QUERY_POS].all():
        raise ValueError("not letter-task sequences: some query (last token) is not a letter+letter token")
    chain = np.zeros((count, LETTER_ALPH_SIZE), dtype=bool)
    active = np.ones(count, dtype=bool)
    earlier = np.arange(SEQ_LEN)[None, :]
    for _ in range(SEQ_LEN):
        if not active.any():
            return pos, hops, chain
        letter = second[rows, pos]
        chain[rows[active], letter[active]] = True
        candidates = (first == letter[:, None]) & (earlier < pos[:, None])
        if (active & ~candidates.any(axis=1)).any():
            raise ValueError("not letter-task sequences: a path from the query finds no matching token")
        latest = SEQ_LEN - 1 - np.argmax(candidates[:, ::-1], axis=1)
        pos = np.where(active, latest, pos)
        hops += active
        active &= is_pair[rows, pos]
    raise ValueError("not letter-task sequences: a path from the query never reaches a letter+int token")


def _extra_block(task_name: str, core: np.ndarray, extra: int, rng: np.random.Generator) -> np.ndarray:
    count = len(core)
    if task_name == "number":
        return rng.integers(0, NUMBER_ALPH_SIZE, size=(count, extra))
    chain = follow_paths(task_name, core)[2]
    free_first = np.argsort(chain, axis=1, kind="stable")  # non-chain letters first (False < True)
    n_free = LETTER_ALPH_SIZE - chain.sum(axis=1)
    pick = (rng.random((count, extra)) * n_free[:, None]).astype(np.int64)
    letters = np.take_along_axis(free_first, pick, axis=1)
    return letter_target_id(letters, rng.integers(0, LETTER_INT_MAX, size=(count, extra)))


def extra_target_tokens(
    task_name: str, inputs: np.ndarray, extra: int, seed: int, row_start: int = 0
) -> np.ndarray:
    """``extra`` target-window symbols per row, to be put BEFORE ``inputs`` (Section 3.6).

    Number task: random letters of ALPH.  Letter task: letter+int tokens whose letter
    is not on the row's path, so the path stays unique.  Rows ``row_start + i`` use the
    stream of their block of EXTRA_BLOCK rows; ``row_start`` must be a block boundary.
    """
    if row_start % EXTRA_BLOCK:
        raise ValueError(f"row_start must be a multiple of {EXTRA_BLOCK}, got {row_start}")
    inputs = np.asarray(inputs)
    out = np.empty((len(inputs), extra), dtype=np.int64)
    # Within a block, rows are drawn in sub-chunks whose size depends on K only, so
    # one random draw stays below _EXTRA_DRAW_ELEMENTS even for K near the maximum.
    sub = max(1, min(EXTRA_BLOCK, _EXTRA_DRAW_ELEMENTS // max(extra, 1)))
    for begin in range(0, len(inputs), EXTRA_BLOCK):
        rng = np.random.default_rng([seed, _EXTRA_TAG, (row_start + begin) // EXTRA_BLOCK])
        end = min(begin + EXTRA_BLOCK, len(inputs))
        for lo in range(begin, end, sub):
            hi = min(lo + sub, end)
            out[lo:hi] = _extra_block(task_name, inputs[lo:hi], extra, rng)
    return out
