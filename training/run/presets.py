"""Training presets: the paper's recipe (Appendix C.2) and a tiny smoke run for tests.

Choices the paper leaves open follow the HF ``Trainer`` defaults it most likely
used (labels -100, "linear schedule with warm-up"): AdamW eps 1e-8, gradient
clipping at norm 1.0, no weight decay on biases and LayerNorm parameters, and the
``get_linear_schedule_with_warmup`` shape (lr 0 at the first update, peak after
``warmup_steps``, linear to 0 at ``steps``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Preset", "PRESETS", "get_preset", "EXTRA_TARGET_MAX_LIMIT"]

# The most extra target-window tokens a training batch may get (``data.extra_target_max``):
# training sequences of at most 5,000 tokens, the longest length the length sweep evaluates
# (training.analysis.evaluate.DEFAULT_LENGTHS) -- training beyond it cannot test extrapolation.
EXTRA_TARGET_MAX_LIMIT = 5000 - 17


@dataclass(frozen=True)
class Preset:
    name: str
    steps: int
    batch_size: int
    lr: float
    warmup_steps: int
    eval_every: int
    checkpoint_every: int
    log_every: int
    betas: tuple = (0.95, 0.999)
    weight_decay: float = 1e-4
    grad_clip: float = 1.0
    model: dict = field(default_factory=dict)  # ModelConfig overrides (vocab_size comes from the task)
    # "paper": training.tasks.datasets.paper_splits (432,000 / 2,400); "generated": fresh small splits
    data: str = "paper"
    train_count: int = 0
    validation_count: int = 0
    eval_batch_size: int = 600
    # 0: the data as given.  K > 0: each training batch gets K' ~ uniform{0..K} extra target-window
    # symbols (Task.extend) before every row, drawn from (seed, step); validation stays 17 tokens.
    extra_target_max: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["betas"] = list(self.betas)
        return d


PRESETS = {
    "paper": Preset(
        name="paper",
        steps=6000,
        batch_size=64,
        lr=1e-4,
        warmup_steps=750,
        eval_every=500,
        checkpoint_every=500,
        log_every=50,
    ),
    # Two layers of width 32 on 4,096 generated sequences, every code path of the paper
    # preset: the full 3,000 steps take under a minute on one CPU core (letter task:
    # validation accuracy ~0.78, 1-hop ~0.98); tests run --steps 20 in about a second.
    "smoke": Preset(
        name="smoke",
        steps=3000,
        batch_size=32,
        lr=3e-3,
        warmup_steps=100,
        eval_every=100,
        checkpoint_every=100,
        log_every=10,
        model=dict(n_layer=2, n_embd=32, rotary_dim=32, n_inner=64),
        data="generated",
        train_count=4096,
        validation_count=256,
        eval_batch_size=256,
    ),
}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r} (expected {' or '.join(PRESETS)})")
    return PRESETS[name]
