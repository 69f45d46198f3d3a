"""The model's building blocks that are not GPT-J's own arithmetic: fast dropout, the rotary
embedding (with p-RoPE's position-free planes) and the length-dependent query scale.

``training.model.gptj`` assembles them; each class says why it is written this way.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from theory.variant_theory import variant_angles

__all__ = ["Dropout", "Rotary", "QueryScale", "QUERY_SCALES", "TRAINING_LENGTH"]

QUERY_SCALES = ("none", "log", "learned")
TRAINING_LENGTH = 17  # the tasks' input length: the query scale is 1 at its last position


class Dropout(nn.Module):
    """``nn.Dropout`` with cheaper random numbers on CPU.

    torch's CPU generator costs about as much per float as per 64-bit word, and a
    paper-size training step draws ~3.5M dropout decisions: ``bernoulli_`` made
    dropout ~15% of a CPU step.  Here each 64-bit word gives four 16-bit uniforms,
    one decision each (2-3x faster).  The drop probability is rounded to a multiple
    of 2**-16 (0.1 -> 0.0999908) and kept units are scaled by 1 / P(keep), so the
    expectation is exactly preserved.  On other devices: ``F.dropout``.
    """

    def __init__(self, p: float):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if x.device.type != "cpu":
            return F.dropout(x, self.p, training=True)
        n = x.numel()
        words = torch.randint(-(2**63), 2**63 - 1, ((n + 3) // 4,), dtype=torch.int64)
        uniform16 = words.view(torch.int16)[:n].view(x.shape)  # each in [-32768, 32767]
        keep = round((1 - self.p) * 65536)
        return x * ((uniform16 < keep - 32768) * (65536 / keep)).to(x.dtype)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Rotary(nn.Module):
    """GPT-J rotary embedding with tables that grow on demand (any sequence length).

    An adjacent pair (x0, x1) = dims (2k, 2k+1) rotated by angle a is the complex
    product (x0 + i x1) * e^(i a): one complex multiply rotates all 64 planes,
    3-4x cheaper in a training step than GPT-J's rotate_every_two with cos/sin
    tables (identical result; tested against HF).

    Under ``torch.compile`` the same rotation is written in real arithmetic,
    ``(x0 cos a - x1 sin a, x0 sin a + x1 cos a)`` (``rotate(..., real=True)``): inductor generates
    no code for complex tensors, so the complex form ran as eager kernels with copies
    in and out of the fused code around it, while the real form fuses into that code.
    The two agree to float32 rounding (``tests/test_model.py``).
    """

    def __init__(self, rotary_dim: int, base: float, fraction: float = 1.0):
        super().__init__()
        # p-RoPE: the slowest planes get angle 0, i.e. no rotation at all (position-free)
        angles = variant_angles(rotary_dim, base, fraction)
        # float64 on CPU, never cast by model.to(dtype): the tables are built from it
        self.angles = torch.from_numpy(angles)
        self.rotary_dim = rotary_dim
        self._tables: dict = {}  # (device, complex dtype) -> e^(i position angle), (length, rotary_dim/2)

    def table(self, length: int, device, dtype) -> torch.Tensor:
        key = (str(device), dtype)
        cached = self._tables.get(key)
        if cached is None or cached.shape[0] < length:
            size = max(length, 64, 2 * (0 if cached is None else cached.shape[0]))
            phase = torch.arange(size, dtype=torch.float64)[:, None] * self.angles[None, :]
            cached = self._tables[key] = torch.polar(torch.ones_like(phase), phase).to(
                device=device, dtype=dtype
            )
        return cached[:length]

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Rotate ``x`` (B, H, T, head_dim): entry t sits at position ``start + t``."""
        return self.rotate(x, start, real=torch.compiler.is_compiling())

    def rotate(self, x: torch.Tensor, start: int = 0, real: bool = False) -> torch.Tensor:
        """``forward``'s rotation; ``real``: in real arithmetic, as compiled code runs it (class doc)."""
        r = self.rotary_dim
        # complex arithmetic exists for float32/64 only; half precision rotates in float32
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        cdtype = torch.complex128 if work == torch.float64 else torch.complex64
        cis = self.table(start + x.shape[-2], x.device, cdtype)[start:]
        pairs = x[..., :r].to(work).unflatten(-1, (r // 2, 2))
        if real:
            cos, sin = torch.view_as_real(cis).unbind(-1)  # each (T, r/2)
            x0, x1 = pairs.unbind(-1)
            rotated = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        else:
            rotated = torch.view_as_real(torch.view_as_complex(pairs.contiguous()) * cis)
        rotated = rotated.flatten(-2).to(x.dtype)
        return rotated if r == x.shape[-1] else torch.cat((rotated, x[..., r:]), dim=-1)


class QueryScale(nn.Module):
    """Length-scaled attention: the query at position i is multiplied by a factor that grows
    like log(i + 1), the log of the number of keys it sees.

    Why: Lemma F.1 (``constructions.temperature``) needs an inverse temperature
    beta >= ln((n - 1) Gamma / delta) / lambda, so even a head whose logit gap lambda does not
    shrink with n (a symbolic head) loses its hard choice once n is large, unless beta grows
    like log n: softmax dilution by the many inserted tokens.  Two forms:

    * ``log``: the fixed factor log(i + 1) / log(17), 1 at the last position of a training
      input (log-n scaling, Chiang & Cholak 2022);
    * ``learned``: s_h log(i + 1) with one learned scalar s_h per head, started at 1 / log(17)
      (Scalable-Softmax, Nakanishi 2025).

    Scaling the query scales that query's logits, so the factor acts before the softmax
    whatever attention kernel runs; ``none`` returns the query untouched.
    """

    def __init__(self, kind: str, n_head: int):
        super().__init__()
        if kind not in QUERY_SCALES:
            raise ValueError(f"query_scale must be one of {', '.join(QUERY_SCALES)}, got {kind!r}")
        self.kind = kind
        if kind == "learned":
            self.weight = nn.Parameter(torch.full((n_head,), 1 / math.log(TRAINING_LENGTH)))

    def factor(self, start: int, length: int, device, dtype) -> torch.Tensor:
        """(1 or H, length, 1): the factor of positions start .. start + length - 1."""
        growth = torch.log1p(torch.arange(start, start + length, device=device, dtype=torch.float64)).to(
            dtype
        )
        if self.kind == "log":
            return (growth / math.log(TRAINING_LENGTH))[None, :, None]
        return self.weight.to(dtype)[:, None, None] * growth[None, :, None]

    def forward(self, q: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Scale ``q`` (B, H, T, head_dim) whose entry t sits at position ``start + t``."""
        if self.kind == "none":
            return q
        return q * self.factor(start, q.shape[-2], q.device, q.dtype)

    def extra_repr(self) -> str:
        return f"kind={self.kind}"
