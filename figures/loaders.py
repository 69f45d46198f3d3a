"""Where every input of the figures lives, read once per run; never compute or train anything.

:class:`Inputs` holds each input's location (the repository's own result files by default,
each with a path override) and reads it through ``figures.input_files``, which checks the
file's shape and names the command that writes an absent one.  On top of single files it
knows the seed study's member folders, the variants summary's blocks and the LLM model
folders.  :class:`Built` and :func:`per_task` let a figure builder draw what exists and report
what is missing (a partial figure).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from theory.io.inputs import InputError

from .input_files import COMMANDS, ROOT, MissingInput, command_for, read_json, read_validation, repo_relative

# The seed study's variant whose members the figures draw: the paper's recipe, as the shipped runs.
SEED_VARIANT = "paper"


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
        return self._cached(
            ("analysis", str(path)),
            lambda: read_json(path, "analysis", task, ("steps", "layers", "scores", "purity")),
        )

    def analysis_block(self, task: str, block: str) -> dict:
        """One optional block of analysis.json; its absence is a missing input, not a bad file."""
        analysis = self.analysis(task)
        if not analysis.get(block):
            path = Path(self.runs_dir) / task / "analysis.json"
            raise MissingInput(path, command_for("analysis", path, task), field=block)
        return analysis[block]

    def length_generalisation(self, task: str) -> dict:
        return self._length_in(Path(self.runs_dir) / task, task)

    def _length_in(self, folder: Path, task: str) -> dict:
        path = folder / "length_generalisation.json"
        return self._cached(
            ("length", str(path)), lambda: read_json(path, "length", task, ("lengths", "accuracy"))
        )

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
            raise MissingInput(path, command_for("metrics", path, task))
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
        load = {"analysis": self._analysis_in, "length": self._length_in, "validation": self._validation_in}[
            what
        ]
        found = {}
        for seed, folder in self.seed_folders(task).items():
            try:
                found[seed] = load(folder, task)
            except MissingInput:
                continue
        if not found:
            name = {
                "analysis": "analysis.json",
                "length": "length_generalisation.json",
                "validation": "metrics.jsonl",
            }[what]
            path = Path(self.seeds_dir) / SEED_VARIANT / task / "seed-*" / name
            raise MissingInput(path, COMMANDS["study"])
        return found

    def proofs_figure5a(self) -> dict:
        return self._cached(
            "figure5a",
            lambda: read_json(
                self.figure5a, "figure5a", required=("n", "index", "index_worst_angle", "retrieval")
            ),
        )

    def construction_figure4a(self) -> dict:
        return self._cached(
            "figure4a",
            lambda: read_json(self.figure4a, "figure4a", required=("theta", "key", "queries", "logits")),
        )

    def variants_summary(self) -> dict:
        """``summary.json`` of the variants study (``training.studies.collect``): the plan's
        variants and, per variant and task, every metric's per-seed values and statistics."""
        path = Path(self.variants_dir) / "summary.json"
        summary = self._cached(
            ("variants", str(path)),
            lambda: read_json(path, "variants", required=("variants", "results", "interval")),
        )
        for key in ("variants", "results"):
            if not isinstance(summary[key], dict):
                found = type(summary[key]).__name__
                raise InputError(f"{repo_relative(path)}: '{key}' should be an object, found {found}")
        for name, per_task in summary["results"].items():
            if not isinstance(per_task, dict) or not all(isinstance(r, dict) for r in per_task.values()):
                raise InputError(
                    f"{repo_relative(path)}: results.{name} should map each task to an object of metrics"
                )
        return summary

    def variants_missing(self, field: str) -> MissingInput:
        """The variants summary is there but lacks ``field`` (a block no member has reached yet)."""
        path = Path(self.variants_dir) / "summary.json"
        return MissingInput(path, command_for("variants", path), field=field)

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
        return self._cached(
            ("llm_heads", str(path)),
            lambda: _check_head_grid(
                read_json(path, "llm_heads", task, ("layers", "heads", "per_head", "frequency")), path
            ),
        )

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
    blocks.update(
        {
            f"frequency.{key}": frequency[key]
            for key in ("dominant_id", "weights", "dominant_angle")
            if key in frequency
        }
    )
    for name, block in blocks.items():
        if len(block) != layers or any(len(row) != heads for row in block):
            raise InputError(f"{repo_relative(path)}: {name} should be {layers} layers x {heads} heads")
    kinds = frequency.get("layer_kind")
    if kinds is not None and len(kinds) != layers:
        raise InputError(
            f"{repo_relative(path)}: frequency.layer_kind has {len(kinds)} entries for {layers} layers"
        )
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
