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
of the median seconds per step over the rounds (robust to a burst of load).  Dropout is on (train mode) for both, as in training.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from .gptj import GPTJ, ModelConfig
from .train import make_optimizer

__all__ = ["run_bench"]


def _hf_model(config: ModelConfig):
    from transformers import GPTJConfig, GPTJForCausalLM

    hf_dict = {k: v for k, v in config.to_hf_dict().items() if k != "model_type"}
    return GPTJForCausalLM(GPTJConfig(**hf_dict))


def run_bench(rounds: int = 7, steps_per_round: int = 5, batch_size: int = 64, device: str = "cpu",
              vocab_size: int = 136, seed: int = 0) -> dict:
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

    opt_ours, opt_theirs = make_optimizer(ours, 1e-4, (0.95, 0.999), 1e-4), \
        make_optimizer(theirs, 1e-4, (0.95, 0.999), 1e-4)

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
        for step, times in (order if r % 2 == 0 else order[::-1]):
            times.append(timed(step, steps_per_round) / steps_per_round)
    # medians: a burst of load from another process spoils one round, not the figure
    ours_s, theirs_s = statistics.median(rounds_ours), statistics.median(rounds_theirs)
    return {
        "speedup_vs_hf": round(theirs_s / ours_s, 3),
        "ours_steps_per_s": round(1 / ours_s, 3),
        "hf_steps_per_s": round(1 / theirs_s, 3),
        "speedup_of_totals": round(sum(rounds_theirs) / sum(rounds_ours), 3),
        "speedup_per_round": [round(b / a, 3) for a, b in zip(rounds_ours, rounds_theirs)],
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
