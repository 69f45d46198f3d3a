"""Mathematics in the report's texts (issue 43): one LaTeX-like source, three renderings.

A claim's statement, a proof step's text, an evidence class's cases and a check's evidence
sentence keep their mathematics in one source form: LaTeX between ``$...$`` inside the words
("$\\Delta_{\\mathrm{Index}}(n) \\le \\min\\{1 - \\cos\\theta, 2\\pi^2/n^2\\}$ for every $n > 1$").
From it

* ``html`` gives index.html MathML (``latex2mathml``: no script, Chromium renders it), with
  the words HTML-escaped;
* ``markdown`` gives REPORT.md ``$...$`` math as GitHub renders it (``markdown_math``: the few
  LaTeX forms that Markdown's backslash escapes or HTML would eat are spelled another way),
  with the words escaped by the caller's escaper;
* ``plain`` gives the terminal (``--list``, the run's table) plain-text math
  (``theory.formula.plain``: "Delta_Index(n) <= min{1 - cos theta, 2 pi^2/n^2}").

A lone ``$`` (no closing one on the text) stays a dollar sign in the words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape as html_escape

from theory.formula import plain as plain_math

__all__ = ["segments", "plain", "html", "markdown", "mathml", "markdown_math", "MathError"]

MATH = re.compile(r"\$([^$]+)\$")


class MathError(ValueError):
    """A ``$...$`` segment that latex2mathml cannot convert, or converts to an error element."""


def segments(text: str) -> list[tuple[str, bool]]:
    """``text`` as (piece, is_math) in order; math pieces without their dollars."""
    out, at = [], 0
    for match in MATH.finditer(text):
        if match.start() > at:
            out.append((text[at : match.start()], False))
        out.append((match.group(1).strip(), True))
        at = match.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def plain(text: str) -> str:
    """``text`` with each ``$...$`` as plain-text math, for a terminal."""
    return "".join(plain_math(piece) if math else piece for piece, math in segments(text))


@lru_cache(maxsize=4096)
def mathml(latex: str) -> str:
    """``latex`` as one inline MathML element; the source rides along as ``alttext``."""
    from latex2mathml.converter import convert

    try:
        element = convert(latex)
    except Exception as error:  # latex2mathml raises its own exception classes
        raise MathError(f"latex2mathml cannot convert ${latex}$: {type(error).__name__}: {error}") from error
    if "<merror" in element:
        raise MathError(f"latex2mathml converts ${latex}$ to an error element")
    return element.replace("<math ", f'<math alttext="{html_escape(latex)}" ', 1)


def html(text: str) -> str:
    """``text`` for index.html: words escaped, mathematics as MathML."""
    return "".join(mathml(piece) if math else html_escape(piece) for piece, math in segments(text))


# forms GitHub's Markdown would change before its math renderer sees them: a backslash before
# ASCII punctuation is a Markdown escape ("\{" -> "{"), "<" may open an HTML tag, "|" ends a
# table cell; each has a LaTeX spelling without them
_MARKDOWN_SAFE = (
    ("\\{", "\\lbrace "),
    ("\\}", "\\rbrace "),
    ("\\|", "\\Vert "),
    ("\\,", "\\thinspace "),
    ("\\;", "\\medspace "),
    ("\\!", "\\negthinspace "),
    ("\\ ", "\\space "),
    ("<", "\\lt "),
    (">", "\\gt "),
    ("|", "\\vert "),
    ("*", "\\ast "),  # t^* twice on a line would otherwise read as Markdown emphasis
)


def markdown_math(latex: str) -> str:
    """``latex`` spelled so that GitHub's ``$...$`` renders it unchanged."""
    for old, new in _MARKDOWN_SAFE:
        latex = latex.replace(old, new)
    return latex.strip()


def markdown(text: str, escape) -> str:
    """``text`` for REPORT.md: words through ``escape`` (the renderer's), mathematics as ``$...$``."""
    return "".join(
        f"${markdown_math(piece)}$" if math else escape(piece).replace("$", "\\$")
        for piece, math in segments(text)
    )
