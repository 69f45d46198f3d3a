"""figures fig_variants and variants_table.md: drawn from a variants study's summary.json.

The summary is made by the study's own collector (``training.studies.collect.collect``) over
made-up member files written in the schemas of ``training evaluate`` (plotting code only,
never shown as results), so a change of the summary's schema breaks these tests.  Expected
numbers are computed here from the members' files, with scipy's t quantile, not copied.
"""

import json
import math
import statistics
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from scipy import stats

matplotlib.use("Agg")

from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from figures.__main__ import FIGURES, build_all, main, select  # noqa: E402
from figures.loaders import Inputs  # noqa: E402
from figures.variants_figure import build_fig_variants  # noqa: E402
from figures.variants_table import TABLE_LENGTHS, is_data_variant, variants_markdown  # noqa: E402
from training.studies.collect import collect  # noqa: E402
from training.studies.plan import load_plan  # noqa: E402

LENGTHS = [17, 100, 850, 5000]
SEEDS = [0, 1, 2]
VARIANTS = {"paper": [], "extra-window-test": ["steps=3000"]}  # the second is a data variant by its name
TASKS = ("number", "letter")


def accuracy(variant: str, task: str, seed: int, position: int, hop: int = 0) -> float:
    """A made-up accuracy in [0, 1] that differs by every argument and falls with length."""
    base = 1.0 - 0.21 * position - 0.05 * hop
    return max(
        0.0, min(1.0, base + 0.037 * seed * (1 + position) - 0.06 * (variant != "paper") + 0.02 * len(task))
    )


def write_member(folder: Path, variant: str, task: str, seed: int, with_lengths: bool) -> None:
    folder.mkdir(parents=True)
    (folder / "test_accuracy.json").write_text(
        json.dumps({"accuracy": accuracy(variant, task, seed, 0), "per_hop": {h: 1.0 for h in "1234"}})
    )
    if with_lengths:
        (folder / "length_generalisation.json").write_text(
            json.dumps(
                {
                    "task": task,
                    "lengths": LENGTHS,
                    "n_per_length": [40] * len(LENGTHS),
                    "accuracy": [accuracy(variant, task, seed, i) for i in range(len(LENGTHS))],
                    "per_hop": {
                        str(h): [accuracy(variant, task, seed, i, h) for i in range(len(LENGTHS))]
                        for h in range(1, 5)
                    },
                }
            )
        )


LONG = 20000  # the long stage's length, measured for the "paper" variant only (write_study(long=True))


def long_accuracy(task: str, seed: int, hop: int = 0) -> float:
    return 0.5 + 0.1 * seed - 0.02 * hop + 0.01 * len(task)


def write_study(root: Path, measured=TASKS, long: bool = False, rescale: bool = False) -> Path:
    """Members of 2 variants x 2 tasks x 3 seeds (length files only for ``measured`` tasks),
    collected into <root>/ship/summary.json by the study's collector; returns the ship folder.
    With ``long``, the "paper" members also have a long stage at LONG tokens; with ``rescale``,
    a rescale stage (the length grid, made-up accuracies a little above the grid's)."""
    plan = {
        "name": "variants-test",
        "about": "synthetic",
        "root": str(root / "members"),
        "ship": str(root / "ship"),
        "tasks": list(TASKS),
        "seeds": SEEDS,
        "analyze": False,
        "variants": {
            name: {"preset": "paper", "set": sets, "about": f"{'ae'[i]}. made-up variant {name}"}
            for i, (name, sets) in enumerate(VARIANTS.items())
        },
    }
    if long:
        plan["long"] = {"lengths": [LONG], "count": 8, "variants": ["paper"]}
    if rescale:
        plan["rescale"] = {"lengths": LENGTHS, "variants": ["paper"]}
    root.mkdir(parents=True, exist_ok=True)
    (root / "plan.json").write_text(json.dumps(plan))
    for variant in VARIANTS:
        for task in TASKS:
            for seed in SEEDS:
                folder = root / "members" / variant / task / f"seed-{seed}"
                write_member(folder, variant, task, seed, task in measured)
                if rescale and variant == "paper" and task in measured:
                    scaled = [min(1.0, accuracy(variant, task, seed, i) + 0.1) for i in range(len(LENGTHS))]
                    (folder / "length_rescaled.json").write_text(
                        json.dumps(
                            {
                                "task": task,
                                "lengths": LENGTHS,
                                "n_per_length": [40] * len(LENGTHS),
                                "accuracy": scaled,
                                "per_hop": {"1": scaled},
                            }
                        )
                    )
                if long and variant == "paper":
                    (folder / "length_long.json").write_text(
                        json.dumps(
                            {
                                "task": task,
                                "lengths": [LONG],
                                "n_per_length": [8],
                                "accuracy": [long_accuracy(task, seed)],
                                "per_hop": {str(h): [long_accuracy(task, seed, h)] for h in range(1, 5)},
                            }
                        )
                    )
    collect(load_plan(root / "plan.json"))
    return root / "ship"


def member_values(ship: Path, variant: str, task: str, pick) -> dict:
    """{seed: pick(length_generalisation.json)} from the member files the collector shipped."""
    return {
        seed: pick(
            json.loads((ship / variant / task / f"seed-{seed}" / "length_generalisation.json").read_text())
        )
        for seed in SEEDS
    }


@pytest.fixture(scope="module")
def ship(tmp_path_factory):
    return write_study(tmp_path_factory.mktemp("variants"))


def band_extent(ax, colour) -> dict:
    """{x: (lowest, highest)} of the one band drawn in ``colour``."""
    fills = [
        c
        for c in ax.collections
        if isinstance(c, PolyCollection) and np.allclose(c.get_facecolor()[0][:3], to_rgb(colour))
    ]
    assert len(fills) == 1
    vertices = np.concatenate([path.vertices for path in fills[0].get_paths()])
    return {
        x: (vertices[vertices[:, 0] == x, 1].min(), vertices[vertices[:, 0] == x, 1].max())
        for x in np.unique(vertices[:, 0])
    }


def table_rows(text: str) -> dict:
    """{(variant label, task): [cells]} of the Markdown table."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[1] in TASKS:
            rows[(cells[0], cells[1])] = cells[2:]
    return rows


def expected_cell(values: list[float]) -> str:
    """Mean and Student t 95% interval clipped to [0, 1], computed independently of the code."""
    n, mean = len(values), statistics.fmean(values)
    half = stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return f"{mean:.3f} [{max(0.0, mean - half):.3f}, {min(1.0, mean + half):.3f}]"


def test_registered_and_written_with_its_table(ship, tmp_path):
    assert "fig_variants" in FIGURES and select(["fig_variants"]) == ["fig_variants"]
    out = tmp_path / "out"
    assert main(["fig_variants", "--variants", str(ship), "--out", str(out)]) == 0
    for name in ("fig_variants.png", "fig_variants.pdf"):
        assert (out / name).stat().st_size > 1000
    assert (out / "variants_table.md").is_file()


def test_table_cells_are_the_mean_and_interval_of_the_seeds(ship, tmp_path):
    assert main(["fig_variants", "--variants", str(ship), "--out", str(tmp_path)]) == 0
    rows = table_rows((tmp_path / "variants_table.md").read_text())
    labels = {"paper": "paper (a)", "extra-window-test": "extra-window-test (e) (data)"}
    assert set(rows) == {(labels[v], t) for v in VARIANTS for t in TASKS}
    for variant in VARIANTS:
        for task in TASKS:
            seed_rows = member_values(ship, variant, task, lambda d: d["accuracy"])
            cells = rows[(labels[variant], task)]
            assert cells[0] == str(len(SEEDS))
            for length, got in zip(TABLE_LENGTHS, cells[1:]):
                at = LENGTHS.index(length)
                assert got == expected_cell([row[at] for row in seed_rows.values()]), (variant, task, length)


def test_curves_are_median_and_min_max_and_the_data_variant_dashed(ship, tmp_path, kept):
    build_fig_variants(Inputs(variants_dir=ship), tmp_path)
    fig = kept["fig_variants"]
    top = next(ax for ax in fig.axes if ax.get_title().startswith("A. Letter task"))
    assert top.get_xscale() == "log"
    for variant in VARIANTS:
        line = next(ln for ln in top.get_lines() if ln.get_label().startswith(variant))
        assert line.get_linestyle() == ("--" if variant.startswith("extra-window") else "-")
        per_seed = member_values(ship, variant, "letter", lambda d: d["accuracy"])
        columns = list(zip(*per_seed.values()))
        assert list(line.get_xdata()) == LENGTHS
        assert list(line.get_ydata()) == pytest.approx([statistics.median(c) for c in columns])
        band = band_extent(top, line.get_color())
        for x, column in zip(LENGTHS, columns):
            assert band[x] == pytest.approx((min(column), max(column)))
    references = sorted(
        ln.get_xdata()[0]
        for ln in top.get_lines()
        if ln.get_linestyle() == ":" and ln.get_xdata()[0] == ln.get_xdata()[1]
    )
    assert references == [17, 850]


def test_hop_panel_is_the_median_per_hop_at_the_longest_length(ship, tmp_path, kept):
    build_fig_variants(Inputs(variants_dir=ship), tmp_path)
    bottom = next(ax for ax in kept["fig_variants"].axes if ax.get_title().startswith("B. Number task"))
    assert str(max(LENGTHS)) in bottom.get_title()
    medians = sorted(tuple(c.lines[0].get_ydata()) for c in bottom.containers)
    expected = sorted(
        tuple(
            statistics.median(member_values(ship, v, "number", lambda d, h=h: d["per_hop"][h][-1]).values())
            for h in "1234"
        )
        for v in VARIANTS
    )
    assert medians == [pytest.approx(e) for e in expected]


def test_the_long_stage_continues_its_variants_curve_and_adds_a_column(tmp_path, kept):
    ship = write_study(tmp_path / "study", long=True)
    build_fig_variants(Inputs(variants_dir=ship), tmp_path)
    rows = table_rows((tmp_path / "variants_table.md").read_text())
    for task in TASKS:
        assert rows[("paper (a)", task)][-1] == expected_cell([long_accuracy(task, s) for s in SEEDS])
        assert rows[("extra-window-test (e) (data)", task)][-1] == "–"  # not a long variant
    top = next(ax for ax in kept["fig_variants"].axes if ax.get_title().startswith("A. Letter task"))
    paper = next(ln for ln in top.get_lines() if ln.get_label().startswith("paper"))
    assert list(paper.get_xdata()) == LENGTHS + [LONG]
    assert paper.get_ydata()[-1] == pytest.approx(
        statistics.median(long_accuracy("letter", s) for s in SEEDS)
    )
    bottom = next(ax for ax in kept["fig_variants"].axes if ax.get_title().startswith("B. Letter task"))
    assert str(max(LENGTHS)) in bottom.get_title()  # the hop panel stays on the grid's longest length
    assert "run for paper only." in (tmp_path / "variants_table.md").read_text()  # every task: none named


def test_a_long_stage_on_one_task_says_so_in_the_table_note():
    summary = {
        "interval": "t",
        "variants": {"paper": {}},
        "results": {"paper": {t: {} for t in TASKS}},
        "long": {"lengths": [LONG], "count": 8, "seed": 4, "variants": ["paper"], "tasks": ["letter"]},
    }
    assert "run for paper (the letter task) only." in variants_markdown(summary)


def test_data_variant_rule_prefers_the_plan_marker():
    assert is_data_variant("extra-window-3k", {"about": "e."})
    assert is_data_variant("random-window", {"group": "data"})
    assert not is_data_variant("extra-window-3k", {"group": "model"})
    assert not is_data_variant("nope-0-3k", {})


def test_absent_summary_is_missing_input_skipped_by_default(tmp_path, capsys):
    empty = tmp_path / "no_study"
    empty.mkdir()
    assert main(["fig_variants", "--variants", str(empty), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "no_study/summary.json" in err and "training/studies/variants.json --collect" in err
    assert not (tmp_path / "out" / "fig_variants.png").exists()
    assert not (tmp_path / "out" / "variants_table.md").exists()
    # the default run (no names) warns and still succeeds with the other figures (fig4a: committed input)
    assert (
        build_all(["fig4a", "fig_variants"], Inputs(variants_dir=empty), tmp_path / "out", explicit=False)
        == 0
    )
    assert "warning: fig_variants: skipped, missing" in capsys.readouterr().err


def test_a_task_without_lengths_is_a_partial_figure(tmp_path, capsys):
    ship = write_study(tmp_path, measured=("number",))
    assert main(["fig_variants", "--variants", str(ship), "--out", str(tmp_path / "out")]) == 1
    assert "missing the 'length (letter task)' block of" in capsys.readouterr().err
    assert (tmp_path / "out" / "fig_variants.png").is_file()
    rows = table_rows((tmp_path / "out" / "variants_table.md").read_text())
    assert rows[("paper (a)", "letter")] == ["0", "–", "–", "–"]


def test_no_length_at_all_is_missing_input(tmp_path, capsys):
    ship = write_study(tmp_path, measured=())
    assert main(["fig_variants", "--variants", str(ship), "--out", str(tmp_path / "out")]) == 1
    assert "missing the 'length' block of" in capsys.readouterr().err
    assert not (tmp_path / "out" / "fig_variants.png").exists()


def test_malformed_summary_is_an_error(tmp_path, capsys):
    (tmp_path / "summary.json").write_text(json.dumps({"variants": {}, "results": [], "interval": "t"}))
    assert main(["fig_variants", "--variants", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "'results' should be an object, found list" in capsys.readouterr().err


def test_baselines_are_black_then_grey_and_no_variant_borrows_their_colours():
    from figures.variants_figure import BASELINE_COLOURS, VARIANT_COLOURS, looks

    names = ["paper-3k", "scale", "paper", *[f"v{i}" for i in range(len(VARIANT_COLOURS))]]
    abouts = {"paper-3k": "a. baseline, short schedule", "paper": "a. baseline, long schedule"}
    summary = {
        "variants": {n: {"about": abouts.get(n, "f. a variant")} for n in names},
        "results": {n: {"letter": {}} for n in names},
    }
    colours = {name: style[1] for name, style in looks(summary, "letter").items()}
    assert colours["paper-3k"] == BASELINE_COLOURS[0] and colours["paper"] == BASELINE_COLOURS[1]
    others = [colours[n] for n in names if n not in abouts]
    assert others[: len(VARIANT_COLOURS)] == list(VARIANT_COLOURS)  # plan order, none skipped
    assert others[-1] == VARIANT_COLOURS[0]  # past the palette it wraps (markers still differ)
    assert not set(others) & set(BASELINE_COLOURS) and len(set(VARIANT_COLOURS)) == len(VARIANT_COLOURS)
