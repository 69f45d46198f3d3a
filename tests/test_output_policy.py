"""Every output flag of every command against the same protected targets (theory.io.output_policy).

The flags are found, not listed: every argument declared with ``output_argument`` in any
command's parser is an output, and any other path-taking argument must be named in INPUTS
below, so a new output flag that skips the policy fails ``test_every_path_flag_is_declared``.
Each output flag is then pointed at each protected target (a shipped result, a plan, the
README, the package's source, a checkpoint's state, a file inside another run, a FIFO, a device,
a folder where a file goes) and must exit 2 with one line, before any work, changing nothing.

The package root is a copy of the protected layout in a temporary folder (the policy reads
``theory.io.output_policy.PACKAGE_ROOT``), so a broken guard destroys nothing real; one test also
aims at the real shipped files, with their bytes compared before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import figures.__main__ as figures_main
import proofs_check.__main__ as proofs_main
import proofs_check.figure5a as figure5a
import training.__main__ as training_main
from theory.io import output_policy
from theory.io.output_policy import output_actions
from training.run.loop import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")
REPO = Path(__file__).resolve().parents[1]


def parsers() -> dict:
    """command -> (parser, main): every entry point's parser, each training subcommand on its own."""
    found = {
        "proofs_check": (proofs_main.build_parser(), proofs_main.main),
        "figures": (figures_main.build_parser(), figures_main.main),
        "figure5a": (figure5a.build_parser(), figure5a.main),
    }
    sub = next(a for a in training_main.build_parser()._actions if a.choices and hasattr(a, "add_parser"))
    for name, parser in sub.choices.items():
        found[f"training {name}"] = (parser, lambda argv, name=name: training_main.main([name, *argv]))
    return found


# path-taking arguments that are read, never written (command, flag)
INPUTS = {
    ("training analyze", "--run"),
    ("training analyze", "--model"),
    ("training analyze", "--checkpoint-dir"),
    ("training evaluate", "--run"),
    ("training dilution", "--run"),
    ("training dilution", "--accuracy"),
    ("training llm", "--model"),
    ("training study", "plan"),
    ("proofs_check", "--weights"),
    ("figures", "--runs"),
    ("figures", "--seeds"),
    ("figures", "--llm"),
    ("figures", "--llm-heads"),
    ("figures", "--variants"),
    ("figures", "--figure5a"),
    ("figures", "--figure4a"),
}
PATH_METAVARS = {"FILE", "DIR", "RUN", "PATH", "FILE.json", "PLAN"}
PATH_DESTS = {
    "out",
    "json",
    "save",
    "sbatch",
    "report",
    "replies",
    "checkpoint_dir",
    "model",
    "run",
    "accuracy",
}


def path_flags(parser) -> list:
    """Every argument of ``parser`` that takes a path: by its metavar, its name or a Path default."""
    found = []
    for action in parser._actions:
        if action.nargs == 0:  # a switch (store_true), whatever its name
            continue
        name = action.option_strings[-1] if action.option_strings else action.dest
        metavar = action.metavar if isinstance(action.metavar, str) else None
        if metavar in PATH_METAVARS or action.dest in PATH_DESTS or isinstance(action.default, Path):
            found.append((name, action))
    return found


def test_every_path_flag_is_declared_an_output_or_listed_as_an_input():
    undeclared = []
    for command, (parser, _) in parsers().items():
        for name, action in path_flags(parser):
            if not getattr(action, "output_kind", None) and (command, name) not in INPUTS:
                undeclared.append(f"{command} {name}")
    assert not undeclared, (
        f"path flags neither declared with output_argument nor listed in INPUTS: {undeclared}"
    )


def outputs() -> list[tuple[str, str, str]]:
    return [
        (command, action.option_strings[-1], action.output_kind)
        for command, (parser, _) in parsers().items()
        for action in output_actions(parser)
    ]


def test_the_outputs_found_are_the_known_ones():
    """The enumeration is not empty by accident: the outputs the commands document are all found."""
    found = {(c, f) for c, f, _ in outputs()}
    assert {
        ("proofs_check", "--json"),
        ("proofs_check", "--report"),
        ("figures", "--out"),
        ("figure5a", "--out"),
        ("training train", "--out"),
        ("training train", "--checkpoint-dir"),
        ("training bench", "--save"),
        ("training data", "--out"),
        ("training llm", "--json"),
        ("training llm", "--replies"),
        ("training evaluate", "--json"),
        ("training analyze", "--json"),
        ("training dilution", "--json"),
        ("training study", "--sbatch"),
    } <= found


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A fake package root with the protected layout, and two 2-step smoke runs beside it."""
    import torch

    base = tmp_path_factory.mktemp("policy")
    root = base / "package"
    for relative in (
        "training/reference/seeds/summary.json",
        "training/studies/seeds.json",
        "README.md",
        "theory/rope.py",
        "report/REPORT.md",
        "proofs_check/results/figure5a.json",
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(f"shipped {relative}\n")
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for name in ("run", "other"):
            train("number", base / name, preset="smoke", steps=2, device="cpu", progress=False)
    finally:
        torch.set_num_threads(saved)
    return base


def targets(base: Path, kind: str) -> dict[str, tuple[Path, str]]:
    """name -> (path, a word the refusal names) for an output of ``kind``."""
    root, other = base / "package", base / "other"
    if kind == "folder":
        return {
            "shipped folder": (root / "training/reference/seeds", "shipped results"),
            "plans folder": (root / "training/studies", "shipped results"),
            "source folder": (root / "theory", "own files"),
            "checkpoint": (other / "checkpoints/step-000002", "checkpoint"),
            "inside another run": (other / "sub", "another run"),
            "a file": (root / "README.md", "not a directory"),
            "a fifo": (base / "fifo", "not a directory"),
        }
    return {
        "shipped result": (root / "training/reference/seeds/summary.json", "shipped results"),
        "new file among shipped results": (root / "training/reference/seeds/new.json", "shipped results"),
        "plan": (root / "training/studies/seeds.json", "shipped results"),
        "README": (root / "README.md", "own files"),
        "source": (root / "theory/rope.py", "own files"),
        "checkpoint state": (other / "checkpoints/step-000002/training_state.json", "checkpoint"),
        "inside another run": (other / "new.json", "another run"),
        "a fifo": (base / "fifo", "FIFO"),
        "a device": (Path(os.devnull), "device"),
        "a folder": (base / "folder", "directory"),
    }


def argv_for(command: str, flag: str, path: Path, base: Path) -> list[str]:
    """The shortest valid command line that writes ``path`` through ``flag``."""
    run, fresh = str(base / "run"), str(base / "fresh")
    p = str(path)
    return {
        ("proofs_check", "--json"): ["--only", "=C1", "--json", p],
        ("proofs_check", "--report"): ["--only", "=C1", "--report", p],
        ("figures", "--out"): ["fig2", "--out", p],
        ("figure5a", "--out"): ["--n-max", "10", "--out", p],
        ("training train", "--out"): [
            "--task",
            "number",
            "--preset",
            "smoke",
            "--steps",
            "2",
            "--no-progress",
            "--out",
            p,
        ],
        ("training train", "--checkpoint-dir"): [
            "--task",
            "number",
            "--preset",
            "smoke",
            "--steps",
            "2",
            "--no-progress",
            "--out",
            fresh,
            "--checkpoint-dir",
            p,
        ],
        ("training bench", "--save"): ["--k-table", "--preset", "smoke", "--k", "1", "--save", p],
        ("training data", "--out"): ["--task", "number", "--count", "4", "--seed", "0", "--out", p],
        ("training llm", "--json"): ["--backend", "openai", "--model", "m", "--task", "number", "--json", p],
        ("training llm", "--replies"): [
            "--backend",
            "openai",
            "--model",
            "m",
            "--task",
            "number",
            "--json",
            str(base / "new.json"),
            "--replies",
            p,
        ],
        ("training evaluate", "--json"): ["--run", run, "--task", "number", "--lengths", "17", "--json", p],
        ("training analyze", "--json"): ["--run", run, "--task", "number", "--json", p],
        ("training dilution", "--json"): [
            "--run",
            run,
            "--task",
            "number",
            "--lengths",
            "17,25",
            "--json",
            p,
        ],
        ("training study", "--sbatch"): [str(base / "plan.json"), "--sbatch", p],
    }[command, flag]


def digest(*roots: Path) -> dict:
    found = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]) if root.is_dir() else [root]:
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.exists():
                found[str(path)] = "dir" if path.is_dir() else "special"
    return found


def never(*_args, **_kwargs):
    raise AssertionError("the work started although the output was refused")


@pytest.fixture
def guarded(world, monkeypatch):
    """The fake root in place, a FIFO, a folder and a plan; the work of every command replaced by ``never``."""
    from training.analysis import dilution, dynamics, evaluate
    from training.run.bench import k_table as bench_k

    monkeypatch.setattr(output_policy, "PACKAGE_ROOT", world / "package")
    for module, name in (
        (evaluate, "length_generalisation"),
        (evaluate, "split_accuracy"),
        (dynamics, "analyse_run"),
        (dilution, "dilution_profile"),
        (bench_k, "run_k_table"),
        (proofs_main, "run_claims"),
        (figures_main, "build_all"),
        (
            figure5a,
            "build",
        ),
    ):
        monkeypatch.setattr(module, name, never)
    if not (world / "fifo").exists():
        os.mkfifo(world / "fifo")
    (world / "folder").mkdir(exist_ok=True)
    plan = json.loads((REPO / "training/studies/seeds.json").read_text())
    plan.update(root=str(world / "runs"), ship=str(world / "ship"), reuse={})
    (world / "plan.json").write_text(json.dumps(plan))
    return world


CASES = [
    (command, flag, kind, target) for command, flag, kind in outputs() for target in targets(Path("/"), kind)
]


@pytest.mark.parametrize(
    "command, flag, kind, target", CASES, ids=[f"{c} {f} -> {t}" for c, f, _, t in CASES]
)
def test_every_output_flag_refuses_every_protected_target(command, flag, kind, target, guarded, capsys):
    path, word = targets(guarded, kind)[target]
    watched = [guarded / "package", guarded / "other", guarded / "run"]
    before = digest(*watched)
    _, main = parsers()[command]
    try:
        status = main(argv_for(command, flag, path, guarded))
    except SystemExit as exit_:
        status = exit_.code
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2, lines
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert flag in lines[0] and word in lines[0], lines
    assert digest(*watched) == before
    assert not (guarded / "fresh").exists()


SHIPPED_CASES = {
    "proofs_check --json a shipped input of the claims": (
        proofs_main.main,
        ["--only", "=C1", "--json", "training/reference/letter/analysis.json"],
    ),
    "study --sbatch the shipped summary": (
        training_main.main,
        ["study", "training/studies/seeds.json", "--sbatch", "training/reference/seeds/summary.json"],
    ),
    "study --sbatch README.md": (
        training_main.main,
        ["study", "training/studies/seeds.json", "--sbatch", "README.md"],
    ),
    "study --sbatch another plan": (
        training_main.main,
        ["study", "training/studies/seeds.json", "--sbatch", "training/studies/variants.json"],
    ),
    "evaluate --json the shipped summary": (
        training_main.main,
        [
            "evaluate",
            "--run",
            "training/reference/number",
            "--task",
            "number",
            "--lengths",
            "17",
            "--json",
            "training/reference/seeds/summary.json",
        ],
    ),
}


@pytest.mark.parametrize("case", SHIPPED_CASES)
def test_the_real_shipped_files_are_refused_unasked(case, monkeypatch, capsys):
    """The issue's cases, on the repository itself: exit 2, one line, the shipped bytes unchanged."""
    from training.analysis import evaluate
    from training.studies import sbatch

    main, argv = SHIPPED_CASES[case]
    monkeypatch.chdir(REPO)
    # whatever the guard does, nothing here may write: a broken guard fails the test, not the checkout
    for module, name in (
        (proofs_main, "run_claims"),
        (sbatch, "write_sbatch"),
        (evaluate, "length_generalisation"),
    ):
        monkeypatch.setattr(module, name, never)
    watched = [
        REPO / "training/reference/seeds/summary.json",
        REPO / "training/reference/letter/analysis.json",
        REPO / "README.md",
        REPO / "training/studies/variants.json",
    ]
    before = digest(*watched)
    assert main(argv) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and ("shipped results" in line or "own files" in line), line
    assert digest(*watched) == before


def test_replace_shipped_opens_the_shipped_trees_but_never_the_source(guarded):
    root = guarded / "package"
    reason = output_policy.protected_reason
    assert reason(root / "training/reference/seeds/summary.json", replace_shipped=True) is None
    assert reason(root / "report/REPORT.md", replace_shipped=True) is None
    assert "own files" in reason(root / "theory/rope.py", replace_shipped=True)
    assert "own files" in reason(root / "README.md", replace_shipped=True)
    assert "own files" in reason(
        root / "training/studies/cli.py", replace_shipped=True
    )  # code beside the plans
    assert reason(root / "training/studies/seeds.json", replace_shipped=True) is None
    assert reason(root / "report", documented=[root / "report"]) is None  # --report report: its own output
    assert reason(guarded / "elsewhere.json") is None


def test_a_symlink_outside_pointing_into_the_shipped_results_is_refused(guarded, capsys):
    link = guarded / "innocent.json"
    if not link.is_symlink():
        link.symlink_to(guarded / "package/training/reference/seeds/summary.json")
    before = digest(guarded / "package")
    assert (
        training_main.main(["data", "--task", "number", "--count", "4", "--seed", "0", "--out", str(link)])
        == 2
    )
    assert "shipped results" in capsys.readouterr().err
    assert digest(guarded / "package") == before


def test_a_plan_cannot_aim_its_members_at_the_shipped_results(guarded, capsys):
    plan = json.loads((guarded / "plan.json").read_text())
    plan["root"] = str(guarded / "package/training/reference/seeds/runs")
    (guarded / "evil_plan.json").write_text(json.dumps(plan))
    assert (
        training_main.main(["study", str(guarded / "evil_plan.json"), "--list"]) == 0
    )  # listing writes nothing
    capsys.readouterr()
    assert (
        training_main.main(["study", str(guarded / "evil_plan.json"), "--member", "paper/number/seed-1"]) == 2
    )
    assert "shipped results" in capsys.readouterr().err
    assert not (guarded / "package/training/reference/seeds/runs").exists()


def test_the_copy_of_the_layout_is_the_real_one():
    """The fake root mirrors the real protected trees: each exists in the repository."""
    for tree in output_policy.SHIPPED + ("theory", "training", "tests"):
        assert (REPO / tree).is_dir(), tree
    assert output_policy.PACKAGE_ROOT == REPO
