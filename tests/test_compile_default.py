"""When ``train`` compiles without being asked (training.run.compile.compile_by_default), and that
a run keeps its choice across ``--resume``.

The rule reads saved ``bench --k-table --json`` tables; the tests write their own into a temporary
folder, so each condition of the rule is checked at its edge.  One test reads the shipped table.
Training runs use the smoke preset and the ``aot_eager`` backend (the same tracing as inductor,
no code generation), so nothing here waits for a real compile; inductor's own runs, reproducible
from process to process, are tests/test_compile_reproducible.py.
"""

import json
from pathlib import Path

import pytest
import torch
from test_resume_guards import cli_error

from training.__main__ import main
from training.model.gptj import ModelConfig
from training.run import compile as compiled
from training.run.presets import get_preset

pytestmark = pytest.mark.usefixtures("one_torch_thread", "determinism_restored")

PAPER = ModelConfig(vocab_size=40, **get_preset("paper").model)
SMOKE = ModelConfig(vocab_size=40, **get_preset("smoke").model)


def write_table(folder: Path, preset="paper", device="cpu", eager=1.0, fast=1.25, warm=10.0) -> Path:
    """A K table as ``bench --k-table --json`` writes it, reduced to the fields the rule reads."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"k": 1, "mode": "eager", "steps_per_s": eager, "warm_compile_s": None},
        {"k": 1, "mode": "compiled", "steps_per_s": fast, "warm_compile_s": warm},
    ]
    (folder / f"k_table_{device}_{preset}.json").write_text(
        json.dumps({"preset": preset, "device": device, "rows": rows})
    )
    return folder


@pytest.fixture
def has_compiler(monkeypatch):
    monkeypatch.setattr(compiled, "_has_cxx_compiler", lambda: True)


def test_compiles_where_measured_faster_and_the_warm_compile_is_under_a_tenth(tmp_path, has_compiler):
    folder = write_table(tmp_path)  # 1.25 steps/s compiled, 10 s warm: a tenth of the run at 125 steps
    assert compiled.compile_by_default("cpu", "paper", PAPER, 6000, folder)[0]
    assert compiled.compile_by_default("cpu", "paper", PAPER, 126, folder)[0]
    on, why = compiled.compile_by_default("cpu", "paper", PAPER, 125, folder)
    assert not on and "10%" in why


def test_cpu_time_rates_decide_where_the_table_has_them(tmp_path, has_compiler):
    """A loaded machine stretches wall time: with steps per CPU second in the table, those decide
    which step is faster, whatever the wall rates say."""
    folder = write_table(tmp_path, eager=1.0, fast=0.9)  # compiled slower by wall clock
    table = json.loads((folder / "k_table_cpu_paper.json").read_text())
    table["rows"][0]["steps_per_cpu_s"], table["rows"][1]["steps_per_cpu_s"] = 4.0, 4.6
    (folder / "k_table_cpu_paper.json").write_text(json.dumps(table))
    on, why = compiled.compile_by_default("cpu", "paper", PAPER, 6000, folder)
    assert on and "1.15x eager steps per CPU second" in why
    table["rows"][1]["steps_per_cpu_s"] = 3.9  # and the other way round
    (folder / "k_table_cpu_paper.json").write_text(json.dumps(table))
    on, why = compiled.compile_by_default("cpu", "paper", PAPER, 6000, folder)
    assert not on and "CPU second" in why


@pytest.mark.parametrize(
    "case",
    ["slower", "equal", "other preset", "other device", "shape changed", "no compiled row", "no compiler"],
)
def test_stays_eager_without_a_measurement_that_says_it_pays(tmp_path, monkeypatch, case):
    folder = tmp_path / "tables"
    write_table(folder, eager=1.0, fast={"slower": 0.9, "equal": 1.0}.get(case, 1.25))
    config, preset, device = PAPER, "paper", "cpu"
    if case == "other preset":
        preset, config = "smoke", SMOKE
    if case == "other device":
        device = "cuda"
    if case == "shape changed":  # `--set model.n_layer=4` on the paper preset: not the shape measured
        config = ModelConfig(vocab_size=40, **{**get_preset("paper").model, "n_layer": 4})
    if case == "no compiled row":
        table = json.loads((folder / "k_table_cpu_paper.json").read_text())
        table["rows"] = table["rows"][:1]
        (folder / "k_table_cpu_paper.json").write_text(json.dumps(table))
    monkeypatch.setattr(compiled, "_has_cxx_compiler", lambda: case != "no compiler")
    on, why = compiled.compile_by_default(device, preset, config, 6000, folder)
    assert not on and why


def test_the_shipped_measurement_compiles_the_paper_run_on_cpu_and_not_the_smoke_run(has_compiler):
    """The table in training/reference/bench/ (bench --k-table --json on this project's CPU)."""
    tables = sorted(compiled.MEASURED_DIR.glob("*.json"))
    assert tables, compiled.MEASURED_DIR
    on, why = compiled.compile_by_default("cpu", "paper", PAPER, get_preset("paper").steps)
    assert on, why
    assert not compiled.compile_by_default("cpu", "smoke", SMOKE, get_preset("smoke").steps)[0]
    assert not compiled.compile_by_default("cpu", "paper", PAPER, 10)[
        0
    ]  # a 10-step paper run: compiling costs more


def settings_of(run: Path) -> dict:
    return json.loads((run / "metrics.jsonl").read_text().splitlines()[0])


def state_settings(run: Path, step: int) -> Path:
    return run / "checkpoints" / f"step-{step:06d}" / "training_state.json"


@pytest.fixture
def smoke_measured(no_cache_env, tmp_path, has_compiler):
    """A measurement that makes the smoke preset compile by default (aot_eager, a cache of its own);
    returns the list torch.compile's keyword arguments are appended to."""
    no_cache_env.setenv(compiled.BACKEND_ENV, "aot_eager")
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    no_cache_env.setattr(
        compiled, "MEASURED_DIR", write_table(tmp_path / "tables", preset="smoke", warm=0.01)
    )
    calls, real = [], torch.compile
    no_cache_env.setattr(torch, "compile", lambda *a, **k: calls.append(k) or real(*a, **k))
    return calls


COMMON = ["train", "--task", "letter", "--preset", "smoke", "--steps", "20", "--no-progress"]


def test_train_compiles_by_default_says_so_and_resume_keeps_it(smoke_measured, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(COMMON + ["--out", str(run), "--stop-at", "10"]) == 0
    assert len(smoke_measured) == 1 and settings_of(run)["compiled"] is True
    assert "compiling the training step (measured 1.25x eager" in capsys.readouterr().err
    assert main(COMMON + ["--out", str(run), "--resume"]) == 0
    assert len(smoke_measured) == 2  # resumed compiled
    assert json.loads(state_settings(run, 20).read_text())["settings"]["compiled"] is True


def test_no_compile_overrides_the_default_and_a_resume_may_not_switch(smoke_measured, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(COMMON + ["--out", str(run), "--stop-at", "10", "--no-compile"]) == 0
    assert smoke_measured == [] and settings_of(run)["compiled"] is False
    capsys.readouterr()
    assert main(COMMON + ["--out", str(run), "--resume", "--compile"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--compile" in err[0] and "trained eager" in err[0], err
    assert main(COMMON + ["--out", str(run), "--resume"]) == 0  # eager, as it started
    assert smoke_measured == []


def test_a_run_from_before_the_choice_was_recorded_resumes_eager(smoke_measured, tmp_path):
    """Runs trained before ``compiled`` was a setting (the shipped studies) were all eager."""
    run = tmp_path / "run"
    assert main(COMMON + ["--out", str(run), "--stop-at", "10", "--no-compile"]) == 0
    path = state_settings(run, 10)
    state = json.loads(path.read_text())
    del state["settings"]["compiled"]
    path.write_text(json.dumps(state))
    assert main(COMMON + ["--out", str(run), "--resume"]) == 0
    assert smoke_measured == []


def test_bench_saves_the_table_the_rule_reads_and_never_overwrites(
    no_cache_env, tmp_path, capsys, has_compiler
):
    """``bench --k-table --save`` writes what ``compile_by_default`` reads (a real, tiny table: the
    smoke preset, eager rows only), and refuses a file that exists."""
    save = tmp_path / "k_table_cpu_smoke.json"
    argv = [
        "bench",
        "--k-table",
        "--preset",
        "smoke",
        "--k",
        "1",
        "--compiled-k",
        "none",
        "--rounds",
        "1",
        "--steps",
        "1",
        "--save",
        str(save),
    ]
    assert main(argv) == 0
    table = json.loads(save.read_text())
    assert table["preset"] == "smoke" and [row["mode"] for row in table["rows"]] == ["eager"]
    on, why = compiled.compile_by_default("cpu", "smoke", SMOKE, 3000, tmp_path)
    assert not on and "no K = 1 eager and compiled rows" in why
    before = save.read_bytes()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(save) in err[0] and "new .json file" in err[0], err
    assert save.read_bytes() == before
    assert main(argv[:-1] + [str(tmp_path / "no-such-folder" / "t.json")]) == 2  # checked before any timing
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--save" in err[0] and "does not exist" in err[0], err


def test_a_damaged_saved_table_is_one_line_and_exit_2(no_cache_env, tmp_path, capsys):
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "k_table_cpu_smoke.json").write_text(
        '{"preset": "smoke", "device": "cpu", "rows": [{"k": "one"}]}'
    )
    no_cache_env.setattr(compiled, "MEASURED_DIR", folder)
    assert main(COMMON + ["--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "k_table_cpu_smoke.json" in err[0], err
    assert not (tmp_path / "run").exists()  # nothing half-made


@pytest.mark.parametrize(
    "row, field, value, fragment",
    [
        (1, "warm_compile_s", None, "null is not allowed in a compiled row; expected a finite number >= 0"),
        (1, "warm_compile_s", -1.0, "-1.0 is not allowed; expected a finite number >= 0"),
        (0, "steps_per_s", 0, "0 is not allowed; expected a finite number > 0"),
        (1, "steps_per_s", float("nan"), "nan is not allowed; expected a finite number > 0"),
        (0, "steps_per_s", "fast", "expected a number"),
    ],
)
def test_a_table_with_numbers_the_rule_cannot_use_is_one_line_naming_file_and_field(
    no_cache_env, tmp_path, capsys, has_compiler, row, field, value, fragment
):
    """Before: a null warm compile was a TypeError, a zero rate a ZeroDivisionError, at every train.
    A bad table stops the run rather than leaving it eager: a damaged file must not change silently
    how a run trains.  An explicit --compile/--no-compile does not read it."""
    folder = write_table(tmp_path / "tables", preset="smoke")
    table = json.loads((folder / "k_table_cpu_smoke.json").read_text())
    table["rows"][row][field] = value
    (folder / "k_table_cpu_smoke.json").write_text(json.dumps(table))
    no_cache_env.setattr(compiled, "MEASURED_DIR", folder)
    line = cli_error(capsys, *COMMON, "--out", tmp_path / "run")
    assert f"k_table_cpu_smoke.json: field rows[{row}].{field}" in line and fragment in line, line
    assert "--no-compile" in line and not (tmp_path / "run").exists()
    assert main(COMMON + ["--out", str(tmp_path / "run"), "--steps", "2", "--no-compile"]) == 0


def member(tmp_path, seed, flag, stop_at="10"):
    assert (
        main(
            COMMON
            + ["--out", str(tmp_path / f"seed-{seed}"), "--seed", str(seed), "--stop-at", stop_at, flag]
        )
        == 0
    )


def test_a_batched_resume_keeps_each_members_compile_choice_or_refuses(smoke_measured, tmp_path, capsys):
    """Before: the members resumed with seed 0's choice, written over seed 1's own.  Now members that
    differ are refused in one line naming the member; members that agree keep their own choice."""
    mixed = tmp_path / "mixed"
    member(mixed, 0, "--no-compile")
    member(mixed, 1, "--compile")
    line = cli_error(capsys, *COMMON, "--out", mixed, "--seeds", "0,1", "--resume")
    assert "member seed 1" in line and "trained compiled" in line and "whole batch" in line, line
    assert json.loads(state_settings(mixed / "seed-1", 10).read_text())["settings"]["compiled"] is True
    assert not state_settings(mixed / "seed-0", 20).exists()

    both = tmp_path / "both"
    member(both, 0, "--compile")
    member(both, 1, "--compile")
    calls = len(smoke_measured)
    assert main(COMMON + ["--out", str(both), "--seeds", "0,1", "--resume"]) == 0
    assert len(smoke_measured) == calls + 1  # the batch's forward, compiled
    for seed in (0, 1):
        assert (
            json.loads(state_settings(both / f"seed-{seed}", 20).read_text())["settings"]["compiled"] is True
        )
