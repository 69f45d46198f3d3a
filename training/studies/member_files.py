"""The JSON files a study reads, each with the shape its readers rely on (``theory.io.inputs``).

Every file the runner or ``--collect`` reads goes through ``read_json`` here: the plan's
members' ``member.json`` and stage outputs, a reused run's results, the ship folder's
``summary.json`` and ``best-<task>/best.json``.  A damaged or hostile file (truncated, not
UTF-8, nested thousands deep, a FIFO, a field of the wrong type) is then one ``InputError``
line naming the file and the field (exit 2), found by ``check_members`` before any work,
never a traceback half-way through a collect.  The shapes state what the code downstream
indexes (``collect.member_results``, ``summarise``, ``break_prediction``) and no more, so
files written by older versions (extra keys, a break reading added later) still read.
"""

from __future__ import annotations

import os
from pathlib import Path

from theory.io.inputs import ANY, Checked, InputError, Nullable, load_json
from training.analysis.break_prediction import QUANTILE

__all__ = [
    "STAGE_SHAPES",
    "BREAKS",
    "MEMBER_SHAPE",
    "SUMMARY_SHAPE",
    "BEST_SHAPE",
    "read_json",
    "read_stage_file",
    "check_stage_outputs",
    "InputError",
]


def _nonempty(shape) -> Checked:
    return Checked([shape], bool, "a non-empty list")


def _hop_keys(shape) -> Checked:
    # hop counts are object keys ("1", "2", ...); hop_exponent takes their logarithm
    return Checked(
        {"*": shape}, lambda d: all(k.isdigit() and int(k) > 0 for k in d), "hop counts 1, 2, ... as keys"
    )


LENGTH = Checked(int, lambda n: n >= 2, "a length of at least 2 tokens")  # the break rules take log(n - 1)
BREAK = Nullable(Checked(float, lambda b: b > 0, "a positive length"))


def _same_length(d: dict) -> bool:
    width = len(d["lengths"])
    return all(len(column) == width for column in (d["accuracy"], d["n_per_length"], *d["per_hop"].values()))


# evaluate --lengths (the lengths, long and rescale stages)
LENGTHS_FILE = Checked(
    {
        "lengths": _nonempty(LENGTH),
        "accuracy": [float],
        "per_hop": _hop_keys([Nullable(float)]),
        "n_per_length": [int],
        "seed?": int,
    },
    _same_length,
    "accuracy, n_per_length and every per_hop list as long as lengths",
)
TEST_FILE = {"split?": str, "accuracy": float, "per_hop": _hop_keys(float)}
_QUANTILE = f"q{QUANTILE:g}"  # the quantile break_prediction reads
_LAYER = {
    "layer": int,
    "gap": {_QUANTILE: [float], "*": [Nullable(float)]},
    "top_weight": {_QUANTILE: [float], "*": [Nullable(float)]},
}
BREAKS = {
    "measured": BREAK,
    "measured_per_hop": _hop_keys(BREAK),
    "predicted": {"*": {"break": BREAK, "*": ANY}},
}


def _per_length(block: dict) -> bool:
    width = len(block["lengths"])
    return all(
        len(layer[kind][_QUANTILE]) == width for layer in block["layers"] for kind in ("gap", "top_weight")
    )


DILUTION_FILE = {
    "dilution": Checked(
        {"lengths": _nonempty(LENGTH), "layers": [_LAYER]},
        _per_length,
        f"every layer's gap and top_weight {_QUANTILE} lists as long as lengths",
    ),
    "breaks?": dict,
}  # an old one may lack fields: checked against BREAKS once refreshed (collect)


def _scores_per_step(d: dict) -> bool:
    return len(d["scores"]["positional"]) == len(d["scores"]["symbolic"]) == len(d["steps"])


ANALYSIS_FILE = Checked(
    {
        "steps": _nonempty(int),
        "best_step": Nullable(int),
        "n_inputs?": int,
        "scores": {"positional": [[float]], "symbolic": [[float]]},
        "purity": {"*": {"pure_from_step": [Nullable(int)]}},
    },
    _scores_per_step,
    "one positional and one symbolic score row per step",
)

STAGE_SHAPES = {
    "train": dict,
    "test": TEST_FILE,
    "lengths": LENGTHS_FILE,
    "long": LENGTHS_FILE,
    "rescale": LENGTHS_FILE,
    "dilution": DILUTION_FILE,
    "rescale_dilution": DILUTION_FILE,
    "analyze": ANALYSIS_FILE,
}
MEMBER_SHAPE = {"task": str, "seed": int, "preset": str, "set": [str]}  # the runner's member.json
SUMMARY_SHAPE = {"members": {"*": {"stages": [str]}}}  # what the ship guard compares
BEST_SHAPE = {"member": str}


def read_json(path: Path, shape, what: str):
    """The validated content of ``path``, None where there is no such file (a folder or FIFO
    there is refused by ``load_json``, not taken for absent)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        pass  # unreadable: load_json names why
    return load_json(path, shape, what)


def read_stage_file(folder: Path, stage: str, name: str):
    """A member's output of ``stage`` (file ``name``), validated; None while the stage has not run."""
    return read_json(folder / name, STAGE_SHAPES[stage], f"study member file ({stage} stage)")


def check_stage_outputs(folder: Path, outputs: dict) -> None:
    """Validate every output a member already has (``outputs``: stage -> file name)."""
    for stage, name in outputs.items():
        read_stage_file(folder, stage, name)
