"""The README's commands are checked, not trusted (issue 29).

- Every shell command the README shows (fenced and indented code blocks, and inline code that
  starts like a command) parses against its own command-line interface, required flags
  included, and names files that exist.  Placeholders written in capitals (RUN, FILE, N, ...)
  stand for one value each (PLACEHOLDERS); "..." is not allowed: a reader copies what is shown.
- The commands that finish in seconds are run and must exit 0.
- The commands that write, run on a fresh copy of the tracked files, leave every tracked file
  byte for byte as it was, and create no untracked file (``python -m figures`` used to rewrite
  every PDF, whose CreationDate changed; ``study --collect`` used to empty the shipped summary).
  ``python -m proofs_check --report report`` writes into the checkout too, but it runs every
  claim (about a minute on 2 cores), so it is not rerun here: tests/test_report.py checks that
  a fresh generation equals the committed ``report/``, which is the same promise.
- The README is a guide (issue 31): at most MAX_LINES lines, its findings in words with no number
  typed by hand (the report formats them from results), a working link to report/REPORT.md, and
  every verdict word of ``proofs_check.verdicts``.
"""

import argparse
import contextlib
import hashlib
import importlib
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PROGRAMS = ("python ", "sh ", "torchrun ", "pip ")

# one value for each placeholder the README writes in capitals
PLACEHOLDERS = {
    "RUN": "runs/readme-run",
    "FILE": "out.json",
    "DIR": "readme-out",
    "N": "2",
    "K": "2",
    "S": "0",
    "T": "letter",
    "PATH": "model.gguf",
    "JOB": "job-1",
    "NAMES": "fig2",
    "LENGTHS.json": "lengths.json",
    "HOST:29500": "localhost:29500",
    "ID": "paper/letter/seed-0",
}


def _code_lines(text: str):
    """(line number, text) of each line of a fenced or indented code block that starts with a
    program name, and of each inline code span that does (a span may run over a line break)."""
    fenced = False
    prose = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("```"):
            fenced = not fenced
            prose.append("")
            continue
        if fenced or line.startswith("    "):
            if line.strip().startswith(PROGRAMS):
                yield number, line.strip()
            prose.append("")
            continue
        prose.append(line)
    joined = "\n".join(prose)
    for match in re.finditer(r"`([^`]+)`", joined):
        span = " ".join(match.group(1).split())
        if span.startswith(PROGRAMS):
            yield joined.count("\n", 0, match.start()) + 1, span


def readme_commands(text: str | None = None) -> list[tuple[int, str]]:
    """The README's commands: continuation lines joined, comments dropped, ``a && b`` split."""
    text = README.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    commands = []
    for number, line in sorted(_code_lines(text)):
        follow = number
        while line.endswith("\\"):  # a command continued on the next line
            line = line[:-1] + " " + lines[follow].strip()
            follow += 1
        line = " ".join(re.sub(r"\s+#.*$", "", line).split())
        commands += [(number, part.strip()) for part in line.split("&&")]
    return commands


def _words(command: str) -> list[str]:
    words = shlex.split(command)
    # [--device cuda] marks an optional part: check it too, as written inside the brackets
    words = [w.strip("[]") for w in words]
    return [PLACEHOLDERS.get(w, w) for w in words if w]


class Parsed(Exception):
    """Raised by the patched parse_args once the arguments parsed: the command stops there."""


@contextlib.contextmanager
def _stop_after_parsing():
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)  # exits 2 on a bad or missing argument
        raise Parsed

    argparse.ArgumentParser.parse_args = parse_then_stop
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original


def _parse_with_main(main, argv: list[str], command: list[str]):
    saved = sys.argv
    sys.argv = [command[0], *argv]
    try:
        with _stop_after_parsing(), contextlib.redirect_stderr(open(os.devnull, "w")) as quiet:
            try:
                main(argv) if main.__code__.co_argcount else main()
            except Parsed:
                return
            except SystemExit as stop:
                if stop.code == 0:  # --help
                    return
                raise AssertionError(
                    f"{' '.join(command)}: the parser refused it (exit {stop.code})"
                ) from None
            finally:
                quiet.close()
    finally:
        sys.argv = saved
    raise AssertionError(f"{' '.join(command)}: never reached its argument parser")


def check_command(command: str) -> None:
    """Raise AssertionError if ``command`` does not parse against its CLI."""
    assert "..." not in command, f"{command!r}: '...' is not a command a reader can copy"
    words = _words(command)
    program, rest = words[0], words[1:]
    if program == "pip":
        assert rest[0] == "install", command
        return
    if program == "sh":
        assert (ROOT / rest[0]).is_file(), f"{command!r}: no file {rest[0]}"
        return
    if program == "torchrun":
        assert "-m" in rest, command
        rest = rest[rest.index("-m") :]
    assert rest, command
    if rest[0] == "-m":
        module, argv = rest[1], rest[2:]
        if module == "pytest":
            return
        name = module if module.count(".") else f"{module}.__main__"
        main = importlib.import_module(name).main
    else:
        script, argv = rest[0], rest[1:]
        assert (ROOT / script).is_file(), f"{command!r}: no file {script}"
        if "parse_args" not in (ROOT / script).read_text(
            encoding="utf-8"
        ):  # a script that takes no arguments
            assert not argv, f"{command!r}: {script} takes no arguments"
            return
        main = runpy.run_path(str(ROOT / script), run_name="readme_check")["main"]
    _parse_with_main(main, argv, words)


def test_the_readme_shows_commands():
    commands = [c for _, c in readme_commands()]
    assert (
        'pip install torch==2.13.0 && pip install -e ".[dev]" && python -m proofs_check' not in commands
    )  # split
    assert "python -m proofs_check" in commands and "python -m pytest -q" in commands
    assert len(commands) >= 20


@pytest.mark.parametrize("number,command", readme_commands(), ids=lambda v: str(v)[:60])
def test_each_readme_command_parses_against_its_cli(number, command):
    check_command(command)


@pytest.mark.parametrize(
    "bad",
    [
        "python -m training evaluate --run RUN --task letter --lengths 50",  # --json missing
        "python -m training train --task letter --out RUN ...",
        "python -m training study training/studies/seeds.json --jobs two",
        "python -m figures --no-such-flag",
        "python -m proofs_check --only",
        "sh scripts/no_such_script.sh",
        "python benchmarks/no_such_bench.py",
        "python benchmarks/bench_study.py --no-such-flag",
        "python benchmarks/bench_datasets.py --an-argument-it-does-not-take",
    ],
)
def test_the_check_refuses_a_command_that_would_fail(bad):
    with pytest.raises(AssertionError):
        check_command(bad)


def test_commands_are_read_from_blocks_and_inline_code():
    text = (
        "Run `python -m figures --list` or\n\n```bash\npython -m training study PLAN \\\n    --list  # one per member\n```\n"
        "\n    sh scripts/train_reference.sh   # indented\n"
    )
    assert [c for _, c in readme_commands(text)] == [
        "python -m figures --list",
        "python -m training study PLAN --list",
        "sh scripts/train_reference.sh",
    ]


QUICK = [
    "python -m proofs_check --list",
    "python -m figures --list",
    "python -m training study training/studies/seeds.json --list",
]


@pytest.mark.parametrize("command", QUICK)
def test_the_quick_readme_commands_run(command):
    assert command in [c for _, c in readme_commands()], f"the README no longer shows {command!r}"
    done = subprocess.run(
        [sys.executable, *shlex.split(command)[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


# the README commands that write into the checkout; each must leave the tracked files as they are
WRITING = [
    "python -m figures",
    "python -m training study training/studies/seeds.json --collect",
    "python -m training study training/studies/variants.json --collect",
]


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout to know the tracked files")
def test_readme_commands_that_write_leave_a_fresh_clone_unchanged(tmp_path):
    shown = [c for _, c in readme_commands()]
    for command in WRITING:
        assert command in shown, f"the README no longer shows {command!r}: update WRITING"
    clone = tmp_path / "clone"
    files = _tracked()
    for name in files:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    before = {name: _digest(clone / name) for name in files}
    for command in WRITING:
        # a command may refuse (collect on a clone without runs says what it found and writes
        # nothing); what it may not do is change a tracked file or leave one half-written
        done = subprocess.run(
            [sys.executable, *shlex.split(command)[1:]],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
        )
        assert "Traceback" not in done.stderr, f"{command}: {done.stderr[-2000:]}"
    # the analysis script needs the checkpoints that only training writes: it must say so first
    done = subprocess.run(
        ["sh", "scripts/analyze_reference.sh"], cwd=clone, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "run sh scripts/train_reference.sh first" in done.stderr, done.stderr
    changed = [name for name in files if _digest(clone / name) != before[name]]
    assert not changed, f"README commands changed tracked files: {changed[:10]}"
    created = sorted(
        str(p.relative_to(clone))
        for p in clone.rglob("*")
        if p.is_file() and str(p.relative_to(clone)) not in before and "__pycache__" not in p.parts
    )
    assert not created, f"README commands created files in the checkout: {created[:10]}"


MAX_LINES = 215  # 200 until the "Use it from Python" section (issue 44)
REPORT_LINK = "report/REPORT.md"


def _section(text: str, heading: str) -> str:
    """The lines under ``## heading`` up to the next ``## `` heading."""
    lines = text.splitlines()
    start = lines.index(f"## {heading}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start + 1 : end])


# identifiers that carry digits without being results: a place in the paper, e.g. "Theorem 3.2", "Lemma F.1"
PAPER_PLACE = re.compile(
    r"\b(?:Theorem|Lemma|Definition|Remark|Section|Appendix|Table|Figure)s? [A-Z]?[\d.]*\d"
)


def hand_typed_numbers(prose: str) -> list[str]:
    """The digits-bearing words of ``prose`` outside inline code, link targets and paper places."""
    prose = re.sub(r"`[^`]*`", " ", prose)
    prose = re.sub(r"\]\([^)]*\)", "]", prose)
    prose = PAPER_PLACE.sub(" ", prose)
    return re.findall(r"\S*\d\S*", prose)


def test_the_readme_is_a_guide_of_at_most_max_lines():
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_LINES, f"README.md has {count} lines; findings belong in the generated report"


def test_the_readme_links_the_report_and_how_to_regenerate_it():
    text = README.read_text(encoding="utf-8")
    assert f"]({REPORT_LINK})" in _section(text, "What we found"), "no Markdown link to the report"
    assert "python -m proofs_check --report report" in [c for _, c in readme_commands()]


def test_every_relative_link_of_the_readme_resolves():
    text = README.read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert REPORT_LINK in targets
    missing = [t for t in targets if t and not (ROOT / t).is_file()]
    assert not missing, f"README links to missing files: {missing}"


def test_what_we_found_types_no_number_by_hand():
    found = _section(README.read_text(encoding="utf-8"), "What we found")
    assert hand_typed_numbers(found) == [], (
        "a number typed into the README goes stale: the report formats them"
    )


def test_the_number_check_sees_a_number_and_spares_identifiers():
    assert hand_typed_numbers("letter accuracy 0.984 at 5,000 tokens") == ["0.984", "5,000"]
    assert (
        hand_typed_numbers("as in `C10` and Theorem 3.2, Lemma F.1; see [the report](report/REPORT.md)") == []
    )


def test_the_readme_names_every_verdict_word():
    from proofs_check.verdicts import ALL_WORDS

    found = " ".join(_section(README.read_text(encoding="utf-8"), "What we found").replace("*", "").split())
    missing = [word for word in ALL_WORDS if word != "error" and word not in found]
    assert not missing, f"'What we found' does not name the verdict words {missing}"
