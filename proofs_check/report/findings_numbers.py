"""The decisive numbers of the findings table: each function formats one value from a claim's
row in this run (its ``evidence`` or ``counterexample``), never from a typed constant.
"""

from __future__ import annotations


def _ev(row: dict) -> dict:
    return row.get("evidence", {})


def _ce(row: dict) -> dict:
    return row.get("counterexample") or {}


def _bracket(text: str) -> str:
    """ "[0.0068150812418073414053 +/- 3.92e-23]" -> "0.006815081" (the ball's centre, ten digits)."""
    centre = str(text).strip("[]").split("+/-")[0].strip()
    return format(float(centre), ".10g")


def _angle(theta) -> str:
    """An angle the check recorded as {"exact": "2*pi/5", "decimal": "1.2566...(40 digits)"}, short:
    "2π/5 ≈ 1.2566" (five significant digits of the decimal; the exact form where it is one)."""
    if not isinstance(theta, dict):
        return format(float(theta), ".5g")
    short = format(float(theta["decimal"]), ".5g")
    exact = str(theta.get("exact") or "").replace("*", "").replace(" ", "").replace("pi", "π")
    try:
        float(exact)
        return short  # the exact form is a decimal itself
    except ValueError:
        return f"{exact} ≈ {short}" if exact else short


def _seeds(row: dict) -> str:
    agg = _ev(row)["aggregate"]
    return f"not reproduced in {agg['fails_in']} of {agg['n_seeds']} seeds"


def sup_index(row):
    c = _ce(row)
    return f"gap {_bracket(c['discrepancy'])} > bound {_bracket(c['bound'])} at angle {_angle(c['theta'])}, n = {c['n']}"


def retrieval_ball(row):
    c = _ce(row)
    return f"gap {_bracket(c['discrepancy'])} > bound {_bracket(c['bound'])} at angle {_angle(c['theta'])}, n = {c['n']}"


def retrieval_inf(row):
    c = _ce(row)
    return (
        f"lambda >= {_bracket(c['lambda_lower_bound'])} > bound {_bracket(c['bound'])} at n = {c['n']} "
        f"(angle {_angle(c['theta'])})"
    )


def competitor_gap(row):
    scan = _ev(row)["scans"]
    cases = len(scan)
    exceeded = sum(1 for s in scan.values() if s["exceeds_bound_at"])
    return f"bound exceeded in {exceeded} of {cases} (angle, alphabet) cases"


def irrational_angle(row):
    c = _ce(row)
    return f"angle {c['angle']}: top logit tied (decoding gap {c['decoding_gap']}) on {' '.join(c['input'])}"


def literal_reading(row):
    c = _ev(row)["counterexample"]
    return (
        f"{''.join(map(str, c['input']))} -> {''.join(c['T_Index'])}, definition: {''.join(c['F1_literal'])}"
    )


def c6(row):
    c = _ce(row)
    return f"{c['errors']} errors on {c['proper_inputs_checked']} proper inputs"


def r31(row):
    e = _ev(row)
    return f"a key's logit moves by up to {e['position_spread']['any_key']:.4f} with its position"


def f22_omega(row):
    e = _ev(row)["letter_task_alphabet"]
    return f"{e['wrong']} wrong of {e['positions']} positions"


def f22_ii(row):
    ranges = _ev(row)["last_row_range_by_length_2_to_n0"]
    least = min(min(v) for v in ranges.values())
    return f"logits on non-constant inputs vary by at least {least:.3g}"


def s34(row):
    e = _ev(row)["first_n0"]
    return f"{e['wrong']} wrong of {e['positions']} positions at angle {_ev(row)['g_1']:g}"


def c2(row):
    return _seeds(row)


def c10(row):
    letter = _ev(row)["over_seeds"]
    return f"letter accuracy {letter['letter']['all']['mean']:.3f} at length {letter['length']} (paper: above 0.9)"


def s33_hops(row):
    seeds = _ev(row)["seeds"]
    fewest = min(s["evidence"]["pure_positional"] for s in seeds.values())
    return f"four hops solved with {fewest} pure positional heads; {_seeds(row)}"


def s33_l11(row):
    e = _ev(row)
    without = e["without_layer"]
    four = without[4] if 4 in without else without["4"]  # int keys in the run, strings in its JSON
    return f"four-hop accuracy {four:.3f} with layer eleven's attention zeroed"


def c11(row):
    counts = _ev(row)["over_seeds"]["counts"]
    total = sum(counts.values())
    return f"holds at {counts['verified']} of {total} thresholds"


def f21(row):
    e = _ev(row)["example"]
    return f"last coordinate {e['R_last']:g}, not {e['3E_last']:g}"


def b1(row):
    e = _ev(row)["figure_1"]
    return f"Figure 1: the definition gives no answer, the figure {e['figure_answer']} in {e['figure_hops']} hops"


def f3b(row):
    e = _ev(row)["positions_without_a_unique_match"]
    return f"{len(e)} positions without a unique match"


def f5a(row):
    c = _ce(row)
    return f"printed {c['printed']}, Table 1's ID {c['id']} is {c['table1_prints']}"


def s36_53x(row):
    e = _ev(row)
    return f"{e['length']} / {e['training_length']} = {e['ratio']}, not {e['printed_multiple']}"


def s36_second(row):
    e = _ev(row)
    return f"second layer uses ID {e['table1_row']['id']}, the figure ID {e['figure_5a']['id']}"


def l1(row):
    e = _ev(row)
    return f"{e['differ']} of {e['inputs']} inputs differ"


def s32(row):
    e = _ev(row)
    return f"defined on {e['decomposition_defined']} of {e['inputs']} task inputs"


def e_gamma(row):
    lost = _ev(row)["labelled_layers"]["number"]["lost_at_0.05"]
    return f"{len(lost)} labelled layers lost at the smaller threshold ({', '.join(lost)})"


def f2c(row):
    grouped = _ev(row)["per_panel"]["figure_7_gamma_0.1"]["grouped_differently"]
    return f"{len(grouped)} layers grouped differently"


def d_alpha(row):
    return f"{len(_ev(row)['layers_that_differ'])} layers change kind"


def c12_summary(row):
    c = _ce(row)
    return f"{c['model']} {c['task']} at {c['length']}: {c['mean']:g}, not {c['claim']}"


def c12_letter(row):
    c = _ce(row)
    return f"{c['model']} at {c['length']}: number {c['number']:g}, letter {c['letter']:g}"
