"""``python -m training study``, issue 29 classes 4 and 5: every file a study reads (the plan,
member.json, the stage outputs, the shipped summary) that is damaged or hostile is one line,
exit 2, naming file and field, with nothing written and no stage started.

Split from test_study_safety.py (whose helpers and ``mini`` fixture it uses) because it is one
defect class with its own table of cases.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import test_study_safety
from test_study_safety import MEMBER, cli, one_line, snapshot

mini = test_study_safety.mini  # the fixture: pytest finds it under this name in this module too

RECIPE = {"task": "letter", "seed": 1, "preset": "paper", "set": []}
LENGTHS, BOTH = MEMBER / "length_generalisation.json", ("run", "collect")


def _edit(change):
    """The file's JSON, changed in place by ``change(document)``."""

    def make(data: bytes) -> bytes:
        document = json.loads(data)
        change(document)
        return json.dumps(document).encode()

    return make


TRUNCATED = ("truncated", lambda data: data[: len(data) // 2], "not valid JSON")
NESTED = ("nested", lambda data: b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than")
LATIN1 = ("latin-1", lambda data: '{"name": "étude"}'.encode("latin-1"), "not UTF-8")
EMPTY = ("empty", lambda data: b"", "not valid JSON")
FIFO = ("fifo", "fifo", "is a FIFO, not a regular file")
FOLDER = ("folder", "folder", "is a directory, not a regular file")
HOSTILE = [  # (file, (case, make, what the line says), modes)
    *[("plan.json", case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, EMPTY, FIFO, FOLDER)],
    ("plan.json", ("a-list", lambda data: b"[]", "top level: expected an object, got a list"), BOTH),
    *[(MEMBER / "member.json", case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, FIFO, FOLDER)],
    (
        MEMBER / "member.json",
        (
            "seed-a-string",
            _edit(lambda d: d.update(seed="1")),
            "field seed: expected an integer, got a string",
        ),
        BOTH,
    ),
    (MEMBER / "member.json", ("set-missing", _edit(lambda d: d.pop("set")), "field set is missing"), BOTH),
    *[(LENGTHS, case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, FIFO)],
    (
        LENGTHS,
        (
            "accuracy-a-string",
            _edit(lambda d: d.update(accuracy="high")),
            "field accuracy: expected a list, got a string",
        ),
        BOTH,
    ),
    (LENGTHS, ("ragged", _edit(lambda d: d["accuracy"].pop()), "as long as lengths"), BOTH),
    (LENGTHS, ("hop-not-a-count", _edit(lambda d: d["per_hop"].update(x=[])), "field per_hop: "), BOTH),
    (
        MEMBER / "test_accuracy.json",
        (
            "per-hop-a-list",
            _edit(lambda d: d.update(per_hop=[1.0])),
            "field per_hop: expected an object, got a list",
        ),
        BOTH,
    ),
    (
        MEMBER / "analysis.json",
        (
            "scores-a-string",
            _edit(lambda d: d["scores"].update(positional="x")),
            "field scores.positional: expected a list",
        ),
        BOTH,
    ),
    (
        MEMBER / "dilution.json",
        (
            "gap-a-list",
            _edit(lambda d: d["dilution"]["layers"][0].update(gap=[1.0])),
            "field dilution.layers[0].gap: expected an object",
        ),
        BOTH,
    ),
    (
        MEMBER / "dilution.json",
        (
            "grid-mismatch",
            _edit(lambda d: d["dilution"]["lengths"].__setitem__(0, 25)),
            "both grids must start at the same length",
        ),
        ("collect",),
    ),  # collect compares them
    (MEMBER / "train.json", TRUNCATED, BOTH),
    (Path("ship") / "summary.json", TRUNCATED, ("collect",)),
    (
        Path("ship") / "summary.json",
        ("members-a-list", lambda data: b'{"members": []}', "field members: expected an object, got a list"),
        ("collect",),
    ),
]


@pytest.fixture
def no_hang():
    """A read that blocks (a FIFO) fails the test instead of hanging it."""

    def expired(*_):
        raise TimeoutError("the command blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    "mode, name, case",
    [(mode, name, case) for name, case, modes in HOSTILE for mode in modes],
    ids=lambda v: str(v) if isinstance(v, (str, Path)) else v[0] if isinstance(v, tuple) else "",
)
def test_a_damaged_or_hostile_study_file_is_one_line_exit_2(
    capsys, tmp_path, mini, no_hang, mode, name, case
):
    _, make, says = case
    (tmp_path / MEMBER / "member.json").write_text(json.dumps(RECIPE))
    if name == Path("ship") / "summary.json":
        assert cli(capsys, mini, "--collect")[0] == 0  # a summary to damage
    target = tmp_path / name
    data = target.read_bytes() if target.is_file() else b"{}"
    target.unlink(missing_ok=True)
    if make == "fifo":
        os.mkfifo(target)
    elif make == "folder":
        target.mkdir()
    else:
        target.write_bytes(make(data))
    before = snapshot(tmp_path)
    code, out, err = cli(capsys, mini, *(["--collect"] if mode == "collect" else ["--no-progress"]))
    line = one_line(err)
    assert code == 2 and out == "", err
    assert str(target) in line and says in line, line
    assert snapshot(tmp_path) == before  # nothing written, no stage started (no logs/)
