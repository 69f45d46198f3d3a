"""Every ``--help`` reads as finished text: each command's description is a sentence (it ends with a
full stop, not at a comma where a docstring line was cut), no reStructuredText markup (````x````)
leaks into the terminal, and every argument says what it is for.

The parsers are walked, not listed: every subcommand of ``python -m training`` (nested ones like
``cache list`` included), ``python -m proofs_check``, ``python -m figures``,
``python -m proofs_check.figure5a`` and ``python -m training.run.hf_files``.
"""

from __future__ import annotations

import argparse

import pytest

import figures.__main__ as figures_main
import proofs_check.__main__ as proofs_main
import proofs_check.figure5a as figure5a
import training.__main__ as training_main
from training.run import hf_files


def text_problem(text, what: str) -> str | None:
    """Why ``text`` is no finished help text, or None."""
    if not text or not text.strip():
        return f"{what}: empty"
    if "``" in text:
        return f"{what}: reStructuredText double backticks in {text!r}"
    if text.rstrip()[-1] in ",:;":
        return f"{what}: stops mid-sentence ({text.rstrip()[-40:]!r})"
    return None


def parser_problems(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """Every problem of ``parser`` and of the subcommand parsers under it."""
    found = [text_problem(parser.description, f"{name}: description")]
    if parser.description and parser.description.strip() and not parser.description.rstrip().endswith("."):
        found.append(f"{name}: description is not a sentence ending with a full stop: {parser.description!r}")
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the one-line list that the parent's --help shows
                found.append(text_problem(choice.help, f"{name} {choice.dest}: summary"))
            for sub, subparser in action.choices.items():
                found += parser_problems(f"{name} {sub}", subparser)
            continue
        label = "/".join(action.option_strings) or action.dest
        found.append(text_problem(action.help, f"{name} {label}: help"))
    return [problem for problem in found if problem]


def all_parsers() -> dict:
    return {
        "python -m training": training_main.build_parser(),
        "python -m proofs_check": proofs_main.build_parser(),
        "python -m figures": figures_main.build_parser(),
        "python -m proofs_check.figure5a": figure5a.build_parser(),
        "python -m training.run.hf_files": hf_files.build_parser(),
    }


def test_every_help_text_is_finished():
    problems = [p for name, parser in all_parsers().items() for p in parser_problems(name, parser)]
    assert not problems, "\n".join(problems)


def test_the_walk_reaches_every_training_command_and_nested_ones():
    sub = next(a for a in training_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) >= {
        "data",
        "train",
        "bench",
        "llm",
        "evaluate",
        "analyze",
        "dilution",
        "study",
        "cache",
    }
    cache = next(a for a in sub.choices["cache"]._actions if isinstance(a, argparse._SubParsersAction))
    assert set(cache.choices) == {"list", "clean"}


@pytest.mark.parametrize(
    "description, help_text, word",
    [
        ("Accuracy against total input length,", "fine", "mid-sentence"),
        ("``python -m training x``: does things.", "fine", "backticks"),
        ("Does things", "fine", "full stop"),
        ("Does things.", None, "empty"),
        ("Does things.", "the answer, then", None),
    ],
)
def test_the_check_catches_what_it_is_for(description, help_text, word):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--task", help=help_text)
    problems = parser_problems("x", parser)
    if word is None:
        assert not problems
    else:
        assert problems and word in problems[0], problems


@pytest.mark.parametrize("name", sorted(all_parsers()))
def test_help_prints(name, capsys):
    with pytest.raises(SystemExit) as exit_:
        all_parsers()[name].parse_args(["--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out
