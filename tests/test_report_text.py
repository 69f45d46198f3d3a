"""Issue 43: the generated report's text has no number cut from its string and no bracket left open.

A number in the report is formatted from its value (theory.numbers.ball_text: midpoint ± radius,
exponent kept), never sliced from a string: ``str(ball)[:12]`` of "[0.69098300562505 +/- 2.1e-21]"
leaves "[0.6909830056", an opened bracket and a mantissa without the rest.  The scan reads both
outputs of one generation (the session's ``generated_report``): every line of prose, quote and
data in REPORT.md and every block of index.html's text, outside code, closes each "[" and "(" it
opens, and no number stops where a value of the run's evidence goes on to an exponent.  The
helpers are tried on texts cut the old way, so a scan that finds nothing is a scan that can
find something.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import flint

from proofs_check.report import mathtext
from theory.numbers import ball_text

NUMBER = re.compile(r"(?<![\w.])\d+\.\d{3,}(?![\d.]|e[-+]?\d)")  # a decimal without an exponent after it
EXPONENT = re.compile(r"\d+\.\d+e[-+]?\d+")


def unclosed(line: str) -> list[str]:
    """The brackets ``line`` opens and never closes, or closes before opening: "(" and "[" open,
    ")" and "]" close (a half-open interval "(0, pi]" is closed)."""
    depth = 0
    for ch in line:
        depth += 1 if ch in "([" else -1 if ch in ")]" else 0
        if depth < 0:
            return [ch]
    return ["[" if line.rfind("[") > line.rfind("(") else "("] if depth else []


def truncated(line: str, exponents: set[str]) -> list[str]:
    """Decimals of ``line`` that are the start of an evidence value with an exponent (a mantissa
    whose exponent was cut off), e.g. "7.69405" where the evidence had "7.69405e-7"."""
    return [
        m.group()
        for m in NUMBER.finditer(line)
        if any(e.startswith(m.group()) and len(e) > len(m.group()) for e in exponents)
    ]


class Blocks(HTMLParser):
    """index.html's text, one entry per paragraph, list item, cell, quote or data line; code
    (a command) and MathML (its brackets are the formula's, checked in its source) left out."""

    BLOCK = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "figcaption", "pre"}

    def __init__(self):
        super().__init__()
        self.blocks, self._text, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "math" or (tag == "pre" and ("class", "command") in attrs):
            self._skip += 1
        elif tag in self.BLOCK:
            self._flush()

    def handle_endtag(self, tag):
        if tag == "math" or (tag == "pre" and self._skip):
            self._skip = max(0, self._skip - 1)
        elif tag in self.BLOCK:
            self._flush()

    def handle_data(self, data):
        if not self._skip:
            self._text.append(data)

    def _flush(self):
        text = "".join(self._text)
        self.blocks += [line for line in text.splitlines() if line.strip()]
        self._text = []


def markdown_lines(text: str) -> list[str]:
    """REPORT.md's lines outside fenced code (commands), with inline code spans and math removed
    (a file name or a formula is not prose)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced and not line.startswith("  "):  # a command; a data block's lines are indented JSON
            continue
        line = re.sub(r"(`+).*?\1", "", line)
        out.append(re.sub(r"\$[^$]+\$", "", line))
    return out


def evidence_exponents(rows) -> set[str]:
    return set(EXPONENT.findall(json.dumps([r.get("evidence") for r in rows], default=str)))


def test_the_scan_finds_a_number_cut_from_its_string():
    ball = flint.arb("0.69098300562505") + flint.arb(0, 2.1e-21)
    cut = f"lambda = {str(ball)[:12]} > bound"  # the old way: "[0.69098300" and no closing bracket
    assert unclosed(cut) == ["["] and unclosed("in (0, pi], m in [1, 3]") == []
    tiny = "7.694051234e-7"
    assert truncated(f"gap {tiny[:7]} at n = 5", {tiny}) == ["7.69405"]
    assert truncated(f"gap {tiny} at n = 5", {tiny}) == [] and not unclosed(f"gap ({tiny})")
    now = f"lambda = {ball_text(ball)} > bound"  # formatted from the value
    assert not unclosed(now) and " ± " in now and "e-" in now  # midpoint, radius with its exponent
    assert ball_text("[7.69405e-7 +/- 3.1e-25]").endswith("e-25") and "e-7" in ball_text(
        "[7.69405e-7 +/- 3.1e-25]"
    )


def test_the_generated_report_has_no_unclosed_bracket_and_no_cut_number(generated_report):
    folder, rows = generated_report
    exponents = evidence_exponents(rows)
    page = Blocks()
    page.feed((folder / "index.html").read_text(encoding="utf-8"))
    page.close()
    found = []
    for where, lines in (
        ("REPORT.md", markdown_lines((folder / "REPORT.md").read_text(encoding="utf-8"))),
        ("index.html", page.blocks),
    ):
        for line in lines:
            if unclosed(line) or truncated(line, exponents):
                found.append(
                    f"{where}: {unclosed(line)} {truncated(line, exponents)} in {line.strip()[:300]!r}"
                )
    assert not found, "\n".join(found[:20])


def test_every_formula_of_the_report_typesets(generated_report):
    """Every $...$ of the Markdown converts to MathML, and index.html holds one math element per
    formula (none left as dollar-delimited source)."""
    folder, _ = generated_report
    html_text = (folder / "index.html").read_text(encoding="utf-8")
    assert "<math " in html_text
    visible = re.sub(r"<math .*?</math>|<pre.*?</pre>|<code>.*?</code>", "", html_text, flags=re.S)
    assert not mathtext.MATH.search(visible), mathtext.MATH.search(visible).group()
    markdown_text = (folder / "REPORT.md").read_text(encoding="utf-8")
    for latex in mathtext.MATH.findall(re.sub(r"```.*?```", "", markdown_text, flags=re.S)):
        assert not re.search(r"\\[{}|,;! ]|[<>|]", latex), f"Markdown would change ${latex}$"
        mathtext.mathml(latex)


def test_every_statement_and_step_typesets_and_reads_as_plain_text():
    from proofs_check import claims  # noqa: F401  (registers the checks)
    from proofs_check.registry import REGISTRY

    texts = [c.statement for c in REGISTRY.values()]
    texts += [s.text for c in REGISTRY.values() if c.evidence for s in c.evidence.steps]
    for text in texts:
        assert text.count("$") % 2 == 0, f"an unpaired $ in {text!r}"
        mathtext.html(text)  # MathError on a formula latex2mathml cannot typeset
        assert "\\" not in mathtext.plain(text), f"LaTeX left in the plain text of {text!r}"
    assert sum("$" in c.statement for c in REGISTRY.values()) >= 50
