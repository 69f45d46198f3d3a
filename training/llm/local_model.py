"""Where a local model for the hf backend comes from: an HF causal-LM folder or a GGUF file.

``training.analysis`` (the pretrained-LLM head analysis) reads models through
``model_source`` too, so the rule and its messages exist once.  Loading
never reaches the network: ``local_files_only`` and ``HF_HUB_OFFLINE``.  A GGUF file
needs the ``gguf`` package (the ``[llm]`` extra); transformers de-quantises it into
float32 weights, and its tokenizer (with its chat template) is read from the same file.
That conversion is slow (minutes for a few hundred MB), so it is done once into a cached HF
folder keyed by the file's sha256 and loaded from there afterwards (``training.llm.hf_cache``:
a damaged folder is rebuilt, a full disk is one line; ``ROPE_HEADS_NO_CACHE=1`` or
``cache=False`` reads the GGUF directly).
"""

from __future__ import annotations

import contextlib
import io
import os
from functools import partial
from pathlib import Path

from theory.io.inputs import ANY, InputError, load_json

from . import hf_cache

__all__ = ["model_source", "load_local"]


def model_source(path) -> tuple[Path, dict]:
    """(folder, extra from_pretrained arguments) of an HF folder or a ``.gguf`` file;
    ValueError (one line, naming the value and what is allowed) for anything else."""
    path = Path(path)
    allowed = "allowed: a folder written by save_pretrained (config.json, weights, tokenizer) or a .gguf file"
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path.parent, {"gguf_file": path.name}
    if path.is_dir():
        if not (path / "config.json").is_file():
            # without this, transformers blames a missing tokenizer library instead
            raise ValueError(
                f"--model: {str(path)!r} holds no config.json, so it is not a saved model; {allowed}"
            )
        try:  # read once through the package's JSON loader: a hostile config is one line naming it
            load_json(path / "config.json", {"*": ANY}, "--model")
        except InputError as bad:
            raise ValueError(f"{bad}; {allowed}") from None
        return path, {}
    if path.exists():
        raise ValueError(f"--model: {str(path)!r} is neither a model folder nor a .gguf file; {allowed}")
    raise ValueError(f"--model: {str(path)!r} does not exist (nothing is downloaded); {allowed}")


def load_local(
    path,
    *,
    device: str = "cpu",
    dtype: str = "auto",
    attn_implementation: str | None = None,
    progress: bool = False,
    cache: bool = True,
):
    """(model in eval mode on ``device``, tokenizer) from ``path``, offline.  ``dtype``: auto or a
    torch dtype name; ``attn_implementation``: transformers' (eager, sdpa; None: its default).
    transformers' bars, the de-quantisation one included (a bare tqdm no switch reaches), show
    only with ``progress``.  ``cache``: a GGUF file is read through its cached HF folder
    (module doc; also off when ``ROPE_HEADS_NO_CACHE`` is set).  Load failures are
    transformers' own errors, callers word them; ``hf_cache.CacheError`` (a full disk while
    converting) is a ValueError already worded as one line from "--model:"."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when huggingface_hub is first imported
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    folder, extra = model_source(path)
    if "gguf_file" in extra:
        try:
            import gguf  # noqa: F401  (transformers needs it; say so in one line)
        except ImportError:
            raise ValueError(
                f"--model: reading a GGUF file ({str(path)!r}) needs the 'gguf' package: "
                "pip install 'rope-heads[llm]'"
            ) from None
    if not progress:
        hf_logging.disable_progress_bar()
    options = dict(local_files_only=True)
    if attn_implementation is not None:
        options["attn_implementation"] = attn_implementation
    torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)

    def load(folder, **extra):
        tokenizer = _quietly(progress, AutoTokenizer.from_pretrained, folder, **options, **extra)
        model = _quietly(
            progress, AutoModelForCausalLM.from_pretrained, folder, dtype=torch_dtype, **options, **extra
        )
        return model, tokenizer

    if "gguf_file" in extra and cache and hf_cache.cache_enabled():
        convert = partial(_quietly, progress, hf_cache.convert_gguf)
        model, tokenizer = hf_cache.load_cached(path, load, convert=convert, announce=progress)
    else:
        model, tokenizer = load(folder, **extra)
    return model.to(device).eval(), tokenizer


def _quietly(progress: bool, run, *args, **kwargs):
    """``run(*args, **kwargs)`` with transformers' bars and warnings on stderr only when ``progress``."""
    with contextlib.nullcontext() if progress else contextlib.redirect_stderr(io.StringIO()):
        return run(*args, **kwargs)
