"""The score analysis of our GPT-J's RoPE variants (ModelConfig.nope_from_layer, rope_fraction,
rope_base, query_scale): the derived fast route (per-layer angles and query factor in
``training.analysis.adapter_base``) equals the rerun route through the model's own forward code,
the cross matrix's diagonal is the model's own last-token logits, frequency use and Index
geometry say "no rotary plane" for NoPE layers, and ``python -m training analyze`` runs on a
variant smoke run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from test_adapters import assert_routes_agree, sharpen
from test_train import cli

from training.analysis.adapter_base import Adapter
from training.analysis.adapters import adapter_for
from training.analysis.frequency import frequency_use
from training.analysis.geometry import index_geometry
from training.analysis.scores import layer_scores
from training.model.gptj import GPTJ, ModelConfig
from training.tasks.definitions import get_task

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMALL = dict(vocab_size=128, n_layer=3, n_head=2, n_embd=32, rotary_dim=16, n_inner=64)  # letter task vocab
VARIANTS = {
    "nope-all": dict(nope_from_layer=0),
    "nope-from-2": dict(nope_from_layer=2),
    "p-rope": dict(rope_fraction=0.75),
    "base-500000": dict(rope_base=500000.0),
    "log-scale": dict(query_scale="log"),
    "learned-scale": dict(query_scale="learned"),
    "combined": dict(nope_from_layer=2, rope_fraction=0.75, rope_base=500000.0, query_scale="learned"),
}
# where the one-table, no-factor route of the paper's model would be wrong (see the sensitivity test)
NEEDS_LAYER_AWARE = ("nope-all", "nope-from-2", "log-scale", "learned-scale", "combined")


def variant_model(name: str, seed: int = 0) -> GPTJ:
    """A sharpened tiny float64 model of the variant; a learned query scale gets per-layer,
    per-head weights away from its start value (one of them negative, which a learned s_h may be)."""
    torch.manual_seed(seed)
    model = sharpen(GPTJ(ModelConfig(**SMALL, **VARIANTS[name]))).double().eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for block in model.transformer.h:
            if block.attn.query_scale.kind == "learned":
                block.attn.query_scale.weight.copy_(
                    torch.randn(2, generator=generator, dtype=torch.float64) * 0.5
                )
    return model


def letter_ids(count: int = 8):
    """Letter-task inputs 8 tokens longer than training's 17, where the log query scale is
    1 (so at 17 tokens a missing factor would go unnoticed)."""
    return get_task("letter").generate(count, 0, extra_target=8).inputs


@pytest.mark.parametrize("name", VARIANTS)
def test_fast_route_equals_rerun_route(name):
    model = variant_model(name)
    fast = assert_routes_agree(model, letter_ids())
    assert all(np.isfinite(values).all() for values in fast.values())
    adapter = adapter_for(model)  # one layer alone (layer_scores) picks that layer's variant too
    hidden = adapter.hidden_states(letter_ids())
    for layer in range(adapter.n_layers):
        one = layer_scores(adapter, layer, hidden[layer], "fast")
        assert np.max(np.abs(one["positional"] - fast["positional"][layer])) < 1e-12


@pytest.mark.parametrize("name", VARIANTS)
def test_cross_diagonal_and_plane_terms_are_the_models_own_logits(name):
    model = variant_model(name, seed=1)
    adapter = adapter_for(model)
    ids = letter_ids()
    with torch.no_grad():
        _, internals = model(torch.as_tensor(ids), return_internals=True)
    hidden, query_keys = adapter.hidden_and_keys(ids)
    crosses = adapter.crosses(query_keys)
    for layer in range(adapter.n_layers):
        own = internals.last_logits[layer].numpy()
        assert np.max(np.abs(np.diagonal(crosses[layer], axis1=-2, axis2=-1) - own)) < 1e-10
        terms, rest = adapter.plane_terms(layer, hidden[layer])
        assert np.max(np.abs(terms.sum(-1) + rest - own)) < 1e-10


@pytest.mark.parametrize("name", NEEDS_LAYER_AWARE)
def test_one_angle_table_without_query_factor_would_be_wrong(name):
    """The checks above can fail: with the base class's defaults (one table for all layers, no
    query factor) the cross matrix of these variants misses the model's logits."""
    model = variant_model(name, seed=1)
    adapter = adapter_for(model)
    ids = letter_ids()
    _, query_keys = adapter.hidden_and_keys(ids)
    _, logits = adapter.trace(ids)
    plain = adapter_for(model)
    plain.layer_angles = lambda layer: Adapter.layer_angles(plain, layer)
    plain.query_factor = lambda layer, length: Adapter.query_factor(plain, layer, length)
    wrong = np.diagonal(plain.crosses(query_keys), axis1=-2, axis2=-1)
    assert max(np.max(np.abs(wrong[layer] - logits[layer])) for layer in range(adapter.n_layers)) > 1e-3


@pytest.mark.parametrize("kind", ["log", "learned"])
def test_query_factor_is_the_ratio_of_the_models_logits(kind):
    """The adapter's factor is what the model's query scale does to its logits: the same weights
    without the scale give logits exactly that factor smaller (per head, last position)."""
    scaled = variant_model("log-scale" if kind == "log" else "learned-scale", seed=2)
    plain = GPTJ(ModelConfig(**SMALL)).double().eval()
    plain.load_state_dict({k: v for k, v in scaled.state_dict().items() if "query_scale" not in k})
    ids = torch.as_tensor(letter_ids(4))
    with torch.no_grad():
        _, internals = scaled(ids, return_internals=True)
    adapter = adapter_for(scaled)
    length = ids.shape[1]
    for layer in range(adapter.n_layers):
        factor = adapter.query_factor(layer, length)
        assert factor.shape == (adapter.n_heads,)
        hidden = internals.hidden_in[layer]  # the same states into both: only the query scale differs
        with torch.no_grad():
            ratio = scaled.layer_last_token_logits(layer, hidden) / plain.layer_last_token_logits(
                layer, hidden
            )
        assert np.allclose(ratio.numpy(), factor[None, :, None], rtol=1e-9, atol=0)
    if kind == "log":  # 1 at the training length (17 tokens), larger beyond
        assert np.allclose(adapter.query_factor(0, 17), 1.0) and adapter.query_factor(0, 100)[0] > 1
    assert adapter_for(plain).query_factor(0, length) is None


def test_frequency_and_geometry_of_nope_layers_say_no_plane():
    model = variant_model("nope-from-2")
    adapter = adapter_for(model)
    ids = letter_ids()
    hidden = adapter.hidden_states(ids)
    use = frequency_use(adapter, hidden)
    assert use["rotary"] == [True, True, False]
    for field in (
        "weights",
        "weighted_id",
        "rounded_id",
        "frequency",
        "frequency_interpolated",
        "dominant_id",
        "dominant_frequency",
        "weights_max_per_plane",
        "weighted_id_max_per_plane",
    ):
        assert len(use[field]) == 3 and use[field][2] is None, field
    assert all(isinstance(use["dominant_id"][layer], int) for layer in (0, 1))
    json.dumps(use)
    task = get_task("letter")
    nope = index_geometry(adapter, 2, hidden[2], ids, task, None)
    assert nope["plane_id"] is None and nope["frequency"] is None and nope["key_collapse"] is None
    assert nope["keys"] == [] and nope["n_keys"] == ids.size
    rotary = index_geometry(adapter, 0, hidden[0], ids, task, use["dominant_id"][0])
    assert set(nope) == set(rotary)
    with pytest.raises(ValueError, match="layer 0 has rotary planes"):
        index_geometry(adapter, 0, hidden[0], ids, task, None)


@pytest.mark.parametrize("name", ["base-500000", "p-rope"])
def test_frequency_reads_the_models_own_angles(name):
    """Another base: the frequency of an ID is the model's angle, not base 10000's; p-RoPE: a
    position-free plane has frequency 0, and no interpolated frequency next to it."""
    model = variant_model(name)
    adapter = adapter_for(model)
    use = frequency_use(adapter, adapter.hidden_states(letter_ids()))
    angles = model.rotary.angles.numpy()
    assert use["rotary"] == [True] * 3
    for layer in range(3):
        assert use["dominant_frequency"][layer] == angles[use["dominant_id"][layer] - 1]
        assert use["frequency"][layer] == angles[use["rounded_id"][layer] - 1]
        wid = use["weighted_id"][layer]
        next_to_frozen = angles[math.floor(wid) - 1] == 0 or angles[math.ceil(wid) - 1] == 0
        assert (use["frequency_interpolated"][layer] is None) == next_to_frozen
    if name == "p-rope":
        assert (angles == 0).sum() == 2  # the slowest quarter of 8 planes
    else:
        assert use["frequency_interpolated"][0] == pytest.approx(
            500000.0 ** (-2 * (use["weighted_id"][0] - 1) / 16)
        )


def test_cli_analyze_runs_on_a_variant_smoke_run(tmp_path):
    run = tmp_path / "letter-variant"
    done = cli(
        "train",
        "--task",
        "letter",
        "--out",
        run,
        "--preset",
        "smoke",
        "--steps",
        "10",
        "--no-progress",
        "--set",
        "model.query_scale=log",
        "--set",
        "model.nope_from_layer=1",
        "--set",
        "checkpoint_every=10",
        "--set",
        "eval_every=10",
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "analysis.json"
    base = ("analyze", "--run", run, "--task", "letter", "--json", out, "--n-inputs", "8", "--no-progress")
    done = cli(*base, "--no-discrepancy")
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    scores = [result["scores"][key] for key in ("positional", "symbolic", "entropy")]
    assert all(value is not None and np.isfinite(value) for rows in scores for row in rows for value in row)
    assert len(result["steps"]) >= 2 and len(scores[0][0]) == 2
    assert result["frequency"]["rotary"] == [True, False] and result["frequency"]["dominant_id"][1] is None
    assert result["index_geometry"]["plane_id"] is None  # layer 1 is NoPE
    # with the discrepancy: the NoPE layer is measured but compared with no construction
    done = cli(*base, "--discrepancy-lengths", "17,30", "--discrepancy-count", "4")
    assert done.returncode == 0, done.stderr
    layers = json.loads(out.read_text())["measured_discrepancy"]["layers"]
    assert layers[1]["dominant_id"] is None and layers[1]["angle"] is None
    assert layers[1]["theory"]["construction"] is None and layers[1]["theory_says_decays"] is None
    assert all(g >= 0 for layer in layers for g in layer["median"])
