"""theory.io.files: atomic writes leave either the old file or the new one, and no temp file."""

import json
import os
import stat
import subprocess
import sys
import tempfile

import pytest

from theory.io import files
from theory.io.files import (
    OutputError,
    atomic_open,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    check_output_dir,
    check_output_file,
)


class Boom(Exception):
    pass


def test_text_bytes_and_json_round_trip(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "héllo\nworld\n")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\nworld\n".encode()
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


def test_failed_replace_removes_the_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OutputError, match="No space left on device; the previous file, if any, is unchanged"):
        atomic_write_text(target, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert target.read_text() == "old"


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


# -- what may stand at the path ------------------------------------------------------------------


@pytest.mark.parametrize("make", ["folder", "fifo"])
def test_a_path_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, make):
    target = tmp_path / "out"
    if make == "folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    kind = "a directory" if make == "folder" else "a FIFO"
    with pytest.raises(OutputError, match=kind):
        atomic_write_text(target, "x")
    with pytest.raises(OutputError, match=kind):
        check_output_file(target, "--json")
    assert target.is_dir() if make == "folder" else stat.S_ISFIFO(os.stat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_is_refused(tmp_path):
    device = tmp_path / "null"  # a private copy of /dev/null: a regression must not replace the real one
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(OutputError, match="character device"):
        check_output_file(device, "--out")
    with pytest.raises(OutputError, match="character device"):
        atomic_write_text(device, "x")
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    check_output_file(link, "--json")
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_dangling_symlink_is_refused(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere" / "x.json")
    with pytest.raises(OutputError, match="does not exist"):
        check_output_file(link, "--json")
    with pytest.raises(OutputError, match="does not exist"):
        atomic_write_text(link, "x")


def test_output_checks_before_work(tmp_path):
    assert check_output_file(tmp_path / "a.json") == tmp_path / "a.json"
    with pytest.raises(OutputError, match="empty path"):
        check_output_file("", "--json")
    with pytest.raises(OutputError, match="does not exist"):
        check_output_file(tmp_path / "missing" / "a.json", "--json")
    assert check_output_file(tmp_path / "missing" / "a.json", parents=True)
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="not a directory"):
        check_output_dir(tmp_path / "file", "--out")
    with pytest.raises(OutputError, match="not a directory"):
        check_output_dir(tmp_path / "file" / "below", "--out")
    assert check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # a check creates nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_an_unwritable_folder_is_refused(tmp_path, monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", no_space)
    with pytest.raises(OutputError, match="Read-only file system"):
        check_output_file(tmp_path / "a.json", "--json")
    with pytest.raises(OutputError, match="Read-only file system"):
        check_output_dir(tmp_path, "--out")


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "data.tsv"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.kill()
    child.wait()
    dead = tmp_path / f".data.tsv.{files._HOST}.{child.pid}.abc123.tmp"
    dead.write_bytes(b"x" * 1000)
    alive = tmp_path / f".data.tsv.{files._HOST}.{os.getppid()}.abc123.tmp"  # our parent is alive
    alive.write_bytes(b"y")
    other = tmp_path / ".other.tsv.host.1.abc.tmp"
    other.write_bytes(b"z")
    atomic_write_text(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["data.tsv", alive.name, other.name])


# every path no file system accepts, and the words its one line must carry (issue 29, class 10a:
# each of these crashed the pre-check with a traceback)
BAD_PATHS = {
    "parent-is-a-file": ("{file}/x.txt", "is a file, not a directory, so"),
    "grandparent-is-a-file": ("{file}/y/x.txt", "is a file, not a directory, so"),
    "name-too-long": ("{dir}/" + "a" * 300 + ".txt", "this file system allows at most"),
    "folder-name-too-long": ("{dir}/" + "b" * 300 + "/x.txt", "this file system allows at most"),
    "nul-byte": ("{dir}/a\0b.txt", "contains a NUL byte"),
    "empty": ("", "empty path"),
}


@pytest.mark.parametrize("name", sorted(BAD_PATHS))
@pytest.mark.parametrize("check", [check_output_file, check_output_dir, atomic_write_text])
def test_a_path_no_file_system_accepts_is_one_output_error(tmp_path, name, check):
    plain = tmp_path / "plain"
    plain.write_text("keep")
    template, words = BAD_PATHS[name]
    path = template.format(file=plain, dir=tmp_path)
    arguments = (path, "x") if check is atomic_write_text else (path, "--out")
    with pytest.raises(OutputError, match=words) as caught:
        check(*arguments)
    assert "\n" not in str(caught.value)
    assert plain.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
