"""The class of a pretrained LLM's head from its per-head analysis (``llm_analysis``): the rule
of claim C11-llm (``proofs_check.claims.llm_heads``, which reads it from here) and of the
Python API's records (``training.api``).

A head whose mean attention on the first token exceeds ``SINK_LIMIT`` is "sink" (it barely
moves under a swap, which inflates its scores); of the rest, "positional" when s_POS >=
``SCORE_LIMIT`` > s_SYM, "symbolic" when s_SYM >= ``SCORE_LIMIT`` > s_POS, else "mixed" (both,
neither, or no score because no swap was allowed).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SINK_LIMIT", "SCORE_LIMIT", "HEAD_CLASSES", "classify_heads"]

SINK_LIMIT = 0.5
SCORE_LIMIT = 0.5
HEAD_CLASSES = ("positional", "symbolic", "mixed", "sink")


def classify_heads(analysis: dict) -> np.ndarray:
    """(layers, heads) array of 'sink', 'positional', 'symbolic' or 'mixed' (the module's rule)."""
    head = analysis["per_head"]
    positional, symbolic, sink = (
        np.array(head[key], dtype=float) for key in ("positional", "symbolic", "sink")
    )
    kinds = np.full(sink.shape, "mixed", dtype=object)  # NaN (null) scores compare False: mixed
    kinds[(positional >= SCORE_LIMIT) & (symbolic < SCORE_LIMIT)] = "positional"
    kinds[(symbolic >= SCORE_LIMIT) & (positional < SCORE_LIMIT)] = "symbolic"
    kinds[sink > SINK_LIMIT] = "sink"
    return kinds
