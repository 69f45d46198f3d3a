"""figures fig_breaks: predicted against measured breaks, drawn from members' dilution.json.

The inputs are made-up dilution.json files in the schema of ``training dilution`` (plotting code
only, never shown as results).  Expected positions are computed here from the numbers written,
not read back from the figure code.
"""

import json
import statistics
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from matplotlib.collections import PathCollection  # noqa: E402

from figures import breaks_figure  # noqa: E402
from figures.__main__ import FIGURES, main  # noqa: E402
from figures.breaks_figure import build_fig_breaks  # noqa: E402
from figures.input_files import MissingInput  # noqa: E402
from figures.loaders import Inputs  # noqa: E402
from training.analysis import break_prediction  # noqa: E402

LENGTHS = [17, 50, 200, 850]
LAST = 850
QUANTILES = ("q0", "q0.1", "q0.25", "q0.5")
LAYERS = 3


def weight(layer: int, seed: int, position: int, quantile: str = "q0.1") -> float:
    """A made-up top-key weight, different for every argument (the other quantiles are shifted,
    so reading the wrong column moves the curve)."""
    shift = {"q0": -0.07, "q0.1": 0.0, "q0.25": 0.04, "q0.5": 0.08}[quantile]
    return min(0.99, max(0.01, 0.9 - 0.17 * position - 0.06 * layer + 0.035 * seed + shift))


def write_member(folder: Path, seed: int, measured, lemma, mass, per_hop: dict, path: list) -> dict:
    """One dilution.json; returns its "breaks" block."""
    layers = [
        {
            "layer": layer,
            "gap": {q: [3.0 - 0.4 * i for i in range(len(LENGTHS))] for q in QUANTILES},
            "top_weight": {q: [weight(layer, seed, i, q) for i in range(len(LENGTHS))] for q in QUANTILES},
        }
        for layer in range(LAYERS)
    ]
    breaks = {
        "predicted": {
            "lemma": {"break": lemma, "path": [], "layer_breaks": {}},
            "mass": {"break": mass, "path": path, "layer_breaks": {str(p): mass for p in path}},
        },
        "measured": measured,
        "measured_per_hop": per_hop,
        "last_length": LAST,
        "rule": {"spread_ratio": 2.0, "quantile": 0.1, "threshold": 0.9},
    }
    if not str(folder).endswith(PREDATES_RELATIVE):  # that one: a file from before the relative reading
        relative = None if mass is None else 1.5 * mass
        breaks["predicted"]["relative"] = {"break": relative, "path": path, "layer_breaks": {}}
    folder.mkdir(parents=True, exist_ok=True)  # may be a member folder with other files already
    (folder / "dilution.json").write_text(
        json.dumps(
            {
                "dilution": {
                    "lengths": LENGTHS,
                    "count": 8,
                    "seed": 5,
                    "quantiles": [0.0, 0.1, 0.25, 0.5],
                    "layers": layers,
                },
                "breaks": breaks,
            }
        )
    )
    return breaks


PREDATES_RELATIVE = "paper/letter/seed-1"


def hops(first, factor: float) -> dict:
    return {str(h): None if first is None else first / factor ** (h - 1) for h in range(1, 5)}


# member id -> (seed, measured, lemma, mass, first hop's break, mass path); None: censored
SEEDS_STUDY = {
    "paper/number/seed-0": (0, 60.0, 17.0, 33.0, 210.0, [1, 2]),
    "paper/number/seed-1": (1, 75.0, 17.0, 90.0, 300.0, [2]),
    "paper/letter/seed-0": (0, 140.0, 17.0, 45.0, 900.0, [1, 2]),
    "paper/letter/seed-1": (1, 190.0, 20.0, 25.0, 700.0, []),
}
VARIANTS_STUDY = {
    "paper/number/seed-0": (0, 999.0, 999.0, 999.0, 999.0, [0]),  # the seed study's wins
    "wide-3k/letter/seed-0": (0, None, 17.0, None, None, [0, 1]),
    "wide-3k/letter/seed-2": (2, 400.0, 17.0, 300.0, 800.0, [2]),
}


def write_dilution_study(root: Path, members: dict = SEEDS_STUDY) -> dict:
    """A dilution.json in <root>/<member id>/ for each of ``members``; returns {member id: breaks}."""
    return {
        member: write_member(root / member, seed, measured, lemma, mass, hops(first, 1.8), path)
        for member, (seed, measured, lemma, mass, first, path) in members.items()
    }


@pytest.fixture
def studies(tmp_path):
    seeds, variants = tmp_path / "seeds", tmp_path / "variants"
    expected = write_dilution_study(seeds, SEEDS_STUDY)
    for member, breaks in write_dilution_study(variants, VARIANTS_STUDY).items():
        expected.setdefault(member, breaks)
    (variants / "summary.json").write_text(
        json.dumps(
            {"variants": {"wide-3k": {"about": "f. a made-up variant"}}, "results": {}, "interval": 0.95}
        )
    )
    return Inputs(seeds_dir=seeds, variants_dir=variants), expected


def panel(fig, title_start: str):
    return next(ax for ax in fig.axes if ax.get_title().startswith(title_start))


def points(ax) -> dict:
    """{member id: (x, y)} of the scatter points of a panel, one per member."""
    found = {}
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_gid():
            assert collection.get_gid() not in found, "a member drawn twice"
            ((x, y),) = collection.get_offsets()
            found[collection.get_gid()] = (float(x), float(y))
    return found


def test_mirrored_constants_match_the_rule():
    assert breaks_figure.SPREAD_RATIO == break_prediction.SPREAD_RATIO
    assert breaks_figure.QUANTILE == break_prediction.QUANTILE
    assert breaks_figure.THRESHOLD == break_prediction.THRESHOLD
    assert breaks_figure.SEEN_BY_RELATIVE == break_prediction.SEEN_BY_RELATIVE
    assert set(breaks_figure.RULE_LOOK) == set(break_prediction.RULES)


def test_never_learned_mirrors_the_rule():
    from training.tasks.vocab import SEQ_LEN

    for measured in (17.0, 17.5, 40.0, None):
        m = breaks_figure.Member(
            "v/letter/seed-0", "variants", "v", "letter", 0, {"lengths": LENGTHS}, {"measured": measured}
        )
        assert breaks_figure.never_learned(m) == bool(
            break_prediction.never_learned({"x": {"measured": measured}}, SEQ_LEN)
        )
    from training.analysis.measured_discrepancy import DEFAULT_LENGTHS

    assert DEFAULT_LENGTHS[0] == SEQ_LEN  # the figure reads the training length off the grid's start


def test_registered():
    assert FIGURES["fig_breaks"][0] is build_fig_breaks


@pytest.mark.parametrize("title, rule", [("A1.", "lemma"), ("A2.", "mass"), ("A3.", "relative")])
def test_break_points_are_the_files_pairs_each_member_once(studies, kept, tmp_path, title, rule):
    inputs, expected = studies
    build_fig_breaks(inputs, tmp_path / "out")
    ax = panel(kept["fig_breaks"], title)
    found = points(ax)
    expected = {m: b for m, b in expected.items() if rule in b["predicted"]}  # A3 skips an older file
    assert (PREDATES_RELATIVE in expected) == (rule != "relative")
    assert set(found) == set(expected)  # paper/number/seed-0 once, from the seed study (not 999)
    low, high = ax.get_xlim()
    edges = set()
    for member, breaks in expected.items():
        x, y = found[member]
        for value, at in ((breaks["measured"], x), (breaks["predicted"][rule]["break"], y)):
            if value is None:  # censored: past the last length, inside the axes
                assert LAST < at < high
                edges.add(at)
            else:
                assert at == pytest.approx(value)
    assert len(edges) == 1  # every censored value at the same edge
    assert low < min(v for xy in found.values() for v in xy)


def test_only_the_models_the_relative_reading_was_not_chosen_on_are_ringed(studies, kept, tmp_path):
    inputs, expected = studies
    build_fig_breaks(inputs, tmp_path / "out")
    ax = panel(kept["fig_breaks"], "A3.")
    found = points(ax)
    rings = [
        tuple(map(float, c.get_offsets()[0]))
        for c in ax.collections
        if isinstance(c, PathCollection) and not c.get_gid()
    ]
    held_out = [
        m
        for m in expected
        if "relative" in expected[m]["predicted"] and m not in break_prediction.SEEN_BY_RELATIVE
    ]
    assert held_out == ["wide-3k/letter/seed-0", "wide-3k/letter/seed-2"]  # the paper runs are all seen
    assert sorted(rings) == sorted(found[m] for m in held_out)


def test_hop_lines_are_the_per_hop_breaks(studies, kept, tmp_path):
    inputs, expected = studies
    build_fig_breaks(inputs, tmp_path / "out")
    ax = panel(kept["fig_breaks"], "B.")
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    assert set(lines) == set(expected)
    top = ax.get_ylim()[1]
    for member, breaks in expected.items():
        xs, ys = lines[member].get_xdata(), lines[member].get_ydata()
        assert [round(x) for x in xs] == [1, 2, 3, 4]
        for hop, y in zip("1234", ys):
            value = breaks["measured_per_hop"][hop]
            assert (LAST < y < top) if value is None else y == pytest.approx(value)


def test_weight_panel_is_median_over_seeds_of_the_lowest_path_layer(studies, kept, tmp_path):
    inputs, _ = studies
    build_fig_breaks(inputs, tmp_path / "out")
    ax = panel(kept["fig_breaks"], "C.")
    for variant in ("paper", "wide-3k"):
        members = [
            (SEEDS_STUDY if variant == "paper" else VARIANTS_STUDY)[m]
            for m in (SEEDS_STUDY if variant == "paper" else VARIANTS_STUDY)
            if m.startswith(f"{variant}/letter/")
        ]
        per_seed = [
            [min(weight(layer, seed, i) for layer in (path or [0])) for i in range(len(LENGTHS))]
            for seed, *_, path in members
        ]
        (line,) = [line for line in ax.get_lines() if line.get_label().startswith(f"{variant}:")]
        assert list(line.get_xdata()) == LENGTHS
        assert list(line.get_ydata()) == pytest.approx([statistics.median(c) for c in zip(*per_seed)])
    threshold = [line for line in ax.get_lines() if "threshold" in line.get_label()]
    assert len(threshold) == 1 and list(threshold[0].get_ydata()) == [0.5, 0.5]


def test_a_model_that_never_learned_is_left_out_and_named(studies, kept, tmp_path):
    inputs, expected = studies
    late = {"late-3k/letter/seed-0": (0, 17.0, 17.0, 17.0, 17.0, [])}  # below 0.9 at 17: break "at" 17
    write_dilution_study(Path(inputs.variants_dir), late)
    build_fig_breaks(inputs, tmp_path / "out")
    fig = kept["fig_breaks"]
    assert set(points(panel(fig, "A2."))) == set(expected)
    assert "late-3k/letter/seed-0" not in {line.get_gid() for line in panel(fig, "B.").get_lines()}
    assert not any(
        line.get_label().startswith("late-3k:") for line in panel(fig, "C.").get_lines()
    )  # no path
    title = fig._suptitle.get_text()
    assert f"{len(expected) + 1} trained models" in title
    caption = " ".join(
        fig._supxlabel.get_text().split()
    )  # the caption under the panels, wrapped to the width
    assert "left out, below 0.9 already at the training length: late-3k/letter/seed-0" in caption


def test_labels_come_from_the_variants_summary(studies, kept, tmp_path):
    build_fig_breaks(studies[0], tmp_path / "out")
    # the colours' legend sits in its own cell beside A3, over no data
    texts = [
        t.get_text()
        for ax in kept["fig_breaks"].axes
        if ax.get_legend() is not None
        for t in ax.get_legend().get_texts()
    ]
    assert "wide-3k (f): 2 models" in texts and "paper: 4 models" in texts
    assert any(f"no break up to {LAST}" in t for t in texts)


def test_one_study_alone_is_enough(tmp_path, kept):
    write_dilution_study(tmp_path / "variants", VARIANTS_STUDY)
    build_fig_breaks(
        Inputs(seeds_dir=tmp_path / "absent", variants_dir=tmp_path / "variants"), tmp_path / "out"
    )
    assert set(points(panel(kept["fig_breaks"], "A1."))) == set(VARIANTS_STUDY)


def test_no_dilution_file_is_missing_input(tmp_path, capsys):
    (tmp_path / "seeds" / "paper" / "number" / "seed-0").mkdir(parents=True)  # a member without dilution.json
    with pytest.raises(MissingInput) as absent:
        build_fig_breaks(
            Inputs(seeds_dir=tmp_path / "seeds", variants_dir=tmp_path / "variants"), tmp_path / "out"
        )
    assert len(absent.value.items) == 2 and "dilution.json" in str(absent.value)
    status = main(
        [
            "fig_breaks",
            "--seeds",
            str(tmp_path / "seeds"),
            "--variants",
            str(tmp_path / "variants"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert status == 1
    assert "fig_breaks: skipped, missing" in capsys.readouterr().err
    assert not (tmp_path / "out" / "fig_breaks.png").exists()


def test_real_build_writes_png_and_pdf(studies, tmp_path):
    paths = build_fig_breaks(studies[0], tmp_path / "out").paths
    assert [p.name for p in paths] == ["fig_breaks.png", "fig_breaks.pdf"]
    assert all(p.stat().st_size > 1000 for p in paths)
