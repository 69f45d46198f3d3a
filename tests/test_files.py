"""theory.files: atomic writes leave either the old file or the new one, and no temp file."""

import json
import os

import pytest

from theory.files import atomic_open, atomic_write_bytes, atomic_write_json, atomic_write_text


class Boom(Exception):
    pass


def test_text_bytes_and_json_round_trip(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "héllo\nworld\n")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\nworld\n".encode("utf-8")
    atomic_write_bytes(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    atomic_write_json(tmp_path / "c.json", {"b": 1, "a": [1, 2]}, indent=1)
    assert (tmp_path / "c.json").read_text() == json.dumps({"b": 1, "a": [1, 2]}, indent=1)
    atomic_write_json(str(tmp_path / "d.json"), ["x"], trailing_newline=True)
    assert (tmp_path / "d.json").read_text() == '["x"]\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.json", "d.json"]


def test_parent_folders_are_created(tmp_path):
    path = tmp_path / "one" / "two" / "out.json"
    atomic_write_json(path, {"ok": True})
    assert json.loads(path.read_text()) == {"ok": True}
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]


def test_missing_parent_is_an_error_when_not_asked_to_create(tmp_path):
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "missing" / "out.txt", "x", parents=False)
    assert list(tmp_path.iterdir()) == []


def test_failure_midway_removes_the_temp_file_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("old contents")
    with pytest.raises(Boom):
        with atomic_open(path, "w") as handle:
            handle.write("half of the new")
            handle.flush()
            temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            assert len(temps) == 1 and temps[0].read_text() == "half of the new"  # written beside it
            assert path.read_text() == "old contents"  # not yet replaced
            raise Boom
    assert path.read_text() == "old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["data.txt"]


def test_keyboard_interrupt_also_cleans_up(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_open(tmp_path / "x.bin", "wb") as handle:
            handle.write(b"partial")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_json_touches_nothing(tmp_path):
    path = tmp_path / "keep.json"
    path.write_text("[1]")
    with pytest.raises(TypeError):
        atomic_write_json(path, {"bad": object()})
    assert path.read_text() == "[1]" and [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def test_failed_replace_removes_the_temp_file(tmp_path):
    target = tmp_path / "a_folder"
    (target / "inside").mkdir(parents=True)  # os.replace cannot put a file over a non-empty folder
    with pytest.raises(OSError):
        atomic_write_text(target, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_folder"]
    assert os.listdir(target) == ["inside"]


def test_fsync_reaches_the_disk_before_the_rename(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.fstat(fd).st_size) or real_fsync(fd))
    atomic_write_text(tmp_path / "plain.txt", "abc")
    assert synced == []
    atomic_write_json(tmp_path / "synced.json", {"a": 1}, fsync=True)
    assert synced == [len('{"a": 1}')]  # the whole content was flushed when fsync ran
    assert (tmp_path / "synced.json").read_text() == '{"a": 1}'


def test_text_mode_writes_unix_newlines_and_rejects_other_modes(tmp_path):
    with atomic_open(tmp_path / "lines.txt") as handle:
        handle.write("a\nb\n")
    assert (tmp_path / "lines.txt").read_bytes() == b"a\nb\n"
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(tmp_path / "x", "a"):
            pass
    assert [p.name for p in tmp_path.iterdir()] == ["lines.txt"]


def test_written_files_get_ordinary_permissions(tmp_path):
    saved = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "shared.json", "{}")
    finally:
        os.umask(saved)
    assert (tmp_path / "shared.json").stat().st_mode & 0o777 == 0o644
