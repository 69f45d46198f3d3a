"""Formulas that are printed and evaluated from one object (issue 42).

A claim's statement used to print a formula as words while its check evaluated a separate
transcription, so a statement whose printed formula was changed still verified.  A
``Formula`` is the printed text itself: ``expr`` is that text parsed (sympy), and checks
evaluate ``expr`` (``evaluate``: certified arb balls; ``value``: exact rationals / sympy), so
what a statement prints is what its check computes.  ``Condition`` does the same for a
printed inequality such as "2n theta' < omega".

The plain-text math of the statements: implicit multiplication ("2n theta'", "2 sin(x) sin(y)"),
function application without parentheses ("1 - cos omega"), "^" for powers, "e^(x)" for
exp(x), "min{a, b}" and "max(a, b)", "ceil(x)"; "theta'" is the symbol theta'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import flint
import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_application,
    implicit_multiplication,
    parse_expr,
    standard_transformations,
)

__all__ = ["Formula", "Condition", "parse", "to_arb", "THETA_PRIME"]

THETA_PRIME = sympy.Symbol("theta'")
_TRANSFORMS = standard_transformations + (implicit_multiplication, implicit_application, convert_xor)
_NAMES = {
    "theta_prime": THETA_PRIME,
    "pi": sympy.pi,
    "cos": sympy.cos,
    "sin": sympy.sin,
    "exp": sympy.exp,
    "ln": sympy.log,
    "min": sympy.Min,
    "max": sympy.Max,
    "ceil": sympy.ceiling,
    "floor": sympy.floor,
}


def parse(text: str) -> sympy.Expr:
    """The plain-text formula ``text`` as a sympy expression (module docstring); every other name
    becomes a symbol of that name."""
    s = text.replace("theta'", "theta_prime").replace("{", "(").replace("}", ")")
    s = re.sub(r"\be\^\(", "exp(", s)
    return parse_expr(s, local_dict=dict(_NAMES), transformations=_TRANSFORMS)


def to_arb(expr, env: dict):
    """``expr`` as an arb ball, symbols read from ``env`` (name -> arb or int), in the caller's
    working precision.  Only what the statements use: + * ^, cos sin exp log min max, pi."""
    if expr.is_Symbol:
        return flint.arb(env[expr.name]) if isinstance(env[expr.name], int) else env[expr.name]
    if expr.is_Integer:
        return flint.arb(int(expr))
    if expr.is_Rational:
        return flint.arb(int(expr.p)) / int(expr.q)
    if expr is sympy.pi:
        return flint.arb.pi()
    args = [to_arb(a, env) for a in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if expr.is_Pow:
        exponent = expr.args[1]
        return args[0] ** int(exponent) if exponent.is_Integer else args[0] ** args[1]
    unary = {sympy.cos: "cos", sympy.sin: "sin", sympy.exp: "exp", sympy.log: "log"}
    if expr.func in unary:
        return getattr(args[0], unary[expr.func])()
    if expr.func in (sympy.Min, sympy.Max):
        out = args[0]
        for a in args[1:]:
            out = out.min(a) if expr.func is sympy.Min else out.max(a)
        return out
    raise TypeError(f"to_arb: {expr.func.__name__} is not evaluated here ({expr})")


@dataclass(frozen=True)
class Formula:
    """A printed formula and what it means: ``text`` as the statement prints it, ``expr`` parsed
    from it (never given separately, so the two cannot drift apart)."""

    text: str
    expr: sympy.Expr = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "expr", parse(self.text))

    def __str__(self) -> str:
        return self.text

    def evaluate(self, **env):
        """The formula as an arb ball at ``env`` (symbol name -> arb ball or int); theta' is
        passed as ``theta_prime``."""
        if "theta_prime" in env:
            env["theta'"] = env.pop("theta_prime")
        return to_arb(self.expr, env)

    def exact(self, **values) -> sympy.Expr:
        """The formula with exact values substituted (sympy numbers or integers)."""
        return self.expr.subs(
            {sympy.Symbol("theta'" if k == "theta_prime" else k): v for k, v in values.items()}
        )


@dataclass(frozen=True)
class Condition:
    """A printed inequality "lhs < rhs" (or <=, >=, >) with the same parse as ``Formula``."""

    text: str
    relation: sympy.Rel = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        match = re.fullmatch(r"(.+?)\s*(<=|>=|<|>)\s*(.+)", self.text)
        if match is None:
            raise ValueError(f"not an inequality: {self.text!r}")
        lhs, op, rhs = match.groups()
        object.__setattr__(self, "relation", sympy.Rel(parse(lhs), parse(rhs), op))

    def __str__(self) -> str:
        return self.text
