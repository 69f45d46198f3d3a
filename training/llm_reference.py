"""The paper's Table 3 (Appendix H): LLM accuracy on the 1-hop tasks, mean and
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

__all__ = ["TABLE3_MODELS", "TABLE3_LENGTHS", "TABLE3", "reference_curve"]

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
    ``training.llm_eval`` (``lengths``, ``accuracy_mean``, ``accuracy_std``), for plotting."""
    if model not in TABLE3:
        raise ValueError(f"unknown model {model!r}; Table 3 has: {', '.join(TABLE3_MODELS)}")
    if task not in ("number", "letter"):
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    column = TABLE3[model][task]
    return {"model": model, "task": task, "source": "paper Table 3", "lengths": list(TABLE3_LENGTHS),
            "accuracy_mean": [column[length][0] for length in TABLE3_LENGTHS],
            "accuracy_std": [column[length][1] for length in TABLE3_LENGTHS]}
