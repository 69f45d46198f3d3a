"""Training throughput of our GPT-J against ``transformers.GPTJForCausalLM``.

Both models get the paper configuration, the same initial weights, the same
batch (64 sequences of 17 input tokens + the answer) and the same AdamW.  They
compute the same loss, each the way its training code does:

* HF (the paper's recipe): 18 tokens in, ``labels`` = -100 except the answer, so
  HF's shifted cross-entropy scores the logits at the query position;
* ours: 17 tokens in, ``forward(last_only=True)``: the final block and the LM head
  run on the query position only, then one cross-entropy row per sequence.

Timing alternates between the two in the same process (rounds of k steps each),
so a slower or busier machine slows both alike; ``speedup_vs_hf`` is the ratio
of the median seconds per step over the rounds (robust to a burst of load).  Dropout is on
(train mode) for both, as in training.

Achieved GFLOP/s (``step_flops``): the matrix-multiply work of one training step divided by
its median time, against the float32 GEMM peak measured in the same run at the model's own
shape ((B T) x n_embd by n_embd x n_inner, 1088 x 128 by 128 x 512 for the paper) and at a
large square shape.  The count, per sequence of T = 17 tokens, forward (2 FLOPs per
multiply-add; backward counted as twice the forward, so a step is 3x forward x B):

* every block but the last: q, k, v, out projections 8 T d^2; attention scores and
  weighted values 4 T^2 d (the full T x T, as the kernel computes it); MLP 4 T d f;
* the last block, on the query position only (last_only): q and out 4 d^2, k and v
  4 T d^2, attention 4 T d, MLP 4 d f; the LM head 2 d V.

LayerNorm, GELU, softmax, rotary, dropout and AdamW are not counted (they are elementwise:
memory-bound, no FLOPs worth the name next to the GEMMs), so the ratio to peak is how
close the step comes to being pure matrix multiplication.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from training.model.gptj import GPTJ, ModelConfig
from training.run.memory import check_memory
from training.run.step import make_optimizer

__all__ = ["run_bench", "check_bench_memory", "step_flops", "gemm_gflops"]


def step_flops(config: ModelConfig, batch_size: int, tokens: int = 17) -> float:
    """Matmul FLOPs of one training step of ours (module doc: the formula)."""
    T, d, f, V, L = tokens, config.n_embd, config.n_inner, config.vocab_size, config.n_layer
    full_block = 8 * T * d * d + 4 * T * T * d + 4 * T * d * f
    last_block = 4 * d * d + 4 * T * d * d + 4 * T * d + 4 * d * f
    forward = (L - 1) * full_block + last_block + 2 * d * V
    return 3.0 * forward * batch_size


def gemm_gflops(m: int, k: int, n: int, device: str = "cpu", seconds: float = 0.5) -> float:
    """float32 GFLOP/s of an (m x k) @ (k x n) product, the median of repeated timings."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(device)
    b = torch.randn(k, n, generator=g).to(device)
    out = torch.empty(m, n, device=device)
    reps = max(1, int(2e8 / (m * k * n)))  # about 0.4 GFLOP per timing
    timings = []
    deadline = time.perf_counter() + seconds
    while len(timings) < 5 or time.perf_counter() < deadline:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        timings.append((time.perf_counter() - start) / reps)
    return 2.0 * m * k * n / statistics.median(timings) / 1e9


def _hf_model(config: ModelConfig):
    from transformers import GPTJConfig, GPTJForCausalLM

    hf_dict = {k: v for k, v in config.to_hf_dict().items() if k != "model_type"}
    return GPTJForCausalLM(GPTJConfig(**hf_dict))


def check_bench_memory(batch_size: int, device: str = "cpu", vocab_size: int = 136) -> int:
    """RunError before any allocation when the two models' steps (ours, HF's; 18 tokens) need
    more memory than ``device`` has: the estimate ``train`` uses too (memory.check_memory)."""
    return check_memory(
        ModelConfig(vocab_size=vocab_size), batch_size, 18, device, f"--batch-size {batch_size}", copies=2
    )


def run_bench(
    rounds: int = 7,
    steps_per_round: int = 5,
    batch_size: int = 64,
    device: str = "cpu",
    vocab_size: int = 136,
    seed: int = 0,
) -> dict:
    check_bench_memory(batch_size, device, vocab_size)
    torch.manual_seed(seed)
    config = ModelConfig(vocab_size=vocab_size)
    ours = GPTJ(config).to(device).train()
    theirs = _hf_model(config).to(device).train()
    theirs.load_state_dict(ours.state_dict())
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab_size, (batch_size, 18), generator=g).to(device)
    inputs, answers = tokens[:, :17], tokens[:, 17]
    labels = torch.full_like(tokens, -100)
    labels[:, 17] = answers

    # same loss value from both formulations (eval mode: no dropout)
    ours.eval(), theirs.eval()
    with torch.no_grad():
        loss_ours = F.cross_entropy(ours(inputs, last_only=True), answers).item()
        loss_theirs = theirs(tokens, labels=labels).loss.item()
    ours.train(), theirs.train()

    opt_ours, opt_theirs = (
        make_optimizer(ours, 1e-4, (0.95, 0.999), 1e-4),
        make_optimizer(theirs, 1e-4, (0.95, 0.999), 1e-4),
    )

    def step_ours():
        loss = F.cross_entropy(ours(inputs, last_only=True), answers)
        loss.backward()
        opt_ours.step()
        opt_ours.zero_grad(set_to_none=True)

    def step_theirs():
        loss = theirs(tokens, labels=labels).loss
        loss.backward()
        opt_theirs.step()
        opt_theirs.zero_grad(set_to_none=True)

    def timed(step, k):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(k):
            step()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - start

    timed(step_ours, 2), timed(step_theirs, 2)  # warm-up: allocator, kernels, lazy init
    rounds_ours, rounds_theirs = [], []
    for r in range(rounds):
        # alternate which goes first so neither always follows the other
        order = [(step_ours, rounds_ours), (step_theirs, rounds_theirs)]
        for step, times in order if r % 2 == 0 else order[::-1]:
            times.append(timed(step, steps_per_round) / steps_per_round)
    # medians: a burst of load from another process spoils one round, not the figure
    ours_s, theirs_s = statistics.median(rounds_ours), statistics.median(rounds_theirs)
    flops = step_flops(config, batch_size)
    achieved = flops / ours_s / 1e9
    peak_model_shape = gemm_gflops(batch_size * 17, config.n_embd, config.n_inner, device)
    peak_large = gemm_gflops(2048, 2048, 2048, device)
    return {
        "speedup_vs_hf": round(theirs_s / ours_s, 3),
        "ours_steps_per_s": round(1 / ours_s, 3),
        "hf_steps_per_s": round(1 / theirs_s, 3),
        "speedup_of_totals": round(sum(rounds_theirs) / sum(rounds_ours), 3),
        "speedup_per_round": [round(b / a, 3) for a, b in zip(rounds_ours, rounds_theirs)],
        "step_gflop": round(flops / 1e9, 3),
        "ours_gflops": round(achieved, 1),
        "gemm_gflops_model_shape": round(peak_model_shape, 1),
        "gemm_gflops_2048": round(peak_large, 1),
        "fraction_of_model_shape_peak": round(achieved / peak_model_shape, 3),
        "fraction_of_2048_peak": round(achieved / peak_large, 3),
        "rounds": rounds,
        "steps_per_round": steps_per_round,
        "batch_size": batch_size,
        "tokens_hf": 18,
        "tokens_ours": 17,
        "loss_ours": round(loss_ours, 6),
        "loss_hf": round(loss_theirs, 6),
        "device": device,
        "torch_threads": torch.get_num_threads(),
    }
