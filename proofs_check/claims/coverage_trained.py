"""Paper items decided on the shipped trained results over seeds (issue 30, section 5).

Each check reads ONE seed's ``analysis.json`` and ``proofs_check.evidence.over_seeds`` decides by
its STATUS_RULE (>= ceil(0.8 n) of n seeds), like C1-C11.  These rules are NOT pre-registered:
the shipped study existed when they were written (RULE_FIXED, in every claim's evidence).

Fields the shipped ANALYSIS shape does not check (the per-layer geometry rows, the measured
discrepancy) are checked here with ``theory.io.inputs.check_shape`` before use, so a damaged file
is an InputError naming the field.
"""

from __future__ import annotations

from proofs_check.evidence.over_seeds import trained_claim
from proofs_check.evidence.words import listed, spans
from theory import paper_data
from theory.io.inputs import Nullable, check_shape
from training.analysis.measured_discrepancy import DECAY_THRESHOLD  # what "decays" means there

from ..registry import Outcome, claim

RULE_FIXED = (
    "rule fixed on 2026-12-03, after the shipped seed study existed: seed 0's values of the "
    "fields read were seen while writing it, seeds 1-4 were first read by this check; NOT pre-registered"
)
GAMMA = paper_data.PURITY_GAMMAS[0]  # "0.1": the purity threshold the paper's figures 2C and 7 (top) use
ATTENDS, LOW = 0.9, 0.5  # attention-peak fractions: holds at >= ATTENDS, fails below LOW
MAX_SHIFT = 1000  # Figure 7's "small shift": at most two 500-step checkpoints on the 6,000-step axis
AGREE = (4, 5)  # measured discrepancy: the share of classified layers that must agree with Theorem 3.2
GEOMETRY_ROWS = [{"layer": int, "attends_target_fraction": Nullable(float)}]
DISCREPANCY = {
    "lengths": [int],
    "layers": [
        {
            "layer": int,
            "kind": str,
            "decay_exponent": Nullable(float),
            "decays": Nullable(bool),
            "theory_says_decays": Nullable(bool),
            "agrees_with_theory": Nullable(bool),
        }
    ],
}
ANALYZE = "python -m training analyze --run RUN --task T --json FILE (without --no-discrepancy)"


def _evidence(rule: str, **values) -> dict:
    return {"rule": rule, "rule_fixed": RULE_FIXED, **values}


def letter_target_share(analysis: dict) -> float:
    """The share of the analysed integer tokens (positions 8..16) whose Index target is a letter:
    Index (theory.functions.index) changes exactly those tokens.  The inputs are regenerated
    from the analysis's own ``n_inputs`` and ``seed``."""
    from theory.functions import index
    from training.tasks.definitions import get_task

    check_shape(
        {k: analysis.get(k) for k in ("n_inputs", "seed")}, {"n_inputs": int, "seed": int}, "analysis.json"
    )
    task = get_task("number")
    rows = task.decode(task.generate(analysis["n_inputs"], seed=analysis["seed"]).inputs)
    positions = analysis["index_geometry"].get("query_positions") or list(range(8, 17))
    changed = [index(row)[i] != row[i] for row in rows for i in positions]
    return sum(changed) / len(changed)


def _geometry(analysis: dict) -> dict:
    rows = analysis.get("index_geometry_layers") or []
    check_shape(rows, GEOMETRY_ROWS, "analysis.json", "index_geometry_layers")
    return {r["layer"]: r["attends_target_fraction"] for r in rows}


@trained_claim(
    "F3A-flow-attend",
    "Figure 3A / Section 3.2, number task: layer 0 attends the Index target when it is a letter "
    "('n'); in layers 1, 2 and 3 an integer token's attention peaks at the position its integer points to (offset "
    "2 for the last token of the example)",
    "Section 3.2, Figure 3A",
    recorded="undecided",
    tasks=("number",),
    part="analysis",
    origin="paper",
)
# recorded undecided on 2026-12-03: holds in seeds 0, 3, 4; in seeds 1 and 2 layer 3 peaks at the
# target for 0.760 and 0.874 of the integer tokens (below 0.9, above 0.5); layer 0 matches the
# letter-target share (0.643) in every seed
def flow_attend(found: dict, share=None) -> Outcome:
    a = found["number"]
    fractions = _geometry(a)
    flow = paper_data.FIGURE3A_FLOW
    later = [*flow["attend_without_copy"], flow["copies"]]
    if any(fractions.get(layer) is None for layer in [flow["attends_letter_target"], *later]):
        return Outcome(
            "undecided",
            f"no attends_target_fraction for layers 0-3 (have {sorted(fractions)})",
            _evidence("needs index_geometry_layers[].attends_target_fraction", fractions=fractions),
        )
    share = letter_target_share(a) if share is None else share
    first = fractions[flow["attends_letter_target"]]
    rest = {layer: fractions[layer] for layer in later}
    holds = first >= ATTENDS * share and all(x >= ATTENDS for x in rest.values())
    fails = first < LOW * share or any(x < LOW for x in rest.values())
    evidence = _evidence(
        f"attends_target_fraction (share of integer tokens at positions 8..16 whose attention row peaks at their "
        f"offset): verified when layer 0's >= {ATTENDS} x the share of those tokens whose target is a letter (Index "
        f"copies only letters) and layers 1-3's >= {ATTENDS}; refuted when layer 0's < {LOW} x that share or one of "
        f"layers 1-3 < {LOW}; else undecided. Copying is not measured (F3A-flow-copy)",
        attends_target_fraction=fractions,
        letter_target_share=share,
    )
    status = "verified" if holds else "refuted" if fails else "undecided"
    return Outcome(
        status,
        f"peak at the target: layer 0 {first:.3f} (letter targets {share:.3f}), layers 1-3 "
        + ", ".join(f"{x:.3f}" for x in rest.values())
        + f"; later layers {', '.join(f'{fractions[k]:.2f}' for k in sorted(fractions) if k > 3)}",
        evidence,
    )


@claim(
    "F3A-flow-copy",
    "Figures 3A/3B, Section 3.2: in layers 1-2 the last token attends offset 2 without copying "
    "(no information flows), only layer 3 copies the letter; the letter task's flow is analogous",
    "Section 3.2, Figures 3A-3B",
    recorded="undecided",
    kind="experiment",
    origin="paper",
)
def flow_copy(options):
    return Outcome(
        "undecided",
        "what a layer copies is not measured: the package records where attention peaks "
        "(F3A-flow-attend), not what the attention writes into the residual stream",
        {
            "reason": "no command of the package measures the information a layer moves (it would need a "
            "per-layer readout of the attention output, e.g. decoding it through the unembedding "
            "at each position); the letter task has no integer offsets, so attends_target_fraction "
            "is null there and Figure 3B's attention is not summarised either; and Figure 3B's "
            "input is not proper (F3B-proper)",
            "would_need": "a per-layer, per-position readout of the attention output of the trained models",
        },
    )


@trained_claim(
    "S33-last-symbolic-L11",
    "Section 3.3, letter task: the last required symbolic head appears in layer 11 (layer "
    "11's head is pure symbolic and no head becomes pure at a later checkpoint)",
    "Section 3.3, Figure 2C",
    recorded="verified",
    tasks=("letter",),
    part="analysis",
    origin="paper",
)
def last_symbolic_layer(found: dict) -> Outcome:
    a, last = found["letter"], paper_data.LETTER_LAST_SYMBOLIC_LAYER
    block = a["purity"][GAMMA]
    pure_from, kinds = block["pure_from_step"], block.get("kind") or [None] * len(block["pure_from_step"])
    if len(pure_from) <= last:
        return Outcome(
            "undecided",
            f"the model has {len(pure_from)} layers, no layer {last}",
            _evidence("needs a layer 11", layers=len(pure_from)),
        )
    steps = [s for s in pure_from if s is not None]
    latest = max(steps) if steps else None
    tied = [i for i, s in enumerate(pure_from) if s is not None and s == latest]
    holds = kinds[last] == "symbolic" and pure_from[last] is not None and pure_from[last] == latest
    evidence = _evidence(
        f"gamma = {GAMMA}: verified when layer {last} is pure symbolic and its pure_from_step is the "
        f"latest of all heads (ties at the 500-step checkpoint resolution allowed, listed); else "
        f"refuted",
        pure_from_step=pure_from,
        kind=kinds,
        latest_step=latest,
        layers_pure_at_latest=tied,
        strictly_last=tied == [last],
    )
    return Outcome(
        "verified" if holds else "refuted",
        f"layer {last}: {kinds[last]}, pure from step {pure_from[last]}; latest purity at step {latest} "
        f"in layers {spans(tied)}",
        evidence,
    )


@trained_claim(
    "S31-start-high",
    (
        "Section 3.1: both scores start high at initialisation (at step 0 every layer's mean "
        r"positional and symbolic score is $\ge 0.9 = 1 - \gamma$, $\gamma = 0.1$), in both tasks"
    ),
    "Section 3.1, Figure 2B, Figure 6",
    recorded="verified",
    part="analysis",
    origin="paper",
)
def start_high(found: dict) -> Outcome:
    rows, threshold = {}, 1 - float(GAMMA)
    for task, a in found.items():
        if not a["steps"] or a["steps"][0] != 0:
            return Outcome(
                "undecided",
                f"{task}: no step-0 checkpoint (first {a['steps'][:1]})",
                _evidence("needs the step-0 scores"),
            )
        rows[task] = {kind: min(a["scores"][kind][0]) for kind in ("positional", "symbolic")}
    holds = all(v >= threshold for r in rows.values() for v in r.values())
    return Outcome(
        "verified" if holds else "refuted",
        "; ".join(
            f"{t}: lowest step-0 score positional {r['positional']:.4f}, symbolic {r['symbolic']:.4f}"
            for t, r in rows.items()
        ),
        _evidence(
            f"verified when every layer's step-0 mean score is >= {threshold} for both kinds in both tasks; else "
            f"refuted",
            lowest_step_0=rows,
        ),
    )


def _pure_steps(a: dict, gamma: str, kind: str) -> list:
    block = a["purity"][gamma]
    return sorted(
        s for s, k in zip(block["pure_from_step"], block.get("kind") or []) if s is not None and k == kind
    )


@trained_claim(
    "F2C-steps",
    (
        r"Figure 2C / Section 3.3, number task: positional heads become pure in steps (at $\ge 2$ "
        "distinct checkpoints) while symbolic purity comes early (the first symbolic head is pure "
        "no later than the last positional one)"
    ),
    "Section 3.3, Figure 2C",
    recorded="verified",
    tasks=("number",),
    part="analysis",
    origin="paper",
)
def purity_steps(found: dict) -> Outcome:
    a = found["number"]
    positional, symbolic = _pure_steps(a, GAMMA, "positional"), _pure_steps(a, GAMMA, "symbolic")
    evidence = _evidence(
        f"gamma = {GAMMA}, pure_from_step of each pure head by kind: verified when the positional "
        f"ones take >= 2 distinct values and min(symbolic) <= max(positional); undecided when a kind "
        f"has no pure head; else refuted",
        positional=positional,
        symbolic=symbolic,
    )
    if not positional or not symbolic:
        return Outcome(
            "undecided", f"pure positional heads {listed(positional)}, symbolic {listed(symbolic)}", evidence
        )
    holds = len(set(positional)) >= 2 and symbolic[0] <= positional[-1]
    return Outcome(
        "verified" if holds else "refuted",
        f"positional heads pure from steps {listed(positional)}, first symbolic head from step {symbolic[0]}",
        evidence,
    )


@trained_claim(
    "F7-gamma-shift",
    f"Figure 7: with $\\gamma = 0.05$ the purity counts keep the shape of $\\gamma = 0.1$, shifted slightly "
    f"right (the same heads become pure, with the same kinds, each 0 to {MAX_SHIFT} steps later)",
    "Appendix E, Figure 7",
    recorded="undecided",
    part="analysis",
    origin="paper",
)
# recorded undecided on 2026-12-03: holds in seeds 0 and 3; in seeds 1, 2 and 4 one number-task head
# that is pure at gamma 0.1 never is at 0.05 (the letter task holds in every seed)
def gamma_shift(found: dict) -> Outcome:
    rows, ok = {}, True
    loose, strict = paper_data.PURITY_GAMMAS
    for task, a in found.items():
        one, two = a["purity"][loose], a["purity"][strict]
        pairs = list(zip(one["pure_from_step"], two["pure_from_step"]))
        same = all((x is None) == (y is None) for x, y in pairs) and one.get("kind") == two.get("kind")
        shifts = [y - x for x, y in pairs if x is not None and y is not None]
        rows[task] = {
            "same_heads_and_kinds": same,
            "shifts": shifts,
            "heads_that_differ": [
                {"layer": i, loose: [x, k], strict: [y, m]}
                for i, (x, y, k, m) in enumerate(
                    zip(
                        one["pure_from_step"],
                        two["pure_from_step"],
                        one.get("kind") or [],
                        two.get("kind") or [],
                    )
                )
                if (x is None) != (y is None) or k != m
            ],
        }
        ok &= rows[task]["same_heads_and_kinds"] and all(0 <= s <= MAX_SHIFT for s in shifts)
    evidence = _evidence(
        f"per task: the heads pure at gamma {loose} and {strict} are the same with the same kinds, and "
        f"each head's pure_from_step at {strict} minus at {loose} is in [0, {MAX_SHIFT}]; verified when "
        f"both tasks satisfy it, else refuted",
        tasks=rows,
    )
    return Outcome(
        "verified" if ok else "refuted",
        "; ".join(
            f"{t}: {'the same' if r['same_heads_and_kinds'] else 'not the same'} heads and kinds, shifts {min(r['shifts'], default=0)}..{max(r['shifts'], default=0)}"
            f" steps"
            for t, r in rows.items()
        ),
        evidence,
    )


@trained_claim(
    "MD-over-seeds",
    "Theorem 3.2's prediction on trained heads: the measured top-logit gap of positional (Index) "
    "layers decays with input length (17..5,000) and that of symbolic (Retrieval) layers does not, in both tasks",
    "Section 3.5-3.6, Theorem 3.2, Figure 5A",
    recorded="verified",
    part="analysis",
    origin="package",
)
def measured_gaps_follow_theory(found: dict) -> Outcome:
    rows, statuses = {}, []
    for task, a in found.items():
        block = a.get("measured_discrepancy")
        if block is None:
            return Outcome(
                "undecided",
                f"{task}: no measured discrepancy in this analysis; produce it with {ANALYZE}",
                _evidence("needs measured_discrepancy"),
            )
        check_shape(block, DISCREPANCY, "analysis.json", "measured_discrepancy")
        judged = [r for r in block["layers"] if r["agrees_with_theory"] is not None]
        agree = sum(r["agrees_with_theory"] for r in judged)
        need = -(-AGREE[0] * len(judged) // AGREE[1])
        rows[task] = {
            "classified_layers": len(judged),
            "agree": agree,
            "needed": need,
            "disagree": [
                {k: r[k] for k in ("layer", "kind", "decay_exponent")}
                for r in judged
                if not r["agrees_with_theory"]
            ],
        }
        statuses.append(
            "undecided"
            if not judged
            else "verified"
            if agree >= need
            else "refuted"
            if 2 * agree < len(judged)
            else "undecided"
        )
    status = "refuted" if "refuted" in statuses else "undecided" if "undecided" in statuses else "verified"
    evidence = _evidence(
        "per task, the classified (index / retrieval) layers of training.analysis.measured_discrepancy "
        f"(decays: log-log slope of the median gap <= {DECAY_THRESHOLD:g}): verified when >= "
        f"ceil({AGREE[0] / AGREE[1]:g} k) of its k "
        "classified layers agree with Theorem 3.2's direction, refuted when fewer than half agree in a "
        "task, else undecided",
        tasks=rows,
    )
    return Outcome(
        status,
        "; ".join(
            f"{t}: {r['agree']}/{r['classified_layers']} classified layers agree ({r['needed']} needed)"
            for t, r in rows.items()
        ),
        evidence,
    )
