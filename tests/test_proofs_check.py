"""The proofs_check command line: table, JSON, selection, and exit statuses."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proofs_check import __main__ as cli
from proofs_check.registry import REGISTRY, Options, Outcome, claim


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "proofs_check", *args], capture_output=True, text=True)


def test_foundation_claims_run_and_write_json(tmp_path):
    out = tmp_path / "sub" / "claims.json"
    done = run_cli("--only", "S1,C11-id-to-frequency,S2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    rows = {row["id"]: row for row in payload["claims"]}
    assert set(rows) == {"S1-rope-relative", "C11-id-to-frequency", "S2-worked-examples"}
    assert all(row["status"] == "verified" for row in rows.values())
    assert len(rows["C11-id-to-frequency"]["evidence"]["rows"]) == 11
    assert "S2-worked-examples" in done.stdout and "verified" in done.stdout


def test_list_and_unknown_ids():
    listed = run_cli("--list")
    assert listed.returncode == 0 and "S1-rope-relative" in listed.stdout
    bad = run_cli("--only", "C99")
    assert bad.returncode == 2
    assert "unknown claim id 'C99'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.fixture
def temporary_claims():
    added = []

    def add(claim_id, recorded, check):
        claim(claim_id, "a test-only claim", "tests", recorded, kind="statement")(check)
        added.append(claim_id)

    yield add
    for claim_id in added:
        REGISTRY.pop(claim_id)


def test_an_erroring_check_exits_non_zero(temporary_claims, capsys):
    def broken(options):
        raise RuntimeError("deliberate failure")

    temporary_claims("T-broken", "verified", broken)
    assert cli.main(["--only", "T-broken"]) == 1
    err = capsys.readouterr().err
    assert "ERROR in T-broken" in err and "deliberate failure" in err


def test_a_changed_outcome_exits_non_zero_and_a_recorded_refutation_does_not(temporary_claims, capsys):
    temporary_claims("T-refuted", "refuted", lambda options: Outcome("refuted", "as recorded"))
    assert cli.main(["--only", "T-refuted"]) == 0
    temporary_claims("T-flipped", "verified", lambda options: Outcome("refuted", "no longer holds"))
    assert cli.main(["--only", "T-flipped"]) == 1
    assert (
        "CHANGED T-flipped: recorded holds in every case checked, now false (registry status verified -> refuted)"
        in capsys.readouterr().err
    )  # a statement declaring no evidence class says no more than its cases


def test_table3_claims_point_at_the_cells_that_break_the_summary():
    from proofs_check.claims.llm import letter_consistently_higher, summary_matches_table
    from proofs_check.registry import Options

    summary = summary_matches_table(Options())
    assert summary.status == "refuted"
    assert summary.counterexample == {
        "model": "Claude Sonnet 3.7",
        "task": "letter",
        "length": 32,
        "mean": 0.88,
        "claim": "> 0.88",
        "holds": False,
    }
    assert sum(not cell["holds"] for cell in summary.evidence["cells"]) == 1
    higher = letter_consistently_higher(Options())
    assert higher.status == "refuted"
    assert (higher.counterexample["model"], higher.counterexample["length"]) == ("GPT 5.4", 12)


# -- arguments are checked before any claim runs (issue 13) ------------------------------------


@pytest.fixture
def probe_claim(temporary_claims):
    """A test-only claim that records whether it ran."""
    ran = []
    temporary_claims("T-probe", "verified", lambda options: ran.append(1) or Outcome("verified", "ran"))
    return ran


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m proofs_check: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "args, names",
    [
        (["--json", "DIR"], "is a directory"),
        (["--json", ""], "--json: empty path"),
        (["--only", ",,,"], "no claim id in ',,,'"),
        (["--only", ""], "no claim id"),
    ],
)
def test_bad_json_and_empty_selections_exit_2_before_any_claim(probe_claim, tmp_path, capsys, args, names):
    args = [a.replace("DIR", str(tmp_path)) for a in args]
    assert cli.main(["--only", "T-probe", *args]) == 2
    assert names in one_line_error(capsys) and probe_claim == []


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders"
)
def test_a_read_only_json_destination_exits_2_before_any_claim(probe_claim, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert cli.main(["--only", "T-probe", "--json", str(locked / "claims.json")]) == 2
    assert str(locked) in one_line_error(capsys) and probe_claim == []


def test_ctrl_c_is_one_line_and_status_130(temporary_claims, capsys):
    def interrupted(options):
        raise KeyboardInterrupt

    temporary_claims("T-interrupted", "verified", interrupted)
    assert cli.main(["--only", "T-interrupted"]) == 130
    assert capsys.readouterr().err == "python -m proofs_check: interrupted\n"


# -- --weights: bad runs refused, each trained claim names its source ---------------------------

TRAINED = ("C1", "C2", "C3", "C9", "C10", "C10-relative", "C11", "C11-pattern")


@pytest.fixture
def fresh_sources(monkeypatch):
    """The trained claims' measurements computed afresh for this test, on a short length grid."""
    from proofs_check.evidence import trained_sources

    monkeypatch.setattr(trained_sources, "_CACHE", {})
    monkeypatch.setattr(trained_sources, "QUICK_LENGTHS", (17, 40))
    return trained_sources


def tiny_run(folder, task: str):
    """Final weights of an untrained tiny model and the task's vocabulary: a run without
    checkpoints, like the shipped reference runs."""
    import torch

    from training.model.gptj import GPTJ, ModelConfig
    from training.run.checkpoints import save_weights
    from training.tasks.definitions import get_task, save_vocab

    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=len(get_task(task).vocab), n_layer=1, n_embd=16, rotary_dim=16, n_inner=32
    )
    save_weights(folder, GPTJ(config))
    save_vocab(folder / "vocab.json", task)
    return folder


def test_bad_weights_exit_2_before_any_claim(probe_claim, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    for name in ("one", "two"):
        tiny_run(tmp_path / name, "number")
    stranger = tiny_run(tmp_path / "stranger", "letter")
    (stranger / "vocab.json").write_text('["a", "b"]')
    for weights, names in (
        ([tmp_path / "nowhere"], "does not exist"),
        ([tmp_path / "file"], "not a directory"),
        ([tmp_path / "empty"], "missing config.json"),
        ([stranger], "vocabulary of neither task"),
        ([tmp_path / "one", tmp_path / "two"], "both number-task runs"),
    ):
        assert cli.main(["--only", "T-probe", "--weights", *map(str, weights)]) == 2
        line = one_line_error(capsys)
        assert names in line and str(weights[-1]) in line and probe_claim == []


def test_default_trained_claims_name_the_shipped_seeds_and_state_their_rule(fresh_sources):
    from proofs_check.evidence.over_seeds import STATUS_RULE

    for claim_id in TRAINED:
        outcome = REGISTRY[claim_id].check(Options())
        assert outcome.status == REGISTRY[claim_id].recorded, claim_id
        assert outcome.summary.endswith("[data: shipped seeds]")
        assert outcome.evidence["status_rule"] == STATUS_RULE
        assert outcome.evidence["aggregate"]["n_seeds"] == len(outcome.evidence["seeds"]) >= 1
        sources = outcome.evidence["source"]
        assert all("shipped seeds in training/reference/seeds/paper/" in s for s in sources.values())


def test_weights_without_checkpoints_decide_length_claims_and_name_what_the_others_miss(
    fresh_sources, tmp_path
):
    from proofs_check.evidence.trained_sources import RUN_LABEL

    runs = {task: tiny_run(tmp_path / task, task) for task in ("number", "letter")}
    options = Options(weights=(str(runs["number"]), str(runs["letter"])))
    for claim_id in ("C10", "C10-relative"):
        outcome = REGISTRY[claim_id].check(options)
        assert outcome.status != "undecided", outcome.summary
        assert (
            f"[data: number: --weights {runs['number']}; letter: --weights {runs['letter']}]"
            in outcome.summary
        )
        assert outcome.evidence["source"]["letter"] == f"recomputed from {runs['letter']}"
        assert list(outcome.evidence["seeds"]) == [RUN_LABEL]
        assert list(outcome.evidence["seeds"][RUN_LABEL]["evidence"]["accuracy"]["number"]) == [17, 40]
    for claim_id in ("C1", "C3", "C9", "C11"):
        outcome = REGISTRY[claim_id].check(options)
        assert outcome.status == "undecided"
        assert (
            "checkpoint folders step-NNNNNN/" in outcome.summary
            and f"{runs['number']} has none" in outcome.summary
        )
        assert "--checkpoint-dir" not in outcome.summary


def test_a_run_of_one_task_says_the_other_uses_the_shipped_seeds(fresh_sources, tmp_path):
    run = tiny_run(tmp_path / "letter", "letter")
    outcome = REGISTRY["C10"].check(Options(weights=(str(run),)))
    assert f"[data: number: shipped seed-0; letter: --weights {run}]" in outcome.summary  # one seed, named
    assert outcome.evidence["source"]["number"].endswith("(no number-task run among --weights)")


# -- verdicts over seeds: a fake shipped study in tmp_path -------------------------------------

SHIPPED_SEEDS = Path(__file__).resolve().parents[1] / "training" / "reference" / "seeds" / "paper"
STAGE_OF = {"length_generalisation.json": "lengths", "analysis.json": "analyze"}


@pytest.fixture
def fake_study(tmp_path, monkeypatch):
    """Point the trained claims at a study written by the test: ``write({(task, seed): {file
    name: data, or raw text}})``; a member's finished stages are those of its files."""
    from proofs_check.evidence import seeds, trained_sources

    root = tmp_path / "study"
    monkeypatch.setattr(seeds, "SHIPPED", root)
    monkeypatch.setattr(trained_sources, "_CACHE", {})

    def write(members):
        summary = {}
        for (task, seed), files in members.items():
            folder = root / "paper" / task / f"seed-{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in files.items():
                (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))
            summary[f"paper/{task}/seed-{seed}"] = {"stages": ["train", "test", *map(STAGE_OF.get, files)]}
        (root / "summary.json").write_text(json.dumps({"plan": "seeds", "members": summary}))
        return root

    return write


def length_curve(task, accuracy, hop1=None):
    """A length_generalisation.json at lengths 17, 100, 850."""
    per_hop = {} if hop1 is None else {"1": [1.0, 1.0, hop1], "2": [1.0, 0.9, 0.5]}
    return {
        "task": task,
        "lengths": [17, 100, 850],
        "accuracy": list(accuracy),
        "per_hop": per_hop,
        "n_per_length": [400, 400, 400],
    }


NUMBER = length_curve("number", (1.0, 0.3, 0.05))  # 'barely generalises' on every seed
LETTER_HOLDS, LETTER_FAILS = (
    length_curve("letter", (1.0, 0.95, 0.92)),
    length_curve("letter", (1.0, 0.8, 0.4)),
)


def c10_study(fake_study, holding: int, n: int, pending: int = 0):
    """n complete seeds, C10 holding in the first ``holding``; then ``pending`` seeds not yet evaluated."""
    members = {}
    for seed in range(n):
        members[("number", seed)] = {"length_generalisation.json": NUMBER}
        members[("letter", seed)] = {
            "length_generalisation.json": LETTER_HOLDS if seed < holding else LETTER_FAILS
        }
    for seed in range(n, n + pending):
        members[("number", seed)] = members[("letter", seed)] = {}
    return fake_study(members)


@pytest.mark.parametrize(
    "n, holding, expected",
    [
        (5, 5, "verified"),
        (5, 4, "verified"),
        (5, 3, "undecided"),
        (5, 2, "undecided"),
        (5, 1, "refuted"),
        (5, 0, "refuted"),
        (4, 3, "undecided"),
        (3, 3, "verified"),
        (2, 1, "undecided"),
        (1, 1, "verified"),
        (1, 0, "refuted"),
    ],
)
def test_the_status_over_seeds_needs_four_fifths_of_them(fake_study, n, holding, expected):
    c10_study(fake_study, holding, n)
    outcome = REGISTRY["C10"].check(Options())
    assert outcome.status == expected, outcome.summary
    aggregate = outcome.evidence["aggregate"]
    assert (aggregate["n_seeds"], aggregate["holds_in"], aggregate["fails_in"]) == (n, holding, n - holding)
    assert [s["status"] for s in outcome.evidence["seeds"].values()] == (
        ["verified"] * holding + ["refuted"] * (n - holding)
    )
    assert list(outcome.evidence["seeds"]) == [f"seed-{s}" for s in range(n)]
    assert (
        ("too few seeds for a spread" in outcome.summary)
        == (n < 3)
        == aggregate["too_few_seeds_for_a_spread"]
    )


def test_pending_seeds_are_left_out_and_the_rule_uses_the_seeds_available(fake_study):
    c10_study(fake_study, holding=3, n=3, pending=2)
    outcome = REGISTRY["C10"].check(Options())
    assert outcome.status == "verified" and outcome.evidence["aggregate"]["n_seeds"] == 3
    assert list(outcome.evidence["left_out"]) == ["seed-3", "seed-4"]
    assert outcome.evidence["left_out"]["seed-4"]["letter"].startswith(
        "pending: stage 'lengths' not finished"
    )
    assert "left out: seed-3, seed-4 (pending" in outcome.summary


@pytest.mark.parametrize(
    "damage, said",
    [
        ("{", "not valid JSON"),
        ("[" * 5000 + "]" * 5000, "JSON nested deeper than 64 levels"),
        (json.dumps({**LETTER_HOLDS, "accuracy": "high"}), "field accuracy: expected a list, got a string"),
        (json.dumps({**LETTER_HOLDS, "lengths": [17, "100", 850]}), "field lengths[1]: expected an integer"),
    ],
)
def test_a_damaged_or_misplaced_seed_file_is_left_out_and_named(fake_study, damage, said):
    root = c10_study(fake_study, holding=3, n=3)
    (root / "paper" / "letter" / "seed-1" / "length_generalisation.json").write_text(damage)
    (root / "paper" / "number" / "seed-2" / "length_generalisation.json").write_text(json.dumps(LETTER_HOLDS))
    outcome = REGISTRY["C10"].check(Options())
    assert list(outcome.evidence["seeds"]) == ["seed-0"] and outcome.status == "verified"
    left_out = outcome.evidence["left_out"]
    assert f"seed-1/length_generalisation.json unreadable ({said}" in left_out["seed-1"]["letter"]
    assert "does not hold number-task results" in left_out["seed-2"]["number"]


def test_without_a_summary_every_trained_claim_is_undecided_and_says_how_to_collect(fake_study, tmp_path):
    for claim_id in TRAINED:
        outcome = REGISTRY[claim_id].check(Options())
        assert outcome.status == "undecided", claim_id
        assert "summary.json unreadable" in outcome.summary and "--collect" in outcome.summary


def test_c10_reports_accuracy_at_850_by_hop_with_a_t_interval(fake_study):
    from scipy import stats

    hop1 = (0.90, 0.94, 0.98)
    members = {}
    for seed, value in enumerate(hop1):
        members[("number", seed)] = {"length_generalisation.json": NUMBER}
        members[("letter", seed)] = {
            "length_generalisation.json": length_curve("letter", (1.0, 1.0, 0.6), value)
        }
    fake_study(members)
    outcome = REGISTRY["C10"].check(Options())
    at_850 = outcome.evidence["over_seeds"]["letter"]
    assert at_850["1"]["values"] == {f"seed-{s}": v for s, v in enumerate(hop1)}
    half = stats.t.ppf(0.975, 2) * 0.04 / 3**0.5  # sd of (0.90, 0.94, 0.98) is 0.04
    assert at_850["1"]["mean"] == pytest.approx(0.94) and at_850["1"]["ci"][0] == pytest.approx(0.94 - half)
    assert at_850["1"]["ci"][1] == 1.0 and at_850["1"]["clipped"]  # 0.94 + half > 1
    assert at_850["all"]["mean"] == pytest.approx(0.6) and at_850["all"]["ci"] == pytest.approx([0.6, 0.6])
    assert f"1 hop 0.940 [{0.94 - half:.3f}, 1.000]" in outcome.summary and "over 3 seeds" in outcome.summary


def test_analysis_claims_are_decided_over_seeds_too(fake_study):
    """C11-pattern on five copies of the shipped seed 0, two of them with a fast letter layer."""
    shipped = {
        task: json.loads((SHIPPED_SEEDS / task / "seed-0" / "analysis.json").read_text())
        for task in ("number", "letter")
    }
    members = {}
    for seed in range(5):
        letter = json.loads(json.dumps(shipped["letter"]))
        if seed in (1, 3):
            letter["frequency"]["weighted_id"][0] = 2.0
        members[("number", seed)] = {"analysis.json": shipped["number"]}
        members[("letter", seed)] = {"analysis.json": letter}
    fake_study(members)
    outcome = REGISTRY["C11-pattern"].check(Options())
    statuses = {label: s["status"] for label, s in outcome.evidence["seeds"].items()}
    assert statuses == {
        "seed-0": "verified",
        "seed-1": "refuted",
        "seed-2": "verified",
        "seed-3": "refuted",
        "seed-4": "verified",
    }
    assert (
        outcome.status == "undecided"
        and (
            "reproduced in 3 (seed-0, seed-2, seed-4), not reproduced in 2 (seed-1, seed-3); "
            "a verdict needs the same result in 4 of 5 seeds"
        )
        in outcome.summary
    )


@pytest.mark.parametrize("first_with_data", [0, 1])
@pytest.mark.parametrize("claim_id", ["C10", "C10-relative"])
def test_one_weights_run_is_one_run_paired_with_one_named_shipped_seed(
    fresh_sources, fake_study, tmp_path, claim_id, first_with_data, monkeypatch
):
    """It was paired with each of the shipped seeds of the other task and reported as "3 seed(s)"
    (C10: with a zero-width interval); now it is n = 1, said so, and the pairing is named."""
    monkeypatch.setattr(fresh_sources, "QUICK_LENGTHS", (17, 850))  # C10 reports accuracy at 850
    members = {("number", seed): {"length_generalisation.json": NUMBER} for seed in range(first_with_data, 3)}
    members.update({("number", seed): {} for seed in range(first_with_data)})  # pending: no data yet
    fake_study(members)
    run = tiny_run(tmp_path / "letter", "letter")
    outcome = REGISTRY[claim_id].check(Options(weights=(str(run),)))
    shipped = f"seed-{first_with_data}"
    assert list(outcome.evidence["seeds"]) == [f"--weights run + shipped {shipped}"]
    assert outcome.evidence["paired"] == {
        "number": f"shipped {shipped} ({seeds_folder('number')}/{shipped})",
        "letter": f"--weights {run}",
    }
    aggregate = outcome.evidence["aggregate"]
    assert aggregate["n_seeds"] == aggregate["n_runs_given_by_weights"] == 1
    assert f"1 run given by --weights (number: shipped {shipped} (" in outcome.summary
    assert "n = 1: no interval, no spread" in outcome.summary and "seed(s)" not in outcome.summary
    assert outcome.summary.endswith(f"[data: number: shipped {shipped}; letter: --weights {run}]")
    assert outcome.evidence["source"]["letter"] == f"recomputed from {run}"
    if claim_id == "C10":
        assert outcome.summary.startswith("at length 850 (1 run given by --weights, no interval): letter ")
        assert all(
            row["n"] == 1 and row["ci"] is None
            for task in ("number", "letter")
            for row in outcome.evidence["over_seeds"][task].values()
        )


def seeds_folder(task):
    from proofs_check.evidence import seeds

    return seeds.shipped_folder(task)


def test_the_shipped_reference_run_as_weights_is_one_run(fresh_sources):
    """The shipped reference run of the letter task, passed as --weights: n = 1 against the
    shipped number seed 0, never "5 seed(s)"."""
    run = Path(__file__).resolve().parents[1] / "training" / "reference" / "letter"
    outcome = REGISTRY["C10-relative"].check(Options(weights=(str(run),)))
    assert list(outcome.evidence["seeds"]) == ["--weights run + shipped seed-0"]
    assert outcome.evidence["aggregate"]["n_seeds"] == 1 and "1 run given by --weights" in outcome.summary
    assert outcome.evidence["paired"]["number"].startswith(
        "shipped seed-0 (training/reference/seeds/paper/number"
    )


def test_seeds_that_no_task_shares_are_undecided_and_say_which_task_lacks_what(fake_study):
    fake_study(
        {
            ("number", 0): {"length_generalisation.json": NUMBER},
            ("letter", 0): {},
            ("number", 1): {},
            ("letter", 1): {"length_generalisation.json": LETTER_HOLDS},
        }
    )
    outcome = REGISTRY["C10"].check(Options())
    assert outcome.status == "undecided" and outcome.summary.startswith(
        "no seed has data for every task: seed-0: "
    )
    assert "letter pending" in outcome.summary and "seed-1: number pending" in outcome.summary


def test_a_weights_run_without_data_is_named_and_the_shipped_task_is_not_blamed(
    fresh_sources, fake_study, tmp_path
):
    analysis = json.loads((SHIPPED_SEEDS / "number" / "seed-0" / "analysis.json").read_text())
    fake_study({("number", 0): {"analysis.json": analysis}, ("number", 1): {}})
    run = tiny_run(tmp_path / "letter", "letter")
    outcome = REGISTRY["C1"].check(Options(weights=(str(run),)))
    assert outcome.status == "undecided"
    assert outcome.summary.startswith("no measured data: letter: ") and f"{run} has none" in outcome.summary
    assert "number:" not in outcome.summary.split("[data:")[0]


# -- C11 at the model's own depth (issue 29): no "0/12" for a 2-layer model, no vacuous pattern ----


def _shallow(analysis: dict, ids: list) -> dict:
    """``analysis`` as if its model had len(ids) layers with these weighted-average IDs."""
    out = json.loads(json.dumps(analysis))
    out["layers"] = len(ids)
    out["frequency"]["weighted_id"] = list(ids)
    out["frequency"]["weighted_id_max_per_plane"] = list(ids)
    return out


@pytest.mark.parametrize(
    "letter_ids, c11, pattern",
    [
        (
            (18.0, 32.0),
            "verified",
            "undecided",
        ),  # Table 1's L0, L1; the number pattern needs layers up to L11
        (
            (18.0, 2.0),
            "refuted",
            "refuted",
        ),  # a fast letter layer: C11 1/2 within 3 (2 needed), pattern fails
    ],
)
def test_c11_reads_a_two_layer_model_at_its_own_depth(fake_study, letter_ids, c11, pattern):
    from theory.paper_data import TABLE1

    shipped = {
        task: json.loads((SHIPPED_SEEDS / task / "seed-0" / "analysis.json").read_text())
        for task in ("number", "letter")
    }
    number_ids = [TABLE1["number"][0][0], TABLE1["number"][1][0]]  # Table 1's own L0, L1: within 3
    assert letter_ids[0] == TABLE1["letter"][0][0]
    fake_study(
        {
            ("number", 0): {"analysis.json": _shallow(shipped["number"], number_ids)},
            ("letter", 0): {"analysis.json": _shallow(shipped["letter"], letter_ids)},
        }
    )
    outcome = REGISTRY["C11"].check(Options())
    seed = outcome.evidence["seeds"]["seed-0"]["evidence"]
    assert outcome.status == c11, outcome.summary
    assert "/12" not in outcome.summary and "2/2 layers within 3, 2 needed" in outcome.summary
    assert seed["layers"] == {"number": 2, "letter": 2} and seed["layers_needed"] == {
        "number": 2,
        "letter": 2,
    }
    assert "ceil(10/12 x L)" in outcome.evidence["rule"]
    outcome = REGISTRY["C11-pattern"].check(Options())
    seed = outcome.evidence["seeds"]["seed-0"]["evidence"]
    assert outcome.status == pattern, outcome.summary
    assert seed["checks"]["number_early_fast"] is None and seed["checks"]["number_late_slow"] is None
    assert seed["not_applicable"]["number_late_slow"] == "number model has 2 layers; the check needs L5-L11"
    assert "number_early_fast: not applicable" in outcome.summary


def test_c11_keeps_the_papers_rule_at_twelve_layers():
    from proofs_check.claims.table1 import layers_needed

    assert [layers_needed(n) for n in (1, 2, 6, 12, 24)] == [1, 2, 5, 10, 20]
