"""Where a result came from: the ``provenance`` record every result JSON of the package carries.

A result file outlives the code and the model that made it: a number in it can be trusted
only if one can say which version of the package, which libraries and which weights produced
it.  So every writer of a result (``analyze``, ``evaluate``, ``dilution``, ``llm``, ``bench
--save``, a run's ``metrics.jsonl`` settings line, ``proofs_check --json``, ``figure5a``) adds
``"provenance": provenance(models)``, built here once:

- ``package``, ``version``: this package's installed version (None when it runs from a
  checkout that was never pip-installed);
- ``git_commit``: the checkout's HEAD commit, read from ``.git`` without running git (None
  outside a git checkout, e.g. an installed wheel); uncommitted changes are not recorded;
- ``python``, ``torch``, ``transformers``: the versions installed (None for one that is not);
- ``model_sha256``: for each model file read, its path as given -> the sha256 of its bytes
  (a training run's ``model.safetensors``, a GGUF file, a Hugging Face folder's
  ``*.safetensors``); None when the result read no model.

Readers never require the key (results written before it existed have none), and every
input shape of the package allows extra keys.  Standard library only: ``theory`` is the
bottom of the import graph, and versions are read from the installed metadata, so recording
them imports neither torch nor transformers.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["PACKAGE", "provenance", "git_commit", "model_files", "sha256_of"]

PACKAGE = "rope-heads"
ROOT = Path(__file__).resolve().parents[2]  # the checkout (or site-packages when installed)
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _git_dir(root: Path) -> Path | None:
    """``root/.git`` (a folder, or a worktree's file ``gitdir: PATH``), or None."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            found = Path(text[len("gitdir:") :].strip())
            return found if found.is_absolute() else root / found
    return None


def git_commit(root=None) -> str | None:
    """The HEAD commit of the git checkout at ``root`` (default: this package's), or None.
    Only ``root/.git`` counts: an installed copy inside someone else's repository is no checkout."""
    try:
        git = _git_dir(Path(ROOT if root is None else root))
        if git is None:
            return None
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA1.match(head):  # a detached HEAD
            return head
        if not head.startswith("ref:"):
            return None
        ref = head[len("ref:") :].strip()
        common = git
        if (git / "commondir").is_file():  # a worktree keeps its refs in the main repository
            common = (git / (git / "commondir").read_text(encoding="utf-8").strip()).resolve()
        for base in (git, common):
            if (base / ref).is_file():
                commit = (base / ref).read_text(encoding="utf-8").strip()
                return commit if _SHA1.match(commit) else None
        packed = common / "packed-refs"  # refs that git gc packed into one file
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                commit, _, name = line.partition(" ")
                if name == ref and _SHA1.match(commit):
                    return commit
    except OSError:
        return None
    return None


def model_files(path) -> list[Path]:
    """The weight files of a model at ``path``: the file itself (a GGUF, a safetensors file), a
    training run's ``model.safetensors``, or every ``*.safetensors`` of a Hugging Face folder."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    if (path / "model.safetensors").is_file():
        return [path / "model.safetensors"]
    return sorted(p for p in path.glob("*.safetensors") if p.is_file())


def sha256_of(path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, streamed (a GGUF may be gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def provenance(models=()) -> dict:
    """The provenance record (module doc) of a result that read the models at ``models`` (paths:
    files or folders; a single path, or None for none, is accepted too)."""
    if models is None or isinstance(models, (str, os.PathLike)):
        models = [models]
    digests = {
        os.fspath(f): sha256_of(f) for model in models if model is not None for f in model_files(model)
    }
    return {
        "package": PACKAGE,
        "version": _version(PACKAGE),
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "torch": _version("torch"),
        "transformers": _version("transformers"),
        "model_sha256": digests or None,
    }
