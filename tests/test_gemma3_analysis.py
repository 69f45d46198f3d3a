"""Gemma 3 (issue 32): the analysis JSON of a Gemma model, on the tiny random Gemma 3 of
``test_gemma3`` (both layer types, a sliding window of 4, RoPE bases 10 and 10,000).

A padded batch gives each input's unpadded results (sdpa, as the command runs), and the
analysis JSON reports each layer in its own base (plane ID and angle per position).  Separate
from ``test_gemma3``, which checks the adapter itself against HF eager attention: these tests
run the whole analysis route on top of it.
"""

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from test_gemma3 import BASES, TYPES, tiny_gemma3  # noqa: E402
from test_llm_models import char_tokenizer  # noqa: E402  (every character one token)

from theory.rope import rope_angles  # noqa: E402
from training.analysis.adapters import adapter_for  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_a_padded_batch_gives_each_inputs_unpadded_results_under_the_window():
    from training.analysis.llm_inputs import map_inputs, pad_id_of, prefix_ids, token_pieces
    from training.analysis.llm_scores import analyse_mapped
    from training.tasks.definitions import get_task

    tokenizer, task = char_tokenizer(), get_task("number")
    mapped = map_inputs(
        task.decode(task.generate(4, 7).inputs),
        token_pieces(tokenizer, task.vocab),
        prefix_ids(tokenizer),
        pad_id_of(tokenizer),
    )
    assert len(set(mapped.attention_mask.sum(1))) > 1  # rows of different lengths: padding happens
    # sdpa, the command's attention: transformers' eager path in float64 turns the all-masked
    # padding rows of a sliding layer into NaN (its float64 mask minimum overflows to -inf in
    # the float32 softmax), which then leaks into the real rows through 0 * NaN
    adapter = adapter_for(tiny_gemma3(seed=3, dtype=torch.float64, attn_implementation="sdpa"))
    together, alone = (
        analyse_mapped(adapter, mapped, batch_size=4),
        analyse_mapped(adapter, mapped, batch_size=1),
    )
    for key in ("positional", "symbolic", "entropy", "sink", "terms"):
        assert np.allclose(together[key], alone[key], rtol=0, atol=1e-9, equal_nan=True), key
    assert np.all(np.isfinite(together["entropy"]))


def test_the_analysis_reports_each_layer_in_its_own_base():
    from training.analysis.llm_analysis import analyse_llm

    adapter_model = tiny_gemma3(seed=4, dtype=torch.float64)
    result = analyse_llm(adapter_model, char_tokenizer(), "letter", n_inputs=3, batch_size=3, progress=False)
    frequency = result["frequency"]
    assert result["family"] == "hf-gemma3" and frequency["base"] is None
    assert frequency["layer_kind"] == ["sliding", "full", "sliding", "full"]
    assert frequency["layer_base"] == [BASES[t] for t in TYPES]
    for layer, base in enumerate(frequency["layer_base"]):
        angles = rope_angles(16, base)
        for head in range(4):
            plane = frequency["dominant_id"][layer][head]
            assert frequency["dominant_angle"][layer][head] == pytest.approx(
                float(angles[plane - 1]), rel=1e-12
            )
            wid = frequency["weighted_id"][layer][head]
            if wid is not None:  # the angle per position at the weighted ID, in the layer's own base
                assert frequency["frequency_interpolated"][layer][head] == pytest.approx(
                    base ** (-2 * (wid - 1) / 16), rel=1e-12
                )
