"""A GGUF file converted once into a cached Hugging Face folder, read from there afterwards.

Why: transformers reads a GGUF by de-quantising every tensor and rebuilding the tokenizer
(merges recovered from the vocabulary) on EVERY load: 645 s for Gemma 3 270M on a busy 2-core
machine.  The folder it can write instead (safetensors, config, tokenizer files) loads in
seconds.

Where: ``cache_root()`` = ``$ROPE_HEADS_CACHE``, else ``$XDG_CACHE_HOME/rope-heads``, else
``~/.cache/rope-heads``; the folder of a file is ``<root>/gguf/<sha256 of its bytes>``
(streamed), so a renamed or moved copy hits and a changed file misses.

Trust: a folder is used only when its marker ``complete.json``, written LAST, holds the same
sha256 and ``CACHE_FORMAT`` and every file it lists is there with its size.  Anything else (no
marker, a foreign sha, a missing or truncated file) is damaged: one line on stderr naming the
folder says so and it is rebuilt.  Damage that keeps the sizes (a file truncated and the marker
rewritten, bytes overwritten in place) shows only when the folder fails to load: then
(``load_cached``) its files are checked against the sha256 of each that the marker recorded at
conversion (hashing a gigabyte on every load would cost seconds; on a failure it is cheap), and
a damaged folder is reported the same way, rebuilt and loaded again.  An intact folder that
fails to load re-raises the loader's error: the cache is not the problem, and a conversion
(minutes) would not help.

A full disk (``theory.io.files.DISK_ERRORS``; tokenizers and safetensors raise theirs as plain
exceptions carrying the system's message) during a conversion is ``CacheError``: one line
naming the cache folder and the problem, the temporary folder removed.  Any other failure of
the converter is its own error, never taken for a disk problem.

Atomic: the conversion goes into a temporary sibling ``.tmp-<sha>-<host>-<pid>`` (never
trusted: not a sha name), the marker is written there, and one ``os.rename`` puts the folder
in place.  Two processes converting the same file at once: the first rename wins and the
other, finding a valid folder in its way, drops its own copy.  A killed converter leaves only
its temporary folder, removed by the next conversion on that host once its pid is gone.

``ROPE_HEADS_NO_CACHE=1`` (or ``load_local(..., cache=False)``) bypasses the cache;
``python -m training cache list|clean`` (``training.llm.cache_cli``) shows and removes folders.

Size: a folder holds the weights de-quantised to float32, as transformers returns them: 4 bytes
a parameter, so SmolLM2-135M's 98 MB Q4_1 file becomes 538 MB.  Half precision would not be the
same model: a de-quantised value (a float16 block scale times a 4- or 8-bit integer, plus an
offset) needs more mantissa bits than float16 or bfloat16 have; measured on SmolLM2, 42% of its
weights change in float16 and 79% in bfloat16.  There are no duplicates to drop (tied embeddings
are saved once).
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

from theory.io.files import DISK_ERRORS, OutputError, atomic_write_json, user_cache_dir
from theory.io.inputs import InputError, load_json
from theory.io.provenance import sha256_of as file_sha256  # the one sha256 of a file (results record it too)

__all__ = [
    "CACHE_FORMAT",
    "MARKER",
    "NO_CACHE_ENV",
    "CacheError",
    "cache_root",
    "file_sha256",
    "cached_folder",
    "load_cached",
    "convert_gguf",
    "cache_enabled",
    "folder_problem",
    "pid_alive",
]

CACHE_FORMAT = 1  # bump when the folder's layout or the conversion changes: old folders are rebuilt
MARKER = "complete.json"
NO_CACHE_ENV = "ROPE_HEADS_NO_CACHE"
# "digests": each file's sha256, for the check after a failed load (absent in markers of older versions)
MARKER_SHAPE = {
    "format": int,
    "sha256": str,
    "source": str,
    "files": {"*": int},
    "digests?": {"*": str},
    "versions": {"*": str},
}


class CacheError(OutputError):
    """The cache folder cannot be written (a full disk); one line naming it, from "--model:"
    like the other model errors the commands pass on as they are."""


def cache_root() -> Path:
    """The user cache folder of this package (module doc; ``theory.io.files.user_cache_dir``)."""
    return user_cache_dir()


def cache_enabled() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


def convert_gguf(gguf_path: Path, out: Path) -> None:
    """transformers' own GGUF reading (its de-quantisation, its tokenizer conversion), saved as a
    folder it loads without the GGUF: safetensors, config, tokenizer.  ``dequantize=True``:
    transformers refuses to save a model loaded with its GGUF quantizer attached (even one it
    de-quantised for want of kernels); asked to de-quantise, it loads a plain model with the
    same weights (tested) and no quantizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    options = dict(gguf_file=gguf_path.name, local_files_only=True)
    AutoTokenizer.from_pretrained(gguf_path.parent, **options).save_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(
        gguf_path.parent, dtype="auto", quantization_config=GgufConfig(dequantize=True), **options
    )
    model.save_pretrained(out)


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("transformers", "gguf", "tokenizers", "torch"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            pass
    return found


def folder_problem(folder: Path, sha: str, contents: bool = False) -> str | None:
    """Why ``folder`` cannot be trusted as the conversion of ``sha`` (None: it can).
    ``contents``: also each file's sha256 against the marker's (module doc: after a failed load)."""
    marker = folder / MARKER
    if not marker.is_file():
        return f"no {MARKER} (an interrupted conversion?)"
    try:
        info = load_json(marker, MARKER_SHAPE, "cache marker")
    except InputError as bad:
        return str(bad)
    if info["sha256"] != sha or info["format"] != CACHE_FORMAT:
        return (
            f"{MARKER} names sha256 {info['sha256'][:12]}.. format {info['format']}, not {sha[:12]}.. "
            f"format {CACHE_FORMAT}"
        )
    if not any(name.endswith(".safetensors") for name in info["files"]):
        return "no safetensors weights listed"
    for name, size in info["files"].items():
        path = folder / name
        if not path.is_file() or path.stat().st_size != size:
            return f"{name} is missing or not {size} bytes"
    if contents:
        if "digests" not in info:  # written before digests were kept: cannot be vouched for
            return f"it does not load, and its {MARKER} has no file digests to check it by"
        for name, digest in info["digests"].items():
            if not (folder / name).is_file() or file_sha256(folder / name) != digest:
                return f"{name} is not the file written by the conversion (its sha256 differs)"
    return None


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_dead_temps(parent: Path, sha: str) -> None:
    """Temporary folders of converters of ``sha`` on this host whose process is gone."""
    prefix = f".tmp-{sha}-{socket.gethostname()}-"
    for temp in parent.glob(f"{prefix}*"):
        pid = temp.name[len(prefix) :]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            shutil.rmtree(temp, ignore_errors=True)


def cached_folder(gguf_path, *, root=None, convert=convert_gguf, announce: bool = True) -> Path:
    """The cached HF folder of ``gguf_path``, converted (``convert(gguf_path, folder)``) first
    when absent or damaged (module doc).  ``announce``: say on stderr that a first conversion
    starts (a damaged folder is always reported)."""
    gguf_path = Path(gguf_path).resolve()
    sha = file_sha256(gguf_path)
    parent = Path(cache_root() if root is None else root) / "gguf"
    folder = parent / sha
    if folder.exists():
        why = folder_problem(folder, sha)
        if why is None:
            return folder
        _say(f"cache folder {folder} is damaged ({why}); rebuilding it")
    elif announce:
        _say(
            f"converting {gguf_path.name} once into the cache {folder} (later loads read it; "
            f"{NO_CACHE_ENV}=1 bypasses it)"
        )
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(
            f"cannot create the model cache {parent} ({error.strerror}); set ROPE_HEADS_CACHE to a "
            f"writable folder, or {NO_CACHE_ENV}=1 to read the GGUF directly"
        ) from None
    _remove_dead_temps(parent, sha)
    temp = parent / f".tmp-{sha}-{socket.gethostname()}-{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    try:
        temp.mkdir()
        convert(gguf_path, temp)
        made = [p for p in sorted(temp.iterdir()) if p.is_file()]
        atomic_write_json(
            temp / MARKER,
            {
                "format": CACHE_FORMAT,
                "sha256": sha,
                "source": gguf_path.name,
                "files": {p.name: p.stat().st_size for p in made},
                "digests": {p.name: file_sha256(p) for p in made},
                "versions": _versions(),
            },
        )
        _install(temp, folder, sha)
    except Exception as error:
        problem = _disk_problem(error)
        if problem is None:
            raise
        raise CacheError(
            f"--model: cannot convert {gguf_path.name} into the model cache {folder}: {problem}; "
            "free space there, set ROPE_HEADS_CACHE to a folder with room, or "
            f"{NO_CACHE_ENV}=1 to read the GGUF directly (slower)"
        ) from None
    finally:
        shutil.rmtree(temp, ignore_errors=True)  # gone already when installed
    return folder


def _disk_problem(error: Exception) -> str | None:
    """The disk problem ``error`` reports, or None.  An OSError carries its errno; tokenizers and
    safetensors raise a Rust I/O error as a plain exception whose message holds the system's
    text ("No space left on device (os error 28)"), and atomic_write_json an OutputError that
    quotes it.  Only those texts count: any other error is a bug to see in full."""
    if isinstance(error, OSError) and error.errno in DISK_ERRORS:
        return os.strerror(error.errno)
    return next((os.strerror(code) for code in sorted(DISK_ERRORS) if os.strerror(code) in str(error)), None)


def load_cached(gguf_path, load, *, root=None, convert=convert_gguf, announce: bool = True):
    """``load(folder)`` of the cached folder of ``gguf_path`` (``cached_folder``).  If it fails
    and the folder's files are not those its conversion wrote, the folder is damaged: one line
    on stderr names it, it is rebuilt and loaded again.  Otherwise the loader's error is raised
    as it was (module doc).  Any Exception is checked (safetensors reports a truncated file as a
    plain one): the digests decide, so no error is mistaken for damage."""
    folder = cached_folder(gguf_path, root=root, convert=convert, announce=announce)
    try:
        return load(folder)
    except Exception:
        why = folder_problem(folder, folder.name, contents=True)
        if why is None:
            raise
    _say(f"cache folder {folder} is damaged ({why}); rebuilding it")
    _move_aside(folder)
    return load(cached_folder(gguf_path, root=root, convert=convert, announce=False))


def _install(temp: Path, folder: Path, sha: str) -> None:
    """Rename the finished ``temp`` into place; a damaged folder there is moved aside first;
    a valid one (another process finished first) is kept and ``temp`` dropped."""
    for _ in range(3):
        try:
            os.rename(temp, folder)
            return
        except OSError:
            if not folder.exists():
                raise
            if folder_problem(folder, sha) is None:
                return
            _move_aside(folder)  # if someone else moved or replaced it meanwhile: look again
    raise OSError(f"cannot put the converted model in place at {folder}")


def _move_aside(folder: Path) -> None:
    """Rename a damaged ``folder`` out of the trusted name (one atomic step: no reader ever
    sees it half removed), then remove it; nothing if it is gone already."""
    aside = folder.with_name(f".damaged-{folder.name}-{socket.gethostname()}-{os.getpid()}")
    shutil.rmtree(aside, ignore_errors=True)  # ours from an earlier try, or a dead process's with our pid
    try:
        os.rename(folder, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)
