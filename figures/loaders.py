"""Read the saved results the figures are drawn from; never compute or train anything.

Every input has a default location in the repository and a path override.  A file that is
absent raises :class:`MissingInput`, whose message names the file and the command that
writes it; a file that is there but does not follow its schema raises :class:`InputError`
naming the file and what is wrong.  The figure code can then say precisely why a figure
was skipped.

Every file is read through ``theory.inputs`` (the package's one JSON loader) against the
shape below that its figures rely on: a FIFO given as an input, a file that is not UTF-8,
JSON nested thousands of levels deep or a field of the wrong type is an ``InputError``
naming the file and the field, never a hang or a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from theory.inputs import ANY, Checked, InputError, Nullable, check_shape, iter_jsonl, load_json

ROOT = Path(__file__).resolve().parents[1]

# How each input is produced; ``{path}`` is the file asked for, ``{task}`` the task.
COMMANDS = {
    "analysis": "python -m training analyze --run training/reference/{task} --task {task} --json {path}",
    "length": ("python -m training evaluate --run training/reference/{task} --task {task} "
               "--lengths 17,25,50,100,200,400,850,1500,3000,5000 --json {path}"),
    "metrics": ("python -m training train --task {task} --preset paper --out {folder} "
                "(all tasks: sh scripts/train_reference.sh)"),
    "figure5a": "python -m proofs_check.figure5a --out {path}",
    "llm": "python -m training llm --backend hf|openai --model M --task T --json {path}",
    "llm_heads": ("python -m training analyze --model MODEL --task {task} --json {path} "
                  "(the model and the exact command: {folder}/README.md)"),
    "figure4a": ("python -c \"from constructions.geometry import write_figure4a; "
                 "write_figure4a('{path}', '0.8', range(1, 9))\""),
    "study": "python -m training study training/studies/seeds.json --collect (its ship folder; or --seeds DIR)",
    "variants": ("python -m training study training/studies/variants.json --collect "
                 "(its ship folder; or --variants DIR)"),
}
# The shape each input must have (theory.inputs): the fields the figures read, with their
# types.  Series may hold null (a length or step that was not measured).
_SERIES = [Nullable(float)]
_MATRIX = [[Nullable(float)]]  # per checkpoint, per layer (an LLM analysis: per layer, per head)
_POSITIVE = Checked(float, lambda v: v > 0, "a positive number")  # drawn on a log scale
_THETA = {"decimal?": str, "exact?": str}
_INDEX_BLOCK = {"theta": _THETA, "sup": _SERIES, "inf": _SERIES, "stated_bound": _SERIES,
                "corrected_sup_bound?": _SERIES}
SHAPES = {
    "analysis": {"steps": [int], "layers": int, "purity": {"*": dict},
                 "scores": {"positional": _MATRIX, "symbolic": _MATRIX, "entropy?": _MATRIX,
                            "entropy_normalised?": _MATRIX},
                 "validation?": [dict], "frequency?": Nullable(dict), "index_geometry?": Nullable(dict),
                 "measured_discrepancy?": Nullable(ANY)},
    "length": {"lengths": [int], "accuracy": _SERIES, "per_hop?": {"*": _SERIES}},
    "figure5a": {"n": [int], "index": dict(_INDEX_BLOCK, corrected_sup_bound=_SERIES),
                 "index_worst_angle": {"theta": {"exact": str}, "sup": _SERIES},
                 "index_sup_over_angles?": Nullable(_SERIES),
                 "retrieval": {"theta": {"decimal": str}, "alph_size": int, "n0_max": int, "stated_bound": _SERIES,
                               "competitor": _SERIES, "corrected_competitor_bound": _SERIES, "margin": _SERIES,
                               "sup": _SERIES, "inf": _SERIES, "inf_lower_bound?": _SERIES}},
    "figure4a": {"theta": str, "theta_decimal?": str, "key": [float], "queries": {"*": [float]},
                 "rotated_queries": {"*": {"*": [float]}}, "logits": {"*": {"*": Nullable(float)}}},
    "llm": {"model": str, "task": str, "per_length": [{"length": int, "accuracy_mean": Nullable(float)}]},
    "llm_heads": {"layers": int, "heads": int,
                  "per_head": {"positional": _MATRIX, "symbolic": _MATRIX, "sink": _MATRIX},
                  "frequency": {"dominant_id": _MATRIX, "weights": [[[Nullable(float)]]],
                                "layer_kind?": [str], "dominant_angle?": [[Nullable(_POSITIVE)]]}},
    "variants": dict,  # Inputs.variants_summary checks its blocks, naming them
    "study": {"dilution": dict, "breaks": dict},
}
# One validation record of metrics.jsonl (other splits are not read).
_RECORD = {"split?": str}
_VALIDATION_RECORD = {"step": int, "accuracy": float, "accuracy_by_hop?": {"*": Nullable(float)}}

# The seed study's variant whose members the figures draw: the paper's recipe, as the shipped runs.
SEED_VARIANT = "paper"


class MissingInput(Exception):
    """Input files are absent: ``items`` holds (path, command that writes it, field) for each;
    ``field`` names an optional block of a file that is there but lacks it ("" otherwise)."""

    def __init__(self, path: Path, command: str, more: list | None = None, field: str = ""):
        self.path, self.command = Path(path), command
        self.items = [(self.path, command, field)] + list(more or [])
        super().__init__("; ".join(_missing_line(*item) for item in self.items))

    @classmethod
    def combine(cls, missing: list["MissingInput"]) -> "MissingInput":
        items = [item for m in missing for item in m.items]
        return cls(items[0][0], items[0][1], items[1:], items[0][2])


def _missing_line(path: Path, command: str, field: str) -> str:
    where = f"the '{field}' block of " if field else ""
    return f"missing {where}{_show(path)} (produce it with: {command})"


def _show(path: Path) -> str:
    """A path relative to the repository when it lies inside it: shorter and copy-pastable."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _command(kind: str, path: Path, task: str = "") -> str:
    return COMMANDS[kind].format(path=_show(path), task=task, folder=_show(Path(path).parent))


def read_json(path: Path, kind: str, task: str = "", required: tuple = ()) -> dict:
    """One JSON object of the shape ``SHAPES[kind]``; absent -> MissingInput; unreadable, not
    JSON or of another shape (``required`` keys absent among them) -> InputError naming the
    file and the field."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise MissingInput(path, _command(kind, path, task))
    data = load_json(path, dict)  # a FIFO or folder here: InputError, never a hang
    require(data, required, path)  # every absent field in one line
    check_shape(data, SHAPES.get(kind, dict), str(path))
    return data


def require(data, keys, path) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{_show(path)}: expected a JSON object, found {type(data).__name__}")
    absent = [key for key in keys if key not in data]
    if absent:
        raise InputError(f"{_show(path)} lacks the field(s) {', '.join(absent)}")


def read_validation(path: Path, task: str) -> list[dict]:
    """The validation records of a training's metrics.jsonl (``training.model.train`` writes one per
    evaluation: split "validation", step, accuracy, accuracy_by_hop), in the shape of
    analysis.json's "validation" list: step, overall, per_hop."""
    path = Path(path)
    if not path.is_file():
        raise MissingInput(path, _command("metrics", path, task))
    records = []
    # a torn last line is a training killed mid-record: the records before it stand
    for number, record in enumerate(iter_jsonl(path, _RECORD), 1):
        if record.get("split") == "validation":
            absent = [key for key in ("step", "accuracy") if key not in record]
            if absent:
                raise InputError(f"{_show(path)}: a validation record lacks the field(s) {', '.join(absent)}")
            check_shape(record, _VALIDATION_RECORD, f"{_show(path)} record {number}")
            records.append({"step": record["step"], "overall": record["accuracy"],
                            "per_hop": record.get("accuracy_by_hop", {})})
    if not records:
        raise InputError(f"{_show(path)} holds no validation record")
    return records


@dataclass
class Inputs:
    """Where every input lives; the defaults are the repository's own result files."""

    runs_dir: Path = ROOT / "training" / "reference"
    seeds_dir: Path = ROOT / "training" / "reference" / "seeds"
    llm_dir: Path = ROOT / "training" / "reference" / "llm"
    llm_heads_dir: Path = ROOT / "training" / "reference" / "llm"  # one folder per model (llm_head_models)
    figure5a: Path = ROOT / "proofs_check" / "results" / "figure5a.json"
    figure4a: Path = ROOT / "constructions" / "results" / "figure4a.json"
    variants_dir: Path = ROOT / "training" / "reference" / "variants"
    _cache: dict = field(default_factory=dict, repr=False)

    def _cached(self, key, load):
        # Several figures read the same analysis.json; parse it once per run.
        if key not in self._cache:
            self._cache[key] = load()
        return self._cache[key]

    def analysis(self, task: str) -> dict:
        return self._analysis_in(Path(self.runs_dir) / task, task)

    def _analysis_in(self, folder: Path, task: str) -> dict:
        path = folder / "analysis.json"
        return self._cached(("analysis", str(path)), lambda: read_json(
            path, "analysis", task, ("steps", "layers", "scores", "purity")))

    def analysis_block(self, task: str, block: str) -> dict:
        """One optional block of analysis.json; its absence is a missing input, not a bad file."""
        analysis = self.analysis(task)
        if not analysis.get(block):
            path = Path(self.runs_dir) / task / "analysis.json"
            raise MissingInput(path, _command("analysis", path, task), field=block)
        return analysis[block]

    def length_generalisation(self, task: str) -> dict:
        return self._length_in(Path(self.runs_dir) / task, task)

    def _length_in(self, folder: Path, task: str) -> dict:
        path = folder / "length_generalisation.json"
        return self._cached(("length", str(path)), lambda: read_json(path, "length", task, ("lengths", "accuracy")))

    def validation(self, task: str) -> list[dict]:
        return self._validation_in(Path(self.runs_dir) / task, task)

    def _validation_in(self, folder: Path, task: str) -> list[dict]:
        """Validation accuracy over steps: metrics.jsonl when present (the training's own record),
        else the "validation" list of analysis.json."""
        path = folder / "metrics.jsonl"
        if path.is_file():
            return self._cached(("metrics", str(path)), lambda: read_validation(path, task))
        analysis = self._analysis_in(folder, task)
        if not analysis.get("validation"):
            raise MissingInput(path, _command("metrics", path, task))
        return analysis["validation"]

    def seed_folders(self, task: str) -> dict[int, Path]:
        """The seed study's members of ``task``: {seed: <seeds_dir>/paper/<task>/seed-<seed>}, by seed."""
        folder = Path(self.seeds_dir) / SEED_VARIANT / task
        found = {}
        for path in folder.glob("seed-*") if folder.is_dir() else []:
            number = path.name.removeprefix("seed-")
            if path.is_dir() and number.isdecimal():
                found[int(number)] = path
        return dict(sorted(found.items()))

    def seeds(self, task: str, what: str) -> dict:
        """{seed: data} of every study member of ``task`` that has the input ``what``
        ("analysis", "length" or "validation"); members still running lack some files and are
        left out of that input only.  No member with it: MissingInput (the figure keeps the
        shipped run alone)."""
        load = {"analysis": self._analysis_in, "length": self._length_in, "validation": self._validation_in}[what]
        found = {}
        for seed, folder in self.seed_folders(task).items():
            try:
                found[seed] = load(folder, task)
            except MissingInput:
                continue
        if not found:
            name = {"analysis": "analysis.json", "length": "length_generalisation.json",
                    "validation": "metrics.jsonl"}[what]
            path = Path(self.seeds_dir) / SEED_VARIANT / task / "seed-*" / name
            raise MissingInput(path, COMMANDS["study"])
        return found

    def proofs_figure5a(self) -> dict:
        return self._cached("figure5a", lambda: read_json(
            self.figure5a, "figure5a", required=("n", "index", "index_worst_angle", "retrieval")))

    def construction_figure4a(self) -> dict:
        return self._cached("figure4a", lambda: read_json(
            self.figure4a, "figure4a", required=("theta", "key", "queries", "logits")))

    def variants_summary(self) -> dict:
        """``summary.json`` of the variants study (``training.studies.collect``): the plan's
        variants and, per variant and task, every metric's per-seed values and statistics."""
        path = Path(self.variants_dir) / "summary.json"
        summary = self._cached(("variants", str(path)), lambda: read_json(
            path, "variants", required=("variants", "results", "interval")))
        for key in ("variants", "results"):
            if not isinstance(summary[key], dict):
                raise InputError(f"{_show(path)}: '{key}' should be an object, found {type(summary[key]).__name__}")
        for name, per_task in summary["results"].items():
            if not isinstance(per_task, dict) or not all(isinstance(r, dict) for r in per_task.values()):
                raise InputError(f"{_show(path)}: results.{name} should map each task to an object of metrics")
        return summary

    def variants_missing(self, field: str) -> MissingInput:
        """The variants summary is there but lacks ``field`` (a block no member has reached yet)."""
        path = Path(self.variants_dir) / "summary.json"
        return MissingInput(path, _command("variants", path), field=field)

    def llm_head_models(self, tasks) -> list[Path]:
        """The model folders under ``llm_heads_dir``: every subfolder holding an ``analysis_<task>.json``
        of one of ``tasks``, by name.  A folder that itself holds one is a single model (the flag's
        older use); so is a folder with no model at all, whose missing files then name it."""
        folder = Path(self.llm_heads_dir)
        if not folder.is_dir() or _holds_llm_analysis(folder, tasks):
            return [folder]
        models = sorted(p for p in folder.iterdir() if p.is_dir() and _holds_llm_analysis(p, tasks))
        return models or [folder]

    def llm_head_analysis(self, task: str, model_dir: Path | None = None) -> dict:
        """``analysis_<task>.json`` of ``python -m training analyze --model`` (per-head scores) in
        ``model_dir`` (default: ``llm_heads_dir``), each [layer][head] block checked to be layers x heads."""
        path = Path(self.llm_heads_dir if model_dir is None else model_dir) / f"analysis_{task}.json"
        return self._cached(("llm_heads", str(path)), lambda: _check_head_grid(read_json(
            path, "llm_heads", task, ("layers", "heads", "per_head", "frequency")), path))

    def llm_results(self) -> list[dict]:
        """Every results JSON of ``python -m training llm`` in ``llm_dir`` but the screen runs
        (``<model>_screen.json``, claim C12-local) (none is fine: the paper's Table 3 is always
        drawn), sorted by file name for a stable legend."""
        folder = Path(self.llm_dir)
        results = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if path.name.endswith("_screen.json"):  # Appendix H's gate at one length, not a curve
                continue
            data = read_json(path, "llm", required=("model", "task", "per_length"))
            data["_file"] = path.name
            results.append(data)
        return results


def _holds_llm_analysis(folder: Path, tasks) -> bool:
    return any((folder / f"analysis_{task}.json").exists() for task in tasks)


def _check_head_grid(analysis: dict, path: Path) -> dict:
    """Every drawn [layer][head] block is layers x heads and layer_kind has one entry per layer:
    a file cut short is an InputError naming the block, not a map drawn from half of it."""
    layers, heads = analysis["layers"], analysis["heads"]
    blocks = {f"per_head.{key}": analysis["per_head"][key] for key in ("positional", "symbolic", "sink")}
    frequency = analysis["frequency"]
    blocks.update({f"frequency.{key}": frequency[key] for key in ("dominant_id", "weights", "dominant_angle")
                   if key in frequency})
    for name, block in blocks.items():
        if len(block) != layers or any(len(row) != heads for row in block):
            raise InputError(f"{_show(path)}: {name} should be {layers} layers x {heads} heads")
    kinds = frequency.get("layer_kind")
    if kinds is not None and len(kinds) != layers:
        raise InputError(f"{_show(path)}: frequency.layer_kind has {len(kinds)} entries for {layers} layers")
    return analysis


@dataclass
class Built:
    """What one figure builder wrote, and the inputs it had to leave out (a partial figure)."""

    paths: list
    missing: list = field(default_factory=list)


def per_task(load, tasks) -> tuple[dict, list[MissingInput]]:
    """Load one input per task; return what exists and what is missing.  Raise the first
    MissingInput when no task has it, since then nothing at all can be drawn."""
    found, missing = {}, []
    for task in tasks:
        try:
            found[task] = load(task)
        except MissingInput as absent:
            missing.append(absent)
    if not found:
        raise MissingInput.combine(missing)
    return found, missing
