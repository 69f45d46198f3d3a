"""No output lands on an input or in a folder another run owns; run locks (issue 29).

Classes: (1) an output that is an input of its command, or lies in another run's folder, is
refused before any work (training.cli_common.check_not_owned); the lock file is a regular file
or nothing (training.run.lock); (7) a checkpoint folder is locked with its run, so a second
train on it exits 2 naming the first; (6) analyze refuses checkpoints of another task or model;
(4/5) --accuracy and owner.json go through theory.io.inputs (a FIFO, deep nesting, wrong types).

Each case runs ``python -m training``'s main() in-process on copies of tiny smoke runs and checks
the exit status, the one stderr line and that no byte under the test's folder changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from training.__main__ import main
from training.cli_common import RUN_FILE_NAMES
from training.run import checkpoints, hf_files
from training.run.lock import LOCK_NAME
from training.run.loop import train
from training.run.ownership import OWNER_NAME
from training.run.setup import open_run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def smoke_run(out: Path, task: str = "number", overrides=()) -> Path:
    train(task, out, preset="smoke", steps=2, device="cpu", progress=False, overrides=overrides)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Three 2-step smoke runs (checkpoints 0 and 2 each): number, letter, number with one layer."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("guards")
    try:
        return {
            "number": smoke_run(root / "number"),
            "letter": smoke_run(root / "letter", "letter"),
            "narrow": smoke_run(root / "narrow", overrides=("model.n_layer=1",)),
        }
    finally:
        torch.set_num_threads(saved)


@pytest.fixture
def runs(made, tmp_path):
    """Copies of the runs (checkpoints and owner.json move along), a second number run "other",
    and an --accuracy file: each test may be refused on them without touching the originals."""
    copies = {
        name: Path(shutil.copytree(path, tmp_path / name, symlinks=True)) for name, path in made.items()
    }
    copies["other"] = Path(shutil.copytree(made["number"], tmp_path / "other", symlinks=True))
    accuracy = tmp_path / "lengths.json"
    accuracy.write_text(
        json.dumps({"lengths": [17, 25], "accuracy": [1.0, 0.5], "per_hop": {"1": [1.0, 0.5]}})
    )
    copies["accuracy"] = accuracy
    return copies


def digest(root: Path) -> dict:
    """Every path under root: a file's bytes, a link's target, a FIFO or folder by kind."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "dir" if path.is_dir() else "special"
    return found


def refused(argv, capsys, root: Path, *words) -> str:
    """Run main(argv); assert exit 2, one stderr line holding ``words``, nothing changed under root."""
    before = digest(root)
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit_:
        status = exit_.code
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2, lines
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    for word in words:
        assert str(word) in lines[0], lines
    assert digest(root) == before
    return lines[0]


def never(*_args, **_kwargs):
    raise AssertionError("the work started although the output was refused")


@pytest.fixture
def no_work(monkeypatch):
    """A refused command never reaches its work; were it reached, the test fails at once."""
    from training.analysis import dilution, dynamics, evaluate

    for module, name in (
        (evaluate, "length_generalisation"),
        (evaluate, "split_accuracy"),
        (dynamics, "analyse_run"),
        (dilution, "dilution_profile"),
    ):
        monkeypatch.setattr(module, name, never)


def test_the_guard_knows_every_file_a_run_owns():
    owned = {
        *checkpoints.RUN_FILES,
        *hf_files.TOKENIZER_FILES,
        hf_files.CARD,
        OWNER_NAME,
        LOCK_NAME,
        checkpoints.STATE_JSON,
        checkpoints.STATE_TENSORS,
    }
    assert owned == set(RUN_FILE_NAMES)


# --- class 1: an output is never an input, nor a file in another run's folder -------------------------

EVALUATE = ["evaluate", "--run", "{number}", "--task", "number", "--lengths", "17", "--json"]
ANALYZE = ["analyze", "--run", "{number}", "--task", "number", "--json"]
DILUTION = ["dilution", "--run", "{number}", "--task", "number", "--lengths", "17,25", "--json"]
DATA = ["data", "--task", "number", "--count", "4", "--seed", "0", "--out"]
TRAIN = ["train", "--task", "number", "--preset", "smoke", "--steps", "2", "--no-progress", "--out"]

LLM = ["llm", "--backend", "openai", "--model", "m", "--task", "number"]
CASES = {
    "evaluate --json RUN/model.safetensors": (EVALUATE + ["{number}/model.safetensors"], "input"),
    "evaluate --json RUN/config.json": (EVALUATE + ["{number}/config.json"], "input"),
    "evaluate --json RUN/../RUN/vocab.json": (EVALUATE + ["{number}/../number/vocab.json"], "input"),
    "evaluate --json LINK-to-RUN/recipe.json": (EVALUATE + ["{link}"], "input"),
    "evaluate --split --json RUN/metrics.jsonl": (
        [
            "evaluate",
            "--run",
            "{number}",
            "--task",
            "number",
            "--split",
            "test",
            "--json",
            "{number}/metrics.jsonl",
        ],
        "input",
    ),
    "analyze --json RUN/metrics.jsonl": (ANALYZE + ["{number}/metrics.jsonl"], "input"),
    "analyze --json RUN/checkpoints/owner.json": (
        ANALYZE + ["{number}/checkpoints/owner.json"],
        "checkpoint",
    ),
    "analyze --json RUN/checkpoints/step-000002/new.json": (
        ANALYZE + ["{number}/checkpoints/step-000002/new.json"],
        "a checkpoint of a training run",
    ),
    "analyze --json --checkpoint-dir's file": (
        ANALYZE + ["{other}/checkpoints/step-000000/config.json", "--checkpoint-dir", "{other}/checkpoints"],
        "input",
    ),
    "analyze --json OTHER_RUN/new.json": (ANALYZE + ["{other}/new.json"], "another run"),
    "dilution --json F --accuracy F": (DILUTION + ["{accuracy}", "--accuracy", "{accuracy}"], "input"),
    "dilution --json RUN/.lock": (DILUTION + ["{number}/.lock"], "input"),
    "data --out RUN/metrics.jsonl": (DATA + ["{other}/metrics.jsonl"], "a file of a training run"),
    "data --out RUN/checkpoints/step-000000/model.safetensors": (
        DATA + ["{other}/checkpoints/step-000000/model.safetensors"],
        "checkpoint",
    ),
    "train --force --out OTHER_RUN/checkpoints/step-000002": (
        TRAIN + ["{other}/checkpoints/step-000002", "--force"],
        "a checkpoint of a training run",
    ),
    "train --out OTHER_RUN/sub": (TRAIN + ["{other}/sub"], "another run"),
    "llm --json RUN/metrics.jsonl": (LLM + ["--json", "{other}/metrics.jsonl"], "a file of a training run"),
    "llm --replies RUN/checkpoints/owner.json": (
        LLM + ["--json", "{tmp}/new.json", "--replies", "{other}/checkpoints/owner.json"],
        "checkpoint",
    ),
    "llm --json MODEL/config.json of an hf model": (
        [
            "llm",
            "--backend",
            "hf",
            "--model",
            "{number}",
            "--task",
            "number",
            "--json",
            "{number}/config.json",
        ],
        "input",
    ),
    "train --out OTHER_RUN/checkpoints --force": (TRAIN + ["{other}/checkpoints", "--force"], "another run"),
    "train --checkpoint-dir OTHER_RUN": (TRAIN + ["{tmp}/new", "--checkpoint-dir", "{other}"], "another run"),
    "train --checkpoint-dir OTHER_RUN/checkpoints/step-000000": (
        TRAIN + ["{tmp}/new", "--checkpoint-dir", "{other}/checkpoints/step-000000"],
        "checkpoint",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_an_output_that_is_an_input_or_another_runs_file_is_refused(case, runs, tmp_path, no_work, capsys):
    argv, word = CASES[case]
    (tmp_path / "link").symlink_to(runs["number"] / "recipe.json")
    names = {**{k: str(v) for k, v in runs.items()}, "tmp": str(tmp_path), "link": str(tmp_path / "link")}
    refused([a.format(**names) for a in argv], capsys, tmp_path, word)
    assert not (tmp_path / "new").exists()


def test_results_next_to_the_run_they_describe_and_force_on_its_own_run_still_work(runs, capsys):
    run = runs["number"]
    assert (
        main(
            [
                "evaluate",
                "--run",
                str(run),
                "--task",
                "number",
                "--lengths",
                "17",
                "--count",
                "64",
                "--json",
                str(run / "length_generalisation.json"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads((run / "length_generalisation.json").read_text())["lengths"] == [17]
    assert (
        main(
            [
                "train",
                "--task",
                "number",
                "--preset",
                "smoke",
                "--steps",
                "2",
                "--no-progress",
                "--out",
                str(run),
                "--force",
            ]
        )
        == 0
    )
    capsys.readouterr()


# --- class 1: RUN/.lock is a regular file or nothing ------------------------------------------------


@pytest.mark.parametrize("kind", ["symlink", "dangling symlink", "fifo", "directory"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(kind, tmp_path, capsys):
    run, target = tmp_path / "run", tmp_path / "precious.txt"
    run.mkdir()
    target.write_text("not a lock\n")
    lock = run / LOCK_NAME
    {
        "symlink": lambda: lock.symlink_to(target),
        "dangling symlink": lambda: lock.symlink_to(tmp_path / "absent"),
        "fifo": lambda: os.mkfifo(lock),
        "directory": lock.mkdir,
    }[kind]()
    refused(TRAIN + [run], capsys, tmp_path, str(lock), "not a regular file")
    assert target.read_text() == "not a lock\n"


# --- class 7: two runs on one checkpoint folder ---------------------------------------------------


@pytest.mark.parametrize("where", ["outside both runs", "inside the first run"])
def test_second_train_on_a_checkpoint_folder_in_use_exits_2_naming_the_first(where, tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    ckpt = tmp_path / "ckpt" if where == "outside both runs" else first / "checkpoints"
    # the first run is past its claim (CKPT/owner.json names it) and has written nothing else yet:
    # without the checkpoint folder's lock, the second saw a start that failed and took the folder
    with open_run(first, ckpt if where == "outside both runs" else None, "number", resume=False, force=False):
        assert (ckpt / OWNER_NAME).is_file()
        line = refused(
            TRAIN + [second, "--checkpoint-dir", ckpt], capsys, tmp_path, f"pid {os.getpid()}", first
        )
        assert "in use by another train process" in line
    assert not second.exists()


# --- class 6: analyze refuses checkpoints that are not the run's ----------------------------------


@pytest.mark.parametrize("other, word", [("letter", "letter task"), ("narrow", "n_layer")])
def test_analyze_refuses_checkpoints_of_another_task_or_model(other, word, runs, tmp_path, no_work, capsys):
    refused(
        ANALYZE[:2]
        + [
            runs["number"],
            "--task",
            "number",
            "--json",
            tmp_path / "a.json",
            "--checkpoint-dir",
            runs[other] / "checkpoints",
        ],
        capsys,
        tmp_path,
        word,
        runs[other] / "checkpoints",
    )
    assert not (tmp_path / "a.json").exists()


# --- classes 4/5: hostile JSON inputs -------------------------------------------------------------


def _deep(n=5000):
    return "[" * n + "]" * n


ACCURACY_FILES = {
    "fifo": (None, "a FIFO"),
    "deeply nested": ('{"lengths": ' + _deep() + "}", "nested deeper"),
    "empty lengths": ('{"lengths": [], "accuracy": [], "per_hop": {}}', "field lengths"),
    "lengths of strings": ('{"lengths": ["17"], "accuracy": [1.0], "per_hop": {}}', "field lengths[0]"),
    "accuracy a string": ('{"lengths": [17], "accuracy": "high", "per_hop": {}}', "field accuracy"),
    "accuracy above 1": ('{"lengths": [17], "accuracy": [7], "per_hop": {}}', "field accuracy[0]"),
    "per_hop not an object": ('{"lengths": [17], "accuracy": [1.0], "per_hop": [1]}', "field per_hop"),
    "per_hop key not a hop": (
        '{"lengths": [17], "accuracy": [1.0], "per_hop": {"x": [1.0]}}',
        "field per_hop",
    ),
    "too few values": ('{"lengths": [17, 25], "accuracy": [1.0], "per_hop": {}}', "field accuracy"),
    "missing field": ('{"lengths": [17], "accuracy": [1.0]}', "field per_hop"),
    "not UTF-8": (b'{"lengths": [17], "accuracy": [1.0], "per_hop": {"\xe9": []}}', "not UTF-8"),
}


@pytest.mark.parametrize("case", ACCURACY_FILES)
def test_a_bad_accuracy_file_is_one_line_naming_file_and_field(case, runs, tmp_path, no_work, capsys):
    content, word = ACCURACY_FILES[case]
    path = tmp_path / "bad.json"
    if content is None:
        os.mkfifo(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    refused(
        DILUTION[:2]
        + [
            runs["number"],
            "--task",
            "number",
            "--lengths",
            "17,25",
            "--json",
            tmp_path / "d.json",
            "--accuracy",
            path,
        ],
        capsys,
        tmp_path,
        "--accuracy",
        path,
        word,
    )


OWNER_FILES = {
    "fifo": (None, "a FIFO"),
    "deeply nested": ('{"run": ' + _deep() + "}", "nested deeper"),
    "run not a string": ('{"run": 3}', "field run"),
    "run empty": ('{"run": ""}', "field run"),
    "a list": ("[]", "top level"),
    "not UTF-8": (b'{"run": "\xff"}', "not UTF-8"),
}


@pytest.mark.parametrize("flag", ["--checkpoint-dir", "--out"])
@pytest.mark.parametrize("case", OWNER_FILES)
def test_a_bad_owner_json_is_one_line_naming_it(case, flag, tmp_path, capsys):
    content, word = OWNER_FILES[case]
    folder = tmp_path / "ckpt"
    folder.mkdir()
    owner = folder / OWNER_NAME
    if content is None:
        os.mkfifo(owner)
    elif isinstance(content, bytes):
        owner.write_bytes(content)
    else:
        owner.write_text(content)
    argv = TRAIN + (
        [tmp_path / "run", "--checkpoint-dir", folder] if flag == "--checkpoint-dir" else [folder]
    )
    refused(argv, capsys, tmp_path, owner, word)
