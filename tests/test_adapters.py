"""training.analysis.adapters: every model family yields the same per-layer view (hidden states entering
the layer, last-token logits, cross matrix), and the two score routes agree.

* fast (cross matrix + theory.scores.swapped_rows_from_cross) == rerun (swap the hidden
  states, recompute with the family's own code) to 1e-6 on every input and layer, float64;
* an HF GPT-J and our GPT-J holding the same weights give identical scores;
* each adapter's attention equals HF's own ``output_attentions`` (float32) and its hidden
  states HF's ``output_hidden_states``: the adapters read the real models, with the right
  pairing (adjacent / halves), partial rotary (GPT-NeoX) and grouped-query keys (LLaMA).

Random weights give near-uniform attention (both scores ~1, a weak test), so the q/k
projections are scaled up: attention then peaks and the scores move away from 1.
"""

import numpy as np
import pytest
import torch
from transformers import (
    GPTJConfig,
    GPTJForCausalLM,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
)

from training.analysis.adapters import adapter_for
from training.analysis.scores import model_scores
from training.model.gptj import GPTJ, ModelConfig

VOCAB, LENGTH, INPUTS = 40, 17, 6
OURS = ModelConfig(vocab_size=VOCAB, n_layer=2, n_head=2, n_embd=32, rotary_dim=8, n_inner=48)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sharpen(model, names=("q_proj", "k_proj", "query_key_value"), factor=6.0):
    """Scale the query/key projections so attention is peaked, not uniform."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if any(n in name for n in names) and name.endswith("weight"):
                p.mul_(factor)
    return model


def ids(seed=0, length=LENGTH, count=INPUTS):
    return np.random.default_rng(seed).integers(0, VOCAB, (count, length))


def hf_models():
    torch.manual_seed(0)
    quiet = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager")
    return {
        "gptj": GPTJForCausalLM(
            GPTJConfig(vocab_size=VOCAB, n_embd=32, n_head=2, n_layer=2, rotary_dim=8, n_inner=48, **quiet)
        ),
        "gpt-neox": GPTNeoXForCausalLM(
            GPTNeoXConfig(
                vocab_size=VOCAB,
                hidden_size=32,
                num_attention_heads=2,
                num_hidden_layers=2,
                intermediate_size=48,
                rotary_pct=0.5,
                **quiet,
            )
        ),
        "llama": LlamaForCausalLM(
            LlamaConfig(
                vocab_size=VOCAB,
                hidden_size=32,
                num_attention_heads=4,
                num_key_value_heads=2,
                num_hidden_layers=2,
                intermediate_size=48,
                **quiet,
            )
        ),
    }


def assert_routes_agree(model, tokens):
    adapter = adapter_for(model)
    fast = model_scores(adapter, tokens, "fast")
    rerun = model_scores(adapter, tokens, "rerun")
    for key in ("positional", "symbolic", "entropy"):
        assert fast[key].shape == (adapter.n_layers, len(tokens), adapter.n_heads)
        assert np.max(np.abs(fast[key] - rerun[key])) < 1e-6, key
    # not the trivial uniform case: some head on some input is far from (1, 1)
    assert np.min(fast["positional"]) < 0.95 or np.min(fast["symbolic"]) < 0.95
    return fast


def test_our_gptj_fast_equals_rerun_every_input_and_layer():
    torch.manual_seed(1)
    model = sharpen(GPTJ(OURS)).double().eval()
    assert_routes_agree(model, ids(1))


def test_our_gptj_forward_queries_and_keys_are_the_recomputed_ones():
    """The fast route takes our GPT-J's unrotated queries and keys from its forward pass
    (``Internals``); they are those ``queries_keys`` recomputes from the hidden states, and
    the cross matrix built from either is the same."""
    from training.analysis.adapter_base import Adapter

    torch.manual_seed(2)
    adapter = adapter_for(sharpen(GPTJ(OURS)).double().eval())
    hidden, recorded = adapter.hidden_and_keys(ids(2))
    hidden_again, recomputed = Adapter.hidden_and_keys(adapter, ids(2))
    assert len(recorded) == len(recomputed) == adapter.n_layers
    for layer, ((q, k), (q2, k2)) in enumerate(zip(recorded, recomputed)):
        assert torch.equal(hidden[layer], hidden_again[layer])
        assert q.shape == (INPUTS, OURS.n_head, OURS.head_dim) and k.shape == (
            INPUTS,
            OURS.n_head,
            LENGTH,
            OURS.head_dim,
        )
        assert np.max(np.abs(q - q2)) < 1e-12 and np.max(np.abs(k - k2)) < 1e-12
        assert (
            np.max(np.abs(adapter.cross(layer, hidden[layer], (q, k)) - adapter.cross(layer, hidden[layer])))
            < 1e-12
        )


@pytest.mark.parametrize("family", ["gptj", "gpt-neox", "llama"])
def test_hf_family_fast_equals_rerun(family):
    model = sharpen(hf_models()[family]).double().eval()
    assert_routes_agree(model, ids(2))


@pytest.mark.parametrize("family", ["gptj", "gpt-neox", "llama"])
def test_adapter_reads_the_real_hf_model(family):
    """float32: the adapter's softmax(last-token logits) is HF's attention row, its hidden
    states HF's, and the cross matrix's diagonal is the adapter's logit row."""
    model = sharpen(hf_models()[family]).eval()
    adapter = adapter_for(model)
    tokens = ids(3)
    with torch.no_grad():
        out = model(input_ids=torch.as_tensor(tokens), output_attentions=True, output_hidden_states=True)
    hidden, logits = adapter.trace(tokens)
    assert len(hidden) == adapter.n_layers == 2
    for layer in range(adapter.n_layers):
        assert torch.equal(hidden[layer], out.hidden_states[layer])
        attention = np.exp(logits[layer] - logits[layer].max(-1, keepdims=True))
        attention /= attention.sum(-1, keepdims=True)
        assert np.max(np.abs(attention - out.attentions[layer][:, :, -1].double().numpy())) < 1e-5
        diagonal = np.diagonal(adapter.cross(layer, hidden[layer]), axis1=-2, axis2=-1)
        assert np.max(np.abs(diagonal - logits[layer])) < 1e-5


def test_hf_gptj_and_our_gptj_give_identical_scores():
    torch.manual_seed(4)
    ours = sharpen(GPTJ(OURS)).eval()
    config = GPTJConfig(**{k: v for k, v in OURS.to_hf_dict().items() if k != "model_type"})
    theirs = GPTJForCausalLM(config).eval()
    theirs.load_state_dict(ours.state_dict(), strict=True)
    tokens = ids(4)
    ours_scores = model_scores(ours.double(), tokens, "fast")
    for method in ("fast", "rerun"):
        theirs_scores = model_scores(theirs.double(), tokens, method)
        for key in ("positional", "symbolic", "entropy"):
            assert np.max(np.abs(ours_scores[key] - theirs_scores[key])) < 1e-6, (method, key)


@pytest.mark.parametrize("family", ["ours", "gptj", "gpt-neox", "llama"])
def test_plane_terms_sum_to_the_logit(family):
    """Frequency use splits every logit by rotary plane (+ non-rotary dims): the parts add up."""
    torch.manual_seed(5)
    model = sharpen(GPTJ(OURS) if family == "ours" else hf_models()[family]).double().eval()
    adapter = adapter_for(model)
    hidden, logits = adapter.trace(ids(5))
    for layer in range(adapter.n_layers):
        terms, rest = adapter.plane_terms(layer, hidden[layer])
        assert terms.shape[-1] == adapter.rotary_dim // 2
        assert np.max(np.abs(terms.sum(-1) + rest - logits[layer])) < 1e-10
    if family == "gpt-neox":  # partial rotary: the non-rotary dims carry part of the logit
        assert np.abs(rest).max() > 1e-6


@pytest.mark.parametrize("family", ["ours", "gpt-neox", "llama"])
def test_rotated_queries_are_theory_rope_rotate(family):
    """The cross matrix's stacked rotation matrices are theory.rope.rotate, pairing and partial
    rotary included (adjacent 8 of 16 dims; halves 8 of 16; halves full)."""
    from theory.rope import rotate

    torch.manual_seed(6)
    model = GPTJ(OURS) if family == "ours" else hf_models()[family]
    adapter = adapter_for(model)
    q = np.random.default_rng(6).normal(size=(3, adapter.n_heads, adapter.head_dim))
    offsets = (LENGTH - 1) - np.arange(LENGTH)
    expected = rotate(q[..., None, :], offsets, adapter.angles, pairing=adapter.pairing)
    assert np.max(np.abs(adapter.rotated_queries(q, LENGTH) - expected)) < 1e-12


def test_unknown_model_is_refused():
    with pytest.raises(ValueError, match="no adapter"):
        adapter_for(torch.nn.Linear(2, 2))
