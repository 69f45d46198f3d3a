"""The compile cache (training.run.compile) and ``bench --k-table`` (training.run.bench.k_table).

The compiled model is checked against the eager one and HF's GPT-J with inductor itself, on the
smoke config cut to ONE layer: the cold compile is what costs (about two minutes for the two
smoke layers on a busy 2-core machine), and a second block runs the same code.  The K table runs
for real on the smoke preset, tiny; its compiled rows use the ``aot_eager`` backend
(``ROPE_HEADS_COMPILE_BACKEND``: the same dynamo and AOT-autograd tracing, no code generation),
so the compile-time columns are measured in seconds here.
"""

import json
from pathlib import Path

import pytest
import torch

from training.__main__ import main
from training.model.batched import BatchedGPTJ
from training.model.gptj import GPTJ, ModelConfig
from training.run import compile as compiled
from training.run.batched_loop import train_seeds
from training.run.bench.k_table import parse_ks
from training.run.bench.k_table_summary import COLUMNS, TARGETS
from training.run.presets import get_preset
from training.run.start import model_config

pytestmark = pytest.mark.usefixtures("one_torch_thread", "determinism_restored")

SMOKE = ModelConfig(vocab_size=40, **get_preset("smoke").model)
ONE_LAYER = ModelConfig(vocab_size=40, **{**get_preset("smoke").model, "n_layer": 1})


def test_cache_dir_is_the_user_cache_and_the_env_moves_it(no_cache_env, tmp_path):
    no_cache_env.setenv("HOME", str(tmp_path / "home"))
    assert compiled.compile_cache_dir() == tmp_path / "home" / ".cache" / "rope-heads" / "inductor"
    no_cache_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiled.compile_cache_dir() == tmp_path / "xdg" / "rope-heads" / "inductor"
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "mine"))
    assert compiled.compile_cache_dir() == tmp_path / "mine" / "inductor"


def test_use_compile_cache_points_inductor_there_with_both_caches_on(no_cache_env, tmp_path):
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    inductor_config.fx_graph_cache = inductor_config.fallback_random = False  # restored by the fixture
    functorch_config.enable_autograd_cache = False
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "mine"))
    folder = compiled.use_compile_cache()
    assert folder == tmp_path / "mine" / "inductor" and folder.is_dir()
    assert Path(cache_dir()) == folder  # what inductor itself will use
    assert (
        inductor_config.fx_graph_cache
        and functorch_config.enable_autograd_cache
        and inductor_config.fallback_random
    )


def test_compiled_forward_equals_eager_and_hf(no_cache_env, tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    ours = GPTJ(ONE_LAYER).eval()
    with torch.no_grad():  # random biases and LayerNorms, so every parameter matters
        for name, p in ours.named_parameters():
            if name.endswith("bias") or "ln_" in name:
                p.add_(0.1 * torch.randn_like(p))
    hf_dict = {k: v for k, v in ONE_LAYER.to_hf_dict().items() if k != "model_type"}
    theirs = transformers.GPTJForCausalLM(transformers.GPTJConfig(**hf_dict)).eval()
    theirs.load_state_dict(ours.state_dict())
    fast = compiled.compile_module(ours, cache=tmp_path / "inductor")
    idx = torch.randint(0, ONE_LAYER.vocab_size, (4, 17), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        eager, got, hf = ours(idx, last_only=True), fast(idx, last_only=True), theirs(idx).logits[:, -1]
    code = "".join(path.read_text(errors="replace") for path in (tmp_path / "inductor").rglob("*.py"))
    assert code  # inductor generated code there
    # compiled.tanh_from_exp: gelu_new's tanh written with exp, not inductor's slow vectorised tanh
    assert ".tanh()" not in code and ".exp()" in code
    assert not torch.equal(eager, torch.zeros_like(eager))
    assert (got - eager).abs().max().item() < 1e-5
    assert (got - hf).abs().max().item() < 1e-5


def test_k_table_runs_on_the_smoke_preset_and_prints_every_column(no_cache_env, tmp_path, capsys):
    """A real table, tiny: K = 1 eager and compiled (JSON), then K = 1, 2 eager (text, ``--compiled-k none``).  The
    batched model compiled is not run here: its per-member dropout draws split the graph, so
    even aot_eager takes about 30 s for K = 2."""
    no_cache_env.setenv(compiled.BACKEND_ENV, "aot_eager")
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    common = ["bench", "--k-table", "--preset", "smoke", "--rounds", "2", "--steps", "1", "--threads", "1"]
    assert main(common + ["--k", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = {r["mode"]: r for r in result["rows"]}
    assert sorted(rows) == ["compiled", "eager"] and all(r["k"] == 1 for r in rows.values())
    for mode, row in rows.items():
        assert set(COLUMNS) | {"per_member_vs_k1"} <= set(row)
        assert row["member_steps_per_s"] > 0 and row["fraction_of_2048_peak"] > 0
        assert row["members_per_hour"] == pytest.approx(3600 * row["member_steps_per_s"] / 3000, rel=1e-2)
        assert row["per_member_vs_k1"] == 1.0
        assert row["member_steps_per_s"] == row["steps_per_s"]  # K = 1
        assert (row["cold_compile_s"] is None) == (mode == "eager") == (row["warm_compile_s"] is None)
    assert rows["compiled"]["cold_compile_s"] > 0
    target = result["targets"]["cpu_compiled_k1_fraction_of_peak"]
    assert (
        target["value"] == rows["compiled"]["fraction_of_2048_peak"]
        and target["target"] == TARGETS["cpu_compiled_k1_fraction_of_peak"]
    )
    assert not (tmp_path / "cache").exists()  # the table's compile cache is a temp folder: cold is cold

    assert main(common + ["--k", "1,2", "--compiled-k", "none"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].split() == list(COLUMNS)
    assert [line.split()[:2] for line in lines[2:]] == [["1", "eager"], ["2", "eager"]]
    assert all(len(line.split()) == len(COLUMNS) for line in lines[2:])
    k1, k2 = (dict(zip(COLUMNS, line.split())) for line in lines[2:])
    # a K = 2 step advances two runs: per member against K = 1 is the runs' step rate over K = 1's,
    # by the headline clock (CPU time here: a loaded machine stretches one row's wall time)
    assert float(k2["per_member_vs_k1"]) == pytest.approx(
        2 * float(k2["steps_per_cpu_s"]) / float(k1["steps_per_cpu_s"]), abs=2e-3
    )
    assert float(k2["member_steps_per_s"]) == pytest.approx(2 * float(k2["steps_per_s"]), abs=2e-3)


@pytest.mark.parametrize("flag", ["--k", "--compiled-k"])
@pytest.mark.parametrize("value", ["0", "1,x", "2,2", "257", ""])
def test_bad_k_exits_2_with_one_line(flag, value, capsys):
    assert main(["bench", "--k-table", flag, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{flag} must" in err[0] and "1..256" in err[0] and repr(value) in err[0]


def test_parse_ks_keeps_order():
    assert parse_ks("1, 2,5,10") == (1, 2, 5, 10)


def _train_losses(run: Path) -> list:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [
        (r["step"], r["loss"], r.get("accuracy")) for r in lines if r.get("split") in ("train", "validation")
    ]


def test_train_compile_trains_like_the_eager_run(no_cache_env, tmp_path, capsys):
    """``train --compile`` runs the compiled step (aot_eager here: the same tracing, fast) and draws the
    eager run's dropout masks, so its losses are the eager run's up to float reassociation."""
    no_cache_env.setenv(compiled.BACKEND_ENV, "aot_eager")
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    common = ["train", "--task", "letter", "--preset", "smoke", "--steps", "20", "--no-progress"]
    assert main(common + ["--out", str(tmp_path / "eager")]) == 0
    calls = []
    real = torch.compile
    no_cache_env.setattr(torch, "compile", lambda *a, **k: calls.append(k) or real(*a, **k))
    assert main(common + ["--out", str(tmp_path / "compiled"), "--compile"]) == 0
    assert calls == [{"dynamic": False, "backend": "aot_eager"}]
    eager, fast = _train_losses(tmp_path / "eager"), _train_losses(tmp_path / "compiled")
    assert [e[0] for e in eager] == [f[0] for f in fast] and len(eager) >= 3
    for (_, loss_e, acc_e), (_, loss_f, acc_f) in zip(eager, fast):
        assert loss_f == pytest.approx(loss_e, rel=1e-5) and acc_f == acc_e
    assert (tmp_path / "cache" / "inductor").is_dir()


def test_train_seeds_compile_traces_one_graph_and_trains_like_the_eager_batch(no_cache_env, tmp_path):
    """The members' dropout masks are drawn before the forward (``BatchedGPTJ.dropout_masks``), so
    dynamo traces a batch's training forward as one graph -- drawn inside, each draw switched the
    global RNG state and split it at every site -- and ``train --seeds --compile`` (aot_eager here)
    trains like the eager batch."""
    config = model_config("letter", get_preset("smoke"), "--preset smoke")
    model = BatchedGPTJ(config, [0, 1], torch.device("cpu")).train()
    idx = torch.randint(0, config.vocab_size, (2, 4, 17), generator=torch.Generator().manual_seed(0))
    explained = torch._dynamo.explain(model)(idx, model.dropout_masks(idx))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)

    no_cache_env.setenv(compiled.BACKEND_ENV, "aot_eager")
    no_cache_env.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    options = {"preset": "smoke", "steps": 20, "device": "cpu", "progress": False}
    train_seeds("letter", tmp_path / "eager", [0, 1], **options)
    train_seeds("letter", tmp_path / "compiled", [0, 1], compiled=True, **options)
    for seed in (0, 1):
        eager = _train_losses(tmp_path / "eager" / f"seed-{seed}")
        fast = _train_losses(tmp_path / "compiled" / f"seed-{seed}")
        assert [e[0] for e in eager] == [f[0] for f in fast] and len(eager) >= 3
        for (_, loss_e, acc_e), (_, loss_f, acc_f) in zip(eager, fast):
            assert loss_f == pytest.approx(loss_e, rel=1e-5) and acc_f == acc_e
