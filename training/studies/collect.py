"""``study PLAN --collect``: one summary JSON over the members, every seed's value kept.

For every variant x task x metric: the value of each seed, then n, mean, sd and a 95%
interval (``theory.statistics.mean_interval``: Student t over seeds, and why).  Metrics:

* ``test_accuracy`` and ``test_accuracy_by_hop``   (evaluate --split test)
* ``length``: per total length, accuracy overall and by hop count (evaluate --lengths), and
  each seed's number of inputs per length (``n_per_length``)
* ``long``: the same past the grid (the plan's ``long`` stage, its variants only)
* ``rescaled``: the same for a variant trained without a query scale, evaluated with the scale
  switched on at inference (the plan's ``rescale`` stage), and ``rescaled_break``: per seed,
  where its accuracy over all hops first falls below 0.9 (None: never, up to its last length)
* ``best_step``, ``best_validation_accuracy``       (the run's metrics.jsonl)
* ``scores_at_best``: per layer, mean positional and symbolic score at the best checkpoint,
  and ``pure_from_step`` per layer for each purity threshold (analyze)
* ``breaks``: per seed, the measured break length and the breaks Lemma F.1 predicts from the
  softmax dilution (dilution; ``training.analysis.break_prediction``), and over every member of
  the study the rank correlation of predicted with measured (``premise``); recomputed at
  collect from the member's dilution and length files (``refresh_breaks``), so every reading
  of ``break_prediction.RULES`` covers members measured before it was added; ``rescaled_breaks``:
  the same from the dilution stage run with the inference-time scale (``rescale_dilution``)
  against the rescaled accuracy, and ``premise_rescaled`` its comparison over the study; both
  comparisons leave out (and name) a member below 0.9 already at the training length
  (``break_prediction.never_learned``), and the hop exponent leaves out a hop count below 0.9
  there; ``break_after_learning``: per seed, overall and per hop count, the first length where
  accuracy reaches 0.9 and the first after it where it falls below (for a model trained on
  longer inputs that is not yet right at 17; read by claim V-window, by no premise claim)
* ``theory``: what the discrepancy theory predicts for the variant's model at the evaluate
  lengths (``theory.variant_theory.variant_prediction``: per layer the slowest angle, the
  retrieval horizon and the logit growth of a symbolic head), computed, not measured

A member that lacks a stage contributes nothing to that metric (n says how many did).  Each
member's small files are copied beside the summary, so the shipped folder alone redraws
every figure: ``<ship>/<variant>/<task>/seed-<S>/{train,test_accuracy,length_generalisation,
dilution,dilution_rescaled,analysis,length_long,length_rescaled}.json`` and ``metrics.jsonl``;
weights are never copied (but see ``ship_best``).

Every input is read and checked first (``member_files``: the shapes; ``ship.check_replacement``:
a shipped summary is never replaced by one with fewer results unless ``overwrite``), and
only then is anything written, the summary last: a refusal or a damaged file writes nothing, and a
file that already holds what would be written (floats within ``ship.FLOAT_NOISE``) is left as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

from theory.io.inputs import InputError, check_shape
from theory.statistics import INTERVAL_METHOD, mean_interval
from theory.variant_theory import variant_prediction
from training.analysis.break_prediction import (
    RULES,
    break_after_learning,
    compare_breaks,
    hop_exponent,
    measured_break,
    member_breaks,
    never_learned,
)
from training.analysis.dynamics import best_step, read_validation
from training.analysis.measured_discrepancy import ALPH_SIZE
from training.model.gptj import ModelConfig
from training.run.metrics import Metrics
from training.run.weights import write_json_atomic
from training.tasks.vocab import SEQ_LEN

from .member_files import BREAKS, check_stage_outputs, read_stage_file
from .plan import Member, Plan
from .runner import OUTPUTS, recipe_conflict, run_folder, stage_commands
from .ship import (  # noqa: F401
    SMALL_FILES,
    best_choice,
    best_member,
    check_best_files,
    check_replacement,
    ship_member,
    write_best,
    write_json_if_changed,
)

__all__ = ["member_results", "member_source", "summarise", "theory_of", "collect", "refreshed_breaks"]

# (dilution stage, the accuracy stage its breaks are measured against, member_results key)
BREAK_SOURCES = (("dilution", "lengths", "breaks"), ("rescale_dilution", "rescale", "rescaled_breaks"))
ACCURACY = (0.0, 1.0)


def _read(folder: Path, stage: str, refreshed: dict | None = None):
    """A stage's output of the member in ``folder`` (validated), or its refreshed version."""
    if refreshed and stage in refreshed:
        return refreshed[stage]
    return read_stage_file(folder, stage, OUTPUTS[stage])


def member_source(plan: Plan, member: Member) -> Path:
    """Where a member's results are read: its folder below the plan's root, or, where that folder
    holds no stage output (a clone or a new machine, where the runs are not), the copy an earlier
    collect shipped beside the summary (the same file names), so adding seeds to a study needs
    only the new members' runs."""
    own = plan.folder(member)
    if any((own / name).is_file() for name in OUTPUTS.values()):
        return own
    shipped = plan.ship / member.id
    return shipped if (shipped / OUTPUTS["train"]).is_file() else own


def _metrics_file(plan: Plan, member: Member) -> Path:
    own = member_source(plan, member) / "metrics.jsonl"
    return own if own.is_file() else run_folder(plan, member) / "metrics.jsonl"


def refreshed_breaks(
    folder: Path, dilution_stage: str = "dilution", lengths_stage: str = "lengths"
) -> dict | None:
    """The dilution file of ``folder`` with its ``breaks`` block recomputed from its own dilution
    block and its accuracy file (``BREAK_SOURCES``), so a member measured before a reading was
    added (``break_prediction.RULES``) carries every reading; None where nothing changes (or
    there is no breaks block: a dilution run without --accuracy).  Reads only; derived numbers
    only: no model is run."""
    dilution, lengths = _read(folder, dilution_stage), _read(folder, lengths_stage)
    if not dilution or not lengths or "breaks" not in dilution:
        return None
    if dilution["dilution"]["lengths"][0] != lengths["lengths"][0]:  # member_breaks would raise
        raise InputError(
            f"{folder / OUTPUTS[dilution_stage]}: field dilution.lengths starts at "
            f"{dilution['dilution']['lengths'][0]}, but {folder / OUTPUTS[lengths_stage]} at "
            f"{lengths['lengths'][0]}; both grids must start at the same length"
        )
    breaks = member_breaks(dilution["dilution"], lengths)
    if json.loads(json.dumps(breaks)) == dilution["breaks"]:  # as the dilution stage writes it
        return None
    return {**dilution, "breaks": breaks}


def member_results(plan: Plan, member: Member, refreshed: dict | None = None) -> dict:
    """The numbers one member contributes (absent stages give absent keys); ``refreshed``:
    stage -> its file's content where ``refreshed_breaks`` changed it."""
    folder = member_source(plan, member)
    out = {"stages": [s for s, name in OUTPUTS.items() if (folder / name).is_file()]}
    test = _read(folder, "test")
    if test:
        out["test_accuracy"] = test["accuracy"]
        out["test_accuracy_by_hop"] = test["per_hop"]
    for stage, key in (("lengths", "length"), ("long", "long"), ("rescale", "rescaled")):
        lengths = _read(folder, stage)
        if lengths:
            out[key] = {
                "lengths": lengths["lengths"],
                "accuracy": lengths["accuracy"],
                "by_hop": lengths["per_hop"],
                "n_per_length": lengths["n_per_length"],
            }
    metrics = _metrics_file(plan, member)
    validation = read_validation(metrics.parent) if "train" in out["stages"] else []
    if validation:
        step = best_step(validation)  # the first best, as train keeps it
        out["best_step"] = step
        out["best_validation_accuracy"] = next(v["overall"] for v in validation if v["step"] == step)
        out["device"] = Metrics(metrics).settings().get("device")
    for stage, _, key in BREAK_SOURCES:
        dilution = _read(folder, stage, refreshed)
        if dilution and "breaks" in dilution:
            check_shape(dilution["breaks"], BREAKS, str(folder / OUTPUTS[stage]), "breaks")
            # a block without every reading is stale and could not be refreshed (its accuracy file is gone)
            if set(RULES) <= set(dilution["breaks"]["predicted"]):
                out[key] = dilution["breaks"]
    analysis = _read(folder, "analyze")
    if analysis:
        at = (
            analysis["steps"].index(analysis["best_step"])
            if analysis["best_step"] in analysis["steps"]
            else -1
        )
        out["scores_at_best"] = {
            "positional": analysis["scores"]["positional"][at],
            "symbolic": analysis["scores"]["symbolic"][at],
        }
        out["pure_from_step"] = {
            gamma: block["pure_from_step"] for gamma, block in analysis["purity"].items()
        }
    return out


def _stat(by_seed: dict, bounds=None) -> dict:
    return {"values": by_seed, **mean_interval(by_seed.values(), bounds=bounds)}


def _columns(per_seed: dict, key) -> list[dict]:
    """Seed -> list becomes list (one entry per position) of seed -> value."""
    width = max((len(v) for v in per_seed.values()), default=0)
    return [{seed: values[i] for seed, values in per_seed.items() if i < len(values)} for i in range(width)]


def _length_block(with_lengths: dict) -> dict:
    """seed -> one evaluate --lengths result -> per length, statistics overall and by hop (the
    seeds evaluated at the first seed's lengths)."""
    lengths = next(iter(with_lengths.values()))["lengths"]
    same = {s: v for s, v in with_lengths.items() if v["lengths"] == lengths}
    return {
        "lengths": lengths,
        "n_per_length": {s: v["n_per_length"] for s, v in same.items()},
        "accuracy": [_stat(c, ACCURACY) for c in _columns({s: v["accuracy"] for s, v in same.items()}, None)],
        "by_hop": {
            h: [
                _stat(c, ACCURACY)
                for c in _columns({s: v["by_hop"][h] for s, v in same.items() if h in v["by_hop"]}, None)
            ]
            for h in sorted(next(iter(same.values()))["by_hop"])
        },
    }


def summarise(results: dict) -> dict:
    """results: seed -> member_results of one variant and task -> every metric's statistics."""
    out = {}

    def scalar(name, bounds=None):
        values = {seed: r[name] for seed, r in results.items() if name in r}
        if values:
            out[name] = _stat(values, bounds)

    scalar("test_accuracy", ACCURACY)
    scalar("best_step")
    scalar("best_validation_accuracy", ACCURACY)
    hops = sorted({h for r in results.values() for h in r.get("test_accuracy_by_hop", {})})
    if hops:
        out["test_accuracy_by_hop"] = {
            h: _stat(
                {
                    s: r["test_accuracy_by_hop"][h]
                    for s, r in results.items()
                    if h in r.get("test_accuracy_by_hop", {})
                },
                ACCURACY,
            )
            for h in hops
        }
    for key in ("length", "long", "rescaled"):
        with_lengths = {s: r[key] for s, r in results.items() if key in r}
        if with_lengths:
            out[key] = _length_block(with_lengths)
    if "rescaled" in out:  # values only: a break may be censored (None)
        out["rescaled_break"] = {
            "values": {
                s: measured_break(r["rescaled"]["lengths"], r["rescaled"]["accuracy"])
                for s, r in results.items()
                if "rescaled" in r
            }
        }
    for _, _, key in BREAK_SOURCES:
        with_breaks = {s: r[key] for s, r in results.items() if key in r}
        if with_breaks:  # lengths, some censored (None: beyond the last length): values only, no mean
            out[key] = {
                "measured": {s: b["measured"] for s, b in with_breaks.items()},
                "measured_per_hop": {s: b["measured_per_hop"] for s, b in with_breaks.items()},
                **{
                    f"predicted_{rule}": {s: b["predicted"][rule]["break"] for s, b in with_breaks.items()}
                    for rule in RULES
                },
            }
    with_length = {s: r["length"] for s, r in results.items() if "length" in r}
    if with_length:  # descriptive, for a model not yet right at the training length (break_prediction doc)
        out["break_after_learning"] = {
            s: {
                "all": break_after_learning(v["lengths"], v["accuracy"]),
                "per_hop": {h: break_after_learning(v["lengths"], a) for h, a in v["by_hop"].items()},
            }
            for s, v in with_length.items()
        }
    exponents = {
        s: hop_exponent(r["breaks"]["measured_per_hop"], SEQ_LEN) for s, r in results.items() if "breaks" in r
    }
    exponents = {s: a for s, a in exponents.items() if a is not None}
    if exponents:  # break(k hops) ~ k^-alpha, per seed, as trained (break_prediction.hop_exponent)
        out["hop_exponent"] = _stat(exponents)
    with_scores = {s: r["scores_at_best"] for s, r in results.items() if "scores_at_best" in r}
    if with_scores:
        out["scores_at_best"] = {
            kind: [_stat(c, ACCURACY) for c in _columns({s: v[kind] for s, v in with_scores.items()}, None)]
            for kind in ("positional", "symbolic")
        }
        out["pure_from_step"] = {
            gamma: [
                {"values": c}
                for c in _columns(
                    {
                        s: r["pure_from_step"][gamma]
                        for s, r in results.items()
                        if gamma in r.get("pure_from_step", {})
                    },
                    None,
                )
            ]
            for gamma in next(iter(r["pure_from_step"] for r in results.values() if "pure_from_step" in r))
        }
    return out


def theory_of(recipe, task: str, lengths) -> dict:
    """``variant_prediction`` of the model a plan variant's recipe (``Plan.recipes``) trains."""
    config = ModelConfig(**recipe.model)
    return variant_prediction(config.variant(), config.n_layer, config.rotary_dim, ALPH_SIZE[task], lengths)


def _read_members(plan: Plan, overwrite: bool) -> tuple[dict, dict]:
    """Read and check every input of the collect, writing nothing: (member -> its results,
    member -> {dilution stage: refreshed content}).  Raises InputError / RunError for a damaged
    file and ``ship.SummaryKept`` where the summary would lose results."""
    results, refreshed = {}, {}
    for member in plan.members():
        folder = member_source(plan, member)
        # another recipe's results never enter this summary (a shipped copy was collected under this plan)
        conflict = recipe_conflict(plan, member) if folder == plan.folder(member) else None
        if conflict:
            raise InputError(conflict)
        check_stage_outputs(folder, OUTPUTS)
        refreshed[member] = {}
        for dilution_stage, lengths_stage, _ in BREAK_SOURCES:
            document = refreshed_breaks(folder, dilution_stage, lengths_stage)
            if document is not None:
                refreshed[member][dilution_stage] = document
        results[member] = member_results(plan, member, refreshed[member])
    check_best_files(plan)
    check_replacement(
        plan,
        {m.id: r["stages"] for m, r in results.items()},
        {m.id: list(stage_commands(plan, m)) for m in results},
        overwrite,
    )
    return results, refreshed


def collect(plan: Plan, overwrite: bool = False) -> dict:
    """Write ``<ship>/summary.json`` and copy each member's small files beside it; a shipped
    summary with results the members here lack is kept (``ship.SummaryKept``) unless ``overwrite``."""
    results, refreshed = _read_members(plan, overwrite)
    members, summary, breaks = {}, {}, {key: {} for _, _, key in BREAK_SOURCES}
    for variant, spec in plan.variants.items():
        for task in spec["tasks"]:
            per_seed = {}
            for seed in plan.seeds_of(variant, task):
                member = Member(variant, task, seed)
                result = results[member]
                members[member.id] = {
                    "stages": result["stages"],
                    "device": result.get("device"),
                    "reused_from": str(plan.reuse[member.id]) if member.id in plan.reuse else None,
                }
                if len(result) > 1:
                    per_seed[str(seed)] = result
                for key, found in breaks.items():
                    if key in result:
                        found[member.id] = result[key]
            summary.setdefault(variant, {})[task] = summarise(per_seed)
            summary[variant][task]["theory"] = theory_of(
                plan.recipes[variant], task, plan.evaluate["lengths"]
            )
    document = {
        "plan": plan.name,
        "about": plan.about,
        "interval": INTERVAL_METHOD,
        "variants": plan.variants,
        "evaluate": plan.evaluate,
        "analyze": plan.analyze,
        "long": plan.long,
        "rescale": plan.rescale,
        "members": members,
        "results": summary,
        **{
            name: premise(breaks[key])
            for name, key in (("premise", "breaks"), ("premise_rescaled", "rescaled_breaks"))
        },
    }
    best = {task: best_choice(plan, summary, task) for task in plan.tasks} if plan.ship_best else None
    # every check passed: now write, the summary last (a full disk part-way leaves the old one)
    for member, documents in refreshed.items():
        for stage, content in documents.items():
            write_json_atomic(member_source(plan, member) / OUTPUTS[stage], content)
    for member in results:
        ship_member(plan, member, _metrics_file(plan, member))
    if best is not None:
        document["best"] = {task: write_best(plan, task, choice) for task, choice in best.items()}
    write_json_if_changed(plan.ship / "summary.json", document, indent=1)  # float noise alone: left as it is
    return document


def premise(breaks: dict) -> dict | None:
    """Every reading's comparison over the members that learned the task at the training length
    (the others are named: ``break_prediction.never_learned``); None without any member."""
    if not breaks:
        return None
    left_out = never_learned(breaks, SEQ_LEN)
    kept = {m: b for m, b in breaks.items() if m not in left_out}
    return {**{rule: compare_breaks(kept, rule) for rule in RULES}, "left_out_never_learned": left_out}
