"""Evaluate a language model on the 1-hop tasks over target windows (Appendix H,
Table 3; Figure 5C/D).

For each seed (the paper's "run number") and each target window L a fresh set of
``count`` items comes from ``training.llm.tasks.one_hop_llm(task, L, count, seed)``;
every item's answer is re-derived by ``theory.functions`` before it is used.  Each
item becomes a Table 2 prompt (``training.llm.prompts``) and is sent to a backend
(``training.llm.backends``).  The paper does not say how many items a run held per
length; ``count`` (default 100) is recorded in the results.

Scoring of one item:

* no reply (every call failed, see the backends): excluded from accuracy and counted
  in ``n_failed_items``; never scored right or wrong.
* a reply: scored.  It is normalised by stripping surrounding whitespace, matching
  surrounding quotes (" ' ` “” ‘’) and one trailing period, repeatedly; if what is
  left is exactly one token of the task's window alphabet (number: one letter a-z;
  letter: a letter a-z then a digit 1-9), that is the answer, correct when equal to
  the target (case-sensitive: the tokens are lower case).  Anything else (several
  tokens, an explanation, "Output: y", an empty reply, "Y") is *unparseable*: the
  paper required a single-token answer, so it is scored wrong and also counted in
  ``n_unparseable``.

Per seed, accuracy = correct / scored items; per length, the mean and standard
deviation (``ddof``, default 0, recorded) of the per-seed accuracies over the seeds
that scored at least one item.  Beside it, the *parse rate* = parsed / scored items
(the share of replies that named a single window token), per seed and per length: an
accuracy near 0 with a parse rate near 0 says the model's replies were not answers
(e.g. an instruct model explaining the task), not that its answers were wrong.

Results JSON (written by ``python -m training llm``)::

    {"model": str, "backend": "hf" | "openai", "task": "number" | "letter",
     "lengths": [L, ...],             # target-window sizes; prompts hold L + 1 tokens
     "seeds": [s, ...],
     "per_length": [{"length": L,
                     "accuracy_mean": float | null, "accuracy_std": float | null,
                     "per_seed": [float | null, ...],   # in "seeds" order
                     "parse_rate": float | null,           # parsed / scored items, all seeds
                     "parse_rate_per_seed": [float | null, ...],
                     "n_items": int,        # items sent (count x seeds)
                     "n_scored": int,       # items with a reply (= n_items - n_failed_items)
                     "n_correct": int,
                     "n_unparseable": int,  # scored wrong: not a single window token
                     "n_failed_items": int, # no reply after all attempts: not scored
                     "n_failed_calls": int  # failed calls, including retried ones
                    }, ...],
     "summary": {"n_items": int, "n_answered": int, "n_failed_items": int,
                 "parse_rate": float | null,  # parsed / answered items, all lengths and seeds
                 "n_resumed": int,          # replies taken from the --replies file of an earlier run
                 "errors": {str: int}},     # last error of the items without a reply, with counts
     "settings": {...}}                 # count, std ddof, scoring rule, backend settings

With a replies file (``training.llm.journal``) each reply is saved as it arrives and
the items it already answers are not asked again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .guards import error_counts
from .journal import reply_config
from .prompts import SOLVERS, build_prompt
from .tasks import LLM_SEEDS, LLM_TARGET_WINDOWS, one_hop_llm

__all__ = [
    "DEFAULT_COUNT",
    "Item",
    "check_int_list",
    "parse_answer",
    "make_items",
    "score",
    "parse_rate",
    "summarize",
    "evaluate",
    "LLM_TARGET_WINDOWS",
    "LLM_SEEDS",
]

DEFAULT_COUNT = 100
ANSWER_PATTERNS = {"number": re.compile(r"[a-z]"), "letter": re.compile(r"[a-z][1-9]")}
_QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}
SCORING_RULE = (
    "reply stripped of whitespace, surrounding quotes and one trailing period (repeatedly); "
    "parsed only if exactly one window token remains; unparseable replies are scored wrong and "
    "counted; items with no reply are not scored"
)


def parse_answer(text: str, task: str) -> str | None:
    """The single window token a reply names, or None when it is not exactly one."""
    if task not in ANSWER_PATTERNS:
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    s = text.strip()
    while True:  # every pass shortens s or stops, so this ends
        before = s
        if s.endswith("."):
            s = s[:-1].rstrip()
        if len(s) >= 2 and s[0] in _QUOTES and s[-1] == _QUOTES[s[0]]:
            s = s[1:-1].strip()
        if s == before:
            break
    return s if ANSWER_PATTERNS[task].fullmatch(s) else None


@dataclass(frozen=True)
class Item:
    task: str
    length: int  # target-window size
    seed: int
    index: int
    tokens: tuple[str, ...]  # window, then the query
    answer: str

    @property
    def prompt(self) -> str:
        return build_prompt(self.task, self.tokens)


def check_int_list(name: str, values, low: int, high: int | None = None) -> list[int]:
    """``values`` as a list of distinct integers in low..high, or a ValueError naming ``name``."""
    values = list(values)
    if not values or len(set(values)) != len(values):
        raise ValueError(f"{name} must be a non-empty list of distinct integers, got {values}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            raise ValueError(f"{name} must be integers in {low}..{'' if high is None else high}, got {v!r}")
    return values


def make_items(
    task: str,
    lengths: Sequence[int] = LLM_TARGET_WINDOWS,
    seeds: Sequence[int] = LLM_SEEDS,
    count: int = DEFAULT_COUNT,
) -> list[Item]:
    """Items ordered by seed, then length; each answer re-solved by theory.functions."""
    if task not in SOLVERS:
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    lengths, seeds = check_int_list("lengths", lengths, 1), check_int_list("seeds", seeds, 0)
    items = []
    for seed in seeds:
        for length in lengths:
            sequences, answers = one_hop_llm(task, length, count, seed)
            for index, (tokens, answer) in enumerate(zip(sequences, answers)):
                # The generator is trusted only as far as the reference solver agrees with it.
                solved = SOLVERS[task](tokens)
                if solved != (answer, 1) or len(tokens) != length + 1:
                    raise RuntimeError(
                        f"{task} item seed={seed} length={length} #{index}: generator says "
                        f"{answer!r}, theory.functions says {solved}"
                    )
                items.append(Item(task, length, seed, index, tuple(tokens), answer))
    return items


def score(items: Sequence[Item], replies) -> list[dict]:
    """One record per item: the reply, the parsed answer, and ``correct`` (None if no reply)."""
    items, replies = list(items), list(replies)
    if len(items) != len(replies):
        raise ValueError(f"{len(items)} items but {len(replies)} replies")
    records = []
    for item, reply in zip(items, replies):
        parsed = parse_answer(reply.text, item.task) if reply.ok else None
        records.append(
            {
                "length": item.length,
                "seed": item.seed,
                "index": item.index,
                "answer": item.answer,
                "reply": reply.text,
                "raw": reply.raw,
                "parsed": parsed,
                "correct": (parsed == item.answer) if reply.ok else None,
                "failed_calls": reply.failed_calls,
                "error": reply.error,
            }
        )
    return records


def _mean_std(values: list[float], ddof: int):
    if not values or len(values) <= ddof:
        return (sum(values) / len(values) if values else None), None
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - ddof))


def _share(records: list[dict], key: str) -> float | None:
    """The share of the scored ``records`` whose ``key`` holds (None: none scored)."""
    scored = [r for r in records if r["correct"] is not None]
    if not scored:
        return None
    return sum(bool(r["correct"]) if key == "correct" else r["parsed"] is not None for r in scored) / len(
        scored
    )


def parse_rate(records: Sequence[dict]) -> float | None:
    """Parsed / scored items of ``records``; None when none was scored."""
    return _share(list(records), "parsed")


def summarize(
    records: Sequence[dict], lengths: Sequence[int], seeds: Sequence[int], ddof: int = 0
) -> list[dict]:
    """The ``per_length`` list of the results JSON."""
    rows = []
    for length in lengths:
        mine = [r for r in records if r["length"] == length]
        by_seed = [[r for r in mine if r["seed"] == seed] for seed in seeds]
        per_seed = [_share(group, "correct") for group in by_seed]
        mean, std = _mean_std([a for a in per_seed if a is not None], ddof)
        scored = [r for r in mine if r["correct"] is not None]
        rows.append(
            {
                "length": length,
                "accuracy_mean": mean,
                "accuracy_std": std,
                "per_seed": per_seed,
                "parse_rate": parse_rate(mine),
                "parse_rate_per_seed": [parse_rate(g) for g in by_seed],
                "n_items": len(mine),
                "n_scored": len(scored),
                "n_correct": sum(r["correct"] for r in scored),
                "n_unparseable": sum(r["parsed"] is None for r in scored),
                "n_failed_items": len(mine) - len(scored),
                "n_failed_calls": sum(r["failed_calls"] for r in mine),
            }
        )
    return rows


def _ask(backend, items, journal, config: dict, progress: bool) -> tuple[list, int]:
    """Every item's reply, asking the backend only for those ``journal`` does not answer
    yet and saving each new one to it at once; also how many came from the journal."""
    answered, failed_before = journal.resume(items, config) if journal else ({}, {})
    todo = [k for k in range(len(items)) if k not in answered]

    def settled(j, reply):  # a retried item's failed calls include those of earlier runs
        return replace(reply, failed_calls=reply.failed_calls + failed_before.get(todo[j], 0))

    def save(j, reply):
        journal.append(items[todo[j]], score([items[todo[j]]], [settled(j, reply)])[0])

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"{items[0].task} 1-hop", unit="prompt")
    try:
        options = {"on_reply": save} if journal else {}  # a backend without on_reply still works unjournalled
        new = backend.complete(
            [items[k].prompt for k in todo], on_done=bar.update if bar else None, **options
        )
    finally:
        if bar:
            bar.close()
    replies = dict(answered)
    replies.update((todo[j], settled(j, reply)) for j, reply in enumerate(new))
    return [replies[k] for k in range(len(items))], len(answered)


def evaluate(
    backend,
    task: str,
    lengths: Sequence[int] = LLM_TARGET_WINDOWS,
    seeds: Sequence[int] = LLM_SEEDS,
    count: int = DEFAULT_COUNT,
    ddof: int = 0,
    progress: bool = False,
    journal=None,
) -> tuple[dict, list[dict]]:
    """Run ``backend`` on every item; return (results JSON object, per-item records).

    ``journal``: a ``training.llm.journal.RepliesFile`` to resume from and stream to; it
    raises its RepliesError before any call if it belongs to another configuration."""
    lengths, seeds = list(lengths), list(seeds)
    items = make_items(task, lengths, seeds, count)
    described = backend.describe()
    try:
        replies, resumed = _ask(backend, items, journal, reply_config(described, task), progress)
    finally:  # on any failure the lines already appended stay, complete, in the file
        if journal:
            journal.close()
    records = score(items, replies)
    if journal:
        journal.finish(items, records)
    per_length = summarize(records, lengths, seeds, ddof)
    answered = sum(row["n_scored"] for row in per_length)
    results = {
        "model": described["model"],
        "backend": described["backend"],
        "task": task,
        "lengths": lengths,
        "seeds": seeds,
        "per_length": per_length,
        "summary": {
            "n_items": len(items),
            "n_answered": answered,
            "n_failed_items": len(items) - answered,
            "parse_rate": parse_rate(records),
            "n_resumed": resumed,
            "errors": error_counts(records),
        },
        "settings": {
            "count_per_length_and_seed": count,
            "std_ddof": ddof,
            "scoring": SCORING_RULE,
            "length": "target-window size; each prompt's sequence has length + 1 tokens",
            "seed": "the run number, passed to training.llm.tasks.one_hop_llm",
            "prompt": "Table 2 (training.llm.prompts)",
            "backend": described,
        },
    }
    return results, records
