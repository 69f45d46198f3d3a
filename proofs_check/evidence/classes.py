"""What a verified statement rests on (issue 42): its evidence class.

A check that finds no counterexample says "verified" about a statement over infinitely many
n or theta just as it does about a finite one; the class says which it is:

* ``proved``: a written argument whose steps are each checked when the claim runs.  A step is
  its text (plain-text math) and a callable that returns True when the step holds (sympy
  identities, exact rationals, certified intervals on a compact set after a stated
  reduction); anything else, or an exception, fails the step, and a failed step turns the
  claim's outcome into an error (exit 1) whatever its finite checks found.
* ``exhaustive``: the statement is finite and every case was checked; ``cases`` says which.
* ``finite cases``: the statement ranges over infinitely many cases and only finitely many
  were checked; ``cases`` says which, e.g. "every n <= 1e12 at 26 angles".  An argument one
  of whose steps is checked only on finitely many cases (``Step.cases``) is of this class too,
  whatever its other steps: ``proved`` classes it so, and its steps still run and are shown.

The words a reader sees for each class are ``verdicts``'s; this module only holds and runs them.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass

PROVED, EXHAUSTIVE, FINITE_CASES = "proved", "exhaustive", "finite cases"
CLASSES = (PROVED, EXHAUSTIVE, FINITE_CASES)


@dataclass(frozen=True)
class Step:
    """One step of an argument: ``text`` says it, ``check()`` returns True when it holds, ``how``
    names the kind of check (e.g. "sympy identity", "exact rationals", "arb, compact set")."""

    text: str
    check: Callable[[], object]
    how: str
    cases: str = (
        ""  # non-empty: the step is checked only on these finitely many cases (not for its whole range)
    )

    def checked_by(self) -> str:
        return f"{self.check.__module__}.{getattr(self.check, '__qualname__', repr(self.check))}"

    def source(self) -> str:
        """The repository-relative file of the check (the report names it beside the step)."""
        return self.check.__module__.replace(".", "/") + ".py"


@dataclass(frozen=True)
class Evidence:
    cls: str
    cases: str = ""  # exhaustive / finite cases: which cases were checked; proved: the scope, if narrower
    steps: tuple = ()  # of Step, in the argument's order (proved only)

    def __post_init__(self):
        if self.cls not in CLASSES:
            raise ValueError(f"evidence class must be one of {CLASSES}, got {self.cls!r}")
        if self.cls == PROVED and (not self.steps or any(step.cases for step in self.steps)):
            raise ValueError("a proved statement needs its steps, each checked over its whole range")
        if self.cls != PROVED and not self.cases.strip():
            raise ValueError(f"a {self.cls} statement names its cases")
        if self.cls == EXHAUSTIVE and self.steps:
            raise ValueError("an exhaustive statement has no steps")
        if not all(isinstance(step, Step) for step in self.steps):
            raise TypeError("steps must be Step")


def proved(*steps: Step, scope: str = "") -> Evidence:
    """An argument: "proved" when every step is checked over its whole range; where a step is
    checked only on finitely many cases (``Step.cases``), the argument is shown and run all the
    same, but the statement is classed as ``finite cases``, naming those steps and cases."""
    partial = [(number, step.cases) for number, step in enumerate(steps, 1) if step.cases]
    if not partial:
        return Evidence(PROVED, scope, tuple(steps))
    named = "; ".join(f"step {number} only for {cases}" for number, cases in partial)
    return Evidence(
        FINITE_CASES,
        f"a written argument whose steps are checked over their whole range except: {named}"
        + (f" ({scope})" if scope else ""),
        tuple(steps),
    )


def exhaustive(cases: str) -> Evidence:
    return Evidence(EXHAUSTIVE, cases)


def finite_cases(cases: str) -> Evidence:
    return Evidence(FINITE_CASES, cases)


def run_steps(evidence: Evidence) -> list[dict]:
    """Every step of a proved statement, checked in order (each runs even after a failure, so
    the report names every broken step); one row per step."""
    rows = []
    for number, step in enumerate(evidence.steps, 1):
        row = {
            "step": number,
            "text": step.text,
            "how": step.how,
            "checked_by": step.checked_by(),
            "source": step.source(),
        }
        try:
            result = step.check()
            row["passed"] = result is True
            if result is not True:
                row["failure"] = f"the check returned {result!r}, not True"
        except Exception as error:  # a step that cannot be checked is a failed step, never a pass
            row["passed"] = False
            row["failure"] = f"{type(error).__name__}: {error}"
            row["traceback"] = traceback.format_exc()
        rows.append(row)
    return rows


def describe(evidence: Evidence | None) -> dict | None:
    """The class as the JSON results and the report show it (steps without their results)."""
    if evidence is None:
        return None
    out = {"class": evidence.cls, "cases": evidence.cases}
    if evidence.steps:
        out["steps"] = [
            {"step": i, "text": s.text, "how": s.how, "checked_by": s.checked_by(), "source": s.source()}
            for i, s in enumerate(evidence.steps, 1)
        ]
    return out
