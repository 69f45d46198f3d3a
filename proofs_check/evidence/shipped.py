"""The shipped result files the claims read: their shapes, and the one reader.

Every JSON file a claim reads goes through ``theory.io.inputs.load_json`` with the shape below
that says what the claim uses of it, so a damaged or hand-edited file (truncated, nested a
thousand levels deep, a string where a number was written) is an ``InputError`` naming the
file and the field, never a ``KeyError`` or ``RecursionError`` deep inside a check.  The
runner (``proofs_check.runner``) reports it as that claim's error, in one line, and goes on
with the other claims.  Only the fields a claim reads are checked: the files carry more.
"""

from __future__ import annotations

from theory.io.inputs import ANY, InputError, Nullable, load_json

__all__ = [
    "InputError",
    "read",
    "STUDY_SUMMARY",
    "BASELINE_BREAKS",
    "ANALYSIS",
    "LENGTH_CURVE",
    "LLM_RESULTS",
    "LLM_HEADS",
    "DILUTION",
]

NUM = Nullable(float)  # a measured value; null where it was not measured (or never happened)
SEED_VALUES = {"*": NUM}  # {seed: value}

# -- a study's summary.json (training.studies.collect) -------------------------------------------
LENGTH_BLOCK = {"lengths": [int], "accuracy": [{"values": SEED_VALUES}], "n_per_length?": {"*": [int]}}
TASK_RESULT = {
    "length?": LENGTH_BLOCK,
    "rescaled?": LENGTH_BLOCK,
    "long?": LENGTH_BLOCK,
    "breaks?": {"measured": SEED_VALUES},
    "break_after_learning?": {"*": {"all": {"learned_at": NUM, "break": NUM}}},
}
STUDY_SUMMARY = {
    "results?": {"*": {"*": TASK_RESULT}},
    "variants?": dict,
    "long?": Nullable({"lengths?": [int]}),
    "members?": {"*": ANY},
}
# V-window reads the seed study's baseline breaks: they must be there
BASELINE_BREAKS = {"results": {"paper": {"letter": {"breaks": {"measured": SEED_VALUES}}}}}

# -- a study member's files (training.analysis) --------------------------------------------------
_PURITY = {"pure_from_step": [Nullable(int)], "count_instantaneous": [int]}
ANALYSIS = {
    "task": str,
    "steps": [int],
    "best_step": int,
    "layers": int,
    "validation": [{"step": int, "overall": float, "per_hop": {"*": float}}],
    "scores": {"positional": [[float]], "symbolic": [[float]]},
    "purity": {"0.1": _PURITY, "0.05": _PURITY},
    "frequency": {"weighted_id": [NUM], "weighted_id_max_per_plane?": [NUM], "definition?": str},
    "index_geometry": {
        "layer": int,
        "plane_id": Nullable(int),
        "frequency": NUM,
        "key_collapse": NUM,
        "query_alignment": NUM,
        "query_spread": NUM,
    },  # null: no rotary plane (NoPE)
    "index_geometry_layers?": [dict],
}
LENGTH_CURVE = {
    "task": str,
    "lengths": [int],
    "accuracy": [float],
    "per_hop?": {"*": [NUM]},
    "n_per_length": [int],
}
DILUTION = {
    "breaks": {
        "measured": NUM,
        "last_length": float,
        "predicted": {"lemma": {"break": NUM}, "mass": {"break": NUM}, "relative": {"break": NUM}},
    }
}

# -- the pretrained LLM's files (python -m training llm / analyze --model) ---------------------------
LLM_RESULTS = {
    "seeds": [int],
    "per_length": [{"length": int, "per_seed": [NUM], "parse_rate?": NUM}],
    "model?": Nullable(str),
    "summary?": {"parse_rate?": NUM},
    "settings?": {"backend?": {"chat_template?": Nullable(bool)}},  # the prompts' wrapping, as run
}
_GRID = [[NUM]]  # layers x heads
LLM_HEADS = {
    "per_head": {"positional": _GRID, "symbolic": _GRID, "sink": _GRID},
    "frequency": {"dominant_id": _GRID, "weighted_id": _GRID},
    "model?": ANY,
}


def read(path, shape):
    """The JSON at ``path``, checked against ``shape``; InputError naming the file and field."""
    return load_json(path, shape)
