"""Per-head analysis of a pretrained RoPE LLM on the task's inputs (``python -m training
analyze --model``): positional and symbolic scores, attention entropy, frequency use and the
attention-sink share of every head.

Inputs: ``training.analysis.scores.score_inputs`` (the same fixed set as for our runs),
mapped to model tokens by ``training.analysis.llm_inputs`` (its module doc states the token
mapping and the swap rule: whole task tokens, pairs of equal model length only).

Scores.  The fast route of ``training.analysis.scores``: per layer the cross matrix
``cross[c, p]`` (model content c at model position p, from the left-padded batch; RoPE
logits depend only on offsets, so the padding shifts nothing) gives every post-swap logit
row by a gather; softmax over the input's real positions; the attention on each task token
is the sum over its model positions, with one more entry for the rest (the tokenizer's
prefix), so the task-level vector sums to 1.  ``theory.scores.head_scores`` then applies
the paper's formula (tau = 1e-4) to these vectors (passed as their logarithms, whose
softmax returns them), over the swaps the rule allows for that input.

Beside them, per head (means over inputs): ``entropy`` of the last-token attention over
model positions; ``sink`` = attention on position 0 (the first real token), because a head
parked on a sink barely moves under a swap of two other tokens, which inflates its scores;
frequency use as ``training.analysis.frequency`` defines it, per head: the plane terms of the
top logit among the real positions, ``weighted_id`` and ``dominant_id`` (1 = fastest plane).
"""

from __future__ import annotations

import numpy as np
import torch

from theory.scores import DEFAULT_TAU, attention_entropy, head_scores, softmax

from .frequency import WEIGHT_DEFINITION, id_frequency, table_frequency, weighted_id
from .llm_inputs import equal_length_pairs

__all__ = ["swap_sources", "input_scores", "analyse_mapped", "summarise"]


def swap_sources(length: int, spans, pairs) -> np.ndarray:
    """(P, T) int: after swap p, model position j holds the content of position [p, j]
    (the two task tokens' spans exchanged position by position; equal lengths)."""
    spans = np.asarray(spans)
    sources = np.tile(np.arange(length), (len(pairs), 1))
    for row, (a, b) in enumerate(pairs):
        (a0, a1), (b0, b1) = spans[a], spans[b]
        sources[row, a0:a1], sources[row, b0:b1] = np.arange(b0, b1), np.arange(a0, a1)
    return sources


def _membership(length: int, spans) -> np.ndarray:
    """(T, n_task + 1): 1 where a model position belongs to a task token; last column: the rest."""
    member = np.zeros((length, len(spans) + 1))
    member[:, -1] = 1.0
    for token, (start, stop) in enumerate(np.asarray(spans)):
        member[start:stop, token], member[start:stop, -1] = 1.0, 0.0
    return member


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def input_scores(cross: np.ndarray, spans, tau: float = DEFAULT_TAU) -> dict:
    """One input's scores from its cross matrices (L, H, T, T) over its real positions only:
    arrays (L, H) and the number of swaps used (NaN scores when none is allowed)."""
    length = cross.shape[-1]
    base = np.diagonal(cross, axis1=-2, axis2=-1)  # (L, H, T)
    attention = softmax(base)
    out = {"entropy": attention_entropy(base), "sink": attention[..., 0]}
    pairs = equal_length_pairs(spans)
    out["swaps"] = len(pairs)
    if not len(pairs):
        out["positional"] = out["symbolic"] = np.full(base.shape[:2], np.nan)
        return out
    sources = swap_sources(length, spans, pairs)
    swapped = cross[..., sources, np.arange(length)]  # (L, H, P, T): content sources[p, j] at position j
    member = _membership(length, spans)
    task_level, swapped_level = attention @ member, softmax(swapped) @ member
    out["positional"], out["symbolic"] = head_scores(_log(task_level), _log(swapped_level), pairs, tau)
    return out


def _top_plane_terms(adapter, layer: int, hidden, pad: np.ndarray) -> np.ndarray:
    """(B, H, planes): per input and head the plane terms of the top logit among the real
    positions (``training.analysis.frequency.top_logit_planes`` with the padding masked)."""
    terms, rest = adapter.plane_terms(layer, hidden)  # (B, H, T, planes), (B, H, T)
    logits = terms.sum(-1) + rest
    padding = np.arange(logits.shape[-1])[None, :] < pad[:, None]  # (B, T)
    logits = np.where(padding[:, None, :], -np.inf, logits)
    top = logits.argmax(-1)
    return np.take_along_axis(terms, top[..., None, None], axis=-2)[..., 0, :]


def analyse_batch(adapter, batch, tau: float = DEFAULT_TAU) -> tuple[list, np.ndarray]:
    """Per input of one batch (``llm_inputs.MappedInputs``): its ``input_scores``; and the
    frequency terms (L, B, H, planes)."""
    hidden = adapter.hidden_states(batch.ids, batch.attention_mask)
    crosses = adapter.crosses(
        [adapter.last_query_keys(layer, h) for layer, h in enumerate(hidden)]
    )  # (L, B, H, T, T)
    terms = np.stack([_top_plane_terms(adapter, layer, h, batch.pad) for layer, h in enumerate(hidden)])
    return [
        input_scores(crosses[:, i, :, p:, p:], batch.spans[i], tau) for i, p in enumerate(batch.pad)
    ], terms


def analyse_mapped(adapter, mapped, batch_size: int, tau: float = DEFAULT_TAU, bar=None) -> dict:
    """Every input of ``mapped`` in batches: per-input arrays (B, L, H) and frequency terms."""
    per_input, terms = [], []
    with torch.no_grad():
        for start in range(0, len(mapped), batch_size):
            batch = mapped.rows(start, min(start + batch_size, len(mapped)))
            scores, batch_terms = analyse_batch(adapter, batch, tau)
            per_input += scores
            terms.append(batch_terms)
            if bar is not None:
                bar.update(len(batch))
    out = {
        key: np.stack([s[key] for s in per_input]) for key in ("positional", "symbolic", "entropy", "sink")
    }
    out["swaps"] = np.array([s["swaps"] for s in per_input])
    out["terms"] = np.concatenate(terms, axis=1)  # (L, B, H, planes)
    return out


def _frequency(terms: np.ndarray, adapter) -> dict:
    """Per head (L, H): frequency use of ``training.analysis.frequency`` from the top-logit
    plane terms of every input (L, B, H, planes).  An adapter whose layers have their own RoPE
    base (``layer_base``, Gemma 3) reports each layer in its own base: ``base`` is None and
    ``layer_base``, ``layer_kind`` and ``dominant_angle`` (radians per position of the dominant
    plane) are added, so plane IDs and angles of layers with different bases can be compared
    (``frequency_interpolated`` is the angle per position at the weighted ID).  A length-scaled
    RoPE (``rope_type`` linear or llama3) adds ``rope_type`` and ``dominant_angle``, and its
    ``frequency_interpolated`` is read off the scaled table (``frequency.table_frequency``)."""
    weights = np.clip(terms, 0, None).mean(1)  # (L, H, planes)
    ids = [[weighted_id(w) for w in layer] for layer in weights]
    dominant = weights.argmax(-1) + 1  # (L, H)
    per_layer = hasattr(adapter, "layer_base")
    scaled = getattr(adapter, "rope_type", "default") not in ("default", "dynamic")  # rope_scaling module doc
    layers = range(len(weights))
    bases = [
        float(adapter.layer_base(layer)) if per_layer else float(getattr(adapter, "base", 10000.0))
        for layer in layers
    ]
    definition = WEIGHT_DEFINITION + "; per head, top logit among real positions"
    if scaled:  # the scaled planes are not base^(-2 (ID - 1) / d): read the angles off the table
        interpolated = [
            [None if i is None else table_frequency(i, adapter.layer_angles(layer)) for i in ids[layer]]
            for layer in layers
        ]
        definition += (
            f"; rope_type {adapter.rope_type}: frequency_interpolated between the scaled planes' angles"
        )
    else:
        interpolated = [
            [None if i is None else id_frequency(i, adapter.rotary_dim, base) for i in row]
            for row, base in zip(ids, bases)
        ]
    out = {
        "definition": definition + ("; per layer in its own base (layer_base)" if per_layer else ""),
        "base": None if per_layer else bases[0],
        "weights": weights.tolist(),
        "weighted_id": ids,
        "frequency_interpolated": interpolated,
        "dominant_id": dominant.tolist(),
    }
    if scaled:
        out["rope_type"] = adapter.rope_type
    if per_layer:
        out["layer_base"] = bases
        out["layer_kind"] = [adapter.layer_kind(layer) for layer in layers]
    if per_layer or scaled:
        out["dominant_angle"] = [
            [float(adapter.layer_angles(layer)[d - 1]) for d in dominant[layer]] for layer in layers
        ]
    return out


def summarise(adapter, raw: dict, n_task: int) -> dict:
    """The JSON block of the per-head results: means over inputs, (L, H) lists (``n_task``:
    task tokens per input, the query included)."""

    def mean(key):
        return np.nanmean(raw[key], axis=0).tolist()

    swaps = raw["swaps"]
    return {
        "layers": adapter.n_layers,
        "heads": adapter.n_heads,
        "swaps": {
            "possible": (n_task - 1) * (n_task - 2) // 2,
            "used_mean": float(swaps.mean()),
            "used_min": int(swaps.min()),
            "used_max": int(swaps.max()),
            "inputs_without_swaps": int((swaps == 0).sum()),
        },
        "per_head": {
            "positional": mean("positional"),
            "symbolic": mean("symbolic"),
            "entropy": mean("entropy"),
            "sink": mean("sink"),
        },
        "frequency": _frequency(raw["terms"], adapter),
    }
