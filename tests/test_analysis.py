"""training.analysis (scores, dynamics) and friends: scores through the analysis code path on heads whose nature is
known (the constructions), the purity rule, frequency use, geometry numbers, length
generalisation in chunks, and the analyze / evaluate commands end to end on a smoke run."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from constructions.export import OneLayerModel
from constructions.index import number_task
from constructions.retrieval import letter_task
from training.analysis.adapters import adapter_for
from training.analysis.dynamics import analyse_run
from training.analysis.evaluate import length_generalisation
from training.analysis.frequency import frequency_use, top_logit_planes, weighted_id
from training.analysis.geometry import circular_correlation, key_collapse
from training.analysis.measured_discrepancy import classify, decay_exponent, theory_curve
from training.analysis.purity import purity
from training.analysis.scores import model_scores, score_inputs
from training.run.checkpoints import load_model
from training.run.loop import train
from training.tasks.definitions import get_task

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """A 20-step smoke run of the number task: checkpoints at steps 0 and 20."""
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("runs") / "number"
    train("number", out, preset="smoke", steps=20, progress=False)
    return out


def construction_ids(construction, task_name, count=30):
    task = get_task(task_name)
    rows = task.decode(task.generate(count, seed=0).inputs)
    return np.array([construction.ids(row) for row in rows])


@pytest.mark.parametrize("method", ["fast", "rerun"])
def test_t_index_is_purely_positional_through_the_analysis(method):
    """T_Index's logits cos((t - s) theta) ignore key contents: s_POS = 1 on every input."""
    construction = number_task(17)
    scores = model_scores(OneLayerModel(construction), construction_ids(construction, "number"), method)
    assert scores["positional"].shape == (1, 30, 1)
    assert scores["positional"].min() > 1 - 1e-12
    assert scores["symbolic"].max() < 0.5


@pytest.mark.parametrize("method", ["fast", "rerun"])
def test_t_retrieval_is_symbolic_through_the_analysis(method):
    """T_Retrieval's logits follow the key's left letter (theta tiny): s_SYM ~ 1, s_POS low."""
    construction = letter_task(17)
    scores = model_scores(OneLayerModel(construction), construction_ids(construction, "letter"), method)
    assert scores["symbolic"].min() > 1 - 1e-5  # not exactly 1: theta > 0 adds a small positional part
    assert scores["positional"].max() < 0.5


@pytest.mark.parametrize("task", ["number", "letter"])
def test_fast_equals_rerun_on_the_reference_weights(task):
    """The shipped reference models (paper size, float64): the two score routes agree on
    every input and layer, and the heads are far from the uniform (1, 1) case."""
    from pathlib import Path

    run = Path(__file__).resolve().parents[1] / "training" / "reference" / task
    model = load_model(run).double()
    ids = score_inputs(task, count=16).inputs
    fast, rerun = model_scores(model, ids, "fast"), model_scores(model, ids, "rerun")
    for key in ("positional", "symbolic", "entropy"):
        assert fast[key].shape == (12, 16, 1)
        assert np.max(np.abs(fast[key] - rerun[key])) < 1e-6, key
    assert np.min(fast["positional"]) < 0.5 and np.max(fast["symbolic"]) > 0.99


def test_purity_rule_on_crafted_series():
    steps = [0, 500, 1000, 1500, 2000]
    series = {  # layer: (s_POS over steps, s_SYM over steps)
        0: ([1.0, 0.6, 0.95, 0.97, 0.96], [1.0, 0.5, 0.04, 0.02, 0.03]),  # positional from 1000
        1: (
            [1.0, 0.05, 0.3, 0.08, 0.02],
            [1.0, 0.99, 0.5, 0.93, 0.97],
        ),  # symbolic, lapses, symbolic from 1500
        2: ([0.2, 0.95, 0.5, 0.6, 0.5], [0.9, 0.03, 0.5, 0.5, 0.5]),  # pure at 500 only: never "becomes pure"
        3: (
            [0.97, 0.99, 0.96, 0.02, 0.01],
            [0.03, 0.02, 0.03, 0.99, 0.995],
        ),  # positional, then symbolic from 1500
    }
    positional = np.array([series[layer][0] for layer in range(4)]).T  # (steps, layers)
    symbolic = np.array([series[layer][1] for layer in range(4)]).T
    block = purity(positional, symbolic, steps, 0.1)
    assert block["pure_from_step"] == [1000, 1500, None, 1500]
    assert block["kind"] == ["positional", "symbolic", None, "symbolic"]
    assert block["count"] == [0, 0, 1, 3, 3]
    assert block["count_positional"] == [0, 0, 1, 1, 1] and block["count_symbolic"] == [0, 0, 0, 2, 2]
    assert block["count_instantaneous"] == [1, 3, 2, 3, 3]
    strict = purity(positional, symbolic, steps, 0.05)
    assert strict["pure_from_step"] == [1000, 2000, None, 1500]  # layer 1: s_SYM 0.93 < 0.95 at step 1500


def test_frequency_terms_sum_to_the_top_logit_and_weights():
    torch.manual_seed(0)
    from training.model.gptj import GPTJ, ModelConfig

    model = GPTJ(ModelConfig(vocab_size=136, n_layer=2, n_embd=32, rotary_dim=32, n_inner=64)).double().eval()
    adapter = adapter_for(model)
    hidden, logits = adapter.trace(score_inputs("number", 12).inputs)
    planes = top_logit_planes(adapter, 0, hidden[0])
    assert np.allclose(planes["terms"].sum(-1) + planes["rest"], planes["logit"], atol=1e-12)
    assert np.allclose(planes["logit"], logits[0].max(-1), atol=1e-12)
    use = frequency_use(adapter, hidden)
    assert len(use["weights"][0]) == 16 and 1 <= use["weighted_id"][0] <= 16
    assert use["frequency"][0] == pytest.approx(10000 ** (-2 * (use["rounded_id"][0] - 1) / 32))
    assert weighted_id([0, 0, 2, 0]) == 3.0 and weighted_id([1, 0, 1]) == 2.0 and weighted_id([0, 0]) is None


def test_geometry_numbers_on_known_configurations():
    angles = np.linspace(0, 2 * np.pi, 50, endpoint=False)
    collapsed = np.stack([np.cos(0.3 + 0 * angles), np.sin(0.3 + 0 * angles)], -1) * 2.0
    spread = np.stack([np.cos(angles), np.sin(angles)], -1)
    assert key_collapse(collapsed)[0] == pytest.approx(1.0) and key_collapse(collapsed)[1] == pytest.approx(
        0.3
    )
    assert key_collapse(spread)[0] < 1e-9
    offsets = np.arange(1, 17)
    assert circular_correlation(1.0 - 0.866 * offsets, -0.866 * offsets) == pytest.approx(1.0)


def test_geometry_of_t_index_is_figure_4a():
    """T_Index's keys are all v and its queries rho(-s theta) v: collapse 1, alignment 1,
    correlation 1, and every query attends its target offset (theta = 2 pi / 17: no ties)."""
    from training.analysis.geometry import index_geometry

    construction = number_task(17)
    task = get_task("number")
    batch = task.generate(20, seed=1)
    ids = np.array([construction.ids(row) for row in task.decode(batch.inputs)])
    adapter = adapter_for(OneLayerModel(construction))
    geometry = index_geometry(adapter, 0, adapter.hidden_states(ids)[0], batch.inputs, task, plane_id=1)
    for key in (
        "key_collapse",
        "query_alignment",
        "query_spread",
        "pointing_fraction",
        "attends_target_fraction",
    ):
        assert geometry[key] == pytest.approx(1.0, abs=1e-9), key
    assert len(geometry["queries"]) == len(geometry["offsets"]) == 20 * 9 and min(geometry["offsets"]) >= 1


def test_discrepancy_helpers():
    assert decay_exponent([10, 100, 1000], [1.0, 0.01, 1e-4]) == pytest.approx(-2.0)
    assert decay_exponent([10, 100], [0.0, 1.0]) is None
    assert (
        classify(0.97, 0.1) == "index"
        and classify(0.2, 0.99) == "retrieval"
        and classify(0.9, 0.9) == "other"
    )
    index = theory_curve("index", 0.8660254037844386, [17, 100, 1000], 120)
    assert index["reading"] == "min" and index["values"][0] > index["values"][-1] > 0
    retrieval = theory_curve("retrieval", 0.0027, [17, 50], 8)
    assert retrieval["reading"] == "margin" and retrieval["routes"] == ["exact (closed form)"] * 2


def test_length_generalisation_in_chunks_matches_one_batch(smoke_run):
    """At a long length the batch shrinks (1 sequence per chunk) and the accuracy is unchanged."""
    model = load_model(smoke_run)
    chunked = length_generalisation(model, "number", [17, 600], count=8, batch_tokens=700, progress=False)
    whole = length_generalisation(model, "number", [17, 600], count=8, batch_tokens=10**6, progress=False)
    assert chunked["lengths"] == [17, 600] and chunked["n_per_length"] == [8, 8]
    assert chunked["accuracy"] == pytest.approx(whole["accuracy"])
    assert set(chunked["per_hop"]) == {"1", "2", "3", "4"}
    capped = length_generalisation(
        model, "number", [17, 600], count=8, max_tokens=600 * 3, min_count=2, progress=False
    )
    assert capped["n_per_length"] == [8, 3]


def test_analyse_run_schema_and_routes_agree(smoke_run):
    fast = analyse_run(
        smoke_run,
        "number",
        "fast",
        n_inputs=12,
        discrepancy_lengths=[17, 60],
        discrepancy_count=3,
        progress=False,
    )
    rerun = analyse_run(smoke_run, "number", "rerun", n_inputs=12, discrepancy=False, progress=False)
    assert fast["steps"] == [0, 20] and fast["layers"] == 2
    for key in ("positional", "symbolic", "entropy"):
        assert np.max(np.abs(np.array(fast["scores"][key]) - np.array(rerun["scores"][key]))) < 1e-9
        assert np.array(fast["scores"][key]).shape == (2, 2)
    assert np.array(fast["scores"]["entropy_normalised"]).min() >= 0
    assert set(fast["purity"]) == {"0.1", "0.05"} and len(fast["purity"]["0.1"]["count"]) == 2
    assert [v["step"] for v in fast["validation"]] == [0, 20]
    assert set(fast["validation"][0]["per_hop"]) == {"1", "2", "3", "4"}
    assert len(fast["frequency"]["weights"]) == 2 and len(fast["frequency"]["weights"][0]) == 16
    geometry = fast["index_geometry"]
    assert geometry["layer"] == 1 and len(geometry["queries"]) == len(geometry["offsets"]) == 12 * 9
    assert 0 <= geometry["key_collapse"] <= 1
    layer = fast["measured_discrepancy"]["layers"][0]
    assert fast["measured_discrepancy"]["lengths"] == [17, 60] and len(layer["median"]) == 2
    assert layer["kind"] in ("index", "retrieval", "other")
    json.dumps(fast)  # plain JSON


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "training", *args],
        capture_output=True,
        text=True,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )


def test_cli_analyze_and_evaluate_end_to_end(smoke_run, tmp_path):
    out = tmp_path / "analysis.json"
    done = cli(
        "analyze",
        "--run",
        str(smoke_run),
        "--task",
        "number",
        "--json",
        str(out),
        "--n-inputs",
        "6",
        "--discrepancy-lengths",
        "17,40",
        "--discrepancy-count",
        "2",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["n_inputs"] == 6
    out = tmp_path / "length.json"
    done = cli(
        "evaluate",
        "--run",
        str(smoke_run),
        "--task",
        "number",
        "--lengths",
        "17,300",
        "--json",
        str(out),
        "--count",
        "4",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["lengths"] == [17, 300] and result["n_per_length"] == [4, 4] and set(result["per_hop"])


def test_cli_evaluate_on_a_paper_split(smoke_run, tmp_path):
    """--split: accuracy on the paper's fixed split, equal to a direct argmax over the split."""
    import os

    from training.run.checkpoints import load_model
    from training.tasks.datasets import paper_splits

    out = tmp_path / "validation.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "evaluate",
            "--run",
            str(smoke_run),
            "--task",
            "number",
            "--split",
            "validation",
            "--json",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "ROPE_HEADS_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    split = paper_splits("number", cache_dir=tmp_path / "cache")["validation"]
    with torch.no_grad():
        predicted = load_model(smoke_run)(torch.as_tensor(split.inputs), last_only=True).argmax(-1).numpy()
    assert result["split"] == "validation" and result["n"] == len(split.answers) == 2400
    assert result["n_correct"] == int((predicted == split.answers).sum())
    assert result["accuracy"] == pytest.approx((predicted == split.answers).mean(), abs=1e-9)
    for hop, accuracy in result["per_hop"].items():
        chosen = split.hops == int(hop)
        assert accuracy == pytest.approx((predicted[chosen] == split.answers[chosen]).mean(), abs=1e-9)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            [
                "evaluate",
                "--run",
                "RUN",
                "--task",
                "number",
                "--split",
                "test",
                "--lengths",
                "17",
                "--json",
                "/tmp/x.json",
            ],
            "not allowed with",
        ),
        (
            ["analyze", "--run", "/nonexistent/run", "--task", "number", "--json", "/tmp/x.json"],
            "does not exist",
        ),
        (["analyze", "--run", "RUN", "--task", "letter", "--json", "/tmp/x.json"], "does not match"),
        (
            ["evaluate", "--run", "RUN", "--task", "letter", "--lengths", "17", "--json", "/tmp/x.json"],
            "does not match",
        ),
        (
            ["evaluate", "--run", "RUN", "--task", "number", "--lengths", "10,20", "--json", "/tmp/x.json"],
            "17..1000017",
        ),
        (
            [
                "evaluate",
                "--run",
                "RUN",
                "--task",
                "number",
                "--lengths",
                "17",
                "--json",
                "/nonexistent/x.json",
            ],
            "does not exist",
        ),
    ],
)
def test_cli_errors_are_one_line_exit_2(smoke_run, args, message):
    done = cli(*[str(smoke_run) if a == "RUN" else a for a in args])
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


# -- sizes: refused before any model loads (issue 13) --------------------------------------------

REFERENCE = Path(__file__).resolve().parents[1] / "training" / "reference" / "number"


@pytest.fixture
def nothing_heavy(monkeypatch):
    """Loading a model or running an analysis fails the test; the memory limit is fixed at
    8 GiB so that the outcome does not depend on this machine."""
    from training.analysis import dynamics, limits
    from training.run import checkpoints

    def heavy(*args, **kwargs):
        raise AssertionError("loaded a model before checking the request")

    monkeypatch.setattr(checkpoints, "load_model", heavy)
    monkeypatch.setattr(dynamics, "analyse_run", heavy)
    monkeypatch.setattr(limits, "memory_limit", lambda: 8 * 2**30)


@pytest.mark.parametrize(
    "args, names",
    [
        (["evaluate", "--lengths", "2000000"], "17..1000017"),
        (["evaluate", "--lengths", "1000017", "--count", "400"], "GiB of memory; the limit is 8.0 GiB"),
        (
            ["evaluate", "--lengths", "200000", "--count", "10"],
            "multiply-adds (~9 h on one CPU core); the limit is 5e+14",
        ),
        (["evaluate", "--lengths", "17", "--count", "0"], "--count must be >= 1, got 0"),
        (
            ["analyze", "--discrepancy-lengths", "3000000"],
            "--discrepancy-lengths: lengths must be integers in 17..1000017",
        ),
        (["analyze", "--discrepancy-lengths", "1000000"], "or pass --no-discrepancy"),
        (["analyze", "--n-inputs", "100000000"], "scoring 100,000,000 inputs per checkpoint needs about"),
        (["analyze", "--n-inputs", "0"], "got 0 and 32"),
        (["analyze", "--seed", "-1"], "--seed must be an integer in 0..18446744073709551615 (2**64 - 1"),
    ],
)
def test_oversized_requests_are_refused_before_any_model_loads(nothing_heavy, tmp_path, capsys, args, names):
    from training.__main__ import main

    out = tmp_path / "out.json"
    assert main([args[0], "--run", str(REFERENCE), "--task", "number", "--json", str(out), *args[1:]]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and names in lines[0] and not out.exists()


def test_the_reference_grids_are_within_the_limits(nothing_heavy):
    from training.analysis.cli_checks import check_analysis_size, check_evaluation_size
    from training.analysis.evaluate import DEFAULT_LENGTHS
    from training.run.checkpoints import read_config

    config = read_config(REFERENCE)
    check_evaluation_size(config, DEFAULT_LENGTHS, 400, None)  # scripts/analyze_reference.sh caps it further
    check_analysis_size(config, 100, DEFAULT_LENGTHS, 32, True)


def test_evaluate_split_with_a_cache_path_that_is_a_file_exits_2(
    nothing_heavy, tmp_path, monkeypatch, capsys
):
    from training.__main__ import main

    cache = tmp_path / "cache"
    cache.write_text("not a folder")
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(cache))
    argv = [
        "evaluate",
        "--run",
        str(REFERENCE),
        "--task",
        "number",
        "--split",
        "test",
        "--json",
        str(tmp_path / "t"),
    ]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(cache) in lines[0] and "ROPE_HEADS_CACHE" in lines[0]
