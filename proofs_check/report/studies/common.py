"""What every study section shares: reading a shipped results file, and turning its values into
the report's numbers (``doc.Num``, each naming the file it came from).

A study that is not shipped (its results file absent) gives a section of one paragraph that says
so and names the command that writes it: the report still builds on a fresh clone that lacks a
study.  A file that is there but damaged is ``theory.io.inputs.InputError`` naming the file and the
field, from the one loader: the report must not paper over a broken result.
"""

from __future__ import annotations

import math
from pathlib import Path

from proofs_check.claims.variants import correct_counts
from proofs_check.report.doc import Code, Figure, Link, Num, Para, Ref, Section
from theory.io.inputs import Nullable, load_json

VALUE = Nullable(float)
STAT = {
    "values": {"*": VALUE},
    "mean?": VALUE,
    "ci?": Nullable([float]),
}  # collect's statistics of one quantity
LENGTH_BLOCK = {"lengths": [int], "accuracy": [STAT], "n_per_length?": {"*": [int]}, "by_hop?": {"*": [STAT]}}
FIGURES = "figures/output"


def load(root: Path, relative: str, shape):
    """The JSON at ``root/relative`` checked against ``shape``, or None when the file is absent."""
    path = Path(root) / relative
    if not path.exists() and not path.is_symlink():
        return None
    return load_json(path, shape)


def not_shipped(anchor: str, title: str, relative: str, command: str) -> Section:
    """The section of a study whose results file is absent: one paragraph naming it and its command."""
    return Section(
        anchor,
        title,
        [
            Para(
                [
                    "This study is not shipped: ",
                    Ref(relative),
                    " is absent. Run it, then generate the report again: ",
                    Ref(command),
                    ".",
                ]
            )
        ],
    )


def claim(claim_id: str) -> Link:
    """A link to a claim's entry in the report (its verdict and evidence are there)."""
    return Link(text=claim_id, target="#" + claim_id)


def figure(root: Path, name: str, caption: list) -> Figure | Para:
    """The figure ``name`` of ``python -m figures``, or a paragraph saying how to draw it when absent."""
    relative = f"{FIGURES}/{name}.png"
    if (Path(root) / relative).is_file():
        return Figure(relative, Para(caption))
    return Para(["The figure ", Ref(name), " is not drawn yet: ", Ref(f"python -m figures {name}"), "."])


def code(command: str) -> Code:
    return Code(command)


# -- numbers --------------------------------------------------------------------------------------


def accuracy(value: float) -> str:
    return f"{value:.3f}"


def _bound(value: float) -> str:
    """An interval end: "1" and "0" at the range's ends (clipped), three decimals otherwise."""
    return f"{value:.0f}" if value in (0.0, 1.0) else f"{value:.3f}"


def stat_text(stat: dict | None) -> str | None:
    """'0.994 [0.974, 1]' (mean over seeds and its 95% interval as the file holds them); '0.912
    (one seed)' without an interval; None when the quantity was not measured."""
    if stat is None or stat.get("mean") is None:
        return None
    if not stat.get("ci"):
        return f"{accuracy(stat['mean'])} (one seed)"
    low, high = stat["ci"]
    return f"{accuracy(stat['mean'])} [{_bound(low)}, {_bound(high)}]"


def stat_num(stat: dict | None, source: str, absent: str = "not measured"):
    """A table cell or inline part: the statistic as a Num, or the word for "not measured"."""
    text = stat_text(stat)
    return absent if text is None else Num(text, source)


def tokens(value: float) -> str:
    """A length in tokens as a reader counts it: '5,000', '111' (a break interpolated between grid lengths)."""
    return f"{value:,.0f}"


def breaks_text(values: dict) -> str:
    """Per-seed breaks in seed order: '111, 200, 179'; a seed that never broke reads 'none'."""
    return ", ".join("none" if values[s] is None else tokens(values[s]) for s in sorted(values, key=int))


def span(values) -> str:
    """'105-149' (lowest-highest of finite values, as tokens), or one value."""
    finite = sorted(v for v in values if v is not None and math.isfinite(v))
    low, high = tokens(finite[0]), tokens(finite[-1])
    return low if low == high else f"{low}-{high}"


def at_length(block: dict | None, length: int, hop: str | None = None) -> dict | None:
    """The statistic of ``block`` at ``length`` (over all hops, or of one hop count), or None."""
    if not block or length not in block["lengths"]:
        return None
    column = block["accuracy"] if hop is None else block.get("by_hop", {}).get(hop)
    return None if column is None else column[block["lengths"].index(length)]


def counts(block: dict, length: int) -> dict:
    """{seed: (correct, inputs)} at ``length``, from the accuracy and the inputs evaluated per seed."""
    at = block["lengths"].index(length)
    return correct_counts(
        block["accuracy"][at]["values"], {seed: n[at] for seed, n in block.get("n_per_length", {}).items()}
    )


def counts_text(found: dict) -> str:
    """'64/64, 63/64, 63/64' in seed order."""
    return ", ".join(f"{k}/{n}" for k, n in (found[s] for s in sorted(found, key=int)))


def joined(items: list) -> list:
    """Inline parts of ``items`` (each a part or a list of parts) as 'a, b and c'."""
    parts = []
    for i, item in enumerate(items):
        parts += [", " if 0 < i < len(items) - 1 else " and " if i else ""]
        parts += item if isinstance(item, list) else [item]
    return parts
