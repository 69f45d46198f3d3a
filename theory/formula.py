"""Formulas that are printed and evaluated from one object (issue 42).

A claim's statement used to print a formula as words while its check evaluated a separate
transcription, so a statement whose printed formula was changed still verified.  A
``Formula`` is the printed text itself: ``expr`` is that text parsed (sympy), and checks
evaluate ``expr`` (``evaluate``: certified arb balls; ``value``: exact rationals / sympy), so
what a statement prints is what its check computes.  ``Condition`` does the same for a
printed inequality such as "2n theta' < omega".

Issue 43: a formula's one source is LaTeX (``text``, e.g. ``1 + \\cos((n-1)\\theta')``), the form
the statements print between ``$...$`` and the report typesets; ``plain`` turns it into the
plain-text math below, which ``parse`` reads and the terminal shows, so the typeset, the printed
and the evaluated formula are one text.

The plain-text math: implicit multiplication ("2n theta'", "2 sin(x) sin(y)"),
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

__all__ = ["Formula", "Condition", "parse", "plain", "to_arb", "THETA_PRIME"]

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


_WORDS = {  # LaTeX command -> its plain-text word or sign
    **{
        g: g
        for g in ("alpha", "beta", "gamma", "delta", "epsilon", "theta", "lambda", "mu", "pi", "sigma", "tau")
    },
    **{g: g for g in ("omega", "phi", "Gamma", "Delta", "Sigma", "Omega", "Pi")},
    **{
        f: f
        for f in ("cos", "sin", "exp", "ln", "log", "min", "max", "arg", "argmax", "softmax", "mod", "sup")
    },
    **{"inf": "inf", "bmod": "mod", "varepsilon": "epsilon", "ell": "l"},
    **{"le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "ne": "!=", "neq": "!=", "lt": "<", "gt": ">"},
    **{"in": "in", "notin": "not in", "to": "->", "mapsto": "->", "approx": "~", "times": "x", "cdot": "*"},
    **{"ldots": "...", "dots": "...", "cdots": "...", "infty": "inf", "mid": "|", "lvert": "|", "rvert": "|"},
    **{"Vert": "||", "lVert": "||", "rVert": "||", "lceil": "ceil(", "rceil": ")", "lfloor": "floor("},
    **{"rfloor": ")", "langle": "<", "rangle": ">", "sum": "sum", "prod": "prod", "top": "T", "pm": "+-"},
    **{"lbrace": "{", "rbrace": "}", "quad": " ", "qquad": " ", "colon": ":", "setminus": "\\", "neg": "not"},
}
_SILENT = ("left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr", "displaystyle")  # sizing only
_STYLED = re.compile(r"\\(?:mathrm|text|operatorname|mathit|mathbf|mathbb|mathcal|mathsf|texttt)\s*")


def _group(s: str, i: int) -> tuple[str, int]:
    """The argument of a LaTeX command starting at ``s[i]`` (a {group} or one token) and where it ends."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i < len(s) and s[i] == "{":
        depth, j = 0, i
        while j < len(s):
            if s[j] == "\\":
                j += 2
                continue
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1 : j], j + 1
            j += 1
        raise ValueError(f"unbalanced braces in {s!r}")
    if i < len(s) and s[i] == "\\":
        match = re.match(r"\\[A-Za-z]+'*|\\.", s[i:])
        return match.group(), i + match.end()
    return s[i : i + 1], i + 1


def _simple(s: str) -> bool:
    """No sign, space or operator outside parentheses: ``s`` needs no parentheses around it."""
    depth, out = 0, []
    for ch in s:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        out.append(ch if depth == 0 else "")
    return re.fullmatch(r"[\w'.^()]*", "".join(out)) is not None


def plain(latex: str) -> str:
    """The LaTeX subset of the statements as plain-text math ("1 + \\cos((n-1)\\theta')" ->
    "1 + cos((n-1) theta')"): what ``parse`` reads and ``--list`` prints.  Plain text passes
    unchanged when it has no backslash, brace, "^{" or "_{"."""
    out, i, s = [], 0, latex
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            match = re.match(r"\\([A-Za-z]+)|\\(.)", s[i:])
            name, symbol = match.group(1), match.group(2)
            i += match.end()
            if symbol is not None:  # \{ \} \, \; \! \| \  \% ...
                out.append(
                    {"{": "{", "}": "}", ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "|": "||"}.get(
                        symbol, symbol
                    )
                )
            elif name in _SILENT:
                continue
            elif name == "frac":
                num, i = _group(s, i)
                den, i = _group(s, i)
                num, den = plain(num), plain(den)
                num = num if re.fullmatch(r"[^+\-]*", num) or _simple(num) else f"({num})"
                out.append(f"{num}/{den if _simple(den) else f'({den})'}")
            elif name == "sqrt":
                arg, i = _group(s, i)
                out.append(f"sqrt({plain(arg)})")
            else:
                if _STYLED.match("\\" + name + " "):
                    arg, i = _group(s, i)
                    word = plain(arg)
                else:
                    word = _WORDS.get(name, name)
                before = "".join(out)[-1:]
                if word[:1].isalnum() and before and (before.isalnum() or before in ")'"):
                    out.append(" ")
                out.append(word)
                if name in ("lvert", "lVert", "lceil", "lfloor", "langle"):  # an opening sign: no space after
                    i += len(s[i:]) - len(s[i:].lstrip(" "))
                after = re.match(r"\\([A-Za-z]+)", s[i:])
                follows_word = after is not None and after.group(1) not in _SILENT
                follows_word = follows_word and _WORDS.get(after.group(1), "a")[:1].isalnum()
                if word[-1:].isalnum() and i < len(s) and (s[i].isalnum() or follows_word):
                    out.append(" ")
        elif ch in "^_" and i + 1 < len(s) and s[i + 1] == "{":
            arg, i = _group(s, i + 1)
            arg = plain(arg)
            single = (
                r"\w+" if ch == "_" else r"\d+|[A-Za-z]'*"
            )  # a power of more than one token keeps its group
            out.append(ch + (arg if re.fullmatch(single, arg) else f"({arg})"))
        elif ch in "{}":
            i += 1
        elif ch == "~":
            out.append(" ")
            i += 1
        else:
            out.append(ch)
            i += 1
    text = re.sub(r"\( +", "(", re.sub(r" +\)", ")", re.sub(r"(?<![A-Za-z_])n_0(?!\w)", "n0", "".join(out))))
    return re.sub(r" {2,}", " ", text)


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
    """A printed formula and what it means: ``text`` as the statement prints it (LaTeX, between
    ``$...$``), ``expr`` parsed from its ``plain`` form (never given separately, so the two
    cannot drift apart)."""

    text: str
    expr: sympy.Expr = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "expr", parse(self.plain))

    @property
    def plain(self) -> str:
        return plain(self.text)

    def __str__(self) -> str:
        return self.plain

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
    """A printed inequality "lhs < rhs" (or \\le, \\ge, >) with the same parse as ``Formula``."""

    text: str
    relation: sympy.Rel = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        match = re.fullmatch(r"(.+?)\s*(<=|>=|<|>)\s*(.+)", self.plain)
        if match is None:
            raise ValueError(f"not an inequality: {self.text!r}")
        lhs, op, rhs = match.groups()
        object.__setattr__(self, "relation", sympy.Rel(parse(lhs), parse(rhs), op))

    @property
    def plain(self) -> str:
        return plain(self.text)

    def __str__(self) -> str:
        return self.plain
