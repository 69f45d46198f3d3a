"""What each input file of the figures is, and how one file is read: nothing is computed here.

Each kind of input has the command that writes it (``COMMANDS``) and the shape its figures rely
on (``SHAPES``).  A file that is absent raises :class:`MissingInput`, whose message names the
file and that command; a file that is there but does not follow its shape raises
:class:`InputError` naming the file and what is wrong.  The figure code can then say precisely
why a figure was skipped.

Every file is read through ``theory.io.inputs`` (the package's one JSON loader) against its
shape: a FIFO given as an input, a file that is not UTF-8, JSON nested thousands of levels
deep or a field of the wrong type is an ``InputError`` naming the file and the field, never a
hang or a traceback.

Separate from ``figures.loaders`` (where each input lives, and the figure-level view of them):
this module knows single files, that one knows folders, seeds and models.
"""

from __future__ import annotations

from pathlib import Path

from theory.io.inputs import ANY, Checked, InputError, Nullable, check_shape, iter_jsonl, load_json

ROOT = Path(__file__).resolve().parents[1]

# How each input is produced; ``{path}`` is the file asked for, ``{task}`` the task.
COMMANDS = {
    "analysis": "python -m training analyze --run training/reference/{task} --task {task} --json {path}",
    "length": (
        "python -m training evaluate --run training/reference/{task} --task {task} "
        "--lengths 17,25,50,100,200,400,850,1500,3000,5000 --json {path}"
    ),
    "metrics": (
        "python -m training train --task {task} --preset paper --out {folder} "
        "(all tasks: sh scripts/train_reference.sh)"
    ),
    "figure5a": "python -m proofs_check.figure5a --out {path}",
    "llm": "python -m training llm --backend hf|openai --model M --task T --json {path}",
    "llm_heads": (
        "python -m training analyze --model MODEL --task {task} --json {path} "
        "(the model and the exact command: {folder}/README.md)"
    ),
    "figure4a": (
        'python -c "from constructions.geometry import write_figure4a; '
        "write_figure4a('{path}', '0.8', range(1, 9))\""
    ),
    "study": "python -m training study training/studies/seeds.json --collect (its ship folder; or --seeds DIR)",
    "variants": (
        "python -m training study training/studies/variants.json --collect "
        "(its ship folder; or --variants DIR)"
    ),
}
# The shape each input must have (theory.io.inputs): the fields the figures read, with their
# types.  Series may hold null (a length or step that was not measured).
_SERIES = [Nullable(float)]
_MATRIX = [[Nullable(float)]]  # per checkpoint, per layer (an LLM analysis: per layer, per head)
_POSITIVE = Checked(float, lambda v: v > 0, "a positive number")  # drawn on a log scale
_THETA = {"decimal?": str, "exact?": str}
_INDEX_BLOCK = {
    "theta": _THETA,
    "sup": _SERIES,
    "inf": _SERIES,
    "stated_bound": _SERIES,
    "corrected_sup_bound?": _SERIES,
}
SHAPES = {
    "analysis": {
        "steps": [int],
        "layers": int,
        "purity": {"*": dict},
        "scores": {
            "positional": _MATRIX,
            "symbolic": _MATRIX,
            "entropy?": _MATRIX,
            "entropy_normalised?": _MATRIX,
        },
        "validation?": [dict],
        "frequency?": Nullable(dict),
        "index_geometry?": Nullable(dict),
        "measured_discrepancy?": Nullable(ANY),
    },
    "length": {"lengths": [int], "accuracy": _SERIES, "per_hop?": {"*": _SERIES}},
    "figure5a": {
        "n": [int],
        "index": dict(_INDEX_BLOCK, corrected_sup_bound=_SERIES),
        "index_worst_angle": {"theta": {"exact": str}, "sup": _SERIES},
        "index_sup_over_angles?": Nullable(_SERIES),
        "retrieval": {
            "theta": {"decimal": str},
            "alph_size": int,
            "n0_max": int,
            "stated_bound": _SERIES,
            "competitor": _SERIES,
            "corrected_competitor_bound": _SERIES,
            "margin": _SERIES,
            "sup": _SERIES,
            "inf": _SERIES,
            "inf_lower_bound?": _SERIES,
        },
    },
    "figure4a": {
        "theta": str,
        "theta_decimal?": str,
        "key": [float],
        "queries": {"*": [float]},
        "rotated_queries": {"*": {"*": [float]}},
        "logits": {"*": {"*": Nullable(float)}},
    },
    "llm": {"model": str, "task": str, "per_length": [{"length": int, "accuracy_mean": Nullable(float)}]},
    "llm_heads": {
        "layers": int,
        "heads": int,
        "per_head": {"positional": _MATRIX, "symbolic": _MATRIX, "sink": _MATRIX},
        "frequency": {
            "dominant_id": _MATRIX,
            "weights": [[[Nullable(float)]]],
            "layer_kind?": [str],
            "dominant_angle?": [[Nullable(_POSITIVE)]],
        },
    },
    "variants": dict,  # Inputs.variants_summary checks its blocks, naming them
    "study": {"dilution": dict, "breaks": dict},
}
# One validation record of metrics.jsonl (other splits are not read).
_RECORD = {"split?": str}
_VALIDATION_RECORD = {"step": int, "accuracy": float, "accuracy_by_hop?": {"*": Nullable(float)}}


class MissingInput(Exception):
    """Input files are absent: ``items`` holds (path, command that writes it, field) for each;
    ``field`` names an optional block of a file that is there but lacks it ("" otherwise)."""

    def __init__(self, path: Path, command: str, more: list | None = None, field: str = ""):
        self.path, self.command = Path(path), command
        self.items = [(self.path, command, field)] + list(more or [])
        super().__init__("; ".join(_missing_line(*item) for item in self.items))

    @classmethod
    def combine(cls, missing: list[MissingInput]) -> MissingInput:
        items = [item for m in missing for item in m.items]
        return cls(items[0][0], items[0][1], items[1:], items[0][2])


def _missing_line(path: Path, command: str, field: str) -> str:
    where = f"the '{field}' block of " if field else ""
    return f"missing {where}{repo_relative(path)} (produce it with: {command})"


def repo_relative(path: Path) -> str:
    """A path relative to the repository when it lies inside it: shorter and copy-pastable."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def command_for(kind: str, path: Path, task: str = "") -> str:
    return COMMANDS[kind].format(path=repo_relative(path), task=task, folder=repo_relative(Path(path).parent))


def read_json(path: Path, kind: str, task: str = "", required: tuple = ()) -> dict:
    """One JSON object of the shape ``SHAPES[kind]``; absent -> MissingInput; unreadable, not
    JSON or of another shape (``required`` keys absent among them) -> InputError naming the
    file and the field."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise MissingInput(path, command_for(kind, path, task))
    data = load_json(path, dict)  # a FIFO or folder here: InputError, never a hang
    require(data, required, path)  # every absent field in one line
    check_shape(data, SHAPES.get(kind, dict), str(path))
    return data


def require(data, keys, path) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{repo_relative(path)}: expected a JSON object, found {type(data).__name__}")
    absent = [key for key in keys if key not in data]
    if absent:
        raise InputError(f"{repo_relative(path)} lacks the field(s) {', '.join(absent)}")


def read_validation(path: Path, task: str) -> list[dict]:
    """The validation records of a training's metrics.jsonl (``training.run.loop`` writes one per
    evaluation: split "validation", step, accuracy, accuracy_by_hop), in the shape of
    analysis.json's "validation" list: step, overall, per_hop."""
    path = Path(path)
    if not path.is_file():
        raise MissingInput(path, command_for("metrics", path, task))
    records = []
    # a torn last line is a training killed mid-record: the records before it stand
    for number, record in enumerate(iter_jsonl(path, _RECORD), 1):
        if record.get("split") == "validation":
            absent = [key for key in ("step", "accuracy") if key not in record]
            if absent:
                raise InputError(
                    f"{repo_relative(path)}: a validation record lacks the field(s) {', '.join(absent)}"
                )
            check_shape(record, _VALIDATION_RECORD, f"{repo_relative(path)} record {number}")
            records.append(
                {
                    "step": record["step"],
                    "overall": record["accuracy"],
                    "per_hop": record.get("accuracy_by_hop", {}),
                }
            )
    if not records:
        raise InputError(f"{repo_relative(path)} holds no validation record")
    return records
