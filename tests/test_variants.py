"""RoPE variants of the model (ModelConfig.nope_from_layer, rope_fraction, rope_base,
query_scale): each does what its comment says, the paper's model is untouched, a variant is
saved and loaded by our loader and refused by HF export."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from theory.rope import rope_angles
from training.model.gptj import GPTJ, ModelConfig, scale_queries_at_inference
from training.model.layers import TRAINING_LENGTH, QueryScale
from training.run.checkpoints import load_model, save_weights
from training.run.presets import get_preset
from training.run.recipe import RecipeError, apply_overrides

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMALL = dict(vocab_size=40, n_layer=3, n_head=2, n_embd=32, rotary_dim=16, n_inner=64)


def model(**variant) -> GPTJ:
    torch.manual_seed(0)
    return GPTJ(ModelConfig(**{**SMALL, **variant})).double().eval()


def swap_logits(m: GPTJ, layer: int, a: int, b: int):
    """Last-token logits of ``layer`` before and after swapping positions a and b of the
    hidden states entering it (the positional/symbolic swap test)."""
    x = torch.randint(0, 40, (3, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        _, internals = m(x, return_internals=True)
        hidden = internals.hidden_in[layer]
        swapped = hidden.clone()
        swapped[:, [a, b]] = hidden[:, [b, a]]
        return m.layer_last_token_logits(layer, hidden), m.layer_last_token_logits(layer, swapped)


def test_nope_layers_see_content_only():
    m = model(nope_from_layer=1)
    assert [block.attn.use_rope for block in m.transformer.h] == [True, False, False]
    for layer in (1, 2):  # a swap of contents swaps the logits exactly: position plays no part
        before, after = swap_logits(m, layer, 2, 7)
        assert torch.allclose(after[..., [7, 2]], before[..., [2, 7]], atol=1e-12, rtol=0)
    before, after = swap_logits(m, 0, 2, 7)  # the RoPE layer: positions matter
    assert not torch.allclose(after[..., [7, 2]], before[..., [2, 7]], atol=1e-6)


def test_p_rope_keeps_the_fastest_planes_and_freezes_the_rest():
    m = model(rope_fraction=0.75)
    full = np.asarray(rope_angles(16, 10000.0))
    angles = m.rotary.angles.numpy()
    assert np.array_equal(angles[:6], full[:6]) and np.all(angles[6:] == 0)  # 8 planes: 6 rotate
    assert np.all(full[6:] > 0)  # the frozen ones did rotate in the paper's model


def test_rope_base_changes_only_the_angles():
    m = model(rope_base=500000.0)
    assert np.array_equal(m.rotary.angles.numpy(), np.asarray(rope_angles(16, 500000.0)))


def test_log_query_scale_is_one_at_the_training_length():
    scale = QueryScale("log", 2)
    factor = scale.factor(0, 40, "cpu", torch.float64).flatten()
    assert factor[TRAINING_LENGTH - 1] == pytest.approx(1.0, abs=1e-15)
    assert torch.allclose(factor, torch.log1p(torch.arange(40.0, dtype=torch.float64)) / math.log(17))
    # a whole layer: every logit of the last query scaled by log(T)/log(17)
    plain, scaled = model(), model(query_scale="log")
    for T in (17, 30):
        x = torch.randn(2, T, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(T))
        with torch.no_grad():
            ratio = scaled.layer_last_token_logits(0, x) / plain.layer_last_token_logits(0, x)
        assert torch.allclose(ratio, torch.full_like(ratio, math.log(T) / math.log(17)), rtol=1e-12)


def test_learned_query_scale_is_a_parameter_per_head_that_trains():
    m = model(query_scale="learned")
    names = [n for n, _ in m.named_parameters() if "query_scale" in n]
    assert names == [f"transformer.h.{i}.attn.query_scale.weight" for i in range(3)]
    weight = m.transformer.h[0].attn.query_scale.weight
    assert weight.shape == (2,) and torch.allclose(
        weight, torch.full((2,), 1 / math.log(17), dtype=torch.float64)
    )
    m.train()
    logits = m(torch.randint(0, 40, (4, 17)), last_only=True)
    logits.sum().backward()
    assert weight.grad is not None and torch.all(weight.grad != 0)


def test_a_scale_switched_on_at_inference_is_the_trained_scale_on_the_same_weights():
    plain, trained = model(), model(query_scale="log")
    trained.load_state_dict(plain.state_dict())  # the fixed scale has no parameters: same weights
    x = torch.randint(0, 40, (3, 30), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        before = plain(x)
        scale_queries_at_inference(plain)
        after, reference = plain(x), trained(x)
    assert torch.equal(after, reference) and not torch.allclose(after, before)
    assert (
        plain.config.query_scale == "none" and plain.inference_query_scale == "log"
    )  # how it was trained, kept
    with pytest.raises(ValueError, match="trained with query_scale='log'"):
        scale_queries_at_inference(trained)
    with pytest.raises(ValueError, match="must be one of log, got 'learned'"):
        scale_queries_at_inference(model(), "learned")


def letter_run(folder, **variant):
    from training.tasks.definitions import get_task, save_vocab

    save_weights(folder, model(**{**variant, "vocab_size": 128}).float())  # the letter task's vocabulary
    save_vocab(folder / "vocab.json", get_task("letter"))
    return folder


@pytest.mark.parametrize("command", [["evaluate", "--count", "4"], ["dilution", "--count", "2"]])
def test_query_scale_at_inference_from_the_command_line(tmp_path, capsys, command):
    from training.__main__ import main

    def run(folder, out):
        return main(
            [
                *command,
                "--run",
                str(folder),
                "--task",
                "letter",
                "--lengths",
                "17,30",
                "--query-scale",
                "log",
                "--json",
                str(out),
                "--no-progress",
            ]
        )

    assert run(letter_run(tmp_path / "plain"), tmp_path / "plain.json") == 0
    assert json.loads((tmp_path / "plain.json").read_text())["inference_query_scale"] == "log"
    capsys.readouterr()
    status = run(letter_run(tmp_path / "scaled", query_scale="log"), tmp_path / "scaled.json")
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "trained with query_scale=log" in lines[0], lines
    assert not (tmp_path / "scaled.json").exists()


def test_paper_model_is_unchanged_by_the_variant_code():
    paper = ModelConfig()
    assert paper.variant() == {} and paper.to_config_dict() == paper.to_hf_dict()
    assert "query_scale" not in " ".join(n for n, _ in GPTJ(ModelConfig(**SMALL)).named_parameters())


@pytest.mark.parametrize(
    "variant",
    [
        dict(nope_from_layer=0),
        dict(rope_fraction=0.5),
        dict(rope_base=5e5),
        dict(query_scale="log"),
        dict(query_scale="learned"),
    ],
)
def test_a_variant_saves_loads_and_is_refused_by_hf_export(tmp_path, variant):
    m = model(**variant).float()
    save_weights(tmp_path, m)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["model_type"] == "rope_heads_gptj" and config["rope_heads_variant"] == m.config.variant()
    loaded = load_model(tmp_path)
    x = torch.randint(0, 40, (2, 20))
    with torch.no_grad():
        assert torch.equal(loaded(x), m(x))
    with pytest.raises(ValueError, match="HF GPT-J cannot represent"):
        m.config.to_hf_dict()
    transformers = pytest.importorskip("transformers")
    with pytest.raises(ValueError):  # HF does not know the model type: it cannot load it silently
        transformers.AutoConfig.from_pretrained(tmp_path)


def test_variant_keys_of_the_recipe_are_checked():
    recipe = apply_overrides(
        get_preset("paper"),
        [
            "model.nope_from_layer=4",
            "model.rope_fraction=0.75",
            "model.query_scale=learned",
            "model.rope_base=500000",
        ],
    )
    assert recipe.model == {
        "nope_from_layer": 4,
        "rope_fraction": 0.75,
        "query_scale": "learned",
        "rope_base": 500000.0,
    }
    for bad, message in (
        ("model.nope_from_layer=13", "nope_from_layer"),
        ("model.rope_fraction=1.5", "rope_fraction"),
        ("model.query_scale=sqrt", "query_scale"),
        ("model.nope_from_layer=-1", "nope_from_layer"),
    ):
        with pytest.raises(RecipeError, match=message):
            apply_overrides(get_preset("paper"), [bad])
