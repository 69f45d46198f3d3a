"""The Python API of the head analysis: score every attention head of a pretrained RoPE LLM.

    from training.api import analyze_heads, load_model

    model = load_model("path/to/hf-folder")   # or a .gguf file, or an HF model already in memory
    heads = analyze_heads(model, task="number", n_inputs=100)
    heads.to_dataframe()                      # one row per head (needs pandas)

The numbers are those of ``python -m training analyze --model PATH --task T`` (tested equal):
the same loader (``training.analysis.llm_load``: the model's family is checked before anything
loads, files load as float32 by default) and the same analysis
(``training.analysis.llm_analysis.analyse_llm``, whose JSON is kept as ``heads.analysis``).
Each head is one ``HeadRecord``; its class follows ``training.analysis.head_classes`` (the rule
of claim C11-llm).  The analysis measures attention only: it runs no task, so there is no task
accuracy here (``python -m training llm`` measures that).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Any

from training.analysis.adapters import adapter_for, supported_families
from training.analysis.head_classes import classify_heads
from training.analysis.llm_analysis import DTYPES, analyse_llm
from training.analysis.llm_cli import DEFAULT_BATCH, MAX_LLM_BATCH
from training.analysis.llm_load import load_for_analysis
from training.analysis.scores import SCORE_SEED
from training.tasks.definitions import check_seed

__all__ = ["LoadedModel", "HeadRecord", "HeadResults", "load_model", "analyze_heads", "supported_families"]


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for ``analyze_heads``: the HF model, its tokenizer, a name for the
    results, and the adapter family that reads it (e.g. "hf-llama")."""

    model: Any
    tokenizer: Any
    name: str
    family: str


@dataclass(frozen=True)
class HeadRecord:
    """One attention head, means over the task's inputs.  NaN where nothing was measured
    (a score of a head no input allowed a swap for)."""

    layer: int
    head: int
    positional: float  # s_POS
    symbolic: float  # s_SYM
    head_class: str  # "positional", "symbolic", "mixed" or "sink" (training.analysis.head_classes)
    dominant_plane: int  # the RoPE plane carrying most of the top logit, 1 = fastest
    angle_per_token: float  # that plane's rotation per position, radians (the layer's own, scaled, table)
    layer_kind: str  # "full" or "sliding" (sliding-window attention)
    weighted_plane: float  # mean plane ID weighted by use (frequency.weighted_id)
    entropy: float  # of the last token's attention
    sink: float  # share of attention on the first token


class HeadResults(list):
    """``HeadRecord`` per head (layer by layer); ``analysis``: the full JSON object of
    ``analyse_llm`` (what ``analyze --model`` writes)."""

    def __init__(self, records, analysis: dict):
        super().__init__(records)
        self.analysis = analysis

    def to_dataframe(self):
        """A pandas DataFrame, one row per head, the columns ``HeadRecord``'s fields."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "HeadResults.to_dataframe needs pandas (pip install pandas); the records "
                "themselves are plain dataclasses"
            ) from None
        return pd.DataFrame([asdict(record) for record in self])


def load_model(source, tokenizer=None, dtype: str | None = None, progress: bool = False) -> LoadedModel:
    """``source``: a folder written by ``save_pretrained`` (config.json, weights, tokenizer), a
    ``.gguf`` file, or an HF causal LM already in memory.  ``tokenizer``: for a model in memory,
    else the one saved in its ``name_or_path`` folder.  ``dtype``: "float32" or "float64"; a
    file loads as float32 unless told (as the command), a model in memory is cast only when
    told (``.to`` changes it in place).  Nothing is downloaded.  A family the analysis does not
    read is refused with a ValueError before any weights load (``supported_families()``)."""
    if isinstance(source, LoadedModel):
        return source
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if isinstance(source, (str, os.PathLike)):
        model, saved_tokenizer = load_for_analysis(source, dtype or "float32", progress=progress)
        tokenizer, name = tokenizer or saved_tokenizer, str(source)
    else:
        model, name = source, str(getattr(source, "name_or_path", "") or type(source).__name__)
        adapter_for(model)  # an unsupported family: refused before the tokenizer is looked for
        tokenizer = tokenizer or _saved_tokenizer(model)
        if dtype is not None:
            import torch

            model = model.to(getattr(torch, dtype))
    return LoadedModel(model, tokenizer, name, adapter_for(model).family)


def _saved_tokenizer(model):
    """The tokenizer saved beside a model loaded from a local folder; ValueError otherwise."""
    folder = str(getattr(model, "name_or_path", "") or "")
    if not folder or not os.path.isdir(folder):
        raise ValueError(f"no tokenizer for {type(model).__name__}: pass tokenizer= (nothing is downloaded)")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def analyze_heads(
    model,
    task: str = "number",
    n_inputs: int = 100,
    seed: int = SCORE_SEED,
    batch_size: int = DEFAULT_BATCH,
    tokenizer=None,
    progress: bool = False,
) -> HeadResults:
    """Every head's scores on ``n_inputs`` inputs of ``task`` ("number" or "letter") drawn with
    ``seed``.  ``model``: a ``LoadedModel`` or anything ``load_model`` accepts."""
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, int) or n_inputs < 1:
        raise ValueError(f"n_inputs must be an int >= 1, got {n_inputs!r}")
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int)
        or not 1 <= batch_size <= MAX_LLM_BATCH
    ):
        raise ValueError(f"batch_size must be an int in 1..{MAX_LLM_BATCH}, got {batch_size!r}")
    check_seed(seed)
    loaded = load_model(model, tokenizer)
    analysis = analyse_llm(
        loaded.model,
        loaded.tokenizer,
        task,
        n_inputs=n_inputs,
        seed=seed,
        batch_size=batch_size,
        progress=progress,
        name=loaded.name,
    )
    return HeadResults(_records(analysis, adapter_for(loaded.model)), analysis)


def _records(analysis: dict, adapter) -> list[HeadRecord]:
    """The per-head lists of the analysis JSON as records (null -> NaN); each dominant plane's
    angle and each layer's kind from the adapter that produced them."""
    head, frequency, classes = analysis["per_head"], analysis["frequency"], classify_heads(analysis)

    def number(value):
        return math.nan if value is None else float(value)

    records = []
    for layer in range(analysis["layers"]):
        kind = adapter.layer_kind(layer) if hasattr(adapter, "layer_kind") else "full"
        for h in range(analysis["heads"]):
            plane = int(frequency["dominant_id"][layer][h])
            records.append(
                HeadRecord(
                    layer=layer,
                    head=h,
                    positional=number(head["positional"][layer][h]),
                    symbolic=number(head["symbolic"][layer][h]),
                    head_class=str(classes[layer][h]),
                    dominant_plane=plane,
                    angle_per_token=float(adapter.layer_angles(layer)[plane - 1]),
                    layer_kind=kind,
                    weighted_plane=number(frequency["weighted_id"][layer][h]),
                    entropy=number(head["entropy"][layer][h]),
                    sink=number(head["sink"][layer][h]),
                )
            )
    return records
