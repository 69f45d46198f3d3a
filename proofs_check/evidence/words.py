"""Python values as a summary's words: a check's sentence is read by people (``--json``, ``--list``,
the terminal table and the report), so it says "none", "yes" and "no", not ``None``, ``True`` and
``False``, and a counterexample's fields as "input aa ba, position 1", not a dict literal."""

from __future__ import annotations


def said(value, none: str = "none") -> str:
    """``value`` in words: None as ``none``, booleans as yes/no, a mapping as "key value, ...", a
    sequence as its items separated by spaces (a token sequence reads as the input it is)."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{said(k, none)} {_nested(v, none)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return " ".join(_nested(v, none) for v in value) if value else "nothing"
    return str(value)


def _nested(value, none: str) -> str:
    text = said(value, none)
    return (
        f"({text})" if isinstance(value, dict) or (isinstance(value, (list, tuple)) and "," in text) else text
    )


def listed(values, none: str = "none") -> str:
    """A sequence as prose, "a2, a1", not ``['a2', 'a1']``: each item in words (``said``), commas
    between; an empty sequence is ``none``."""
    return ", ".join(said(v, none) for v in values) if values else none


def spans(numbers, none: str = "none") -> str:
    """Integers as prose with runs shortened: ``[1, 2, 3, 4]`` is "1 to 4", ``[0, 2, 3, 4, 9]``
    "0, 2 to 4, 9" (only rising runs of three or more by steps of one); an empty sequence is ``none``."""
    numbers = list(numbers)
    if not numbers:
        return none
    runs = [[numbers[0]]]
    for x in numbers[1:]:
        if x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    return ", ".join(
        f"{run[0]} to {run[-1]}" if len(run) >= 3 else ", ".join(str(x) for x in run) for run in runs
    )


def angle_said(text: str) -> str:
    """A sympy angle as the summaries write one: ``2*pi/3`` is "2 pi/3", ``1/10**6`` "1/10^6"."""
    return str(text).replace("**", "^").replace("*", " ")
