"""The number and letter multi-hop tasks (Section 2.1, Appendix B): vocabularies,
tokenizer, balanced seeded generation, length extension, and ``vocab.json``.

One small interface serves training, evaluation and length sweeps alike (after
DeepMind's randomized_positional_encodings): ``get_task(name).generate(...)`` or
``sample_batch(task, rng, batch_size)`` returns a ``Batch`` of token ids.

Balance (Appendix B: "equal proportion of 1-, 2-, 3-, 4-hop instances, and within
each hop class ... the value of the solution token and its position"): hop classes
differ in size by at most one; within a class every answer value, every answer
position (0..7 in the effective target window) and every (value, position) cell
occurs floor or ceil of its fair share (see ``generators.balanced_cells``).
``exact_balance=True`` refuses counts for which the hop shares and the value and
position marginals cannot all be exactly equal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from theory.functions import solve_letter, solve_number
from theory.io.files import atomic_write_json
from theory.io.inputs import InputError, load_json

from . import generators as gen
from .vocab import (
    ALL_HOPS,
    LETTER_TARGET_COUNT,
    MAX_HOPS,
    NUMBER_ALPH_SIZE,
    SEQ_LEN,
    TARGET_LEN,
    letter_vocab,
    number_vocab,
)

__all__ = [
    "TASKS",
    "Task",
    "Batch",
    "get_task",
    "sample_batch",
    "save_vocab",
    "load_vocab",
    "MAX_EXTRA_TARGET",
    "MAX_COUNT",
    "SEED_MAX",
    "check_hops",
    "check_seed",
]

TASKS = ("number", "letter")
MAX_EXTRA_TARGET = 1_000_000
MAX_COUNT = 10_000_000
# An in-memory batch larger than this many tokens (8 GB of int64) is refused; the CLI streams instead.
MAX_TOKENS_IN_MEMORY = 1_000_000_000


@dataclass(frozen=True, eq=False)
class Batch:
    """Token ids of ``len(answers)`` sequences: ``inputs`` (count, 17 + K), the answer
    token id of each (predicted at the last position) and its hop count."""

    inputs: np.ndarray
    answers: np.ndarray
    hops: np.ndarray

    def __post_init__(self):
        if (
            self.inputs.ndim != 2
            or self.answers.shape != (len(self.inputs),)
            or self.hops.shape != self.answers.shape
        ):
            raise ValueError(
                f"inconsistent batch shapes: inputs {self.inputs.shape}, answers {self.answers.shape}, "
                f"hops {self.hops.shape}"
            )

    def __len__(self) -> int:
        return len(self.answers)

    def select(self, index) -> Batch:
        return Batch(self.inputs[index], self.answers[index], self.hops[index])


def check_count(count) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be an integer in 1..{MAX_COUNT}, got {count!r}")
    return int(count)


SEED_MAX = 2**64 - 1  # torch.manual_seed takes an unsigned 64-bit seed; numpy's generators take any


def check_seed(seed, where: str = "seed") -> int:
    """A seed of data, weights or dropout: an integer in 0..SEED_MAX, the one rule of every command
    (``training.run.checks.check_seed`` reports it as a RunError)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= SEED_MAX:
        raise ValueError(
            f"{where} must be an integer in 0..{SEED_MAX} (2**64 - 1, the range of torch.manual_seed), "
            f"got {seed!r}"
        )
    return int(seed)


def check_extra(extra_target) -> int:
    if (
        isinstance(extra_target, bool)
        or not isinstance(extra_target, (int, np.integer))
        or not 0 <= extra_target <= MAX_EXTRA_TARGET
    ):
        raise ValueError(
            f"extra target length must be an integer in 0..{MAX_EXTRA_TARGET}, got {extra_target!r}"
        )
    return int(extra_target)


def check_hops(hops) -> tuple[int, ...]:
    """Sorted tuple of distinct hop counts, each in 1..4 (order does not matter)."""
    hops = list(hops)
    if not hops:
        raise ValueError(f"hops must name at least one hop count in 1..{MAX_HOPS}")
    for h in hops:
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 1 <= h <= MAX_HOPS:
            raise ValueError(f"hop count {h!r} is outside the allowed range 1..{MAX_HOPS}")
    if len(set(hops)) != len(hops):
        raise ValueError(f"hop counts must be distinct, got {hops}")
    return tuple(sorted(int(h) for h in hops))


class Task:
    """One task: its vocabulary, tokenizer, generator and reference solver."""

    n_positions = TARGET_LEN
    seq_len = SEQ_LEN

    def __init__(self, name: str, vocab: list[str], fill: Callable, solver: Callable, n_answer_values: int):
        self.name = name
        self.vocab = vocab
        self.token_to_id = {token: i for i, token in enumerate(vocab)}
        self.n_answer_values = n_answer_values  # answers are the ids 0..n_answer_values-1
        self._fill = fill
        self._solver = solver
        self._vocab_array = np.array(vocab, dtype=object)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, vocab of {len(self.vocab)})"

    # -- tokenizer -------------------------------------------------------------
    def encode(self, tokens) -> np.ndarray:
        """Token strings (a sequence, or a sequence of sequences) to int64 ids."""
        if isinstance(tokens, str):
            raise ValueError("encode expects a sequence of token strings, got one string; split it first")
        try:
            return np.array(
                [self.encode(t) if not isinstance(t, str) else self.token_to_id[t] for t in tokens],
                dtype=np.int64,
            )
        except KeyError as missing:
            raise ValueError(f"token {missing.args[0]!r} is not in the {self.name} vocabulary") from None

    def decode(self, ids) -> list:
        """Ids (1-D or 2-D) to token strings (a list, or a list of lists)."""
        ids = np.asarray(ids)
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.vocab)):
            raise ValueError(f"ids must be in 0..{len(self.vocab) - 1} for the {self.name} task")
        return self._vocab_array[ids].tolist()

    # -- generation --------------------------------------------------------------
    def exact_balance_unit(self, n_classes: int) -> int:
        """The counts that balance hop shares, answer values and positions exactly
        are the multiples of this (positions divide values, see balanced_cells)."""
        return n_classes * self.n_answer_values

    def generate(
        self, count: int, seed: int, hops=ALL_HOPS, extra_target: int = 0, exact_balance: bool = False
    ) -> Batch:
        """``count`` balanced sequences, shuffled; the same arguments always give the same batch.

        The 17 core tokens depend on (count, seed, hops) only; ``extra_target = K``
        prepends K target-window symbols (Section 3.6) drawn from a separate stream.
        """
        count, seed, extra_target = check_count(count), check_seed(seed), check_extra(extra_target)
        hops = check_hops(hops)
        unit = self.exact_balance_unit(len(hops))
        if exact_balance and count % unit:
            raise ValueError(
                f"count {count} cannot be balanced exactly for the {self.name} task with "
                f"{len(hops)} hop class(es): it must be a multiple of {unit} "
                f"({len(hops)} x {self.n_answer_values} answer values)"
            )
        if count * (SEQ_LEN + extra_target) > MAX_TOKENS_IN_MEMORY:
            raise ValueError(
                f"{count} sequences of {SEQ_LEN + extra_target} tokens exceed the in-memory limit of "
                f"{MAX_TOKENS_IN_MEMORY} tokens; generate fewer or stream with the CLI"
            )
        rng = np.random.default_rng(seed)
        parts = [self.generate_class(h, m, rng) for h, m in zip(hops, gen.class_sizes(count, len(hops)))]
        batch = Batch(
            *(np.concatenate(arrays) for arrays in zip(*((p.inputs, p.answers, p.hops) for p in parts)))
        )
        batch = batch.select(rng.permutation(count))
        return self.extend(batch, extra_target, seed) if extra_target else batch

    def generate_class(
        self, hop: int, count: int, rng: np.random.Generator, values=None, positions=None
    ) -> Batch:
        """``count`` sequences of one hop class in the balanced design order (unshuffled);
        ``values``/``positions`` override the design (used to resample duplicates)."""
        if values is None:
            values, positions = gen.balanced_cells(count, self.n_answer_values, self.n_positions, rng)
        inputs = self._fill(hop, values, positions, rng)
        return Batch(inputs, np.asarray(values, dtype=np.int64), np.full(count, hop, dtype=np.int64))

    def extend(self, batch: Batch, extra_target: int, seed: int, row_start: int = 0) -> Batch:
        """Prepend ``extra_target`` target-window symbols to every row (Section 3.6):
        every hop is relative, so answers and hop counts are unchanged.  ``row_start``
        (a multiple of generators.EXTRA_BLOCK) places a slice within a larger batch."""
        extra_target, seed = check_extra(extra_target), check_seed(seed)
        if extra_target == 0:
            return batch
        extra = gen.extra_target_tokens(self.name, batch.inputs, extra_target, seed, row_start)
        return Batch(np.concatenate([extra, batch.inputs], axis=1), batch.answers, batch.hops)

    # -- reference solver ------------------------------------------------------------
    def solve(self, tokens) -> tuple[str, int]:
        """(answer token, hop count) by theory.functions.  Token strings, or an
        integer numpy array of ids (decoded first)."""
        if isinstance(tokens, np.ndarray) and np.issubdtype(tokens.dtype, np.integer):
            tokens = self.decode(tokens)
        return self._solver(list(tokens))


_TASKS = {
    "number": Task("number", number_vocab(), gen.fill_number, solve_number, NUMBER_ALPH_SIZE),
    "letter": Task("letter", letter_vocab(), gen.fill_letter, solve_letter, LETTER_TARGET_COUNT),
}


def get_task(name) -> Task:
    if isinstance(name, Task):
        return name
    if name not in _TASKS:
        raise ValueError(f"unknown task {name!r}; allowed: {', '.join(TASKS)}")
    return _TASKS[name]


def sample_batch(
    task, rng: np.random.Generator, batch_size: int, extra_target: int = 0, hops=ALL_HOPS
) -> Batch:
    """A fresh balanced batch whose seed is drawn from ``rng`` (for on-the-fly training)."""
    seed = int(rng.integers(0, 2**63 - 1))
    return get_task(task).generate(batch_size, seed, hops=hops, extra_target=extra_target)


def save_vocab(path, task) -> None:
    """Write the task's token strings in id order as a JSON list, atomically."""
    task = get_task(task)
    atomic_write_json(path, task.vocab, trailing_newline=True, parents=False)


def load_vocab(path, task) -> list[str]:
    """Read a vocab.json and check that it is exactly the task's vocabulary."""
    task = get_task(task)
    try:  # the one JSON loader: a FIFO, non-UTF-8 or deeply nested file is one line, never a hang or traceback
        vocab = load_json(path, [str], "vocabulary")
    except InputError as bad:  # callers expect ValueError (a run that is not of this task)
        raise ValueError(str(bad)) from None
    if vocab != task.vocab:
        if len(vocab) != len(task.vocab):
            why = f"it has {len(vocab)} tokens, the {task.name} task has {len(task.vocab)}"
        else:
            i = next(i for i, (a, b) in enumerate(zip(vocab, task.vocab)) if a != b)
            why = f"id {i} is {vocab[i]!r} there but {task.vocab[i]!r} in the {task.name} task"
        raise ValueError(f"{path} does not match the {task.name} task vocabulary: {why}")
    return vocab
