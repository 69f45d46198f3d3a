"""Loading a pretrained model for the head analysis: one path for ``analyze --model``
(``llm_cli``) and the Python API (``training.api``), so both analyse the same model.

Order: the path's rules (``training.llm.local_model.model_source``), then the model's family
read from the file itself (``config.json``'s ``model_type``, or a GGUF header's
``general.architecture``), refused in one line unless ``adapters.HF_FAMILIES`` has it; only
then the weights load (a GGUF conversion takes minutes), through ``local_model.load_local``
with sdpa attention (the adapters recompute every logit themselves), cast to the asked dtype.
"""

from __future__ import annotations

from pathlib import Path

from theory.io.inputs import ANY, load_json
from training.llm import local_model

from .adapters import GGUF_ARCHITECTURES, check_family
from .llm_analysis import DTYPES

__all__ = ["source_model_type", "check_source", "load_for_analysis"]


def source_model_type(path) -> str:
    """The HF ``model_type`` of an HF folder or a GGUF file, read without loading weights;
    ValueError (one line) when the file names none."""
    folder, extra = local_model.model_source(path)
    if "gguf_file" not in extra:
        config = load_json(Path(folder) / "config.json", {"*": ANY}, "--model")
        if not isinstance(config.get("model_type"), str):
            raise ValueError(f"--model: {str(path)!r}: config.json names no model_type")
        return config["model_type"]
    architecture = _gguf_architecture(Path(folder) / extra["gguf_file"])
    return GGUF_ARCHITECTURES.get(architecture, architecture)


def _gguf_architecture(path: Path) -> str:
    """``general.architecture`` of a GGUF file (the header only: gguf memory-maps the file)."""
    try:
        from gguf import GGUFReader
    except ImportError:
        raise ValueError(
            f"--model: reading a GGUF file ({str(path)!r}) needs the 'gguf' package: "
            "pip install 'rope-heads[llm]'"
        ) from None
    try:
        field = GGUFReader(path).fields["general.architecture"]
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    except KeyError:
        raise ValueError(f"--model: {str(path)!r}: the GGUF header names no general.architecture") from None
    except (OSError, ValueError, IndexError, UnicodeDecodeError) as error:
        raise ValueError(
            f"--model: {str(path)!r} is not a readable GGUF file: {str(error).splitlines()[0]}"
        ) from None


def check_source(path) -> None:
    """ValueError (one line) for a path that is not a model, or a model of a family the
    analysis does not read, before anything loads."""
    check_family(source_model_type(path), f"--model {path}")


def load_for_analysis(path, dtype: str = "float32", progress: bool = False):
    """(model, tokenizer) of ``path`` for the analysis, checked (``check_source``) before it
    loads.  Errors: ValueError (one line) from the checks; transformers' own while loading.
    Settings a family's adapter refuses (a RoPE type, say) are ``adapter_for``'s to say."""
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    check_source(path)
    # loaded as stored, then cast: a GGUF checkpoint keeps its packed float32 kernels, and
    # the analysis asks float32 or float64 of every tensor it reads
    model, tokenizer = local_model.load_local(path, attn_implementation="sdpa", progress=progress)
    return model.to(getattr(torch, dtype)), tokenizer
