"""The three answers at the top of the report (issue 43): which theorems are false and what
holds instead, whether the headline reproduces, what is new here.  Both outputs carry the block
(anchor ``at-a-glance``), each answer links at least one claim, and every number in it comes from
this run: from the rows of the claims it links, or a count of the run's rows."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from proofs_check import claims  # noqa: F401  (registers the checks)
from proofs_check.registry import REGISTRY
from proofs_check.report.doc import Link, Num, nodes
from proofs_check.report.findings import PAPER, SHORT
from proofs_check.report.glance import ANCHOR, QUESTIONS, three_answers
from proofs_check.report.rows import FAILED, correction_of

ROOT = Path(__file__).resolve().parents[1]
REPORT = Path(os.environ.get("PROOFS_CHECK_REPORT", ROOT / "report"))
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _block(name: str, text: str) -> str:
    if name.endswith(".html"):
        found = re.search(rf'<div id="{ANCHOR}".*?</div>', text, re.S)
    else:
        found = re.search(rf'<a id="{ANCHOR}"></a>.*?<sub>source:', text, re.S)
    assert found, f"{name}: no block with the anchor {ANCHOR}"
    return found.group()


@pytest.mark.parametrize("name", ["REPORT.md", "index.html"])
def test_each_of_the_three_answers_is_in_the_output_and_links_a_claim(name):
    block = _block(name, (REPORT / name).read_text(encoding="utf-8"))
    at = [block.find(q) for q in QUESTIONS]
    assert all(i >= 0 for i in at) and at == sorted(at), f"{name}: the three questions, in order"
    link = r'href="#([^"]+)"' if name.endswith(".html") else r"\]\(#([^)]+)\)"
    for question, start, end in zip(QUESTIONS, at, at[1:] + [len(block)]):
        linked = {t.replace("\\", "") for t in re.findall(link, block[start:end])}
        assert linked & set(REGISTRY), f"{name}: the answer to {question!r} links no claim"


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _matches(token: str, values: list[float]) -> bool:
    """``token`` as printed is one of ``values`` rounded to the token's digits."""
    x = float(token)
    digits = len(token.split(".")[1].split("e")[0]) if "." in token else 0
    return any(abs(v - x) <= 0.5 * 10**-digits + 1e-12 * max(1, abs(x)) for v in values)


def test_every_number_in_the_answers_comes_from_the_run(generated_report):
    _, rows = generated_report
    box = three_answers(rows, ROOT)
    linked = {p.target[1:] for p in nodes_in(box) if isinstance(p, Link) and p.target.startswith("#")}
    by_id = {r["id"]: r for r in rows}
    evidence = json.dumps([by_id[c] for c in linked if c in by_id], default=str)
    values = [float(t) for t in _numbers(evidence)]
    counts = Counter((r.get("origin"), r["verdict"]) for r in rows) + Counter(r.get("origin") for r in rows)
    values += [float(c) for c in counts.values()]
    typed = [
        t for p in nodes_in(box) if isinstance(p, Num) for t in _numbers(p.text) if not _matches(t, values)
    ]
    assert typed == [], f"numbers in the three answers that the run's rows do not hold: {typed}"
    assert {QUESTIONS[0], QUESTIONS[1], QUESTIONS[2]} <= {getattr(p, "text", None) for p in nodes_in(box)}


def nodes_in(box):
    for block in box.blocks:
        yield from nodes(block)


def test_every_correction_in_the_findings_table_has_a_short_line(generated_report):
    _, rows = generated_report
    fixes = {correction_of(r) for r in rows if r["id"] in PAPER and r["verdict"] in FAILED}
    assert sorted(f for f in fixes - {None} if f not in SHORT) == []
