"""C11-llm: in a pretrained LLM, positional heads use faster RoPE planes than symbolic heads.

Decided per model, by one rule: ``C11-llm`` on SmolLM2-135M-Instruct, ``C11-llm-gemma3`` on
Gemma 3 270M (registered before its analysis ran).

The paper's Table 1 (C11) ties fast planes to positional heads in our small trained GPT-J.
This claim asks the same of a real pretrained model, from the shipped per-head analysis of
SmolLM2-135M-Instruct (``training/reference/llm/smollm2/analysis_<task>.json``, written by
``python -m training analyze --model``; its README gives the command).  Only JSON is read;
the model is never run here.

The test, per task (both tasks' inputs, each its own analysis):

1. Exclude sink-dominated heads: mean attention on the first token > ``SINK_LIMIT``.  Such a
   head barely moves under a swap, which inflates its scores (mostly the symbolic one).
2. Classify the rest: positional when s_POS >= ``SCORE_LIMIT`` > s_SYM, symbolic when
   s_SYM >= ``SCORE_LIMIT`` > s_POS; a head with both (or neither, or no score) is mixed and
   left out.
3. Compare the two groups' frequency IDs (``frequency.dominant_id``: the plane with the largest
   mean positive contribution to the top logit, 1 = fastest) with one-sided Mann-Whitney U
   tests (scipy.stats.mannwhitneyu; U is the positional group's statistic).

Verdict: verified when in every task the positional heads' IDs are significantly lower
(p < ``ALPHA``, alternative "less"); refuted when in any task they are significantly higher
(p < ``ALPHA``, alternative "greater"); undecided otherwise (also when a group is empty or a
task's file is absent).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from proofs_check.evidence.shipped import LLM_HEADS, read
from training.analysis.head_classes import SCORE_LIMIT, SINK_LIMIT, classify_heads  # steps 1-2: the rule

from ..registry import Outcome, claim

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "training" / "reference" / "llm" / "smollm2"
SHIPPED_GEMMA3 = ROOT / "training" / "reference" / "llm" / "gemma3"
TASKS = ("number", "letter")
ALPHA = 0.01
ID_FIELD = "dominant_id"
RULE = (
    f"per task: exclude heads with sink share (mean attention on the first token) > {SINK_LIMIT}; of the rest, "
    f"positional if s_POS >= {SCORE_LIMIT} > s_SYM, symbolic if s_SYM >= {SCORE_LIMIT} > s_POS, else mixed "
    f"(left out); compare frequency.{ID_FIELD} (1 = fastest plane) of positional vs symbolic heads with one-sided "
    f"Mann-Whitney U tests. Verified if positional IDs are lower with p < {ALPHA} in every task; refuted if they "
    f"are higher with p < {ALPHA} in any task; undecided otherwise"
)
COMMAND = (
    "python -m training analyze --model {model} --task {task} --json {path} "
    "(training/reference/llm/{folder}/README.md)"
)
GGUF = {"smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3": "gemma-3-270m-Q4_K_M.gguf"}
# the type a GGUF file's name ends with (llama.cpp's naming: Q4_K_M, Q4_1, Q8_0, IQ4_XS, F16, ...)
GGUF_TYPE = re.compile(r"(?:^|[-._])((?:I?Q(\d+)(?:_[A-Z0-9]+)*)|BF16|F16|F32)\.gguf$", re.IGNORECASE)


def weights(analysis: dict) -> dict:
    """The weights an analysis ran on, read from its ``model`` field (the file's name: the analysis
    is written from the folder that holds the file, README) and its ``dtype``: {"file", "gguf",
    "quantisation", "bits", "dtype"}.  quantisation and bits are None when the name is not a
    GGUF file's or names no type (the GGUF header itself is not recorded in the analysis)."""
    name = Path(str(analysis.get("model") or "")).name
    match = GGUF_TYPE.search(name)
    kind = match.group(1).upper() if match else None
    bits = int(match.group(2)) if match and match.group(2) else int(kind[-2:]) if kind else None
    return {
        "file": name or None,
        "gguf": name.lower().endswith(".gguf"),
        "quantisation": kind,
        "bits": bits,
        "dtype": analysis.get("dtype"),
    }


def weights_said(found: dict) -> str:
    """ "weights SmolLM2-135M-Instruct.Q4_1.gguf (GGUF type Q4_1, 4-bit, de-quantised to float32)"."""
    if not found["gguf"]:
        return f"weights {found['file'] or 'not named'} (not a GGUF file)"
    kind = (
        "type not named in the file name"
        if found["quantisation"] is None
        else f"GGUF type {found['quantisation']}, {found['bits']}-bit"
    )
    dtype = f", de-quantised to {found['dtype']}" if found["dtype"] else ""
    return f"weights {found['file']} ({kind}{dtype})"


def compare_groups(analysis: dict) -> dict:
    """Group sizes, exclusions, median IDs and both one-sided tests of one task's analysis."""
    from scipy.stats import mannwhitneyu

    kinds = classify_heads(analysis)
    ids = np.array(analysis["frequency"][ID_FIELD], dtype=float)
    groups = {kind: ids[kinds == kind] for kind in ("positional", "symbolic")}
    row = {
        "heads": int(kinds.size),
        "sink_dominated": int((kinds == "sink").sum()),
        "mixed": int((kinds == "mixed").sum()),
        **{f"n_{k}": len(v) for k, v in groups.items()},
        **{f"median_id_{k}": float(np.median(v)) if len(v) else None for k, v in groups.items()},
        "weighted_id_median": _weighted_medians(analysis, kinds),
    }
    if not all(len(v) for v in groups.values()):
        return {**row, "U": None, "p_lower": None, "p_higher": None}
    lower = mannwhitneyu(groups["positional"], groups["symbolic"], alternative="less")
    higher = mannwhitneyu(groups["positional"], groups["symbolic"], alternative="greater")
    return {
        **row,
        "U": float(lower.statistic),
        "p_lower": float(lower.pvalue),
        "p_higher": float(higher.pvalue),
    }


def _weighted_medians(analysis: dict, kinds: np.ndarray) -> dict:
    """Beside the decision (not part of it): the groups' medians of the weighted-average ID."""
    weighted = np.array(analysis["frequency"]["weighted_id"], dtype=float)
    return {
        kind: float(np.nanmedian(weighted[kinds == kind])) if (kinds == kind).any() else None
        for kind in ("positional", "symbolic")
    }


def decide(rows: dict) -> str:
    """The verdict of the module's rule from each task's ``compare_groups`` row."""
    if any(r["p_higher"] is not None and r["p_higher"] < ALPHA for r in rows.values()):
        return "refuted"
    if rows and all(r["p_lower"] is not None and r["p_lower"] < ALPHA for r in rows.values()):
        return "verified"
    return "undecided"


def _line(task: str, r: dict) -> str:
    test = "no test (a group is empty)" if r["U"] is None else f"U = {r['U']:g}, p = {r['p_lower']:.2g}"
    median = {
        k: "none" if r[f"median_id_{k}"] is None else f"{r[f'median_id_{k}']:g}"
        for k in ("positional", "symbolic")
    }
    return (
        f"{task}: {r['n_positional']} positional (median ID {median['positional']}) vs {r['n_symbolic']} "
        f"symbolic (median ID {median['symbolic']}), {test}; {r['sink_dominated']} sink-dominated and "
        f"{r['mixed']} mixed of {r['heads']} left out"
    )


def shown_path(path: Path) -> str:
    """Relative to the repository when inside it: the same text on every machine."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def check_folder(folder: Path) -> Outcome:
    """Decide the claim on ``folder``/analysis_<task>.json."""
    folder = Path(folder)
    absent = {
        t: folder / f"analysis_{t}.json" for t in TASKS if not (folder / f"analysis_{t}.json").is_file()
    }
    if absent:
        commands = "; ".join(
            COMMAND.format(
                model=GGUF.get(folder.name, "MODEL"), task=t, path=shown_path(p), folder=folder.name
            )
            for t, p in absent.items()
        )
        return Outcome(
            "undecided",
            f"missing {', '.join(shown_path(p) for p in absent.values())} (write it with: {commands})",
            {"rule": RULE, "missing": [shown_path(p) for p in absent.values()]},
        )
    analyses = {t: read(folder / f"analysis_{t}.json", LLM_HEADS) for t in TASKS}
    rows = {t: compare_groups(a) for t, a in analyses.items()}
    status = decide(rows)
    found = weights(analyses[TASKS[0]])
    evidence = {
        "rule": RULE,
        "source": shown_path(folder),
        "model": analyses[TASKS[0]].get("model"),
        "weights": found,
        "per_task": rows,
    }
    return Outcome(
        status,
        "; ".join(_line(t, r) for t, r in rows.items())
        + f"; {weights_said(found)} (source: {shown_path(folder)})",
        evidence,
    )


@claim(
    "C11-llm",
    "In a pretrained LLM (SmolLM2-135M-Instruct), positional heads use faster RoPE planes than "
    "symbolic heads",
    "Appendix G, Table 1 (C11), asked of a real model",
    recorded="verified",
    kind="experiment",
    origin="package",
)
def positional_heads_use_faster_planes(options):
    return check_folder(SHIPPED)


@claim(
    "C11-llm-gemma3",
    "In a second pretrained LLM family (Gemma 3 270M, base model; sliding-window layers with "
    "RoPE base 10,000 and full-attention layers with base 1,000,000), positional heads use faster RoPE planes "
    "than symbolic heads, each plane ID counted in its own layer's base",
    "Appendix G, Table 1 (C11), asked of a second model family; the rule of C11-llm, unchanged, "
    "registered 2026-12-03 before Gemma 3 was analysed",
    recorded="verified",
    kind="experiment",
    origin="package",
)
# recorded undecided when registered: no Gemma 3 analysis had run.  Recorded verified when it ran
# (2026-12-03): number 26 positional (median ID 76) vs 11 symbolic (114), p = 0.00037; letter 15
# vs 12 (76 vs 116.5), p = 5.1e-05 (IDs of 128 planes, each in its layer's own base).
def positional_heads_use_faster_planes_in_gemma3(options):
    return check_folder(SHIPPED_GEMMA3)
