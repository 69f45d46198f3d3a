"""figures: every figure builds from small saved results, names select, errors are clear.

The inputs are tiny synthetic files written into tmp_path in the documented schemas (they
test the plotting code only and are never shown as results); the two theory inputs come
from their real producers at a small size, so a schema change there breaks this test.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from constructions.geometry import write_figure4a  # noqa: E402
from figures.__main__ import FIGURES, GROUPS, main, select  # noqa: E402
from proofs_check.figure5a import build as build_figure5a  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAYERS, STEPS = 6, [0, 500, 1000, 1500]  # 6 layers: Figure 2 then lacks L11, a path worth testing


def synthetic_analysis(task: str) -> dict:
    """An analysis.json in the schema of training's analyze command, with made-up numbers."""
    n = len(STEPS)
    fade = [[max(0.0, 1 - i / (n - 1) * (0.5 + layer / 30)) for layer in range(LAYERS)] for i in range(n)]
    kinds = ["positional" if (task == "number" and layer < 2) else "symbolic" for layer in range(LAYERS)]
    purity = {gamma: {"count": [0, 2, 4, LAYERS - 1], "kind": kinds, "rule": "converged score >= 1 - gamma",
                      "pure_from_step": [STEPS[1 + layer % 3] for layer in range(LAYERS - 1)] + [None]}
              for gamma in ("0.1", "0.05")}
    weights = [[math.exp(-abs(i - 2 - 3 * layer)) for i in range(64)] for layer in range(LAYERS)]
    lengths = [17, 34, 68, 136]
    layers = [{"layer": layer, "kind": ["index", "retrieval", "other"][layer % 3], "dominant_id": 2 + layer,
               "angle": 0.8 / (layer + 1), "min": [0.5 / n ** 1.5 for n in lengths],
               "median": [1 / n for n in lengths], "mean": [1.1 / n for n in lengths], "decay_exponent": -1.0,
               "theory": {"reading": "sup", "values": [2 / n ** 2 for n in lengths]}} for layer in range(3)]
    return {
        "task": task, "run": f"training/reference/{task}", "method": "fast", "n_inputs": 4, "tau": 1e-4, "seed": 0,
        "steps": STEPS, "layers": LAYERS,
        "validation": [{"step": s, "overall": i / n, "per_hop": {h: i / n / int(h) for h in "1234"}}
                       for i, s in enumerate(STEPS)],
        "scores": {"positional": fade, "symbolic": [[1 - 0.5 * v for v in row] for row in fade],
                   "entropy": fade, "entropy_normalised": fade},
        "purity": purity,
        "frequency": {"step": 1500, "weights": weights, "weighted_id": [3.0 + 3 * layer for layer in range(LAYERS)],
                      "frequency": [10000 ** (-(2 + 6 * layer) / 128) for layer in range(LAYERS)]},
        "index_geometry": {"layer": 1, "plane_id": 2, "frequency": 0.866,
                           "keys": [[0.1 * k, 2.0] for k in range(8)],
                           "queries": [[3 * math.cos(k), 3 * math.sin(k)] for k in range(8)],
                           "offsets": list(range(1, 9)), "key_collapse": 0.97, "query_spread": 2.1},
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
        (folder / "analysis.json").write_text(json.dumps(with_optional_fields(analysis) if task == "number"
                                                         else analysis))
        lengths = [17, 50, 200]
        (folder / "length_generalisation.json").write_text(json.dumps({
            "task": task, "run": str(folder), "lengths": lengths, "accuracy": [1.0, 0.6, 0.1],
            "per_hop": {h: [1.0, 0.5, 0.1] for h in "1234"}, "n_per_length": [8, 8, 8]}))
        records = [{"split": "settings", "step": 0, "task": task}]
        for i, step in enumerate(STEPS):
            records.append({"split": "validation", "step": step, "loss": 1.0, "accuracy": i / 4,
                            "accuracy_by_hop": {h: i / 4 for h in "1234"}, "is_best": True})
            records.append({"split": "train", "step": step + 50, "loss": 1.0, "accuracy": 0.5})
        (folder / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    llm = root / "llm"
    llm.mkdir()
    for model, task in (("gpt-5.4", "number"), ("tiny-model", "letter")):
        (llm / f"{model}-{task}.json").write_text(json.dumps({
            "model": model, "backend": "hf", "task": task, "lengths": [12, 32], "seeds": [0, 1],
            "per_length": [{"length": 12, "accuracy_mean": 0.9, "accuracy_std": 0.05, "per_seed": [0.85, 0.95]},
                           {"length": 32, "accuracy_mean": None, "accuracy_std": None, "per_seed": [None, None]}],
            "settings": {}}))
    figure5a = root / "figure5a.json"
    figure5a.write_text(json.dumps(build_figure5a(150)))
    figure4a = root / "figure4a.json"
    write_figure4a(figure4a, "0.8", range(1, 5))
    return {"--runs": root / "runs", "--llm": llm, "--figure5a": figure5a, "--figure4a": figure4a}


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
    done = subprocess.run([sys.executable, "-m", "figures", "fig9", "--out", "/nonexistent"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
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
    assert main(["discrepancy_trained"] + options(dict(paths, **{"--runs": tmp_path / "runs"}), tmp_path)) == 1
    assert "missing the 'measured_discrepancy' block of" in capsys.readouterr().err
