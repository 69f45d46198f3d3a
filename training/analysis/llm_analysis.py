"""``python -m training analyze --model PATH``: load a pretrained RoPE causal LM (an HF folder
or a GGUF file), run ``training.analysis.llm_scores`` on the task's inputs, build the JSON.

Loading (``training.llm.local_model.load_local``, the one local-model loader) never reaches
the network (``local_files_only``).  A GGUF file needs the ``[llm]``
extra (``gguf``; transformers de-quantises it into float32 weights); an HF folder needs
``config.json``, weights and a tokenizer.  The LM head is never run (``hf_adapters`` runs
the base model), so only the layers' inputs are computed.

JSON: model, family, dtype, task, n_inputs, seed, tau, inputs, swap_rule, model_tokens
{min, max, pieces}, layers, heads, swaps {possible, used_mean, used_min, used_max,
inputs_without_swaps}, per_head {positional, symbolic, entropy, sink: [layer][head]},
frequency {definition, base, weights [layer][head][plane], weighted_id, frequency_interpolated,
dominant_id; where layers have their own RoPE base (Gemma 3): base null and layer_base [layer],
layer_kind [layer] ("sliding"/"full"), dominant_angle [layer][head] (radians per position); with a
length-scaled RoPE (linear, llama3): rope_type and dominant_angle}, seconds.
"""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from theory.scores import DEFAULT_TAU
from training.tasks.definitions import get_task

from .adapters import adapter_for
from .llm_inputs import SWAP_RULE, map_inputs, pad_id_of, prefix_ids, token_pieces
from .llm_scores import analyse_mapped, summarise
from .scores import SCORE_SEED, score_inputs

__all__ = ["DTYPES", "analyse_llm", "head_table"]

DTYPES = ("float32", "float64")


def analyse_llm(
    model,
    tokenizer,
    task,
    n_inputs: int = 100,
    seed: int = SCORE_SEED,
    batch_size: int = 16,
    tau: float = DEFAULT_TAU,
    progress: bool = True,
    name: str = "",
) -> dict:
    """The analysis JSON object (module doc) of a loaded model."""
    started = time.perf_counter()
    task = get_task(task)
    adapter = adapter_for(model)
    pieces = token_pieces(tokenizer, task.vocab)
    mapped = map_inputs(
        task.decode(score_inputs(task, n_inputs, seed).inputs),
        pieces,
        prefix_ids(tokenizer),
        pad_id_of(tokenizer),
    )
    lengths = mapped.attention_mask.sum(1)
    with tqdm(
        total=len(mapped),
        disable=not progress,
        dynamic_ncols=True,
        unit="input",
        desc=f"scores {task.name} ({adapter.n_layers} layers)",
    ) as bar:
        raw = analyse_mapped(adapter, mapped, batch_size, tau, bar)
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    result = {
        "model": name,
        "family": adapter.family,
        "dtype": dtype,
        "task": task.name,
        "n_inputs": n_inputs,
        "seed": seed,
        "tau": tau,
        "inputs": f"Task.generate({n_inputs}, seed={seed}) (balanced, equal hop shares)",
        "swap_rule": SWAP_RULE,
        "model_tokens": {
            "min": int(lengths.min()),
            "max": int(lengths.max()),
            "pieces": {t: len(p) for t, p in pieces.items()},
        },
        **summarise(adapter, raw, mapped.spans.shape[1]),
    }
    result["seconds"] = round(time.perf_counter() - started, 1)
    return _finite(result)


def _finite(value):
    """NaN (a head of an input without allowed swaps) becomes null: strict JSON."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def head_table(result: dict) -> str:
    """One line per head: the scores beside the sink share (a sink inflates the scores)."""
    head = result["per_head"]
    lines = [f"{'layer':>5} {'head':>4} {'s_POS':>7} {'s_SYM':>7} {'entropy':>7} {'sink':>6} {'freq_id':>7}"]
    for layer in range(result["layers"]):
        for h in range(result["heads"]):
            values = [head[k][layer][h] for k in ("positional", "symbolic", "entropy", "sink")]
            fid = result["frequency"]["weighted_id"][layer][h]
            cells = ["    nan" if v is None else f"{v:7.4f}" for v in values[:3]]
            lines.append(
                f"{layer:5d} {h:4d} {' '.join(cells)} {values[3]:6.3f} "
                f"{'   none' if fid is None else f'{fid:7.2f}'}"
            )
    return "\n".join(lines)
