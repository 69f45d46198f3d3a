"""What a reader of the report learns in five minutes: the findings table first, quotes that are
the paper's words, three groups of claims kept apart, no tracker numbers or Python values in the
prose, and every term of art defined.  Fast: the output checks read a generated report
(the shipped ``report/``, or the folder named by PROOFS_CHECK_REPORT)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from proofs_check import __main__ as cli
from proofs_check import claims  # noqa: F401  (registers the checks)
from proofs_check.registry import GROUPS, REGISTRY
from proofs_check.report.build import FAILED, prose
from proofs_check.report.findings import PAPER, SEVERITIES
from proofs_check.report.glossary import TERMS, anchor
from proofs_check.report.paper_places import PAPER_NAME, finding_quotes, load_quotes, normalise, quote_pages

ROOT = Path(__file__).resolve().parents[1]
PAPER_TEXT = ROOT.parent / "shared" / "reference" / PAPER_NAME
REPORT = Path(os.environ.get("PROOFS_CHECK_REPORT", ROOT / "report"))
needs_paper = pytest.mark.skipif(
    not PAPER_TEXT.exists(), reason=f"the paper's text ({PAPER_NAME}) is not here"
)


def outputs() -> dict:
    return {name: (REPORT / name).read_text(encoding="utf-8") for name in ("REPORT.md", "index.html")}


def prose_of(name: str, text: str) -> str:
    """The page's prose: code, data and quoted statements left out (they are verbatim)."""
    if name.endswith(".html"):
        text = re.sub(r"<pre.*?</pre>|<blockquote>.*?</blockquote>|<q [^>]*>.*?</q>", " ", text, flags=re.S)
        text = re.sub(r"<style>.*?</style>", " ", text, flags=re.S)
        return re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"“.*?”", " ", text)
    return "\n".join(line for line in text.splitlines() if not line.startswith(">"))


# the paper's words --------------------------------------------------------------------------


@needs_paper
def test_every_quote_is_the_papers_words_and_its_page_is_the_texts():
    text = PAPER_TEXT.read_text(encoding="utf-8")
    whole = normalise(text)
    assert [q for q in finding_quotes() if normalise(q) not in whole] == []
    assert load_quotes() == quote_pages(text, finding_quotes()), (
        "regenerate it: python -m proofs_check.report.paper_places " + str(PAPER_TEXT)
    )


@needs_paper
def test_a_misquote_is_not_found():
    text = PAPER_TEXT.read_text(encoding="utf-8")
    quote = PAPER["S36-53x"].quote
    assert quote_pages(text, [quote]) == {quote: 9}
    mutant = quote.replace("53 times", "35 times")
    assert quote_pages(text, [mutant]) == {}


def test_every_failing_claim_of_the_paper_has_a_finding_and_no_other():
    failing = {c.id for c in REGISTRY.values() if c.origin == "paper" and c.recorded_verdict() in FAILED}
    assert set(PAPER) == failing
    assert {f.severity for f in PAPER.values()} <= set(SEVERITIES)


# three groups ---------------------------------------------------------------------------------


def test_the_three_groups_partition_the_claims(capsys):
    assert {c.group for c in REGISTRY.values()} <= set(GROUPS)
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if line.startswith("== ")]
    assert [h.split(" (")[0][3:] for h in heads] == list(GROUPS.values())
    listed = [line.split()[0] for line in out.splitlines() if line and not line.startswith((" ", "=="))]
    assert sorted(listed) == sorted(REGISTRY)  # each claim once
    for group, words in GROUPS.items():
        block = out.split(f"== {words}")[1].split("\n== ")[0]
        ids = [line.split()[0] for line in block.splitlines()[1:] if line and not line.startswith(" ")]
        assert all(REGISTRY[i].group == group for i in ids)


def test_the_package_hypotheses_have_their_own_words():
    for c in REGISTRY.values():
        word = c.recorded_verdict()
        if (c.origin, c.kind) == ("package", "experiment"):
            assert word in ("supported", "not supported", "undecided")
        else:
            assert word not in ("supported", "not supported")


# the prose ------------------------------------------------------------------------------------


def test_prose_drops_tracker_numbers_and_python_values():
    text = "issue 15 (not a claim of the paper); all pure from step None; same heads True; rho n/a; seed-0 refuted"
    said = prose(text)
    assert not re.search(r"issue \d+|\bNone\b|\bTrue\b|n/a|refuted", said), said
    assert "not a claim of the paper" in said


def test_the_findings_table_is_the_first_section():
    md, page = outputs()["REPORT.md"], outputs()["index.html"]
    assert re.findall(r"^## (.+)$", md, re.M)[0] == "Findings at a glance"
    assert re.findall(r"<h2>(.*?)</h2>", page)[0] == "Findings at a glance"
    table = md.split("## Findings at a glance")[1].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| **")]
    severities = [re.match(r"\| \*\*(\w+)\*\*", row).group(1) for row in rows]
    assert severities == sorted(severities, key=SEVERITIES.index)  # major before minor
    assert {re.search(r"\[([^\]]+)\]\(#", row).group(1).replace("\\", "") for row in rows} == set(PAPER)


@pytest.mark.parametrize("name", ["REPORT.md", "index.html"])
def test_no_tracker_numbers_or_python_values_in_the_prose(name):
    text = outputs()[name]
    assert not re.search(r"\bissue \d+", text, re.I), re.search(r".{60}issue \d+.{20}", text).group()
    found = re.findall(r".{40}(?<![\w\"'])(?:None|True|False|n/a)(?![\w\"']).{10}", prose_of(name, text))
    assert found == []


@pytest.mark.parametrize("name", ["REPORT.md", "index.html"])
def test_every_glossary_term_used_is_defined_and_linked(name):
    text = outputs()[name]
    body = prose_of(name, text)
    for label, raw, _ in TERMS:
        pattern = re.compile(rf"(?<![\w-])(?:{raw})(?![\w-])", re.IGNORECASE)
        if pattern.search(body.split("Glossary")[0]):
            assert f'id="{anchor(label)}"' in text, label
            assert f"#{anchor(label)}" in text, f"{label} is used but never linked"
    for term in ("average-hard", "proper input", "valid input", "Wilson", "arb"):
        assert any(re.search(raw, term, re.I) for _, raw, _ in TERMS), term


def test_html_keeps_words_whole_and_offers_a_way_back():
    page = outputs()["index.html"]
    assert "word-break: break-all" not in page
    assert page.count('href="#contents">back to contents') >= 5
