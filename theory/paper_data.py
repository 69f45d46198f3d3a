"""Numbers and examples printed in the paper (arXiv 2605.31558), transcribed once.

Checks, figures and tests read these; nothing here is computed.  They live in ``theory``
because it is the one package that ``training``, ``proofs_check`` and ``figures`` may all
import, and this module imports nothing.

Table 3 (Appendix H): LLM accuracy on the 1-hop tasks, mean and
standard deviation over five runs, as printed (two decimals, trailing zeros dropped
by the paper, e.g. ``0.4``).

``length`` is the target-window size (the prompt's sequence has one more token, the
query).  Two facts of the printed table, kept as they are:

* Appendix H lists target windows {12, ..., 100, 150, 200, 300}, but the table has
  no row for 150, so :data:`TABLE3_LENGTHS` omits it.
* Some cells are rounded to the edge, e.g. GPT 5.4 letter at 24 is ``1.0 (0.01)``
  (a mean of 1.0 with a non-zero spread), and GPT 5.4 letter at 32 is ``0.99 (0.0)``.

Section 3.7 summarises the table as "letter task accuracy above 0.88 at length 32 for
all models"; Claude Sonnet 3.7 is printed as exactly 0.88 there, so that summary holds
only with "at least".
"""

from __future__ import annotations

__all__ = [
    "WORKED_EXAMPLES",
    "DEPTH_ROWS",
    "TABLE1",
    "TABLE1_HEAD_DIM",
    "TABLE1_BASE",
    "TABLE3_MODELS",
    "TABLE3_LENGTHS",
    "TABLE3",
    "reference_curve",
    "TRAINING_LENGTH",
    "LENGTH_850",
    "FIGURE5A",
    "FIGURE3A_FLOW",
    "LETTER_LAST_SYMBOLIC_LAYER",
    "PURITY_GAMMAS",
    "TABLE4",
]


# Worked examples: (where, task, input tokens, printed answer, printed hop count or None)
WORKED_EXAMPLES = [
    ("Figure 1, number task", "number", "C B A 1 4 1 3 2 1", "C", 4),
    ("Figure 1, letter task", "letter", "C2 B1 A3 FA EC DE HF GD IG", "C2", 4),
    ("Figure 3A (a 4-hop example)", "number", "n h n v h y r s 6 3 2 7 7 8 4 7 2", "n", 4),
    ("Figure 3B", "letter", "e1 b2 e1 g6 a2 b2 e1 g6 be db ca ge eb hc dg fh eh", "a2", None),
    ("Table 2, number example 1", "number", "a z b y c x d w 5", "y", 1),
    ("Table 2, number example 2", "number", "v t k g n k o h m p 4", "o", 1),
    ("Table 2, number example 3", "number", "w y b c v t r i p p 10", "w", 1),
    ("Table 2, letter example 1", "letter", "a4 b3 c2 d1 fc", "c2", 1),
    ("Table 2, letter example 2", "letter", "w9 t7 l5 g1 n4 l6 u9 k7 m5 p8 gk", "k7", 1),
    ("Table 2, letter example 3", "letter", "q5 r7 x4 t7 f4 k7 q4 u2 u3 r5 ex", "x4", 1),
]

# Figures 3C and 3D: Index (resp. Retrieval) applied `depth + 1` times to the input.
# The printed row "Depth 0" is one application; rows past Depth 3 repeat Depth 3.
DEPTH_ROWS = {
    "number": (
        "C B A 1 4 1 3 2 1",
        [
            "C B A A C 1 3 2 1",
            "C B A A C C A 2 1",
            "C B A A C C A C 1",
            "C B A A C C A C C",
            "C B A A C C A C C",
        ],
    ),
    "letter": (
        "C2 B1 A3 FA EC DE HF GD IG",
        [
            "C2 B1 A3 A3 C2 EC FA DE GD",
            "C2 B1 A3 A3 C2 C2 A3 EC DE",
            "C2 B1 A3 A3 C2 C2 A3 C2 EC",
            "C2 B1 A3 A3 C2 C2 A3 C2 C2",
            "C2 B1 A3 A3 C2 C2 A3 C2 C2",
        ],
    ),
}

# Table 1: the weighted-average frequency ID per layer and the frequency printed beside it.
TABLE1 = {
    "number": [
        (1, "1.0000"),
        (2, "0.8660"),
        (2, "0.8660"),
        (2, "0.8660"),
        (10, "0.2738"),
        (39, "0.0042"),
        (38, "0.0049"),
        (38, "0.0049"),
        (38, "0.0049"),
        (37, "0.0056"),
        (37, "0.0056"),
        (38, "0.0049"),
    ],
    "letter": [
        (18, "0.0866"),
        (32, "0.0115"),
        (42, "0.0027"),
        (37, "0.0056"),
        (40, "0.0037"),
        (38, "0.0049"),
        (41, "0.0032"),
        (38, "0.0049"),
        (41, "0.0032"),
        (39, "0.0042"),
        (38, "0.0049"),
        (40, "0.0037"),
    ],
}
TABLE1_HEAD_DIM = 128
TABLE1_BASE = 10000

# -- Table 3 ------------------------------------------------------------------------------
TABLE3_MODELS = ("GPT 5.4", "GPT 5.5", "Claude Sonnet 3.7")
TABLE3_LENGTHS = (12, 16, 24, 32, 48, 64, 80, 100, 200, 300)

# One printed row per length: for each model in TABLE3_MODELS order,
# (number mean, number std, letter mean, letter std).
_ROWS = {
    12: ((0.98, 0.01, 0.96, 0.01), (0.55, 0.02, 0.87, 0.02), (0.40, 0.02, 0.92, 0.03)),
    16: ((0.87, 0.01, 0.98, 0.01), (0.56, 0.03, 0.95, 0.01), (0.34, 0.03, 0.89, 0.02)),
    24: ((0.73, 0.03, 1.00, 0.01), (0.42, 0.03, 0.96, 0.02), (0.22, 0.02, 0.88, 0.03)),
    32: ((0.45, 0.03, 0.99, 0.00), (0.23, 0.01, 0.96, 0.01), (0.15, 0.02, 0.88, 0.02)),
    48: ((0.17, 0.03, 0.99, 0.01), (0.21, 0.03, 0.77, 0.01), (0.11, 0.01, 0.80, 0.02)),
    64: ((0.14, 0.03, 0.98, 0.01), (0.12, 0.02, 0.84, 0.02), (0.08, 0.03, 0.87, 0.02)),
    80: ((0.10, 0.02, 0.96, 0.01), (0.10, 0.02, 0.75, 0.01), (0.06, 0.01, 0.89, 0.02)),
    100: ((0.08, 0.02, 0.85, 0.05), (0.07, 0.02, 0.66, 0.04), (0.06, 0.02, 0.86, 0.03)),
    200: ((0.08, 0.01, 0.52, 0.03), (0.06, 0.01, 0.55, 0.01), (0.05, 0.01, 0.77, 0.02)),
    300: ((0.06, 0.01, 0.40, 0.06), (0.04, 0.01, 0.50, 0.03), (0.05, 0.01, 0.80, 0.05)),
}


def _build() -> dict:
    table = {model: {"number": {}, "letter": {}} for model in TABLE3_MODELS}
    for length, cells in _ROWS.items():
        for model, (n_mean, n_std, l_mean, l_std) in zip(TABLE3_MODELS, cells, strict=True):
            table[model]["number"][length] = (n_mean, n_std)
            table[model]["letter"][length] = (l_mean, l_std)
    return table


# TABLE3[model][task][length] = (mean, std)
TABLE3 = _build()


def reference_curve(model: str, task: str) -> dict:
    """One model's Table 3 column for ``task`` in the results-JSON shape of
    ``training.llm.evaluate`` (``lengths``, ``accuracy_mean``, ``accuracy_std``), for plotting."""
    if model not in TABLE3:
        raise ValueError(f"unknown model {model!r}; Table 3 has: {', '.join(TABLE3_MODELS)}")
    if task not in ("number", "letter"):
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    column = TABLE3[model][task]
    return {
        "model": model,
        "task": task,
        "source": "paper Table 3",
        "lengths": list(TABLE3_LENGTHS),
        "accuracy_mean": [column[length][0] for length in TABLE3_LENGTHS],
        "accuracy_std": [column[length][1] for length in TABLE3_LENGTHS],
    }


# -- Items of the coverage audit (issue 30, section 5) ----------------------------------------------
# Appendix B.1, "Implementation": every sequence has 17 tokens (8 target + 8 pre-target + 1 query).
TRAINING_LENGTH = 17

# Section 3.6: "over 90% accuracy ... with sequence lengths up to 850 (53 times the original
# sequence length)".  (length, printed multiple)
LENGTH_850 = (850, 53)

# Figure 5A's caption: "For Index function, theta = theta_2 = 0.8, while for the Retrieval
# function, theta = theta_42 = 0.0027 and |ALPH| = 8", "for input length n <= 100"; the text
# says the angles are those of "the second layer in each model" (Table 1's IDs 2 and 42).
FIGURE5A = {
    "index": {"theta": "0.8", "id": 2},
    "retrieval": {"theta": "0.0027", "id": 42, "alph": 8},
    "n_max": 100,
}

# Section 3.2 on Figure 3A (number task, 4-hop example): "layer 0 maximally attends to 'n'"
# (from the token '6', whose target is a letter); "in layers 1 and 2, attention is maximized at
# the token located at distance 2 from the last token ... but there is no information flow.
# Only at layer 3 ... it is copied to the last position."
FIGURE3A_FLOW = {"attends_letter_target": 0, "attend_without_copy": (1, 2), "copies": 3}

# Section 3.3: "The last required symbolic head appears in layer 11" (letter task).
LETTER_LAST_SYMBOLIC_LAYER = 11

# Section 3.1 footnote 3 and Figure 7: purity thresholds gamma in {0.1, 0.05}.
PURITY_GAMMAS = ("0.1", "0.05")

# Appendix I, Table 4, as printed: training times as (minutes, seconds), metrics in hours; the
# text says the metric costs are "for each model" and that "we trained two models".
TABLE4 = {
    "training_time": {"number": (28, 30), "letter": (26, 29)},
    "training_total_time": (54, 59),
    "hardware": "NVIDIA GeForce RTX A5000 (3 GPUs), AMD EPYC 7282 16-Core",
    "attention_gpu_hours_per_model": 5.0,
    "metrics_cpu_hours_per_model": 8.5,
    "total_gpu_hours": 10.0,
    "total_cpu_hours": 17.0,
    "models": 2,
}
