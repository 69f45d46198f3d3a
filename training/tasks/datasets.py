"""The paper's datasets (Appendix B): 480,000 sequences per task, split
432,000 / 2,400 / 45,600 with no sequence in two splits, cached on disk.

How the splits are built, and why:

1. One balanced design for the union: within each hop class the rows take the
   Latin ordering of ``generators.balanced_cells``, and each split takes a
   *contiguous* range of that ordering.  So the union is as balanced as the task
   allows (number: every hop x value x position cell exactly 125 times; letter:
   hop shares and value and position marginals exact, cells 234 or 235), and each
   split keeps exact hop shares and near-exact value and position marginals.
2. Duplicates: a row equal to an earlier row (in design order) is redrawn with the
   same hop count, answer value and answer position from a separate seeded stream,
   until every row is distinct.  Balance is therefore unchanged by deduplication.
   (With these vocabularies collisions essentially never happen: the manifest
   records how many rows were redrawn.)
3. Each split is shuffled.

The cache is an ``.npz`` (``allow_pickle=False``) plus a JSON manifest naming the
task, seed, sizes, hops, generator and numpy versions and a SHA-256 of the content;
both are written atomically and a cache whose manifest differs in anything, or
whose content does not hash to the manifest, is rebuilt.  So is a cache that cannot be
read at all (a truncated or empty ``.npz``, a manifest that is not a JSON object of the
manifest's shape, a FIFO or folder where a file belongs), with one line on stderr naming the
file and why; nothing there is opened in a way that could block.  A full disk while the cache
is written is one line (``CacheError``): the files already there stay whole (atomic writes),
and the manifest is written last, so the next run rebuilds what is missing.  The cache FOLDER is the user's setting
(``$ROPE_HEADS_CACHE``): one that is not a folder, or that cannot be written when a
rebuild is needed, raises ``CacheError`` (a usage error: one line, exit status 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np

from theory.io.files import OutputError, atomic_open, atomic_write_json, check_output_dir
from theory.io.inputs import InputError, check_input_file, load_json
from training.cli_common import UsageError

from . import generators as gen
from .definitions import Batch, check_count, check_hops, check_seed, get_task
from .vocab import ALL_HOPS

__all__ = [
    "PAPER_SPLIT_SIZES",
    "build_splits",
    "paper_splits",
    "cached_splits",
    "duplicate_rows",
    "balance_report",
    "default_cache_dir",
    "check_cache_dir",
    "resample_duplicates",
    "CacheError",
]

PAPER_SPLIT_SIZES = {"train": 432_000, "validation": 2_400, "test": 45_600}
_DEDUPE_TAG = 0xDED0
_CACHE_FORMAT = 1


class CacheError(UsageError, ValueError):
    """The dataset cache folder cannot be used.  It is a user setting, so this is a usage
    error: the ``python -m training`` dispatcher prints it as one line and exits 2."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("ROPE_HEADS_CACHE") or Path.home() / ".cache" / "rope_heads")


def check_cache_dir(cache_dir=None, writable: bool = False) -> Path:
    """The cache folder (``cache_dir``, else ``default_cache_dir()``); CacheError if something
    other than a folder stands there or (``writable``) it cannot be made or written in.
    Cheap, so a command may call it before any work."""
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    named = f"{directory}" if cache_dir is not None else f"{directory} ($ROPE_HEADS_CACHE)"
    if directory.exists() and not directory.is_dir():
        raise CacheError(
            f"dataset cache folder {named} exists and is not a directory; "
            f"remove it or set ROPE_HEADS_CACHE to a folder"
        )
    if writable:
        try:
            check_output_dir(directory, f"dataset cache folder {named}")
        except OutputError as error:
            raise CacheError(f"{error}; set ROPE_HEADS_CACHE to a writable folder") from None
    return directory


def duplicate_rows(inputs: np.ndarray) -> np.ndarray:
    """Indices of rows equal to some earlier row (the first occurrence is kept)."""
    inputs = np.asarray(inputs)
    if len(inputs) == 0:
        return np.empty(0, dtype=np.int64)
    small = inputs.astype(np.uint8) if inputs.min() >= 0 and inputs.max() < 256 else inputs
    rows = np.ascontiguousarray(small).view(np.dtype((np.void, small.dtype.itemsize * small.shape[1])))[:, 0]
    _, first = np.unique(rows, return_index=True)
    keep = np.zeros(len(inputs), dtype=bool)
    keep[first] = True  # np.unique returns the first index of each distinct row
    return np.flatnonzero(~keep)


def resample_duplicates(task, batch: Batch, seed: int, max_rounds: int = 100) -> int:
    """Redraw duplicate rows in place, keeping each row's hop count, answer and
    answer position, so the balance of the design is untouched.  Returns how many
    rows were redrawn."""
    task = get_task(task)
    redrawn = 0
    for round_ in range(max_rounds):
        dups = duplicate_rows(batch.inputs)
        if len(dups) == 0:
            return redrawn
        positions = gen.follow_paths(task.name, batch.inputs[dups])[0]
        rng = np.random.default_rng([seed, _DEDUPE_TAG, round_])
        for hop in np.unique(batch.hops[dups]):
            which = batch.hops[dups] == hop
            rows = dups[which]
            fresh = task.generate_class(int(hop), len(rows), rng, batch.answers[rows], positions[which])
            batch.inputs[rows] = fresh.inputs
        redrawn += len(dups)
    raise RuntimeError(
        f"could not make all {len(batch)} {task.name} sequences distinct in {max_rounds} rounds"
    )


def build_splits(task_name, sizes=None, seed: int = 0, hops=ALL_HOPS) -> tuple[dict[str, Batch], dict]:
    """Disjoint, balanced, shuffled splits; returns (splits, info) where info counts
    the rows redrawn as duplicates."""
    task = get_task(task_name)
    sizes = dict(PAPER_SPLIT_SIZES if sizes is None else sizes)
    for size in sizes.values():
        check_count(size)
    seed, hops = check_seed(seed), check_hops(hops)
    rng = np.random.default_rng(seed)
    k = len(hops)
    # per_class[s][i]: rows of split s in hop class i; remainders rotate so the union stays balanced.
    per_class, start = [], 0
    for size in sizes.values():
        per_class.append(gen.class_sizes(size, k, start))
        start = (start + size % k) % k
    parts, labels = [], []
    for i, hop in enumerate(hops):
        counts = [row[i] for row in per_class]
        values, pos = gen.balanced_cells(sum(counts), task.n_answer_values, task.n_positions, rng)
        parts.append(task.generate_class(hop, sum(counts), rng, values, pos))
        labels.append(np.repeat(np.arange(len(sizes)), counts))  # contiguous ranges of the design
    union = Batch(*(np.concatenate(a) for a in zip(*((p.inputs, p.answers, p.hops) for p in parts))))
    labels = np.concatenate(labels)
    redrawn = resample_duplicates(task, union, seed)
    splits = {}
    for s, name in enumerate(sizes):
        rows = np.flatnonzero(labels == s)
        splits[name] = union.select(rng.permutation(rows))
    return splits, {"redrawn_duplicates": redrawn}


def balance_report(task_name, batch: Batch) -> dict:
    """Counts behind the balance claims: rows per hop class, and per hop class the
    (min, max) count over answer values, over answer positions (in the effective
    target window) and over (value, position) cells."""
    task = get_task(task_name)
    positions = gen.follow_paths(task.name, batch.inputs)[0]
    report = {
        "rows": len(batch),
        "hop_counts": {int(h): int(c) for h, c in zip(*np.unique(batch.hops, return_counts=True))},
    }
    for hop in report["hop_counts"]:
        rows = batch.hops == hop
        answers, pos = batch.answers[rows], positions[rows]
        values = np.bincount(answers, minlength=task.n_answer_values)
        places = np.bincount(pos, minlength=task.n_positions)
        cells = np.bincount(
            answers * task.n_positions + pos, minlength=task.n_answer_values * task.n_positions
        )
        report[f"hop{hop}"] = {
            "values": (int(values.min()), int(values.max())),
            "positions": (int(places.min()), int(places.max())),
            "cells": (int(cells.min()), int(cells.max())),
        }
    return report


# -- cache ---------------------------------------------------------------------------


def _content_sha256(splits: dict[str, Batch]) -> str:
    digest = hashlib.sha256()
    for name, batch in splits.items():
        digest.update(name.encode())
        for array in (batch.inputs, batch.answers, batch.hops):
            array = np.ascontiguousarray(array, dtype="<i8")  # fixed byte order: same hash on every machine
            digest.update(repr(array.shape).encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


def _parameters(task, sizes: dict, seed: int, hops: tuple) -> dict:
    return {
        "format": _CACHE_FORMAT,
        "task": task.name,
        "seed": seed,
        "sizes": sizes,
        "hops": list(hops),
        "generator_version": gen.GENERATOR_VERSION,
        "numpy": np.__version__,
        "vocab_sha256": hashlib.sha256(json.dumps(task.vocab).encode()).hexdigest(),
    }


# What _load reads of a manifest; anything else in it is only for people.  The loader
# (theory.io.inputs) refuses a FIFO or device there without blocking, bounds the nesting and
# names the field of the wrong type.
_MANIFEST_SHAPE = {"parameters": dict, "content_sha256": str}


def _read_manifest(manifest_path: Path) -> dict:
    return load_json(manifest_path, _MANIFEST_SHAPE, "dataset cache manifest")


# every way a damaged cache fails to load: a truncated or empty .npz (BadZipFile, EOFError),
# missing or non-integer arrays; an unreadable, non-JSON or misshapen manifest and a FIFO or
# other non-file where a cache file belongs are InputErrors, whose message names the file
_DAMAGED = (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile)


def _load(data_path: Path, manifest_path: Path, parameters: dict):
    """(the cached splits, None) if the manifest matches ``parameters`` and the content its
    hash; else (None, why not: names the file), ``why`` None when there is no cache yet."""
    if not manifest_path.exists() and not data_path.exists():
        return None, None
    try:
        manifest = _read_manifest(manifest_path)
    except InputError as error:  # its message names the file and the field
        return None, str(error)
    except _DAMAGED as error:
        return None, f"{manifest_path}: {type(error).__name__}: {error}"
    if manifest.get("parameters") != parameters:
        return None, f"{manifest_path} names other parameters"
    try:
        check_input_file(data_path, "dataset cache")  # np.load would block forever on a FIFO
        with np.load(data_path, allow_pickle=False) as data:
            splits = {
                name: Batch(data[f"{name}/inputs"], data[f"{name}/answers"], data[f"{name}/hops"])
                for name in parameters["sizes"]
            }
        content = _content_sha256(splits)
    except InputError as error:
        return None, str(error)
    except _DAMAGED as error:
        return None, f"{data_path}: {type(error).__name__}: {error}"
    if content != manifest.get("content_sha256"):
        return None, f"{data_path}: content does not match the SHA-256 in {manifest_path.name}"
    return splits, None


def _write_cache(
    splits: dict, info: dict, task, parameters: dict, data_path: Path, manifest_path: Path
) -> None:
    arrays = {
        f"{name}/{field}": getattr(batch, field)
        for name, batch in splits.items()
        for field in ("inputs", "answers", "hops")
    }
    try:
        with atomic_open(data_path, "wb") as handle:
            np.savez(handle, **arrays)
        manifest = {
            "parameters": parameters,
            "content_sha256": _content_sha256(splits),
            "data_file": data_path.name,
            **info,
            "balance": {name: balance_report(task, batch) for name, batch in splits.items()},
        }
        # The manifest goes last: a crash in between leaves a data file no manifest vouches for.
        atomic_write_json(manifest_path, manifest, indent=1)
    except OutputError as error:  # e.g. a folder standing where the .npz belongs
        raise CacheError(f"dataset cache: {error}") from None


def cached_splits(task_name, sizes=None, seed: int = 0, hops=ALL_HOPS, cache_dir=None) -> dict[str, Batch]:
    """``build_splits`` through the on-disk cache (``cache_dir``, else $ROPE_HEADS_CACHE,
    else ~/.cache/rope_heads).  The file name carries a digest of every parameter, so
    different parameters never share a file; a stale or corrupt file is rebuilt."""
    task = get_task(task_name)
    sizes = dict(PAPER_SPLIT_SIZES if sizes is None else sizes)
    parameters = _parameters(task, sizes, check_seed(seed), check_hops(hops))
    digest = hashlib.sha256(json.dumps(parameters, sort_keys=True).encode()).hexdigest()[:16]
    directory = check_cache_dir(cache_dir)
    stem = f"{task.name}-seed{seed}-{digest}"
    data_path, manifest_path = directory / f"{stem}.npz", directory / f"{stem}.json"
    splits, why = _load(data_path, manifest_path, parameters)
    if splits is not None:
        return splits
    check_cache_dir(cache_dir, writable=True)  # before the build, which takes seconds
    if why is not None:
        print(f"dataset cache: {why}; rebuilding it", file=sys.stderr)
    splits, info = build_splits(task, sizes, seed, hops)
    directory.mkdir(parents=True, exist_ok=True)
    _write_cache(splits, info, task, parameters, data_path, manifest_path)
    return splits


def paper_splits(task_name, seed: int = 0, cache_dir=None) -> dict[str, Batch]:
    """The paper's 432,000 / 2,400 / 45,600 train / validation / test splits of one task."""
    return cached_splits(task_name, PAPER_SPLIT_SIZES, seed, ALL_HOPS, cache_dir)
