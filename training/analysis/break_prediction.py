"""Does discrepancy predict where length generalisation breaks?  Lemma F.1's condition read on
a trained model's measured logits (``training.analysis.dilution``), against the length where its
accuracy first falls below 0.9 (``training.analysis.evaluate``).

Two readings of the condition, for one layer at length n (r = Gamma / delta):

* ``lemma`` (the paper's worst case): beta lambda >= ln((n - 1) r), with beta lambda the
  measured logit gap.  Lemma F.1 needs it; it assumes every losing key sits just below the top.
* ``mass`` (the same proof before its worst-case step): the losing keys' actual weight
  1 - top_weight < 1 / r, i.e. Gamma * sum_(j losing) w_j < delta.
* ``relative`` (exploratory, registered before held-out data): the path layer's top weight
  falls below ``RELATIVE_DROP`` = 1/2 of its value at the training length, i.e. the hop's
  winner keeps at least half the share the model was trained with.  Its path is the mass
  reading's.  This rule has no derivation behind it: it was picked after looking at the 19
  members of ``SEEN_BY_RELATIVE`` (on them: 13 of 19 within a factor 2, rho +0.45; 0.19-0.67x
  the measured break on the letter task, 1.29-1.54x on the number task), so only the other
  members test it (``proofs_check.claims.premise``, claim ``P-break-relative``).  Not a
  reading of Lemma F.1: a third, empirical rule.

r = ``SPREAD_RATIO`` = 2, T_Retrieval's Gamma / delta (one-hot values: Gamma 2, delta 1):
a trained head is read as choosing one token.  Inputs: the ``QUANTILE`` = 0.1 input of each
layer (accuracy below 0.9 means one input in ten fails), both fixed before looking at any
trained model's numbers.

A layer is on the answer path when it meets the condition at the first length (17, the
training length): the layers that act as hard attention where the model was trained.  Its
break is where the condition first fails (linear interpolation in ln n between the grid
lengths around the sign change of the margin); the model's predicted break is the earliest
break of its path layers, since a multi-hop answer needs every hop.  No path layer: the
condition fails at the training length already, and the prediction is that length.  Measured
break: where accuracy (all hops, or one hop count) first falls below ``THRESHOLD``,
interpolated the same way, an accuracy that ``theory.statistics.reaches`` the threshold counting
as not below it (a float32-rounded 0.9 is 0.9).  A break beyond the last length measured is
``None`` (censored).

A model below ``THRESHOLD`` already at the training length never learned the task there
(``never_learned``): its measured break is the training length, which says nothing about
length, so the premise claims and ``collect``'s comparison leave it out and name it (rule of
2026-12-01).  Data variants trained on longer inputs can be such a model yet be right at longer
lengths; for them ``break_after_learning`` reports where accuracy first reaches ``THRESHOLD``
and where it first falls below it after that (rule written 2026-12-02, after the first such
model, extra-window seed 0, and before its other seeds).  No premise claim reads it; claim
``V-window`` (``proofs_check.claims.window``) judges the extra window on it.
"""

from __future__ import annotations

import math
from fractions import Fraction

from theory.statistics import reaches

__all__ = [
    "SPREAD_RATIO",
    "QUANTILE",
    "THRESHOLD",
    "RULES",
    "RELATIVE_DROP",
    "SEEN_BY_RELATIVE",
    "crossing",
    "layer_margins",
    "predicted_break",
    "measured_break",
    "break_after_learning",
    "never_learned",
    "member_breaks",
    "compare_breaks",
    "hop_exponent",
]

SPREAD_RATIO = 2.0
QUANTILE = 0.1
THRESHOLD = 0.9
RULES = ("lemma", "mass", "relative")
RELATIVE_DROP = 0.5
FACTOR = 2  # a predicted break "matches" a measured one within this factor (either way)
PATH_RULE = {"relative": "mass"}  # the relative reading keeps every layer at the start: it takes mass's path
# the members the relative reading was chosen on (2026-12-01); every other member tests it
SEEN_BY_RELATIVE = frozenset(
    [f"paper/{task}/seed-{s}" for task in ("number", "letter") for s in range(5)]
    + [f"paper-3k/letter/seed-{s}" for s in range(3)]
    + [f"log-scale-3k/letter/seed-{s}" for s in range(3)]
    + [
        "learned-scale-3k/letter/seed-0",
        "learned-scale-3k/letter/seed-1",
        "nope-0-log-scale-3k/letter/seed-0",
    ]
)


def crossing(lengths, margins) -> float | None:
    """The first length where ``margins`` stops being positive, interpolated linearly in ln n
    between the last positive grid point and the first non-positive one; ``lengths[0]`` if the
    first is not positive; None if every margin is positive (censored beyond the last length)."""
    for i, m in enumerate(margins):
        if m is None or not m > 0:
            if i == 0:
                return float(lengths[0])
            m0, m1 = margins[i - 1], (0.0 if m is None else m)
            t = m0 / (m0 - m1) if m0 != m1 else 1.0
            return float(
                math.exp(math.log(lengths[i - 1]) + t * (math.log(lengths[i]) - math.log(lengths[i - 1])))
            )
    return None


def layer_margins(
    layer: dict, lengths, rule: str, quantile: float = QUANTILE, spread_ratio: float = SPREAD_RATIO
) -> list[float]:
    """One layer's margin of Lemma F.1's condition at every length (positive = condition holds)."""
    key = f"q{quantile:g}"
    if rule == "lemma":
        return [g - math.log((n - 1) * spread_ratio) for g, n in zip(layer["gap"][key], lengths)]
    if rule == "mass":
        return [1 / spread_ratio - (1 - w) for w in layer["top_weight"][key]]
    if rule == "relative":
        weights = layer["top_weight"][key]
        return [w - RELATIVE_DROP * weights[0] for w in weights]
    raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")


def predicted_break(
    dilution: dict, rule: str, quantile: float = QUANTILE, spread_ratio: float = SPREAD_RATIO
) -> dict:
    """{"break", "path", "layer_breaks"} of one model from its dilution block (module doc)."""
    lengths = dilution["lengths"]
    path, breaks = [], {}
    for layer in dilution["layers"]:
        margins = layer_margins(layer, lengths, rule, quantile, spread_ratio)
        path_rule = PATH_RULE.get(rule, rule)
        path_margins = (
            margins if path_rule == rule else layer_margins(layer, lengths, path_rule, quantile, spread_ratio)
        )
        if path_margins[0] > 0:
            path.append(layer["layer"])
            breaks[layer["layer"]] = crossing(lengths, margins)
    finite = [b for b in breaks.values() if b is not None]
    if not path:
        value = float(lengths[0])
    else:
        value = min(finite) if finite else None
    return {"break": value, "path": path, "layer_breaks": {str(k): v for k, v in breaks.items()}}


def measured_break(lengths, accuracy, threshold: float = THRESHOLD) -> float | None:
    """Where ``accuracy`` first falls below ``threshold`` (module doc); None if never.  A length
    without a value (a hop count absent there) is left out, not counted as a failure."""
    kept = [(n, a) for n, a in zip(lengths, accuracy) if a is not None]
    # positive where ``reaches`` holds: 0.9 itself (the 1e-12) or stored through float32 (the
    # max) is not below 0.9; elsewhere the difference the interpolation reads
    margins = [(max(a - threshold, 0.0) if reaches(a, threshold) else a - threshold) + 1e-12 for _, a in kept]
    return crossing([n for n, _ in kept], margins)


def break_after_learning(lengths, accuracy, threshold: float = THRESHOLD) -> dict:
    """Descriptive (module doc): ``learned_at``, the first length where ``accuracy`` is at least
    ``threshold`` (None: never), and ``break``, the first length after it where accuracy falls
    below (``measured_break`` on the rest of the grid; None: censored, or never learned).  Equals
    ``measured_break`` for a model at least ``threshold`` at the first length."""
    kept = [(n, a) for n, a in zip(lengths, accuracy) if a is not None]
    start = next((i for i, (_, a) in enumerate(kept) if reaches(a, threshold)), None)
    if start is None:
        return {"learned_at": None, "break": None}
    rest = kept[start:]
    return {
        "learned_at": float(rest[0][0]),
        "break": measured_break([n for n, _ in rest], [a for _, a in rest], threshold),
    }


def never_learned(members: dict, training_length: int) -> list[str]:
    """The members ({id: member_breaks(...)}) whose accuracy is already below the threshold at
    ``training_length`` (measured break there): no break of theirs tests a length rule (a model
    that attends nowhere would "predict" them exactly), so they are left out, and named."""
    return sorted(
        m for m, b in members.items() if b["measured"] is not None and b["measured"] <= training_length
    )


def member_breaks(dilution: dict, generalisation: dict) -> dict:
    """Predicted breaks (both rules) and measured breaks (all hops and per hop count) of one model."""
    if [int(n) for n in dilution["lengths"]][0] != int(generalisation["lengths"][0]):
        raise ValueError("the dilution and accuracy grids must start at the same length")
    lengths = generalisation["lengths"]
    return {
        "predicted": {rule: predicted_break(dilution, rule) for rule in RULES},
        "measured": measured_break(lengths, generalisation["accuracy"]),
        "measured_per_hop": {
            hop: measured_break(lengths, acc) for hop, acc in generalisation["per_hop"].items()
        },
        "last_length": max(max(lengths), max(dilution["lengths"])),
        "rule": {"spread_ratio": SPREAD_RATIO, "quantile": QUANTILE, "threshold": THRESHOLD},
    }


def hop_exponent(measured_per_hop: dict, training_length: int = 0) -> float | None:
    """alpha in break(k hops) ~ k^-alpha: minus the least-squares slope of ln(break) on ln(k) over
    the hop counts whose break was measured (not censored) past ``training_length`` (a hop below
    the threshold there never learned it: no length break); None with fewer than 3 of them.
    Descriptive: how fast each extra hop pulls the break in (alpha 1: the k-hop break is the
    1-hop break over k)."""
    points = [
        (math.log(int(k)), math.log(b))
        for k, b in measured_per_hop.items()
        if b is not None and b > training_length
    ]
    if len(points) < 3:
        return None
    # closed-form least squares in exact rationals over the float logs: the correctly rounded
    # slope, the same bytes on every machine and in any point order (np.polyfit's LAPACK
    # solve changed the last bits with the CPU's BLAS kernel, rewriting shipped summaries)
    x, y = ([Fraction(p[i]) for p in points] for i in (0, 1))
    n, sx, sy = len(points), sum(x), sum(y)
    spread = n * sum(a * a for a in x) - sx * sx
    if spread == 0:  # one hop count written twice ("1", "01"): no slope
        return None
    return float(-(n * sum(a * b for a, b in zip(x, y)) - sx * sy) / spread)


def _pearson(xs, ys) -> float | None:
    """Pearson's correlation in exact rationals up to the final square root, so the same bytes on
    every machine (np.corrcoef's BLAS dot product rounds per CPU kernel); None: a side is constant."""
    x, y = [Fraction(v) for v in xs], [Fraction(v) for v in ys]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    if not sxx or not syy:
        return None
    return math.copysign(math.sqrt(sxy * sxy / (sxx * syy)), sxy)


def _ranked(value) -> float:
    return (
        math.inf if value is None else value
    )  # censored: beyond every measured length, ties among themselves


def compare_breaks(members: dict, rule: str) -> dict:
    """Across members ({id: member_breaks(...)}): Spearman's rank correlation of predicted with
    measured break (censored values rank last, tied), and how many predictions are within a
    factor 2 (a censored pair agrees; one censored side agrees when the other is beyond half the
    last length)."""
    from scipy.stats import rankdata

    ids = sorted(members)
    predicted = [_ranked(members[i]["predicted"][rule]["break"]) for i in ids]
    measured = [_ranked(members[i]["measured"]) for i in ids]
    within = []
    for i, p, m in zip(ids, predicted, measured):
        half_last = members[i]["last_length"] / 2
        if math.isinf(p) or math.isinf(m):
            other = m if math.isinf(p) else p
            within.append(math.isinf(other) or other >= half_last)
        else:
            within.append(1 / FACTOR <= p / m <= FACTOR)
    rho = None
    if len(ids) >= 3 and len(set(predicted)) > 1 and len(set(measured)) > 1:
        # Spearman: Pearson's correlation of the ranks (ties averaged; inf, the censored, ranks last)
        rho = _pearson(rankdata(predicted), rankdata(measured))
    return {
        "rule": rule,
        "n": len(ids),
        "spearman_rho": rho,
        "within_factor_2": int(sum(within)),
        "ratio": [None if math.isinf(p) or math.isinf(m) else p / m for p, m in zip(predicted, measured)],
        "members": ids,
    }
