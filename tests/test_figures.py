"""figures: every figure builds from small saved results, names select, errors are clear.

The inputs are tiny synthetic files written into tmp_path in the documented schemas (they
test the plotting code only and are never shown as results); the two theory inputs come
from their real producers at a small size, so a schema change there breaks this test.
"""

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from test_breaks_figure import write_dilution_study  # noqa: E402
from test_variants_figure import write_study  # noqa: E402  (the variants study's summary.json)

from constructions.geometry import write_figure4a  # noqa: E402
from figures import bands, style  # noqa: E402
from figures.__main__ import FIGURES, GROUPS, main, select  # noqa: E402
from figures.figure2 import build_fig2, purity_panel  # noqa: E402
from figures.generalisation_figures import build_fig5b  # noqa: E402
from figures.loaders import Inputs  # noqa: E402
from proofs_check.figure5a import build as build_figure5a  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAYERS, STEPS = 6, [0, 500, 1000, 1500]  # 6 layers: Figure 2 then lacks L11, a path worth testing


def synthetic_analysis(task: str) -> dict:
    """An analysis.json in the schema of training's analyze command, with made-up numbers."""
    n = len(STEPS)
    fade = [[max(0.0, 1 - i / (n - 1) * (0.5 + layer / 30)) for layer in range(LAYERS)] for i in range(n)]
    kinds = ["positional" if (task == "number" and layer < 2) else "symbolic" for layer in range(LAYERS)]
    purity = {
        gamma: {
            "count": [0, 2, 4, LAYERS - 1],
            "kind": kinds,
            "rule": "converged score >= 1 - gamma",
            "pure_from_step": [STEPS[1 + layer % 3] for layer in range(LAYERS - 1)] + [None],
        }
        for gamma in ("0.1", "0.05")
    }
    weights = [[math.exp(-abs(i - 2 - 3 * layer)) for i in range(64)] for layer in range(LAYERS)]
    lengths = [17, 34, 68, 136]
    layers = [
        {
            "layer": layer,
            "kind": ["index", "retrieval", "other"][layer % 3],
            "dominant_id": 2 + layer,
            "angle": 0.8 / (layer + 1),
            "min": [0.5 / n**1.5 for n in lengths],
            "median": [1 / n for n in lengths],
            "mean": [1.1 / n for n in lengths],
            "decay_exponent": -1.0,
            "theory": {"reading": "sup", "values": [2 / n**2 for n in lengths]},
        }
        for layer in range(3)
    ]
    return {
        "task": task,
        "run": f"training/reference/{task}",
        "method": "fast",
        "n_inputs": 4,
        "tau": 1e-4,
        "seed": 0,
        "steps": STEPS,
        "layers": LAYERS,
        "validation": [
            {"step": s, "overall": i / n, "per_hop": {h: i / n / int(h) for h in "1234"}}
            for i, s in enumerate(STEPS)
        ],
        "scores": {
            "positional": fade,
            "symbolic": [[1 - 0.5 * v for v in row] for row in fade],
            "entropy": fade,
            "entropy_normalised": fade,
        },
        "purity": purity,
        "frequency": {
            "step": 1500,
            "weights": weights,
            "weighted_id": [3.0 + 3 * layer for layer in range(LAYERS)],
            "frequency": [10000 ** (-(2 + 6 * layer) / 128) for layer in range(LAYERS)],
        },
        "index_geometry": {
            "layer": 1,
            "plane_id": 2,
            "frequency": 0.866,
            "keys": [[0.1 * k, 2.0] for k in range(8)],
            "queries": [[3 * math.cos(k), 3 * math.sin(k)] for k in range(8)],
            "offsets": list(range(1, 9)),
            "key_collapse": 0.97,
            "query_spread": 2.1,
        },
        "measured_discrepancy": {"step": 1500, "lengths": lengths, "layers": layers},
    }


def with_optional_fields(analysis: dict) -> dict:
    """The extra fields training's analysis also writes, which the figures use when present."""
    analysis["best_step"] = 1000
    for block in analysis["purity"].values():
        block["count_positional"] = [0, 1, 2, 2]  # layers 0, 1 (kinds above)
        block["count_symbolic"] = [0, 1, 2, 3]
        block["count_instantaneous"] = [0, 2, 4, 5]
    analysis["frequency"]["weights_max_per_plane"] = [[1 / (1 + i) for i in range(64)]] * LAYERS
    geometry = analysis["index_geometry"]
    geometry["key_positions"] = list(range(4))
    geometry["keys"] = [[0.1 * k, 2.0 + 0.01 * j] for j in range(15) for k in range(4)]  # 60 points: > 40
    geometry["query_alignment"] = 0.9
    return analysis


def write_inputs(root: Path) -> dict:
    """Every input, small, under ``root``; returns the CLI options that point at them."""
    for task in ("number", "letter"):
        folder = root / "runs" / task
        folder.mkdir(parents=True)
        analysis = synthetic_analysis(task)
        (folder / "analysis.json").write_text(
            json.dumps(with_optional_fields(analysis) if task == "number" else analysis)
        )
        lengths = [17, 50, 200]
        (folder / "length_generalisation.json").write_text(
            json.dumps(
                {
                    "task": task,
                    "run": str(folder),
                    "lengths": lengths,
                    "accuracy": [1.0, 0.6, 0.1],
                    "per_hop": {h: [1.0, 0.5, 0.1] for h in "1234"},
                    "n_per_length": [8, 8, 8],
                }
            )
        )
        records = [{"split": "settings", "step": 0, "task": task}]
        for i, step in enumerate(STEPS):
            records.append(
                {
                    "split": "validation",
                    "step": step,
                    "loss": 1.0,
                    "accuracy": i / 4,
                    "accuracy_by_hop": {h: i / 4 for h in "1234"},
                    "is_best": True,
                }
            )
            records.append({"split": "train", "step": step + 50, "loss": 1.0, "accuracy": 0.5})
        (folder / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    llm = root / "llm"
    llm.mkdir()
    for model, task in (("gpt-5.4", "number"), ("tiny-model", "letter")):
        (llm / f"{model}-{task}.json").write_text(
            json.dumps(
                {
                    "model": model,
                    "backend": "hf",
                    "task": task,
                    "lengths": [12, 32],
                    "seeds": [0, 1],
                    "per_length": [
                        {"length": 12, "accuracy_mean": 0.9, "accuracy_std": 0.05, "per_seed": [0.85, 0.95]},
                        {"length": 32, "accuracy_mean": None, "accuracy_std": None, "per_seed": [None, None]},
                    ],
                    "settings": {},
                }
            )
        )
    figure5a = root / "figure5a.json"
    figure5a.write_text(json.dumps(build_figure5a(150)))
    figure4a = root / "figure4a.json"
    write_figure4a(figure4a, "0.8", range(1, 5))
    write_seeds(root / "seeds", SEED_FACTORS, lacking={("letter", 2): "analysis.json"})
    write_dilution_study(root / "seeds")  # fig_breaks reads the studies' dilution.json
    return {
        "--runs": root / "runs",
        "--seeds": root / "seeds",
        "--llm": llm,
        "--figure5a": figure5a,
        "--figure4a": figure4a,
        "--variants": write_study(root / "variants", rescale=True),
    }


# Three seeds of a made-up study: every number of seed S is the shipped number times its factor
SEED_FACTORS = {0: 0.55, 1: 0.95, 2: 0.7}
SEED_LENGTHS = [17, 50, 200, 850]


def seed_member(task: str, factor: float) -> dict:
    """The files of one study member: {file name: text}."""
    analysis = with_optional_fields(synthetic_analysis(task))
    for name in ("positional", "symbolic", "entropy_normalised"):
        analysis["scores"][name] = [[v * factor for v in row] for row in analysis["scores"][name]]
    for block in analysis["purity"].values():
        block["count_symbolic"] = [round(c * factor * 2) for c in block["count_symbolic"]]
    records = [
        {
            "split": "validation",
            "step": step,
            "accuracy": i / 4 * factor,
            "accuracy_by_hop": {h: min(1.0, i / 4 * factor * int(h) / 2) for h in "1234"},
        }
        for i, step in enumerate(STEPS)
    ]
    length = {
        "task": task,
        "lengths": SEED_LENGTHS,
        "accuracy": [factor / (1 + i) for i in range(4)],
        "per_hop": {h: [factor / (int(h) + i) for i in range(4)] for h in "1234"},
    }
    return {
        "analysis.json": json.dumps(analysis),
        "length_generalisation.json": json.dumps(length),
        "metrics.jsonl": "\n".join(json.dumps(r) for r in records) + "\n",
    }


def write_seeds(root: Path, factors: dict, lacking: dict | None = None) -> Path:
    """<root>/paper/<task>/seed-<S>/ for each seed; ``lacking`` {(task, seed): file} leaves one out."""
    for task in ("number", "letter"):
        for seed, factor in factors.items():
            folder = root / "paper" / task / f"seed-{seed}"
            folder.mkdir(parents=True)
            for name, text in seed_member(task, factor).items():
                if (lacking or {}).get((task, seed)) != name:
                    (folder / name).write_text(text)
    return root


def options(paths: dict, out: Path) -> list[str]:
    return [str(x) for key, value in paths.items() for x in (key, value)] + ["--out", str(out)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Build every figure once (the slow part), shared by the checks below."""
    root = tmp_path_factory.mktemp("figures")
    paths = write_inputs(root)
    status = main(options(paths, root / "out"))
    return root, paths, status


def test_every_figure_is_written_and_non_empty(built):
    root, _, status = built
    assert status == 0
    out = root / "out"
    for name in FIGURES:
        suffixes = (".md",) if name == "table1" else (".png", ".pdf")
        for suffix in suffixes:
            path = out / f"{name}{suffix}"
            assert path.is_file() and path.stat().st_size > 1000, path


def test_table1_sets_paper_beside_ours(built):
    text = (built[0] / "out" / "table1.md").read_text()
    assert "| 4 | 10 | 0.2738 | 15.0 |" in text  # number task layer 4: paper ID 10, ours 3 + 3*4
    assert "## Letter task" in text


def test_names_select_a_subset_and_groups_expand(tmp_path, built):
    _, paths, _ = built
    assert main(["fig4a", "table1"] + options(paths, tmp_path)) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig4a.pdf", "fig4a.png", "table1.md"]
    assert select(["fig5", "fig2"]) == ["fig2", "fig5a", "fig5b", "fig5cd"]
    assert set(GROUPS["fig4"]) <= set(FIGURES)


def test_unknown_name_exits_2_with_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "figures", "fig9", "--out", "/nonexistent"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "fig9" in lines[0] and "fig2" in lines[0]


def test_missing_input_names_the_file_and_command(tmp_path, built, capsys):
    _, paths, _ = built
    absent = dict(paths, **{"--figure5a": tmp_path / "nowhere" / "figure5a.json"})
    assert main(["fig5a"] + options(absent, tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert "nowhere/figure5a.json" in err and "python -m proofs_check.figure5a --out" in err
    assert not (tmp_path / "out" / "fig5a.png").exists()


def test_without_names_missing_inputs_are_skipped_with_a_warning(tmp_path, built, capsys):
    _, paths, _ = built
    empty = tmp_path / "empty_runs"
    empty.mkdir()
    absent = {"--runs": empty, "--figure5a": tmp_path / "no.json", "--figure4a": tmp_path / "no.json"}
    assert main(options(dict(paths, **absent), tmp_path / "out")) == 0  # fig5cd needs only Table 3
    captured = capsys.readouterr()
    assert "warning: fig2: skipped" in captured.err and "analysis.json" in captured.err
    assert "python -m training analyze" in captured.err and "warning: fig5a: skipped" in captured.err
    assert (tmp_path / "out" / "fig5cd.png").is_file() and not (tmp_path / "out" / "fig2.png").exists()


def test_one_task_missing_gives_a_partial_figure_and_an_error_when_named(tmp_path, built, capsys):
    _, paths, _ = built
    runs = tmp_path / "runs"
    (runs / "number").mkdir(parents=True)
    for name in ("analysis.json", "metrics.jsonl"):
        (runs / "number" / name).write_text((paths["--runs"] / "number" / name).read_text())
    assert main(["fig7"] + options(dict(paths, **{"--runs": runs}), tmp_path / "out")) == 1
    assert (tmp_path / "out" / "fig7.png").is_file()
    assert "letter/analysis.json" in capsys.readouterr().err


def test_malformed_input_is_an_error(tmp_path, built, capsys):
    _, paths, _ = built
    broken = tmp_path / "figure4a.json"
    broken.write_text(json.dumps({"theta": "1"}))
    assert main(["fig4a"] + options(dict(paths, **{"--figure4a": broken}), tmp_path / "out")) == 1
    assert "lacks the field(s) key, queries, logits" in capsys.readouterr().err


def test_an_absent_optional_block_is_missing_input(tmp_path, built, capsys):
    _, paths, _ = built
    analysis = synthetic_analysis("number")
    del analysis["measured_discrepancy"]  # as written by `python -m training analyze --no-discrepancy`
    (tmp_path / "runs" / "number").mkdir(parents=True)
    (tmp_path / "runs" / "number" / "analysis.json").write_text(json.dumps(analysis))
    assert (
        main(["discrepancy_trained"] + options(dict(paths, **{"--runs": tmp_path / "runs"}), tmp_path)) == 1
    )
    assert "missing the 'measured_discrepancy' block of" in capsys.readouterr().err


# --- bands over seeds (figures 2 and 5B) -------------------------------------------------------


def panel(fig, title_start: str):
    return next(ax for ax in fig.axes if ax.get_title().startswith(title_start))


def drawn_band(ax, colour) -> dict:
    """{x: (lowest, highest)} of the one min-max band drawn in ``colour``."""
    fills = [
        c
        for c in ax.collections
        if isinstance(c, PolyCollection) and np.allclose(c.get_facecolor()[0][:3], to_rgb(colour))
    ]
    assert len(fills) == 1, f"{len(fills)} bands in {colour}"
    vertices = np.concatenate([path.vertices for path in fills[0].get_paths()])
    return {
        x: (vertices[vertices[:, 0] == x, 1].min(), vertices[vertices[:, 0] == x, 1].max())
        for x in np.unique(vertices[:, 0])
    }


def drawn_median(ax, colour) -> list:
    lines = [
        line
        for line in ax.get_lines()
        if line.get_linewidth() == bands.MEDIAN_WIDTH
        and np.allclose(to_rgb(line.get_color()), to_rgb(colour))
    ]
    assert len(lines) == 1
    return list(lines[0].get_ydata())


def seed_values(seeds_dir: Path, task: str, name: str, pick) -> dict:
    """{seed: pick(file)} of every member of ``task`` that has the file ``name``."""
    found = {}
    for folder in sorted((seeds_dir / "paper" / task).glob("seed-*")):
        if (folder / name).is_file():
            text = (folder / name).read_text()
            data = (
                [json.loads(line) for line in text.splitlines()]
                if name.endswith(".jsonl")
                else json.loads(text)
            )
            found[int(folder.name[5:])] = pick(data)
    return found


def assert_band_is_min_max(ax, colour, xs, per_seed: dict) -> None:
    """The drawn band spans the lowest to the highest seed at every x, the line is their median."""
    columns = list(zip(*per_seed.values()))
    band_drawn = drawn_band(ax, colour)
    for x, column in zip(xs, columns):
        assert band_drawn[x] == pytest.approx((min(column), max(column)))
    assert drawn_median(ax, colour) == pytest.approx([statistics.median(c) for c in columns])


def test_band_is_median_and_range_with_gaps_not_zeros():
    curves = {0: ([0, 1, 2], [0.2, None, 0.9]), 1: ([0, 1, 2], [0.7, 0.5, math.nan]), 2: ([0, 1], [0.3, 0.7])}
    spread = bands.band(curves)
    assert spread.x == [0, 1, 2] and spread.count == [3, 2, 1] and spread.seeds == (0, 1, 2)
    assert spread.median == pytest.approx([0.3, 0.6, 0.9])
    assert spread.low[:2] == [0.2, 0.5] and spread.high[:2] == [0.7, 0.7]
    assert math.isnan(spread.low[2]) and math.isnan(spread.high[2])  # one seed there: no band


def test_fig2_bands_are_the_seeds_min_max_and_median(built, kept):
    root, paths, _ = built
    inputs = Inputs(runs_dir=paths["--runs"], seeds_dir=paths["--seeds"])
    build_fig2(inputs, root / "unused")
    fig = kept["fig2"]
    accuracy = panel(fig, "A. Number task: accuracy per hop count")
    assert "3 seeds (0, 1, 2)" in accuracy.get_title()
    for hop in "1234":
        per_seed = seed_values(
            paths["--seeds"],
            "number",
            "metrics.jsonl",
            lambda rows, h=hop: [r["accuracy_by_hop"][h] for r in rows],
        )
        assert_band_is_min_max(accuracy, style.HOP_COLOURS[hop], STEPS, per_seed)
    overall = panel(fig, "A. Number task: accuracy over all hops")
    per_seed = seed_values(
        paths["--seeds"], "number", "metrics.jsonl", lambda rows: [r["accuracy"] for r in rows]
    )
    assert_band_is_min_max(overall, style.ACCURACY_COLOUR, STEPS, per_seed)
    scores = panel(fig, "B. Number task: layer L1")
    per_seed = seed_values(
        paths["--seeds"], "number", "analysis.json", lambda a: [row[1] for row in a["scores"]["positional"]]
    )
    assert_band_is_min_max(scores, style.SCORE_COLOUR["positional"], STEPS, per_seed)


def test_fig2_purity_band_is_the_seeds_min_max(built):
    _, paths, _ = built
    seeds = Inputs(seeds_dir=paths["--seeds"]).seeds("number", "analysis")
    shipped = synthetic_analysis("number")
    fig, ax = plt.subplots()
    spread = purity_panel(ax, shipped, "0.1", seeds)["symbolic"]
    plt.close(fig)
    per_seed = [a["purity"]["0.1"]["count_symbolic"] for a in seeds.values()]
    assert spread.low == [min(c) for c in zip(*per_seed)] and spread.high == [max(c) for c in zip(*per_seed)]
    assert spread.median == [statistics.median(c) for c in zip(*per_seed)]


def test_a_seed_lacking_a_file_is_left_out_of_that_panel_only(built, kept):
    root, paths, _ = built  # letter seed 2 has metrics.jsonl but no analysis.json yet
    build_fig2(Inputs(runs_dir=paths["--runs"], seeds_dir=paths["--seeds"]), root / "unused")
    fig = kept["fig2"]
    assert "3 seeds (0, 1, 2)" in panel(fig, "A. Letter task: accuracy over all hops").get_title()
    scores = panel(fig, "B. Letter task: layer L1")
    assert "2 seeds (0, 1)" in scores.get_title()
    per_seed = seed_values(
        paths["--seeds"], "letter", "analysis.json", lambda a: [row[1] for row in a["scores"]["symbolic"]]
    )
    assert sorted(per_seed) == [0, 1]
    assert_band_is_min_max(scores, style.SCORE_COLOUR["symbolic"], STEPS, per_seed)


def test_fig5b_bands_are_the_seeds_min_max_and_median(built, kept):
    root, paths, _ = built
    build_fig5b(Inputs(runs_dir=paths["--runs"], seeds_dir=paths["--seeds"]), root / "unused")
    fig = kept["fig5b"]
    by_hop = panel(fig, "C. Letter task by hop count")
    for hop in "1234":
        per_seed = seed_values(
            paths["--seeds"], "letter", "length_generalisation.json", lambda d, h=hop: d["per_hop"][h]
        )
        assert_band_is_min_max(by_hop, style.HOP_COLOURS[hop], SEED_LENGTHS, per_seed)
    overall = panel(fig, "A. All hops")
    for task in ("number", "letter"):
        per_seed = seed_values(paths["--seeds"], task, "length_generalisation.json", lambda d: d["accuracy"])
        assert_band_is_min_max(overall, style.TASK_COLOUR[task], SEED_LENGTHS, per_seed)


def test_one_seed_draws_no_band_and_says_so(tmp_path, built, kept):
    _, paths, _ = built
    seeds = write_seeds(tmp_path / "seeds", {3: 0.8})
    build_fig5b(Inputs(runs_dir=paths["--runs"], seeds_dir=seeds), tmp_path)
    fig = kept["fig5b"]
    assert "1 seed (3), no band" in panel(fig, "B. Number task").get_title()
    assert not [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
    per_seed = seed_values(seeds, "number", "length_generalisation.json", lambda d: d["per_hop"]["2"])
    assert drawn_median(panel(fig, "B. Number task"), style.HOP_COLOURS["2"]) == pytest.approx(per_seed[3])


def test_no_seed_study_is_missing_input_and_the_figure_still_drawn(tmp_path, built, capsys):
    _, paths, _ = built
    empty = tmp_path / "no_study"
    empty.mkdir()
    assert main(["fig5b"] + options(dict(paths, **{"--seeds": empty}), tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert "no_study/paper/number/seed-*/length_generalisation.json" in err and "training study" in err
    assert (tmp_path / "out" / "fig5b.png").is_file()


def test_seeds_option_naming_a_file_exits_2(tmp_path, built, capsys):
    _, paths, _ = built
    assert main(["fig2"] + options(dict(paths, **{"--seeds": paths["--figure5a"]}), tmp_path / "out")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and err[0].startswith("python -m figures: error: --seeds:")
        and "not a directory" in err[0]
    )
