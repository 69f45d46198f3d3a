"""When ``train`` compiles without being asked (training.model.compiled.compile_by_default), and that
a run keeps its choice across ``--resume``.

The rule reads saved ``bench --k-table --json`` tables; the tests write their own into a temporary
folder, so each condition of the rule is checked at its edge.  One test reads the shipped table.
Training runs use the smoke preset and the ``aot_eager`` backend (the same tracing as inductor,
no code generation), so nothing here waits for a real compile.
"""

import json
from pathlib import Path

import pytest
import torch

from training.__main__ import main
from training.model import compiled
from training.model.gptj import ModelConfig
from training.model.presets import get_preset

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PAPER = ModelConfig(vocab_size=40, **get_preset("paper").model)
SMOKE = ModelConfig(vocab_size=40, **get_preset("smoke").model)


def write_table(folder: Path, preset="paper", device="cpu", eager=1.0, fast=1.25, warm=10.0) -> Path:
    """A K table as ``bench --k-table --json`` writes it, reduced to the fields the rule reads."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"k": 1, "mode": "eager", "steps_per_s": eager, "warm_compile_s": None},
            {"k": 1, "mode": "compiled", "steps_per_s": fast, "warm_compile_s": warm}]
    (folder / f"k_table_{device}_{preset}.json").write_text(json.dumps({"preset": preset, "device": device,
                                                                        "rows": rows}))
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


@pytest.mark.parametrize("case", ["slower", "equal", "other preset", "other device", "shape changed",
                                  "no compiled row", "no compiler"])
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
    assert not compiled.compile_by_default("cpu", "paper", PAPER, 10)[0]  # a 10-step paper run: compiling costs more


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
    no_cache_env.setattr(compiled, "MEASURED_DIR", write_table(tmp_path / "tables", preset="smoke", warm=0.01))
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


def test_bench_saves_the_table_the_rule_reads_and_never_overwrites(no_cache_env, tmp_path, capsys, has_compiler):
    """``bench --k-table --save`` writes what ``compile_by_default`` reads (a real, tiny table: the
    smoke preset, eager rows only), and refuses a file that exists."""
    save = tmp_path / "k_table_cpu_smoke.json"
    argv = ["bench", "--k-table", "--preset", "smoke", "--k", "1", "--compiled-k", "none", "--rounds", "1",
            "--steps", "1", "--save", str(save)]
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
    (folder / "k_table_cpu_smoke.json").write_text('{"preset": "smoke", "device": "cpu", "rows": [{"k": "one"}]}')
    no_cache_env.setattr(compiled, "MEASURED_DIR", folder)
    assert main(COMMON + ["--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "k_table_cpu_smoke.json" in err[0], err
    assert not (tmp_path / "run").exists()  # nothing half-made


def test_an_inductor_compiled_run_resumes_bit_for_bit(no_cache_env, tmp_path):
    """What makes compiling by default safe for long runs: killed and resumed, a run compiled by
    inductor itself (generated C++ here, not aot_eager) ends with the weights of the uninterrupted
    compiled run, bit for bit.  One cold compile of the smoke model, then cache hits."""
    from safetensors.torch import load_file

    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert main(COMMON + ["--out", str(whole), "--compile"]) == 0
    assert main(COMMON + ["--out", str(parts), "--compile", "--stop-at", "10"]) == 0
    assert main(COMMON + ["--out", str(parts), "--resume"]) == 0
    for name in ("model.safetensors", "checkpoints/step-000020/model.safetensors"):
        a, b = load_file(whole / name), load_file(parts / name)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name
    assert settings_of(parts)["compiled"] is True
