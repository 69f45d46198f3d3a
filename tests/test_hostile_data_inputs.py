"""Issue 29, hostile inputs to `python -m figures` and `python -m training data`: a FIFO or
hostile JSON (deep nesting, wrong types, not UTF-8) as a cache file, a vocabulary or a
figure's input is one line naming the file (and the field), never a hang or a traceback; a
hostile cache manifest is rebuilt, with one line.

Split from test_disk_and_data.py (full disks, bad --out paths, reproducible figures), whose
helpers it uses, because reading damaged files is its own defect class.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from test_disk_and_data import ROOT, SMALL, no_hang, one_line

from figures.__main__ import main as figures_main
from figures.input_files import InputError as FigureInputError
from figures.input_files import read_validation
from training.tasks import datasets
from training.tasks.definitions import load_vocab


def _deep(levels: int = 5000) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    "how,words,status",
    [
        ("fifo", "not a regular file", 2),  # figures/__main__: an input path of the wrong kind (exit 2)
        (
            "deep",
            "nested deeper",
            1,
        ),  # figures/__main__: an input that breaks its schema is an error (exit 1)
        ("wrong type", "field n[0]: expected an integer", 1),
        ("missing field", "lacks the field(s) retrieval", 1),
        ("latin-1", "not UTF-8", 1),
    ],
)
def test_a_hostile_figure5a_input_is_one_line_naming_file_and_field(tmp_path, capsys, how, words, status):
    source = json.loads((ROOT / "proofs_check" / "results" / "figure5a.json").read_text())
    path = tmp_path / "figure5a.json"
    if how == "fifo":
        os.mkfifo(path)
    elif how == "deep":
        path.write_text(_deep())
    elif how == "wrong type":
        path.write_text(json.dumps(dict(source, n=["one"] + source["n"][1:])))
    elif how == "missing field":
        path.write_text(json.dumps({k: v for k, v in source.items() if k != "retrieval"}))
    else:
        path.write_bytes(json.dumps(source).replace("index", "ind\u00e9x", 1).encode("latin-1"))
    with no_hang():
        assert figures_main(["fig5a", "--figure5a", str(path), "--out", str(tmp_path / "out")]) == status
    line = one_line(capsys.readouterr().err)
    assert words in line and str(path) in line
    assert not (tmp_path / "out" / "fig5a.png").exists()


def test_a_fifo_inside_an_input_folder_is_one_line(tmp_path, capsys):
    for task in ("number", "letter"):
        (tmp_path / task).mkdir()
        os.mkfifo(tmp_path / task / "analysis.json")
    with no_hang():
        assert figures_main(["table1", "--runs", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    line = one_line(capsys.readouterr().err)
    assert "FIFO" in line and "analysis.json" in line


@pytest.mark.parametrize(
    "line,words",
    [
        ('{"split": "validation", "step": 0, "accuracy": "high"}', "field accuracy: expected a number"),
        ('{"split": ["validation"]}', "field split: expected a string"),
        (_deep(), "nested deeper"),
        ('{"split": "validation", "step": 0}', "lacks the field(s) accuracy"),
    ],
)
def test_a_hostile_metrics_record_is_named(tmp_path, line, words):
    path = tmp_path / "metrics.jsonl"
    path.write_text(line + '\n{"split": "validation", "step": 5, "accuracy": 0.5}\n')
    with pytest.raises(FigureInputError, match=words.replace("(", r"\(").replace(")", r"\)")) as raised:
        read_validation(path, "number")
    assert "metrics.jsonl" in str(raised.value) and "\n" not in str(raised.value)


def _one_cache(folder: Path) -> tuple[Path, Path]:
    datasets.cached_splits("number", SMALL, seed=1, cache_dir=folder)
    return next(folder.glob("*.npz")), next(folder.glob("*.json"))


@pytest.mark.parametrize("which", ["manifest", "data", "folder"])
def test_a_fifo_in_the_dataset_cache_is_refused_without_hanging(tmp_path, capsys, which):
    data, manifest = _one_cache(tmp_path / "cache")
    fifo = {"manifest": manifest, "data": data, "folder": tmp_path / "fifo"}[which]
    if which != "folder":
        fifo.unlink()
    os.mkfifo(fifo)
    capsys.readouterr()
    with no_hang(), pytest.raises(datasets.CacheError) as raised:
        datasets.cached_splits(
            "number", SMALL, seed=1, cache_dir=tmp_path / ("fifo" if which == "folder" else "cache")
        )
    assert str(fifo) in str(raised.value) and "\n" not in str(raised.value)
    assert ("FIFO" if which != "folder" else "not a directory") in str(raised.value)
    assert fifo.is_fifo()  # refused, never replaced


@pytest.mark.parametrize(
    "text,words",
    [
        (_deep(), "nested deeper"),
        ('{"parameters": [], "content_sha256": "x"}', "field parameters: expected an object"),
        ('{"parameters": {}, "content_sha256": 7}', "field content_sha256: expected a string"),
        (b'{"parameters": {"task": "\xe9"}}', "not UTF-8"),
    ],
)
def test_a_hostile_cache_manifest_is_rebuilt_with_one_line(tmp_path, capsys, text, words):
    data, manifest = _one_cache(tmp_path)
    first = np.load(data)["train/inputs"].copy()
    manifest.write_bytes(text if isinstance(text, bytes) else text.encode())
    capsys.readouterr()
    again = datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    line = one_line(capsys.readouterr().err)
    assert words in line and str(manifest) in line and "rebuilding" in line
    assert np.array_equal(again["train"].inputs, first)
    datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)  # the rebuilt cache loads silently
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "how,words",
    [
        ("fifo", "FIFO"),
        ("deep", "nested deeper"),
        ("wrong type", "field [1]: expected a string"),
        ("object", "expected a list"),
    ],
)
def test_a_hostile_vocab_json_is_one_line(tmp_path, how, words):
    path = tmp_path / "vocab.json"
    if how == "fifo":
        os.mkfifo(path)
    else:
        path.write_text({"deep": _deep(), "wrong type": '["a", 1]', "object": '{"a": 1}'}[how])
    with no_hang(), pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")) as raised:
        load_vocab(path, "number")
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)
