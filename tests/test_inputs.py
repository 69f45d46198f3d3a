"""theory.io.inputs: every hostile input file costs one InputError line naming the file and field,
never a traceback or a hang; theory.io.files: a full disk costs one OutputError line, old file kept."""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

from theory.io.cli import UsageError
from theory.io.inputs import (
    ANY,
    MAX_DEPTH,
    Checked,
    Choice,
    InputError,
    Nullable,
    OneOf,
    check_input_file,
    iter_jsonl,
    load_json,
    nesting_depth,
    parse_json,
)

SHAPE = {
    "members": [
        {"seed": int, "accuracy?": Nullable(float), "task": OneOf(Choice("number", "letter"), Nullable(int))}
    ],
    "lengths": Checked([int], bool, "a non-empty list of lengths"),
}
GOOD = {
    "members": [{"seed": 0, "accuracy": 0.5, "task": "letter"}, {"seed": 1, "accuracy": None, "task": None}],
    "lengths": [17, 50],
}


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_good_file_round_trips(tmp_path):
    path = _write(tmp_path, "good.json", json.dumps(GOOD).encode())
    assert load_json(path, SHAPE, "--plan") == GOOD


# each hostile file, and the words its one line must carry
HOSTILE = {
    "deep-list": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    "deep-object": (b'{"a":' * 5000 + b"1" + b"}" * 5000, "nested deeper than"),
    "latin-1": (
        '{"members": [], "lengths": [1], "note": "caf\xe9"}'.encode("latin-1"),
        "not UTF-8 text (byte",
    ),
    "truncated": (json.dumps(GOOD).encode()[:-7], "not valid JSON"),
    "empty": (b"", "not valid JSON"),
    "top-level-list": (b"[1, 2]", "top level: expected an object, got a list"),
    "wrong-type": (
        json.dumps({**GOOD, "members": [{"seed": "0", "task": "number"}]}).encode(),
        "field members[0].seed: expected an integer, got a string",
    ),
    "bool-is-not-int": (
        json.dumps({**GOOD, "members": [{"seed": True, "task": "number"}]}).encode(),
        "field members[0].seed: expected an integer, got a boolean",
    ),
    "missing-key": (json.dumps({"lengths": [1]}).encode(), "field members is missing"),
    "empty-lengths": (json.dumps({**GOOD, "lengths": []}).encode(), "expected a non-empty list of lengths"),
    "not-a-choice": (
        json.dumps({**GOOD, "members": [{"seed": 0, "task": "word"}]}).encode(),
        "field members[0].task: expected one of 'number', 'letter' or an integer or null, got a string",
    ),
    "nullable-wrong": (
        json.dumps({**GOOD, "members": [{"seed": 0, "task": "number", "accuracy": "high"}]}).encode(),
        "field members[0].accuracy: expected a number or null, got a string",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_file_is_one_line_naming_file_and_field(tmp_path, name):
    data, words = HOSTILE[name]
    path = _write(tmp_path, f"{name}.json", data)
    with pytest.raises(InputError) as caught:
        load_json(path, SHAPE, "--plan")
    message = str(caught.value)
    assert "\n" not in message and words in message
    assert message.startswith(f"--plan: {path}")
    assert isinstance(caught.value, UsageError)  # every dispatcher prints it as one line, exit 2


@pytest.mark.parametrize("kind", ["fifo", "directory", "missing", "device"])
def test_only_regular_files_are_read_and_a_fifo_never_blocks(tmp_path, kind):
    path = tmp_path / "input.json"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a plain open() would block forever
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path = "/dev/zero"  # endless: a plain read() would never finish
    words = {
        "fifo": "is a FIFO",
        "directory": "is a directory",
        "missing": "does not exist",
        "device": "is a character device",
    }[kind]
    with pytest.raises(InputError, match=words):
        check_input_file(path, "--accuracy")
    with pytest.raises(InputError, match=words):
        load_json(path, ANY, "--accuracy")


def test_a_symlink_to_a_regular_file_is_read(tmp_path):
    target = _write(tmp_path, "t.json", b'{"a": 1}')
    (tmp_path / "link.json").symlink_to(target)
    assert load_json(tmp_path / "link.json", {"a": int}) == {"a": 1}


def test_nesting_depth_ignores_brackets_in_strings_and_escaped_quotes():
    assert nesting_depth('{"a": "[[[[{{", "b": [1, {"c": []}], "d": "\\"[["}') == 4
    assert nesting_depth("[]") == 1 and nesting_depth("1") == 0
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(ok, "x") is not None
    with pytest.raises(InputError, match="nested deeper"):
        parse_json("[" + ok + "]", "x")


def test_parse_json_names_its_source_for_a_reply():
    with pytest.raises(
        InputError, match="^the endpoint's reply: field choices: expected a list, got an integer$"
    ):
        parse_json('{"choices": 3}', "the endpoint's reply", {"choices": [dict]})


def test_star_keys_are_checked_and_named_keys_are_not_double_checked():
    shape = {"meta": str, "*": [int]}
    assert parse_json('{"meta": "m", "a": [1], "b": []}', "f", shape)
    with pytest.raises(InputError, match="field b\\[1\\]: expected an integer"):
        parse_json('{"meta": "m", "a": [1], "b": [1, "x"]}', "f", shape)


def test_jsonl_forgives_only_a_torn_last_line(tmp_path):
    torn = _write(tmp_path, "m.jsonl", b'{"step": 0}\n{"step": 1}\n{"ste')
    assert list(iter_jsonl(torn, {"step": int})) == [{"step": 0}, {"step": 1}]
    with pytest.raises(InputError, match="line 3: not valid JSON"):
        list(iter_jsonl(torn, {"step": int}, torn_last_line_ok=False))
    inner = _write(tmp_path, "bad.jsonl", b'{"step": 0}\n{"ste\n{"step": 2}\n')
    with pytest.raises(InputError, match="bad.jsonl line 2: not valid JSON"):
        list(iter_jsonl(inner, {"step": int}))
    ended = _write(
        tmp_path, "ended.jsonl", b'{"step": 0}\n{"step": "1"}\n'
    )  # a complete line of the wrong type
    with pytest.raises(InputError, match="line 2: field step: expected an integer"):
        list(iter_jsonl(ended, {"step": int}))


def test_a_full_disk_in_an_atomic_write_is_one_line_and_keeps_the_old_file(tmp_path):
    """RLIMIT_FSIZE makes every write past the limit fail with EFBIG, as a full disk fails with
    ENOSPC: the writer must say so in one OutputError and leave the old file whole."""
    path = tmp_path / "result.json"
    path.write_text("old result")
    script = textwrap.dedent(f"""
        from theory.io.files import OutputError, atomic_write_text
        try:
            atomic_write_text({str(path)!r}, "x" * 100_000)
        except OutputError as error:
            print(error)
    """)

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cannot write {path}: File too large") and done.stdout.count("\n") == 1
    assert path.read_text() == "old result"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
