"""The model's configuration: the paper's GPT-J fields (HF ``GPTJConfig`` names) and the RoPE
variant fields HF GPT-J lacks, with their checks and the conversions to and from HF's and our
own ``config.json`` (``to_hf_dict``, ``from_hf_dict``, ``to_config_dict``).  Kept apart from
``gptj.py`` so the model file reads as the forward pass alone."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from .layers import QUERY_SCALES

__all__ = ["ModelConfig", "VARIANT_FIELDS"]

VARIANT_FIELDS = ("rope_base", "nope_from_layer", "rope_fraction", "query_scale")  # what HF GPT-J lacks


@dataclass
class ModelConfig:
    """Every number of the model.  Defaults are the paper's (Appendix C.2)."""

    vocab_size: int = 136  # number task; the letter task has 128
    n_layer: int = 12
    n_head: int = 1
    n_embd: int = 128
    rotary_dim: int = 128  # rotary on all head dims: 64 frequencies
    n_inner: int = 512
    n_positions: int = 8192  # only written to config.json: lets HF evaluate 5,000+ tokens
    rope_base: float = 10000.0  # HF GPT-J hard-codes 10000; see to_hf_dict
    embd_pdrop: float = 0.1
    attn_pdrop: float = 0.1
    resid_pdrop: float = 0.1
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    # Variants of the paper's RoPE, each off by default (the paper's model).  One reason each:
    nope_from_layer: int | None = (
        None  # rotary off in layers >= L: do the late, symbolic layers need position?
    )
    rope_fraction: float = (
        1.0  # p-RoPE: only the fastest fraction of planes rotate, the rest carry content only
    )
    query_scale: str = (
        "none"  # "log" | "learned": logits of query i grow like log(i+1), against softmax dilution
    )

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")
        head_dim = self.n_embd // self.n_head
        if self.rotary_dim % 2 or not 2 <= self.rotary_dim <= head_dim:
            raise ValueError(
                f"rotary_dim must be even and in [2, head_dim={head_dim}], got {self.rotary_dim}"
            )
        if self.nope_from_layer is not None and not 0 <= self.nope_from_layer <= self.n_layer:
            raise ValueError(
                f"nope_from_layer must be in [0, n_layer={self.n_layer}] or null, got {self.nope_from_layer}"
            )
        if not 0 <= self.rope_fraction <= 1:
            raise ValueError(f"rope_fraction must be in [0, 1], got {self.rope_fraction}")
        if self.query_scale not in QUERY_SCALES:
            raise ValueError(
                f"query_scale must be one of {', '.join(QUERY_SCALES)}, got {self.query_scale!r}"
            )

    def variant(self) -> dict:
        """The settings HF GPT-J cannot represent, where they differ from the paper's model."""
        paper = ModelConfig()
        return {k: getattr(self, k) for k in VARIANT_FIELDS if getattr(self, k) != getattr(paper, k)}

    def to_config_dict(self) -> dict:
        """What a run's ``config.json`` holds: HF GPT-J's config for the paper's model; for a
        variant, model_type ``rope_heads_gptj`` with the variant's settings, which
        ``from_hf_dict`` (our loader) reads and HF's ``AutoConfig`` refuses as unknown."""
        variant = self.variant()
        if not variant:
            return self.to_hf_dict()
        return {
            **self._gptj_fields(),
            "model_type": "rope_heads_gptj",
            "architectures": ["RopeHeadsGPTJ"],
            "rope_heads_variant": variant,
        }

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_hf_dict(self) -> dict:
        """The ``config.json`` that ``transformers.GPTJConfig`` reads (model_type ``gptj``)."""
        variant = self.variant()
        if variant:
            # HF's create_sinusoidal_positions has base 10000 built in and HF has none of the
            # other variants: exporting would silently give a different model in HF, so refuse.
            raise ValueError(
                f"HF GPT-J cannot represent this model ({', '.join(f'{k}={v}' for k, v in variant.items())}); "
                f"load it with training.run.checkpoints.load_model"
            )
        return self._gptj_fields()

    def _gptj_fields(self) -> dict:
        return {
            "model_type": "gptj",
            "architectures": ["GPTJForCausalLM"],
            "vocab_size": self.vocab_size,
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_embd": self.n_embd,
            "rotary_dim": self.rotary_dim,
            "n_inner": self.n_inner,
            "n_positions": self.n_positions,
            "activation_function": "gelu_new",
            "embd_pdrop": self.embd_pdrop,
            "attn_pdrop": self.attn_pdrop,
            "resid_pdrop": self.resid_pdrop,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
            "tie_word_embeddings": False,
            "bos_token_id": None,
            "eos_token_id": None,
            "dtype": "float32",
        }

    @classmethod
    def from_hf_dict(cls, d: dict) -> ModelConfig:
        """Read a GPT-J ``config.json`` (ours, one HF wrote, or a variant's from
        ``to_config_dict``); refuse what we cannot represent."""
        if d.get("model_type") not in ("gptj", "rope_heads_gptj"):
            raise ValueError(
                f"model_type must be 'gptj' (or 'rope_heads_gptj' for a variant), got {d.get('model_type')!r}"
            )
        variant = d.get("rope_heads_variant", {}) if d["model_type"] == "rope_heads_gptj" else {}
        if not isinstance(variant, dict):
            raise ValueError(f"rope_heads_variant must be an object, got {variant!r}")
        if d.get("activation_function", "gelu_new") != "gelu_new":
            raise ValueError(
                f"only activation_function 'gelu_new' is supported, got {d['activation_function']!r}"
            )
        if d.get("tie_word_embeddings", False):
            raise ValueError("tied word embeddings are not supported (the paper's model is untied)")
        n_embd = int(d["n_embd"])
        n_head = int(d["n_head"])
        n_inner = d.get("n_inner")
        rotary_dim = d.get("rotary_dim")
        names = {f.name for f in fields(cls)}
        kwargs = {k: d[k] for k in names if k in d and k not in ("n_inner", "rotary_dim", "rope_base")}
        unknown = sorted(set(variant) - set(VARIANT_FIELDS))
        if unknown:
            raise ValueError(f"unknown rope_heads_variant field(s) {', '.join(unknown)}")
        kwargs.update(variant)
        kwargs["n_inner"] = 4 * n_embd if n_inner is None else int(n_inner)
        # HF: rotary_dim None means rotary on the whole head
        kwargs["rotary_dim"] = n_embd // n_head if rotary_dim is None else int(rotary_dim)
        return cls(**kwargs)

    def to_dict(self) -> dict:
        return asdict(self)
