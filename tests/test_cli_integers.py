"""Integers on the command line are ASCII digits only (theory.io.cli.parse_int).

Python's ``int`` reads "1_0" as 10 and "٣" (Arabic-Indic three) as 3, so such a typo silently
ran another seed or count than the one typed.  Every integer option of every command goes
through the same rule; a new ``type=int`` anywhere fails ``test_no_option_reads_with_python_int``.
"""

from __future__ import annotations

import pytest
from test_output_policy import parsers

from theory.io.cli import ascii_int, int_list, parse_int

TYPOS = ["1_0", "٣", "+3", " 3", "3.0", "0x10", "", "-", "1e3"]


@pytest.mark.parametrize("text", TYPOS)
def test_parse_int_refuses_what_python_int_would_read_or_guess(text):
    with pytest.raises(ValueError, match="digits 0-9"):
        parse_int(text)


@pytest.mark.parametrize("text, value", [("0", 0), ("17", 17), ("-4", -4), ("007", 7)])
def test_parse_int_reads_plain_digits(text, value):
    assert parse_int(text) == value


def test_int_lists_take_the_same_rule():
    assert int_list("1, 2,3,") == [1, 2, 3]
    for text in ("1,2_0", "1,٣", "1,+2"):
        with pytest.raises(ValueError, match="digits 0-9"):
            int_list(text)


def integer_options():
    """(command, flag, parser) of every option read by ascii_int."""
    return [
        (command, action.option_strings[-1], parser)
        for command, (parser, _) in parsers().items()
        for action in parser._actions
        if action.type is ascii_int
    ]


def test_no_option_reads_with_python_int():
    plain = [
        f"{command} {action.option_strings[-1]}"
        for command, (parser, _) in parsers().items()
        for action in parser._actions
        if action.type is int
    ]
    assert not plain, f"options read with int(), which takes '1_0' and '٣': {plain}"
    assert len(integer_options()) >= 20  # the enumeration found the options, not nothing


@pytest.mark.parametrize("typo", ["1_0", "٣"])
def test_every_integer_option_refuses_a_typo_in_one_line(typo, capsys):
    for command, flag, parser in integer_options():
        with pytest.raises(SystemExit) as exit_:
            parser.parse_known_args([flag, typo])
        assert exit_.value.code == 2, (command, flag)
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err and "digits 0-9" in err, (command, flag, err)


@pytest.mark.parametrize(
    "argv, word",
    [
        (["train", "--task", "number", "--preset", "smoke", "--out", "X", "--seed", "1_0"], "--seed"),
        (["train", "--task", "number", "--preset", "smoke", "--out", "X", "--seeds", "0,٣"], "--seeds"),
        (
            [
                "llm",
                "--backend",
                "openai",
                "--model",
                "m",
                "--task",
                "number",
                "--json",
                "x.json",
                "--seeds",
                "0,1_0",
            ],
            "--seeds",
        ),
        (
            ["evaluate", "--run", "R", "--task", "number", "--lengths", "17,2_5", "--json", "x.json"],
            "--lengths",
        ),
        (["data", "--task", "number", "--count", "4", "--seed", "0", "--hops", "1,٢"], "--hops"),
    ],
)
def test_list_and_seed_options_refuse_typos_before_any_work(argv, word, tmp_path, monkeypatch, capsys):
    import training.__main__ as training_main

    monkeypatch.chdir(tmp_path)
    try:
        status = training_main.main(argv)
    except SystemExit as exit_:  # argparse's own refusal
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
