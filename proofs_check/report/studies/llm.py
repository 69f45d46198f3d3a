"""Pretrained LLMs: head maps (C11-llm) and the 1-hop harness (C12-local).

Every model is found by globbing, never by name: a folder ``training/reference/llm/<model>/``
holding ``analysis_<task>.json`` (``python -m training analyze --model``) gives a head map, and
a pair ``training/reference/llm/<model>_number.json`` / ``<model>_letter.json`` (``python -m
training llm``) gives the 1-hop accuracies.  The groups and tests are the claims' own functions
(``proofs_check.claims.llm_heads.compare_groups``, ``llm_local.decide``) applied to the files.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.claims.llm_heads import SCORE_LIMIT, SHIPPED, SINK_LIMIT, TASKS, compare_groups, weights
from proofs_check.claims.llm_layers import KINDS, fisher_row, layer_table
from proofs_check.claims.llm_local import SCREEN_LENGTH, SCREEN_LEVEL, decide, load_results, run_facts, screen
from proofs_check.evidence.shipped import LLM_HEADS, read
from proofs_check.registry import REGISTRY
from proofs_check.report.doc import Bullets, Num, Para, Ref, Section, num
from training.analysis.adapters import supported_families  # the adapters' own list (HF_FAMILIES)

from .common import claim, figure, joined, not_shipped

ANCHOR, TITLE = "study-llm", "Pretrained LLMs: positional and symbolic heads"
FOLDER = "training/reference/llm"
COMMAND = (
    "python -m training analyze --model PATH --task T --json training/reference/llm/MODEL/analysis_T.json "
    "--replace-shipped"
)
HEADS_SOURCE = "training/analysis/head_classes.py"  # SINK_LIMIT, SCORE_LIMIT (C11-llm reads them there)


def head_folders(root: Path) -> list[Path]:
    """Every model folder with an analysis of each task, by name."""
    folder = Path(root) / FOLDER
    return (
        sorted(
            p
            for p in folder.iterdir()
            if p.is_dir() and all((p / f"analysis_{t}.json").is_file() for t in TASKS)
        )
        if folder.is_dir()
        else []
    )


def harness_models(root: Path) -> list[str]:
    """Every model name with both tasks' results of the 1-hop harness, by name."""
    folder = Path(root) / FOLDER
    return sorted(
        p.name.removesuffix("_letter.json")
        for p in folder.glob("*_letter.json")
        if (folder / p.name.replace("_letter.json", "_number.json")).is_file()
    )


def section(root: Path) -> Section:
    folders, models = head_folders(root), harness_models(root)
    if not folders and not models:
        return not_shipped(ANCHOR, TITLE, FOLDER, COMMAND)
    blocks = [
        Para(
            [
                "Every head of a local pretrained RoPE model gets a positional and a symbolic score on the two "
                "tasks' inputs, the share of its attention on the first token (the attention sink, which inflates "
                "the symbolic score) and its dominant RoPE plane. Heads whose sink share is above ",
                num(SINK_LIMIT, "g", HEADS_SOURCE),
                " are left out; of the rest a head is positional when only its positional score reaches ",
                num(SCORE_LIMIT, "g", HEADS_SOURCE),
                ", symbolic when only its "
                "symbolic score does. A one-sided Mann-Whitney test asks whether positional heads use faster "
                "planes, as ",
                Ref("Table 1"),
                " says of the small trained model. The analysis reads the families ",
                Ref(supported_families()),
                "; a model of another family is refused before it loads.",
            ]
        )
    ]
    quantised = _weights_finding(folders)
    if quantised is not None:
        blocks.append(quantised)
    for folder in folders:
        blocks.append(Bullets(_head_findings(root, folder)))
        layers = _layer_finding(folder)
        if layers is not None:
            blocks.append(layers)
    blocks.append(
        figure(
            root,
            "llm_heads",
            [
                "Head maps of the shipped pretrained models, a column per model and "
                "task: positional and symbolic scores, sink share, dominant RoPE plane "
                "and, where layers have their own base, its angle per token; "
                "full-attention layers marked F. One cell per head."
            ],
        )
    )
    screened = _screen_finding(root, models)
    if screened is not None:
        blocks.append(screened)
    for model in models:
        para = _harness_finding(root, model)
        if para is not None:
            blocks.append(para)
    return Section(ANCHOR, TITLE, blocks)


def _weights_finding(folders: list[Path]) -> Para | None:
    """The weights each head analysis ran on: the GGUF type its file name carries (the ``model``
    field names the file, README) and the dtype it was de-quantised to (``dtype``)."""
    found = [(f, weights(read(f / f"analysis_{TASKS[0]}.json", LLM_HEADS))) for f in folders]
    found = [(f, w) for f, w in found if w["gguf"]]
    if not found:
        return None
    parts = ["The head analyses ran on the quantised weights of GGUF files, not on full-precision weights: "]
    for i, (folder, w) in enumerate(found):
        src = f"{FOLDER}/{folder.name}/analysis_{TASKS[0]}.json"
        parts += [*([", "] if i else []), Ref(w["file"])]
        if w["quantisation"] is None:
            parts += [" (its name gives no quantisation type)"]
        else:
            parts += [" (type ", Ref(w["quantisation"]), ", ", num(w["bits"], "d", src), "-bit weights)"]
    dtypes = sorted({w["dtype"] for _, w in found if w["dtype"]})
    if dtypes:
        parts += [", de-quantised to ", *joined([Ref(d) for d in dtypes]), " for the scoring"]
    return Para(
        parts
        + [
            ". The type is read from the file name each analysis records (its ",
            Ref("model"),
            " field); the analysis does not record the file's header. A full-precision model's heads may "
            "score differently.",
        ]
    )


def _layer_finding(folder: Path) -> Para | None:
    """LLM-local-global, for a model whose layers have two kinds (the analysis' layer_kind)."""
    parts = []
    for task in TASKS:
        analysis = read(folder / f"analysis_{task}.json", LLM_HEADS)
        if "layer_kind" not in analysis["frequency"]:
            return None
        src = f"{FOLDER}/{folder.name}/analysis_{task}.json"
        row = fisher_row(layer_table(analysis))
        shares = [
            [
                num(row["table"][k][0], "d", src),
                " of ",
                num(sum(row["table"][k]), "d", src),
                f" in {kind} layers",
            ]
            for k, kind in enumerate(KINDS)
        ]
        parts += [
            *(["; "] if parts else []),
            task,
            " task: positional heads ",
            *shares[0],
            " against ",
            *shares[1],
            ", one-sided Fisher p ",
            num(row["p_more"], ".2g", src),
        ]
    return Para(
        [
            "Where the layers are of two kinds (sliding-window and full attention, each with its own RoPE "
            "base), are positional heads more frequent in the sliding ones? Sink-dominated heads left out, ",
            *parts,
            " (",
            claim("LLM-local-global"),
            ").",
        ]
    )


def _screen_finding(root: Path, models: list) -> Para | None:
    """Appendix H's screen, as C12-local applies it, per model."""
    folder = Path(root) / FOLDER
    found = [(m, screen(folder, m, load_results(folder, m)["letter"])) for m in models]
    found = [(m, s) for m, s in found if s["passes"] is not None]
    if not found:
        return None
    src = "proofs_check/claims/llm_local.py"
    parts = [
        "The paper judges generalisation only on models that pass a screen (",
        Ref("Appendix H"),
        "): at least ",
        num(SCREEN_LEVEL, "g", src),
        " accuracy on the one-hop letter task at length ",
        num(SCREEN_LENGTH, "d", src),
        ". ",
    ]
    for i, (model, result) in enumerate(found):
        data = f"{FOLDER}/{result['source']}"
        parts += [
            *([", "] if i else []),
            Ref(model),
            " scores ",
            num(result["accuracy"], ".3f", data),
            " there (",
            *(
                []
                if result.get("parse_rate") is None
                else [
                    "an answer could be read from ",
                    num(result["parse_rate"], ".3f", data),
                    " of its replies; ",
                ]
            ),
            "passes" if result["passes"] else "screened out",
            ")",
        ]
    return Para(parts + ["; ", claim("C12-local"), " judges only the models that pass."])


def _claims_for(folder: Path) -> list:
    ids = [f"C11-llm-{folder.name}"] + (
        ["C11-llm"] if folder.resolve() == SHIPPED.resolve() or folder.name == SHIPPED.name else []
    )
    return [claim(i) for i in ids if i in REGISTRY]


def _head_findings(root: Path, folder: Path) -> list:
    relative = {t: f"{FOLDER}/{folder.name}/analysis_{t}.json" for t in TASKS}
    analyses = {t: read(folder / f"analysis_{t}.json", LLM_HEADS) for t in TASKS}
    model = analyses[TASKS[0]].get("model") or folder.name
    links = _claims_for(folder)
    items = []
    for task, analysis in analyses.items():
        row, src = compare_groups(analysis), relative[task]
        parts = [
            Ref(str(model)),
            ", ",
            task,
            " task: ",
            num(row["n_positional"], "d", src),
            " positional heads (median plane ",
            _median(row["median_id_positional"], src),
            ") against ",
            num(row["n_symbolic"], "d", src),
            " symbolic (median plane ",
            _median(row["median_id_symbolic"], src),
            ")",
        ]
        if row["U"] is not None:
            parts += [", one-sided p ", num(row["p_lower"], ".1e", src)]
        parts += [
            "; of its ",
            num(row["heads"], "d", src),
            " heads, ",
            num(row["sink_dominated"], "d", src),
            " sink-dominated and ",
            num(row["mixed"], "d", src),
            " mixed ones are left out",
        ]
        if links:
            parts += [" (", *joined(links), ")"]
        items.append(Para(parts + ["."]))
    return items


def _median(value, src: str):
    return "none" if value is None else num(value, "g", src)


def _harness_finding(root: Path, model: str) -> Para | None:
    """C12-local: letter minus number accuracy over seeds, and how near chance the cells are."""
    results = load_results(Path(root) / FOLDER, model)
    if results is None:
        return None
    outcome = decide(results["number"], results["letter"])
    src = f"{FOLDER}/{model}_letter.json"
    difference = outcome.evidence["difference"]
    cells = outcome.evidence["cells"]
    near = [c for c in cells if c["versus_chance"] == "near"]
    name = results["letter"].get("model") or model
    parts = ["On the one-hop prompts of ", Ref("Table 2"), ", ", Ref(str(name)), " answers the letter task "]
    runs = _runs_said(model, run_facts(results), str(name))
    if difference["ci"] is None:
        return Para(parts + ["on too few seeds for an interval (", claim("C12-local"), "). ", *runs])
    low, high = difference["ci"]
    tail = (
        " task and length cells, so this model is near chance and cannot show the relation the frontier "
        "models show."
        if len(near) * 2 > len(cells)
        else " task and length cells."
    )
    return Para(
        parts
        + [
            "ahead of the number task by ",
            Num(f"{difference['mean']:+.3f}", src),
            ", interval over seeds [",
            Num(f"{low:+.3f}, {high:+.3f}", src),
            "] (",
            claim("C12-local"),
            "); chance lies inside the interval of ",
            num(len(near), "d", src),
            " of its ",
            num(len(cells), "d", src),
            tail,
            " ",
            *runs,
        ]
    )


def _runs_said(model: str, facts: dict, name: str) -> list:
    """The harness runs' parse rates (overall and the lowest at one length, per task) and whether
    the prompts were wrapped in the model's chat template, from each run's file."""
    parts = ["Its parse rate (the share of replies an answer could be read from) was "]
    for i, (task, f) in enumerate(facts.items()):
        src = f"{FOLDER}/{model}_{task}.json"
        parts += [" and " if i else ""]
        parts += ["not recorded"] if f["parse_rate"] is None else [num(f["parse_rate"], ".3f", src)]
        parts += [" on the ", task, " task"]
        if f["lowest_parse_rate"] is not None:
            parts += [
                " (lowest ",
                num(f["lowest_parse_rate"], ".3f", src),
                ", at length ",
                num(f["lowest_at_length"], "d", src),
                ")",
            ]
    templates = {f["chat_template"] for f in facts.values()}
    if templates == {False}:
        parts += [
            ". The prompts were given as plain text, without the model's chat template (each run's recorded "
            "setting ",
            Ref("settings.backend.chat_template"),
            ")",
            "; this model is instruction-tuned, so it never saw the turns it was trained to answer in."
            if "instruct" in name.lower()
            else ".",
        ]
    elif templates == {True}:
        parts += [". The prompts were wrapped in the model's chat template (each run's recorded setting)."]
    else:
        parts += [". The runs do not all record whether the model's chat template was used."]
    return [p for p in parts if p != ""]
