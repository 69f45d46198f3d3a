"""The layering of the house: which package (and which room of ``training``) may import which.

An AST walk over every module, imports inside functions included (a lazy import is still a
dependency).  The rules are the table of ``docs/architecture.md`` (compared below) and the docstring of
``training/__init__.py``; a new arrow either fits them or changes them here, on purpose.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("theory", "constructions", "training", "proofs_check", "figures")
TRAINING_ROOMS = ("tasks", "model", "run", "analysis", "llm", "studies")

# room -> the rooms it may import (its own room is always allowed)
ALLOWED = {
    # theory's mathematics and its plumbing (theory.io) import nothing of each other
    "theory": set(),
    "theory.io": set(),
    "constructions": {"theory", "theory.io"},
    "training.tasks": {"theory", "theory.io", "training.cli_common"},
    # the network imports no run code; the run lifecycle drives the network
    "training.model": {"theory", "theory.io"},
    "training.run": {"theory", "theory.io", "training.model", "training.tasks", "training.cli_common"},
    # analysis reads pretrained models through the llm room's loader (training.llm.local_model)
    "training.analysis": {
        "theory",
        "theory.io",
        "constructions",
        "training.tasks",
        "training.model",
        "training.run",
        "training.llm",
        "training.cli_common",
    },
    "training.llm": {"theory", "theory.io", "training.cli_common"},
    "training.studies": {
        "theory",
        "theory.io",
        "training.tasks",
        "training.model",
        "training.run",
        "training.analysis",
        "training.cli_common",
    },
    "training.cli_common": {"theory", "theory.io"},
    # the Python API of the head analysis: a front door to analysis (and the llm room's loader)
    "training.api": {
        "theory",
        "theory.io",
        "training.tasks",
        "training.analysis",
        "training.llm",
        "training.cli_common",
    },
    "training.__main__": {"training.cli_common", *(f"training.{room}" for room in TRAINING_ROOMS)},
    "training": set(),
    "proofs_check": {
        "theory",
        "theory.io",
        "constructions",
        "training.tasks",
        "training.model",
        "training.run",
        "training.analysis",
        "training.llm",
    },
    # figures draw saved JSON only: no training, no referee, just the paper's printed numbers
    "figures": {"theory", "theory.io"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None  # the standard library or a third-party package
    if parts[0] == "theory" and parts[1:2] == ["io"]:
        return "theory.io"  # the plumbing: its own room, apart from theory's mathematics
    if parts[0] != "training" or len(parts) == 1:
        return parts[0]
    return "training." + parts[1]


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``; ``from X import name``
    counts as X.name when that names a submodule, else X (both land in the same room)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def project_modules() -> dict[str, tuple[str, bool]]:
    """module name -> (source, is a package)."""
    return {
        module_name(path): (path.read_text(), path.name == "__init__.py")
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }


def violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    bad = []
    for module, (source, is_package) in sorted(modules.items()):
        source_room = room_of(module)
        for line, target in imported_modules(source, module, is_package):
            target_room = room_of(target)
            if target_room is None or target_room == source_room:
                continue
            if target_room not in ALLOWED[source_room]:
                bad.append(f"{module}:{line}: {source_room} may not import {target} ({target_room})")
    return bad


def module_graph(modules: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    graph = {}
    for module, (source, is_package) in modules.items():
        targets = set()
        for _, target in imported_modules(source, module, is_package):
            while target and target not in modules:  # X.name -> X when name is not a module
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                targets.add(target)  # importing one's own package __init__ is not a cycle
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, each reported once from its smallest module (depth-first search)."""
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt) :]
                found.append(cycle)
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_every_room_has_a_rule():
    rooms = {room_of(module) for module in project_modules()}
    assert rooms <= set(ALLOWED), sorted(rooms - set(ALLOWED))
    for room in TRAINING_ROOMS:
        assert (ROOT / "training" / room / "__init__.py").is_file()


def test_imports_follow_the_layering():
    assert violations(project_modules()) == []


def test_no_import_cycles():
    assert cycles(module_graph(project_modules())) == []


@pytest.mark.parametrize(
    "module, source",
    [
        ("training.tasks.vocab", "from training.model.gptj import GPTJ"),
        ("training.tasks.vocab", "from ..model import gptj"),
        ("theory.rope", "def f():\n    import training.tasks\n"),
        ("figures.style", "from proofs_check import registry"),
        ("training.llm.cli", "from training.analysis.adapters import adapter_for"),
    ],
)
def test_a_forbidden_import_is_caught(module, source):
    modules = project_modules()
    assert module in modules  # the fake stands in for a real module
    modules[module] = (source, False)
    assert len(violations(modules)) == 1


def test_a_cycle_is_caught():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def documented_rules() -> dict[str, set[str]]:
    """room -> may import, read from the table of docs/architecture.md."""
    rules = {}
    for line in (ROOT / "docs" / "architecture.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rules[cells[0].strip("`")] = set(re.findall(r"`([\w.]+)`", cells[2]))
    return rules


def test_the_architecture_note_states_these_rules():
    documented = documented_rules()
    assert documented == {room: allowed for room, allowed in ALLOWED.items() if room in documented}
    assert set(ALLOWED) - set(documented) == {"training", "training.__main__"}


def private_imports(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """``from M import _name`` between two of the package's modules: a private name used from
    another module is an interface in disguise (make it public where it belongs)."""
    bad = []
    for module, (source, _) in sorted(modules.items()):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.level or room_of(node.module or "")):
                bad += [
                    f"{module}:{node.lineno}: {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    return bad


def test_no_module_imports_another_modules_private_names():
    assert private_imports(project_modules()) == []
    fake = {"theory.rope": ("from theory.numbers import _secret\n", False)}
    assert private_imports(fake) == ["theory.rope:1: _secret"]
