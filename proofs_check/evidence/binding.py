"""A statement's printed formulas bound to the objects its check evaluates (issue 42).

A bound statement is composed from a template and named parts (issue 43: the template is the
statement's LaTeX-like source, ``$...$`` around its mathematics, and a part's text is its LaTeX,
so the source the report typesets is the text that is bound), each a ``theory.formula``
``Formula`` or ``Condition`` that the check evaluates (named by module and attribute, read
afresh at every check, so replacing the object is seen too).  ``problems`` compares the
registry's statement, as it is when the claim runs, with the template filled with the parts'
current texts: a printed formula edited without its check, or a check's formula replaced
without the text, is a mismatch, and the runner then records the outcome as undecided (a
CHANGED line, exit 1): the statement shown is not the one that was checked.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

__all__ = ["Part", "part", "bound_statement", "BOUND", "problems"]


@dataclass(frozen=True)
class Part:
    module: str
    name: str

    def current(self):
        return getattr(importlib.import_module(self.module), self.name)


def part(module, name: str) -> Part:
    """The formula ``name`` of ``module`` (a module object or its dotted name)."""
    return Part(module if isinstance(module, str) else module.__name__, name)


@dataclass(frozen=True)
class Bound:
    template: str  # the statement's source with {slot} for each part; every other brace is LaTeX's
    parts: dict  # slot -> Part

    def render(self) -> str:
        return SLOT.sub(
            lambda m: self.parts[m.group(1)].current().text if m.group(1) in self.parts else m.group(),
            self.template,
        )


# a slot: {name} of two characters or more, not a LaTeX command's argument (\mathrm{margin}, e^{2B})
SLOT = re.compile(r"(?<![A-Za-z\\^_])\{([A-Za-z_][A-Za-z0-9_]+)\}")
BOUND: dict[str, Bound] = {}


def bound_statement(claim_id: str, template: str, **parts: Part) -> str:
    """The statement text of ``claim_id`` composed from ``template`` and ``parts``; remembered so
    that every run of the claim can compare the registry's text with it."""
    BOUND[claim_id] = Bound(template, parts)
    return BOUND[claim_id].render()


def problems(claim) -> list[str]:
    """Why the registry's statement of ``claim`` is not the one its check evaluates (empty: it is)."""
    bound = BOUND.get(claim.id)
    if bound is None:
        return []
    out = [
        f"the statement does not print {p.current().text!r} ({p.module}.{p.name}), the formula its check "
        f"evaluates"
        for p in bound.parts.values()
        if p.current().text not in claim.statement
    ]
    if not out and claim.statement != bound.render():
        out.append("the statement's text differs from the one composed of the formulas its check evaluates")
    return out
