"""``python -m training cache list|clean`` (training.llm.cache_cli) on a cache made by the real
``hf_cache.cached_folder`` with a fake converter (no gguf package, no real GGUF): every kind of
entry is listed; clean removes what it is asked to and nothing else (a conversion still running,
files that are not the cache's, the target of a symlink out of the cache); bad input is one
line and exit status 2, with nothing removed.
"""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from training.__main__ import main
from training.llm import hf_cache
from training.llm.cache_cli import MIN_PREFIX

DAY = 86400


def fake_convert(source, out):
    (out / "model.safetensors").write_bytes(source.read_bytes() * 3)
    (out / "config.json").write_text("{}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache root holding: two good entries (one written 10 days ago), an old-format one, a
    damaged one, a dead converter's and a live converter's temporary folders, a file that is
    not the cache's, and a sha-named symlink to a folder outside the cache."""
    root = tmp_path / "cache"
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(root))
    made = {}
    for name in ("new", "old", "format", "damaged"):
        gguf = tmp_path / f"{name}.gguf"
        gguf.write_bytes(name.encode() * 100)
        made[name] = hf_cache.cached_folder(gguf, convert=fake_convert, announce=False)
    past = time.time() - 10 * DAY
    os.utime(made["old"] / hf_cache.MARKER, (past, past))
    marker = json.loads((made["format"] / hf_cache.MARKER).read_text())
    (made["format"] / hf_cache.MARKER).write_text(json.dumps({**marker, "format": hf_cache.CACHE_FORMAT - 1}))
    (made["damaged"] / "model.safetensors").write_bytes(b"cut")
    gguf = root / "gguf"
    host = socket.gethostname()
    made["dead"] = gguf / f".tmp-{'d' * 64}-{host}-999999999"
    made["live"] = gguf / f".tmp-{'e' * 64}-{host}-{os.getpid()}"
    for folder in (made["dead"], made["live"]):
        folder.mkdir()
        (folder / "part").write_bytes(b"x" * 10)
    (gguf / "notes.txt").write_text("mine")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    made["link"] = gguf / ("f" * 64)
    made["link"].symlink_to(outside, target_is_directory=True)
    made["outside"] = outside
    return made


def run(argv, capsys) -> tuple[int, str, str]:
    try:
        status = main(["cache", *argv])
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def test_list_shows_every_entry_with_its_state(cache, capsys):
    status, out, _ = run(["list"], capsys)
    assert status == 0
    lines = out.splitlines()
    by_sha = {
        folder.name[:12]: line
        for key, folder in cache.items()
        if key in ("new", "old", "format", "damaged")
        for line in lines
        if line.startswith(folder.name[:12])
    }
    assert by_sha[cache["new"].name[:12]].endswith(" ok") and "new.gguf" in by_sha[cache["new"].name[:12]]
    assert by_sha[cache["format"].name[:12]].endswith("old format")
    assert "damaged: model.safetensors is missing or not" in by_sha[cache["damaged"].name[:12]]
    assert any(line.startswith("d" * 12) and line.endswith("left over") for line in lines)
    assert any(line.startswith("e" * 12) and line.endswith("converting") for line in lines)
    assert any(line.startswith("notes.txt") and line.endswith("not the cache's") for line in lines)
    assert any(line.startswith("f" * 12) and line.endswith("a symlink") for line in lines)
    assert lines[-1].startswith("8 entries")


def test_clean_by_sha_prefix_and_by_age(cache, capsys):
    status, out, _ = run(["clean", cache["new"].name[:MIN_PREFIX]], capsys)
    assert status == 0 and not cache["new"].exists() and cache["old"].exists()
    assert out.splitlines()[-1].startswith("freed")
    status, _, _ = run(["clean", "--older-than", "5"], capsys)
    assert status == 0 and not cache["old"].exists()
    assert cache["format"].exists() and cache["damaged"].exists()  # written just now


def test_clean_all_spares_a_running_conversion_and_what_is_not_the_caches(cache, capsys):
    status, _, _ = run(["clean", "--all"], capsys)
    assert status == 0
    left = sorted(p.name for p in (cache["new"].parent).iterdir())
    assert left == sorted([cache["live"].name, "notes.txt"])
    assert (cache["outside"] / "precious").read_text() == "keep me"  # the link went, never its target


@pytest.mark.parametrize(
    "argv, word",
    [
        (["clean", "abc"], "hex digits"),
        (["clean", "0" * 12], "no entry"),
        (["clean", "xyzxyzxyz"], "hex digits"),
        (["clean", "--older-than", "-1"], "days"),
        (["clean", "--older-than", "nan"], "days"),
        (["clean", "--older-than", "٣"], "days"),
        (["clean"], "required"),
        (["clean", "--all", "abcdef"], "not allowed"),
    ],
)
def test_bad_input_is_one_line_and_removes_nothing(cache, capsys, argv, word):
    before = sorted(p.name for p in cache["new"].parent.iterdir())
    status, _, err = run(argv, capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1 and word in err, err
    assert sorted(p.name for p in cache["new"].parent.iterdir()) == before


def test_an_ambiguous_prefix_is_refused(cache, capsys, tmp_path):
    twin = cache["new"].parent / (cache["new"].name[:MIN_PREFIX] + "0" * (64 - MIN_PREFIX))
    if twin.name == cache["new"].name:
        pytest.skip("the fake sha happens to end in zeros")
    twin.mkdir()
    status, _, err = run(["clean", cache["new"].name[:MIN_PREFIX]], capsys)
    assert status == 2 and "give more digits" in err and cache["new"].exists() and twin.exists()


def test_an_empty_cache_is_listed_as_empty(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(tmp_path / "none"))
    status, out, _ = run(["list"], capsys)
    assert status == 0 and "is empty" in out
    status, out, _ = run(["clean", "--all"], capsys)
    assert status == 0 and "0 entries" in out
