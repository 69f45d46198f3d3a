"""Training throughput of our GPT-J against ``transformers.GPTJForCausalLM``.

Both models get the paper configuration, the same initial weights, the same
batch (64 sequences of 17 input tokens + the answer) and the same AdamW.  They
compute the same loss, each the way its training code does:

* HF (the paper's recipe): 18 tokens in, ``labels`` = -100 except the answer, so
  HF's shifted cross-entropy scores the logits at the query position;
* ours: 17 tokens in, ``forward(last_only=True)``: the final block and the LM head
  run on the query position only, then one cross-entropy row per sequence.

Ours is ``train``'s own step, ``training.run.step.train_step`` (the paper recipe's lr schedule,
the step's rows of the batch, autocast and the GradScaler where the device has them, gradient
clipping, AdamW); HF's step does the same around its own forward (HF Trainer's step: the
schedule, autocast, clipping at norm 1.0, AdamW).

Timing alternates between the two in the same process (rounds of k steps each), each
timing preceded by the float32 GEMM peaks on the same threads (``training.run.bench.timing``:
GEMMs, ours, GEMMs, theirs, ...), every one by wall AND CPU time (``time.process_time``), with
the load average at the start and the end (``load_average``).  ``speedup_vs_hf`` is the ratio
of the median seconds per step over the rounds by the headline clock (``clock``: CPU time on
the CPU, wall time on CUDA), ``speedup_vs_hf_wall`` and ``_cpu`` by each.  Dropout is on
(train mode) for both, as in training.

Achieved GFLOP/s (``step_flops``): the matrix-multiply work of one training step divided by
its median time, against the float32 GEMM peak measured next to it at the model's own shape
((B T) x n_embd by n_embd x n_inner, 1088 x 128 by 128 x 512 for the paper) and at a large
square shape (``fraction_of_2048_peak``, the headline: by CPU time on the CPU, where the load
of other processes hardly moves it; ``_wall`` and ``_cpu`` by each clock).  The count, per sequence of T = 17 tokens, forward (2 FLOPs per
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

import dataclasses

import numpy as np
import torch
import torch.nn.functional as F

from training.model.gptj import GPTJ, ModelConfig
from training.run.memory import check_memory
from training.run.presets import get_preset
from training.run.step import (
    StepJob,
    autocast_for,
    lr_factor,
    make_optimizer,
    optimizer_step,
    train_step,
    training_batch,
)
from training.tasks.definitions import Batch

from .timing import GemmProbe, headline_clock, load_average, rotate

__all__ = ["run_bench", "check_bench_memory", "step_flops"]


def step_flops(config: ModelConfig, batch_size: int, tokens: int = 17) -> float:
    """Matmul FLOPs of one training step of ours (module doc: the formula)."""
    T, d, f, V, L = tokens, config.n_embd, config.n_inner, config.vocab_size, config.n_layer
    full_block = 8 * T * d * d + 4 * T * T * d + 4 * T * d * f
    last_block = 4 * d * d + 4 * T * d * d + 4 * T * d + 4 * d * f
    forward = (L - 1) * full_block + last_block + 2 * d * V
    return 3.0 * forward * batch_size


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
    gemm_size: int = 2048,
) -> dict:
    """The comparison (module doc); ``gemm_size``: the square GEMM of the peak (2048; smaller
    only to test the structure quickly)."""
    check_bench_memory(batch_size, device, vocab_size)
    load_start = load_average()
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

    recipe = dataclasses.replace(get_preset("paper"), batch_size=batch_size)
    opt_ours, opt_theirs = (
        make_optimizer(ours, recipe.lr, recipe.betas, recipe.weight_decay),
        make_optimizer(theirs, recipe.lr, recipe.betas, recipe.weight_decay),
    )
    dev = torch.device(device)
    amp, scaler = autocast_for(dev)
    rows = tokens.cpu().numpy()  # the training set: these rows, in a new order each step (an epoch)
    data = Batch(rows[:, :17], rows[:, 17], np.ones(batch_size, dtype=np.int64))
    # the task names the extra target window only, which the paper recipe has none of
    job = StepJob("number", data, recipe, recipe.steps, ours, (opt_ours,), dev, amp, scaler)
    scaler_theirs = None if scaler is None else torch.amp.GradScaler("cuda")
    steps = {"ours": 0, "theirs": 0}

    def step_ours():
        train_step(job, steps["ours"])
        steps["ours"] += 1

    def step_theirs():  # the same step around HF's forward and loss
        step = steps["theirs"]
        for group in opt_theirs.param_groups:
            group["lr"] = recipe.lr * lr_factor(step, recipe.warmup_steps, recipe.steps)
        batch = training_batch(job.task, data, job.seed, step, batch_size)
        ids = torch.as_tensor(np.concatenate([batch.inputs, batch.answers[:, None]], 1), device=dev)
        hf_labels = torch.full_like(ids, -100)
        hf_labels[:, 17] = ids[:, 17]
        with amp:
            loss = theirs(ids, labels=hf_labels).loss
        if scaler_theirs is not None:
            scaler_theirs.scale(loss).backward()
            scaler_theirs.unscale_(opt_theirs)
        else:
            loss.backward()
        optimizer_step(theirs, opt_theirs, scaler_theirs, recipe.grad_clip)  # train_step's own clip and step
        steps["theirs"] += 1

    def run(step, k):
        for _ in range(k):
            step()

    run(step_ours, 2), run(step_theirs, 2)  # warm-up: allocator, kernels, lazy init
    probes = {
        "2048": GemmProbe(gemm_size, gemm_size, gemm_size, device),
        "model_shape": GemmProbe(batch_size * 17, config.n_embd, config.n_inner, device),
    }
    # the order rotates each round, so neither always follows the other; medians: a burst of load
    # from another process spoils one round, not the figure
    ours, theirs = rotate([step_ours, step_theirs], run, probes, rounds, steps_per_round, device)
    flops, clock = step_flops(config, batch_size), headline_clock(device)
    ours_s, theirs_s = ours.seconds(clock), theirs.seconds(clock)
    out = {
        "speedup_vs_hf": round(theirs_s / ours_s, 3),
        "ours_steps_per_s": round(1 / ours.seconds("wall"), 3),
        "hf_steps_per_s": round(1 / theirs.seconds("wall"), 3),
        "ours_steps_per_cpu_s": round(1 / max(ours.seconds("cpu"), 1e-9), 3),
        "hf_steps_per_cpu_s": round(1 / max(theirs.seconds("cpu"), 1e-9), 3),
        "speedup_of_totals": round(sum(getattr(theirs, clock)) / sum(getattr(ours, clock)), 3),
        "speedup_per_round": [round(b / a, 3) for a, b in zip(getattr(ours, clock), getattr(theirs, clock))],
        "step_gflop": round(flops / 1e9, 3),
        "ours_gflops": round(flops / ours_s / 1e9, 1),
        "gemm_gflops_model_shape": round(ours.peak("model_shape", clock), 1),
        "gemm_gflops_2048": round(ours.peak("2048", clock), 1),
        "fraction_of_model_shape_peak": round(ours.fraction(flops, "model_shape", clock), 3),
        "fraction_of_2048_peak": round(ours.fraction(flops, "2048", clock), 3),
        "clock": clock,
    }
    for name in ("wall", "cpu"):
        out[f"speedup_vs_hf_{name}"] = round(theirs.seconds(name) / ours.seconds(name), 3)
        out[f"gemm_gflops_2048_{name}"] = round(ours.peak("2048", name), 1)
        out[f"fraction_of_2048_peak_{name}"] = round(ours.fraction(flops, "2048", name), 3)
        out[f"fraction_of_model_shape_peak_{name}"] = round(ours.fraction(flops, "model_shape", name), 3)
    return {
        **out,
        "load_average": {"start": load_start, "end": load_average()},
        "gemm_size": gemm_size,
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
