"""training.studies: plans are checked before any work, members run once and resume, collect
gives every seed's value with an interval, and --list lines are runnable commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from theory.statistics import mean_interval
from training.analysis.break_prediction import break_after_learning, hop_exponent
from training.run.checks import RunError
from training.run.lock import RunLock
from training.studies.plan import PlanError, load_plan
from training.studies.runner import stage_commands
from training.studies.ship import best_member
from training.studies.ship import ship_best as _ship_best

ROOT = Path(__file__).resolve().parents[1]


def smoke_plan(tmp_path, **changes) -> Path:
    plan = {
        "name": "smoke",
        "root": str(tmp_path / "members"),
        "ship": str(tmp_path / "ship"),
        "tasks": ["letter"],
        "seeds": [1, 2],
        "variants": {
            "tiny": {"preset": "smoke", "set": ["steps=20", "checkpoint_every=10", "eval_every=10"]}
        },
        "evaluate": {"test_split": False, "lengths": [17, 30], "count": 16, "seed": 3},
        "analyze": {"n_inputs": 4, "discrepancy": False},
        "dilution": {"count": 4},
        "long": {"lengths": [60], "count": 4, "variants": ["tiny"]},
        "rescale": {"lengths": [17, 40], "count": 8, "seed": 6, "dilution": True},
    }
    plan.update(changes)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return path


def study(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "training", "study", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
    )


@pytest.mark.parametrize(
    "change, message",
    [
        ({"colour": "red"}, "unknown key(s) colour"),
        ({"seeds": [1, 1]}, "duplicated member"),
        ({"tasks": ["letter", "letter"]}, "duplicated member"),
        ({"tasks": ["words"]}, "unknown task 'words'"),
        ({"variants": {"a": {"preset": "smoke", "set": ["model.rotary_dim=7"]}}}, "rotary_dim"),
        ({"variants": {"a": {"preset": "smoke", "set": ["nonsense=1"]}}}, "unknown key 'nonsense'"),
        ({"variants": {"a": {"preset": "smoke"}, "b": {"preset": "smoke", "set": []}}}, "duplicated member"),
        ({"evaluate": {"lengths": [5]}}, "lengths"),
        ({"dilution": {"count": 0}}, "dilution.count"),
        ({"dilution": {"inputs": 3}}, "unknown key(s) inputs"),
        ({"long": {"variants": ["huge"]}}, "long.variants: unknown variant(s) huge"),
        ({"long": {"lengths": [20000, 3]}}, "long.lengths"),
        (
            {"long": {"tasks": ["number"]}},
            "long.tasks: expected a non-empty list of the plan's tasks (letter)",
        ),
        (
            {"long": {"tasks": [["letter"]]}},
            "long.tasks: expected a non-empty list of the plan's tasks (letter)",
        ),
        ({"rescale": {"query_scale": "learned"}}, "rescale.query_scale: expected one of log, got 'learned'"),
        ({"rescale": {"max_tokens": 5}}, "rescale.max_tokens"),
        ({"rescale": {"dilution": 1}}, "rescale.dilution: expected true or false"),
        ({"dilution": False}, "rescale.dilution: true needs the plan's dilution section"),
        (
            {
                "variants": {
                    "tiny": {"preset": "smoke"},
                    "scaled": {"preset": "smoke", "set": ["model.query_scale=log"]},
                },
                "rescale": {"variants": ["tiny", "scaled"]},
            },
            "rescale.variants: scaled already train(s) with a query scale",
        ),
        (
            {
                "variants": {"scaled": {"preset": "smoke", "set": ["model.query_scale=learned"]}},
                "long": False,
            },
            "rescale: no variant of the plan is trained without a query scale",
        ),
        (
            {"variants": {"tiny": {"preset": "smoke", "seeds": {"number": [3]}}}},
            "tiny.seeds: unknown key(s) number",
        ),
        (
            {"variants": {"tiny": {"preset": "smoke", "seeds": {"letter": [3, 3]}}}},
            "tiny.seeds.letter: duplicated member",
        ),
        ({"variants": {"tiny": {"preset": "smoke", "seeds": [3]}}}, "tiny.seeds: expected an object"),
    ],
)
def test_a_bad_plan_exits_2_before_any_work(tmp_path, capsys, change, message):
    """In this process (``python -m training study`` is ``main``; the tests below run it as a
    process): a process per plan cost 3 s of imports each, for a check made before any work."""
    from training.__main__ import main

    assert main(["study", str(smoke_plan(tmp_path, **change))]) == 2
    stderr = capsys.readouterr().err
    assert message in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert not (tmp_path / "members").exists()


def test_a_variant_may_list_its_own_seeds_for_one_task(tmp_path):
    path = smoke_plan(
        tmp_path,
        tasks=["number", "letter"],
        long=False,
        variants={
            "tiny": {"preset": "smoke", "seeds": {"letter": [1, 2, 5]}},
            "other": {"preset": "smoke", "set": ["steps=30"], "tasks": ["letter"]},
        },
    )
    ids = [m.id for m in load_plan(path).members()]
    assert ids == [
        "tiny/number/seed-1",
        "tiny/number/seed-2",
        "tiny/letter/seed-1",
        "tiny/letter/seed-2",
        "tiny/letter/seed-5",
        "other/letter/seed-1",
        "other/letter/seed-2",
    ]


def test_duplicated_json_keys_are_refused(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text('{"name": "x", "name": "y"}')
    with pytest.raises(PlanError, match="duplicated key"):
        load_plan(path)


def test_jobs_0_and_unknown_member_exit_2(tmp_path):
    plan = smoke_plan(tmp_path)
    assert "--jobs must be >= 1" in study(plan, "--jobs", 0).stderr
    result = study(plan, "--member", "tiny/letter/seed-9")
    assert result.returncode == 2 and "no member" in result.stderr


def test_a_study_runs_resumes_and_collects(tmp_path):
    plan = smoke_plan(tmp_path)
    first = study(plan, "--jobs", 2, "--no-progress")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout.splitlines()[-1])["done"] == 2
    member = tmp_path / "members" / "tiny" / "letter" / "seed-1"
    for name in (
        "train.json",
        "length_generalisation.json",
        "dilution.json",
        "analysis.json",
        "length_long.json",
        "length_rescaled.json",
        "dilution_rescaled.json",
        "run/model.safetensors",
    ):
        assert (member / name).is_file(), name
    stamps = {p: p.stat().st_mtime_ns for p in member.rglob("*.json")}

    # idempotent: a second run starts no stage
    again = study(plan, "--no-progress")
    assert again.returncode == 0 and {p: p.stat().st_mtime_ns for p in member.rglob("*.json")} == stamps
    assert "$" not in (member / "logs" / "train.log").read_text().split("\n", 1)[1]  # one train command only

    # a partial member redoes only what is missing
    (member / "length_generalisation.json").unlink()
    study(plan, "--member", "tiny/letter/seed-1", "--no-progress")
    assert (member / "length_generalisation.json").is_file()
    assert (member / "analysis.json").stat().st_mtime_ns == stamps[member / "analysis.json"]

    # a member measured before a break reading existed: collect recomputes its breaks block
    old = tmp_path / "members" / "tiny" / "letter" / "seed-2" / "dilution.json"
    fresh = json.loads(old.read_text())
    stale = {
        **fresh,
        "breaks": {**fresh["breaks"], "predicted": {"lemma": fresh["breaks"]["predicted"]["lemma"]}},
    }
    old.write_text(json.dumps(stale))
    untouched = (member / "dilution.json").stat().st_mtime_ns

    collected = study(plan, "--collect")
    assert collected.returncode == 0, collected.stderr
    assert json.loads(collected.stdout)["complete"] == 2  # every stage of both members has its output
    assert json.loads(old.read_text())["breaks"] == fresh["breaks"]
    assert (member / "dilution.json").stat().st_mtime_ns == untouched  # already current: not rewritten
    summary = json.loads((tmp_path / "ship" / "summary.json").read_text())
    result = summary["results"]["tiny"]["letter"]
    at_17 = result["length"]["accuracy"][0]
    seeds = {
        s: json.loads(
            (
                tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "length_generalisation.json"
            ).read_text()
        )["accuracy"][0]
        for s in (1, 2)
    }
    assert at_17["values"] == {"1": seeds[1], "2": seeds[2]}
    assert at_17["mean"] == pytest.approx((seeds[1] + seeds[2]) / 2)
    assert at_17["n"] == 2 and at_17["ci"][0] <= at_17["mean"] <= at_17["ci"][1]
    assert result["length"]["n_per_length"] == {"1": [16, 16], "2": [16, 16]}  # the plan's count per length
    assert "Student t" in summary["interval"]
    assert (tmp_path / "ship" / "tiny" / "letter" / "seed-2" / "analysis.json").is_file()
    # the long stage: its own lengths and inputs, summarised like the grid
    long = {
        s: json.loads(
            (tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "length_long.json").read_text()
        )
        for s in (1, 2)
    }
    assert all(v["lengths"] == [60] and v["n_per_length"] == [4] and v["seed"] == 4 for v in long.values())
    assert result["long"]["lengths"] == [60]
    assert result["long"]["accuracy"][0]["values"] == {str(s): v["accuracy"][0] for s, v in long.items()}
    assert (tmp_path / "ship" / "tiny" / "letter" / "seed-1" / "length_long.json").is_file()
    # the rescale stage: the same weights with the query scale switched on at inference
    rescaled = {
        s: json.loads(
            (tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "length_rescaled.json").read_text()
        )
        for s in (1, 2)
    }
    assert all(
        v["inference_query_scale"] == "log"
        and v["lengths"] == [17, 40]
        and v["seed"] == 6
        and v["n_per_length"] == [8, 8]
        for v in rescaled.values()
    )
    assert result["rescaled"]["accuracy"][1]["values"] == {
        str(s): v["accuracy"][1] for s, v in rescaled.items()
    }
    assert (
        set(result["rescaled_break"]["values"]) == {"1", "2"} and summary["rescale"]["query_scale"] == "log"
    )
    assert (tmp_path / "ship" / "tiny" / "letter" / "seed-2" / "length_rescaled.json").is_file()
    # its dilution stage: the scale on, at the rescale lengths, breaks against the rescaled accuracy
    scaled = {
        s: json.loads(
            (tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "dilution_rescaled.json").read_text()
        )
        for s in (1, 2)
    }
    assert all(
        v["inference_query_scale"] == "log" and v["dilution"]["lengths"] == [17, 40] for v in scaled.values()
    )
    assert result["rescaled_breaks"]["measured"] == {
        str(s): v["breaks"]["measured"] for s, v in scaled.items()
    }
    assert result["rescaled_breaks"]["measured"] == result["rescaled_break"]["values"]  # one rule, two routes
    unlearned = [f"tiny/letter/seed-{s}" for s, v in scaled.items() if v["breaks"]["measured"] == 17]
    assert (
        summary["premise_rescaled"]["left_out_never_learned"] == unlearned
    )  # below 0.9 at 17: named, not judged
    assert summary["premise_rescaled"]["mass"]["n"] == 2 - len(unlearned)
    assert (tmp_path / "ship" / "tiny" / "letter" / "seed-1" / "dilution_rescaled.json").is_file()
    # the premise block compares every member's predicted break with its measured one
    breaks = {
        s: json.loads((tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "dilution.json").read_text())[
            "breaks"
        ]
        for s in (1, 2)
    }
    assert result["breaks"]["measured"] == {str(s): b["measured"] for s, b in breaks.items()}
    assert result["breaks"]["measured_per_hop"] == {str(s): b["measured_per_hop"] for s, b in breaks.items()}
    exponents = {str(s): hop_exponent(b["measured_per_hop"], 17) for s, b in breaks.items()}
    assert result.get("hop_exponent", {}).get("values") == (
        {s: a for s, a in exponents.items() if a is not None} or None
    )
    unlearned = [f"tiny/letter/seed-{s}" for s, b in breaks.items() if b["measured"] == 17]
    assert summary["premise"]["left_out_never_learned"] == unlearned
    assert summary["premise"]["lemma"]["members"] == [
        f"tiny/letter/seed-{s}" for s in (1, 2) if f"tiny/letter/seed-{s}" not in unlearned
    ]
    # descriptive break after learning: equals the measured break for a seed right at 17
    lengths = {
        s: json.loads(
            (
                tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "length_generalisation.json"
            ).read_text()
        )
        for s in (1, 2)
    }
    for s, v in lengths.items():
        after = result["break_after_learning"][str(s)]
        assert after["all"] == break_after_learning(v["lengths"], v["accuracy"])
        assert set(after["per_hop"]) == set(v["per_hop"])
        if v["accuracy"][0] >= 0.9:
            assert after["all"]["break"] == breaks[s]["measured"]
    assert not list((tmp_path / "ship").rglob("*.safetensors"))

    # a member missing one stage (here rescale's output) is not complete, and the summary that
    # recorded it complete is kept unless asked (tests/test_study_safety.py covers the rule)
    (member / "length_rescaled.json").unlink()
    shipped = (tmp_path / "ship" / "summary.json").read_bytes()
    kept = study(plan, "--collect")
    assert kept.returncode == 2 and "found 1 of 2 members complete" in kept.stderr, kept.stderr
    assert (tmp_path / "ship" / "summary.json").read_bytes() == shipped
    assert json.loads(study(plan, "--collect", "--overwrite-summary").stdout)["complete"] == 1
    study(plan, "--member", "tiny/letter/seed-1", "--no-progress")

    # ship_best: the best member's run folder, weights included, beside the summary
    best_plan = tmp_path / "best.json"
    best_plan.write_text(json.dumps({**json.loads(plan.read_text()), "ship_best": True}))
    assert study(best_plan, "--collect").returncode == 0
    last = {
        s: json.loads(
            (
                tmp_path / "members" / "tiny" / "letter" / f"seed-{s}" / "length_generalisation.json"
            ).read_text()
        )["accuracy"][-1]
        for s in (1, 2)
    }
    chosen = json.loads((tmp_path / "ship" / "best-letter" / "best.json").read_text())
    assert chosen["member"] == f"tiny/letter/seed-{max(last, key=lambda s: (last[s], -s))}"
    for name in ("config.json", "model.safetensors", "vocab.json"):
        assert (tmp_path / "ship" / "best-letter" / name).is_file()


def test_the_best_member_ignores_float32_noise_and_keeps_the_first_listed_on_a_tie():
    def cell(values):
        return {
            "length": {
                "accuracy": [{"n": len(values), "mean": sum(values.values()) / len(values), "values": values}]
            }
        }

    summary = {
        "first": {"letter": cell({"0": 1.0, "1": 0.98, "2": 1.0})},
        "second": {"letter": cell({"0": 1.0, "1": 0.9799999952316284, "2": 1.0})},  # 98/100 via float32
        "worse": {"letter": cell({"0": 0.97, "1": 0.99, "2": 0.98})},
    }
    assert best_member(summary, "letter")[1:] == ("first", "0", 1.0)
    summary["second"]["letter"] = cell({"0": 1.0, "1": 0.99, "2": 1.0})  # one more input right
    assert best_member(summary, "letter")[1:] == ("second", "0", 1.0)
    assert best_member(summary, "number") is None


def test_the_long_stage_runs_for_its_variants_and_tasks_only(tmp_path):
    both = {
        "tasks": ["number", "letter"],
        "variants": {"tiny": {"preset": "smoke"}, "other": {"preset": "smoke", "set": ["steps=30"]}},
    }
    plan = load_plan(smoke_plan(tmp_path, **both, long={"variants": ["tiny"], "tasks": ["letter"]}))
    with_long = {m.id for m in plan.members() if "long" in stage_commands(plan, m)}
    assert with_long == {"tiny/letter/seed-1", "tiny/letter/seed-2"}
    plan = load_plan(smoke_plan(tmp_path, **both, long={"variants": ["tiny"]}))  # default: every task
    assert {m.id for m in plan.members() if "long" in stage_commands(plan, m)} == {
        f"tiny/{task}/seed-{s}" for task in ("number", "letter") for s in (1, 2)
    }


def test_best_weights_are_never_paired_with_another_members_choice(tmp_path):
    # a clone has the shipped files but no runs: collect may rewrite best.json for the member
    # whose weights are shipped, and must refuse, naming it, when the choice moved elsewhere
    plan = load_plan(smoke_plan(tmp_path, ship_best=True))
    summary = {
        "tiny": {"letter": {"length": {"accuracy": [{"n": 2, "mean": 0.95, "values": {"1": 0.9, "2": 1.0}}]}}}
    }
    best = tmp_path / "ship" / "best-letter"
    best.mkdir(parents=True)
    (best / "model.safetensors").write_bytes(b"weights of tiny/letter/seed-2")
    (best / "best.json").write_text(json.dumps({"member": "tiny/letter/seed-2"}))
    choice = _ship_best(plan, summary, "letter")
    assert choice["member"] == "tiny/letter/seed-2" and choice["accuracy"] == 1.0
    assert json.loads((best / "best.json").read_text()) == choice
    assert (best / "model.safetensors").read_bytes() == b"weights of tiny/letter/seed-2"
    summary["tiny"]["letter"]["length"]["accuracy"][0]["values"] = {"1": 1.0, "2": 0.9}
    with pytest.raises(RunError, match="now tiny/letter/seed-1, but .* holds no model.safetensors .*seed-2"):
        _ship_best(plan, summary, "letter")
    assert json.loads((best / "best.json").read_text()) == choice  # left as it was


def test_a_member_held_by_another_study_is_skipped_not_run_twice(tmp_path):
    plan = smoke_plan(tmp_path)
    member = tmp_path / "members" / "tiny" / "letter" / "seed-1"
    member.mkdir(parents=True)
    with RunLock(member, ".member.lock", "study process"):  # another study is working on it
        result = study(plan, "--member", "tiny/letter/seed-1", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["skipped_busy"] == 1
    assert list(member.iterdir()) == []  # nothing was run (the lock file went with its holder)


def test_list_prints_one_runnable_command_per_member(tmp_path):
    plan = smoke_plan(tmp_path)
    lines = study(plan, "--list").stdout.strip().splitlines()
    assert len(lines) == 2 and all("--member tiny/letter/seed-" in line for line in lines)
    assert not (tmp_path / "members").exists()


def test_student_t_interval():
    stats = mean_interval([0.9, 0.92, 0.95, 0.91, 0.93])
    assert stats["mean"] == pytest.approx(0.922)
    # t(0.975, 4) = 2.776: half-width 2.776 * sd / sqrt(5)
    assert stats["ci"][1] - stats["mean"] == pytest.approx(2.7764451 * stats["sd"] / 5**0.5, rel=1e-6)
    clipped = mean_interval([1.0, 1.0, 0.99], bounds=(0, 1))
    assert clipped["ci"][1] == 1 and clipped["clipped"]
    assert mean_interval([0.5])["ci"] is None
