"""The LLaMA-like families of ``training.analysis.llama_adapters`` (issue 44) and the scaled
RoPE tables of ``training.analysis.rope_scaling``, against transformers itself on tiny random
models (no download):

* every family (LLaMA with default, linear, dynamic and llama3 RoPE; Mistral and Qwen2 with
  sliding windows of 5 under 11-token inputs, so the mask bites; Qwen3 with per-head QK norm
  and windows; OLMo 2 with all-head QK norm and post-norm blocks), float64: the adapter's
  hidden states are HF's and softmax(last-token logits) is HF eager's ``output_attentions``
  row to ``TOLERANCE`` (measured at most 3.1e-7, from HF's float32 rotary phases);
* mutants (QK norm skipped, RoPE scaling dropped, window ignored) move that attention by more
  than ``MUTANT_GAP``, so the comparison can fail; fast and rerun score routes agree;
* the float64 angle tables equal ``ROPE_INIT_FUNCTIONS`` (float32) to float32 rounding, and
  the model's own ``inv_freq``; RoPE types not modelled are refused in one line.

Biases and QK-norm weights are drawn away from their initial 0 and 1, and q/k projections
scaled up, so a skipped bias or norm cannot pass unnoticed and attention is peaked.
"""

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from transformers import (  # noqa: E402
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    Olmo2Config,
    Olmo2ForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

from theory.rope import rope_angles  # noqa: E402
from training.analysis.adapters import HF_FAMILIES, adapter_for  # noqa: E402
from training.analysis.rope_scaling import rope_parameters, scaled_angles  # noqa: E402
from training.analysis.scores import model_scores  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

VOCAB, LENGTH, WINDOW, HEAD_DIM = 40, 11, 5, 16
TOLERANCE = 1e-6  # float64 attention rows; HF's rotary phases are float32 (measured up to 3.1e-7)
MUTANT_GAP = 1e-2
QUIET = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager")
SHAPE = dict(
    vocab_size=VOCAB,
    hidden_size=64,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=HEAD_DIM,
    num_hidden_layers=3,
    intermediate_size=96,
    max_position_embeddings=128,
)
LLAMA3 = {
    "rope_type": "llama3",
    "rope_theta": 10000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 64,
}
QWEN_WINDOWS = dict(
    use_sliding_window=True, sliding_window=WINDOW, max_window_layers=1
)  # layer 0 full, 1-2 sliding
FAMILIES = {  # name: (model class, config class, config changes)
    "llama": (LlamaForCausalLM, LlamaConfig, {}),
    "llama-llama3": (LlamaForCausalLM, LlamaConfig, {"rope_parameters": LLAMA3}),
    "llama-linear": (
        LlamaForCausalLM,
        LlamaConfig,
        {"rope_parameters": {"rope_type": "linear", "rope_theta": 1e4, "factor": 4.0}},
    ),
    "llama-dynamic": (
        LlamaForCausalLM,
        LlamaConfig,
        {"rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 4.0}},
    ),
    "mistral": (MistralForCausalLM, MistralConfig, {"sliding_window": WINDOW}),
    "qwen2": (Qwen2ForCausalLM, Qwen2Config, QWEN_WINDOWS),
    "qwen3": (Qwen3ForCausalLM, Qwen3Config, QWEN_WINDOWS),
    "olmo2": (Olmo2ForCausalLM, Olmo2Config, {}),
}
WINDOWS = {"mistral": [WINDOW] * 3, "qwen2": [None, WINDOW, WINDOW], "qwen3": [None, WINDOW, WINDOW]}


def tiny(name, seed=0, dtype=torch.float64, **changes):
    model_class, config_class, settings = FAMILIES[name]
    torch.manual_seed(seed)
    model = model_class(config_class(**{**SHAPE, **QUIET, **settings, **changes}))
    with torch.no_grad():
        for key, p in model.named_parameters():
            if ("q_proj" in key or "k_proj" in key) and key.endswith("weight"):
                p.mul_(6.0)
            elif ("q_proj" in key or "k_proj" in key) and key.endswith("bias"):
                p.normal_(0.0, 0.5)
            elif "q_norm" in key or "k_norm" in key:
                p.normal_(3.0, 1.0)
    return model.to(dtype).eval()


def ids(seed=0, length=LENGTH, count=3):
    return np.random.default_rng(seed).integers(0, VOCAB, (count, length))


def softmax_rows(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def hf_eager(model, tokens):
    with torch.no_grad():
        return model(input_ids=torch.as_tensor(tokens), output_attentions=True, output_hidden_states=True)


def attention_gaps(adapter, out, tokens) -> list:
    """Per layer, the largest |adapter attention - HF attention| over inputs, heads, keys."""
    _, logits = adapter.trace(tokens)
    return [
        float(np.max(np.abs(softmax_rows(logits[layer]) - out.attentions[layer][:, :, -1].double().numpy())))
        for layer in range(adapter.n_layers)
    ]


@pytest.mark.parametrize("name", FAMILIES)
def test_the_adapter_reads_the_real_model(name):
    model, tokens = tiny(name), ids()
    adapter, out = adapter_for(model), hf_eager(model, tokens)
    assert HF_FAMILIES[model.config.model_type][0] is type(adapter)
    assert adapter.windows == WINDOWS.get(name, [None] * 3)
    hidden, logits = adapter.trace(tokens)
    for layer in range(3):
        assert torch.equal(hidden[layer], out.hidden_states[layer])
        hf_rows = out.attentions[layer][:, :, -1].numpy()
        hidden_keys = ~adapter.visible_keys(layer, LENGTH)
        assert hidden_keys.sum() == (0 if adapter.windows[layer] is None else LENGTH - WINDOW)
        assert np.all(hf_rows[..., hidden_keys] == 0) and np.all(np.isinf(logits[layer][..., hidden_keys]))
        assert hf_rows.max() > 0.3  # peaked, not uniform: the mutants below have something to move
    assert max(attention_gaps(adapter, out, tokens)) < TOLERANCE


def drop_scaling(adapter):
    adapter.angles = np.asarray(rope_angles(adapter.rotary_dim, adapter.base), dtype=np.float64)


MUTANTS = {  # name: (family, what the mutant gets wrong)
    "qwen3 without QK norm": ("qwen3", lambda a: setattr(a, "qk_norm", None)),
    "olmo2 without QK norm": ("olmo2", lambda a: setattr(a, "qk_norm", None)),
    "llama3 RoPE unscaled": ("llama-llama3", drop_scaling),
    "linear RoPE unscaled": ("llama-linear", drop_scaling),
    "mistral window ignored": ("mistral", lambda a: setattr(a, "windows", [None] * 3)),
    "qwen2 window ignored": ("qwen2", lambda a: setattr(a, "windows", [None] * 3)),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_mutant_moves_the_attention_far_beyond_the_tolerance(mutant):
    name, mutate = MUTANTS[mutant]
    model, tokens = tiny(name), ids()
    adapter, out = adapter_for(model), hf_eager(model, tokens)
    mutate(adapter)
    assert max(attention_gaps(adapter, out, tokens)) > MUTANT_GAP


@pytest.mark.parametrize("name", ["llama-llama3", "mistral", "qwen3", "olmo2"])
def test_fast_and_rerun_routes_agree(name):
    adapter, tokens = adapter_for(tiny(name, seed=1)), ids(1, length=17)
    fast, rerun = model_scores(adapter, tokens, "fast"), model_scores(adapter, tokens, "rerun")
    for key in ("positional", "symbolic", "entropy"):
        assert np.all(np.isfinite(fast[key])), key
        assert np.max(np.abs(fast[key] - rerun[key])) < 1e-6, key
    assert np.min(fast["positional"]) < 0.95 or np.min(fast["symbolic"]) < 0.95


ROPE_CASES = {
    "default": {"rope_type": "default", "rope_theta": 10000.0},
    "linear": {"rope_type": "linear", "rope_theta": 500000.0, "factor": 8.0},
    "dynamic": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
    "llama3 (Llama 3.1 8B)": {**LLAMA3, "rope_theta": 500000.0, "original_max_position_embeddings": 8192},
    "llama3 (tiny)": LLAMA3,
}


@pytest.mark.parametrize("case", ROPE_CASES)
@pytest.mark.parametrize("head_dim", [16, 128])
def test_scaled_angles_equal_transformers_rope_init_functions(case, head_dim):
    params = ROPE_CASES[case]
    config = LlamaConfig(
        **{**SHAPE, "head_dim": head_dim, "max_position_embeddings": 131072, "rope_parameters": dict(params)}
    )
    ours = scaled_angles(rope_parameters(config), head_dim)
    if params["rope_type"] == "default":
        theirs = LlamaRotaryEmbedding.compute_default_rope_parameters(config)[0]
    else:
        theirs = ROPE_INIT_FUNCTIONS[params["rope_type"]](config, "cpu")[0]
    assert ours.shape == (head_dim // 2,) and ours.dtype == np.float64
    assert np.max(np.abs(ours - theirs.double().numpy()) / ours) < 1e-6  # theirs: float32 powers (a few ulps)
    unscaled = np.asarray(rope_angles(head_dim, params["rope_theta"]), dtype=np.float64)
    assert np.array_equal(ours, unscaled) == (params["rope_type"] in ("default", "dynamic"))


@pytest.mark.parametrize("name", ["llama", "llama-llama3", "llama-linear", "qwen3"])
def test_the_adapters_angles_are_the_models_own_table(name):
    model = tiny(name)
    adapter = adapter_for(model)
    theirs = model.model.rotary_emb.inv_freq.double().numpy()
    assert np.max(np.abs(adapter.angles - theirs) / theirs) < 1e-6


def test_dynamic_rope_refuses_inputs_past_max_position_embeddings():
    adapter = adapter_for(tiny("llama-dynamic", max_position_embeddings=12))
    assert adapter.max_length == 12 and len(adapter.hidden_states(ids(length=12))) == 3
    with pytest.raises(ValueError, match=r"inputs of 13 tokens exceed max_position_embeddings = 12"):
        adapter.hidden_states(ids(length=13))


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0, "original_max_position_embeddings": 32},
            "'yarn'",
        ),
        (
            {
                "rope_type": "longrope",
                "rope_theta": 1e4,
                "short_factor": [1.0] * 8,
                "long_factor": [2.0] * 8,
                "original_max_position_embeddings": 32,
            },
            "'longrope'",
        ),
    ],
)
def test_rope_types_not_modelled_are_refused_in_one_line(params, message):
    model = tiny("llama", rope_parameters=params)
    with pytest.raises(ValueError, match=message) as refused:
        adapter_for(model)
    assert "allowed: default, linear, dynamic, llama3" in str(refused.value)
    assert len(str(refused.value).splitlines()) == 1


def test_a_scaled_models_frequency_block_reads_its_own_table():
    """analyse_llm's frequency block for llama3 RoPE: dominant_angle from the scaled table, and
    frequency_interpolated read off it (for an unscaled table the same as base^(-2 (ID-1)/d))."""
    from test_llm_models import CHARS, char_tokenizer

    from training.analysis.frequency import id_frequency, table_frequency
    from training.analysis.llm_analysis import analyse_llm

    model = tiny("llama-llama3", vocab_size=len(CHARS))
    result = analyse_llm(model, char_tokenizer(), "number", n_inputs=3, batch_size=3, progress=False)
    frequency, angles = result["frequency"], adapter_for(model).angles
    assert frequency["rope_type"] == "llama3" and "layer_kind" not in frequency
    assert frequency["dominant_angle"] == [
        [float(angles[d - 1]) for d in row] for row in frequency["dominant_id"]
    ]
    pairs = [
        (i, f)
        for ids_row, f_row in zip(frequency["weighted_id"], frequency["frequency_interpolated"])
        for i, f in zip(ids_row, f_row)
        if i is not None
    ]
    assert pairs and all(f == table_frequency(i, angles) for i, f in pairs)
    for plane in np.linspace(1, HEAD_DIM // 2, 15):
        assert table_frequency(plane, rope_angles(HEAD_DIM, 1e4)) == pytest.approx(
            id_frequency(plane, HEAD_DIM), rel=1e-12
        )
        scaled_away = table_frequency(plane, angles) / id_frequency(plane, HEAD_DIM)  # planes past 3: / 8
        assert scaled_away == pytest.approx(1.0 / 8.0, rel=1e-12) if plane >= 4 else scaled_away > 1 / 8
