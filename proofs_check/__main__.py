"""Command line: python -m proofs_check [--json FILE] [--report DIR] [--only IDS] [--list] [--thorough] [--weights RUN ...]

Exit status: 0 when every check ran and reproduced its recorded outcome;
1 when a check errored or an outcome changed (both listed); 2 for bad arguments (one
line on stderr, found before any claim is checked); 130 when interrupted (Ctrl-C).
"""

from __future__ import annotations

import contextlib
import os
import sys

from theory.io.cli import quiet_interrupt_while_starting

# numpy's OpenBLAS on one thread unless the caller chose (OPENBLAS_, GOTO_ or OMP_NUM_THREADS):
# the referee's matrices are small, and on a busy machine the extra threads' spin-waits cost
# CPU time for no speed (issue 41; torch likewise, paper_defects_trained.one_torch_thread).  The
# verdicts and evidence are the same.  OpenBLAS reads the variable once, when numpy loads below;
# it is removed again after, so that no child process inherits it.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_ONE_BLAS_THREAD = "numpy" not in sys.modules and not any(os.environ.get(v) for v in _BLAS_THREADS)
if _ONE_BLAS_THREAD:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

with quiet_interrupt_while_starting(
    "python -m proofs_check"
):  # Ctrl-C during the imports: one line, exit 130
    import numpy  # noqa: F401  (loaded here, under the thread setting above)

    from proofs_check.evidence.trained_sources import WeightsError, runs_by_task
    from theory.io.cli import OneLineParser, UsageError, interrupted
    from theory.io.files import OutputError
    from theory.io.output_policy import PACKAGE_ROOT, check_output, output_argument

    from . import claims  # noqa: F401  (registers the checks)
    from .registry import GROUPS, REGISTRY, Options
    from .report import check_report_dir, generate, report_dir_lock
    from .runner import changed as outcome_changed
    from .runner import format_table, run_claims, write_json

if _ONE_BLAS_THREAD:
    os.environ.pop("OPENBLAS_NUM_THREADS", None)

PROG = "python -m proofs_check"
DESCRIPTION = (
    "Check every claim of the paper on the shipped results (or your own runs) and print each verdict "
    "with its evidence; the exit status says whether every outcome matched the recorded one."
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    output_argument(parser, "--json", metavar="FILE", help="also write every result, with evidence, to FILE")
    parser.add_argument(
        "--only",
        metavar="IDS",
        help="comma-separated claim ids; an id also selects the claims it "
        "prefixes (C7 runs C7-*), =ID selects that claim alone (=C10 runs C10, not C10-relative)",
    )
    output_argument(
        parser,
        "--report",
        kind="folder",
        metavar="DIR",
        help="also write the referee report: DIR/index.html and DIR/REPORT.md, figures copied into "
        "DIR/figures (DIR new, empty, or holding a previous report, which is replaced file by file); "
        "with --only the report holds those claims and says it is partial",
    )
    parser.add_argument("--list", action="store_true", help="list the registered claims and exit")
    parser.add_argument("--thorough", action="store_true", help="search further (slower)")
    parser.add_argument(
        "--weights",
        nargs="+",
        default=(),
        metavar="RUN",
        help="trained runs to analyse instead of the shipped JSON (at most one per task)",
    )
    return parser


def parse_args(argv):
    return build_parser().parse_args(argv)


def select(only: str | None) -> list[str]:
    """The claim ids ``--only`` names (every claim without ``--only``); UsageError for an
    unknown id or a value that names none."""
    if only is None:
        return list(REGISTRY)
    wanted = [part.strip() for part in only.split(",") if part.strip()]
    if not wanted:
        raise UsageError(f"--only: no claim id in {only!r}; give comma-separated ids, e.g. C7,S2")
    chosen = []
    for name in wanted:
        exact = name.startswith("=")
        name = name[1:] if exact else name
        matches = [cid for cid in REGISTRY if cid == name or (not exact and cid.startswith(name + "-"))]
        if not matches:
            raise UsageError(f"--only: unknown claim id {name!r}; known ids: {', '.join(REGISTRY)}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def check_arguments(args) -> list[str]:
    """Every check that needs no claim run, before any claim runs: the ids, the --json
    destination, the --weights runs.  Returns the selected ids."""
    ids = select(args.only)
    if args.report is not None:
        if args.list:
            raise UsageError("--report: cannot be combined with --list, which runs no claim")
        # the shipped report/ is this command's own documented output; any other place goes by the policy
        check_output(
            args.report,
            "--report",
            kind="folder",
            inputs=list(args.weights),
            documented=[PACKAGE_ROOT / "report"],
            replace_shipped=args.replace_shipped,
        )
        try:
            check_report_dir(args.report)
        except OutputError as error:
            raise UsageError(str(error)) from None
    if args.json is not None:
        check_output(
            args.json, "--json", inputs=list(args.weights), parents=True, replace_shipped=args.replace_shipped
        )
    try:
        runs_by_task(args.weights)
    except WeightsError as error:
        raise UsageError(str(error)) from None
    return ids


def report(results: list[dict]) -> int:
    """Print errors and changed outcomes; the exit status."""
    errors = [r for r in results if r["status"] == "error"]
    changed = [r for r in results if outcome_changed(r)]  # the verdict word moved: status, rounding or class
    for r in errors:
        print(f"\nERROR in {r['id']}: {r['summary']}\n{r['evidence'].get('traceback', '')}", file=sys.stderr)
    for r in changed:
        print(
            f"CHANGED {r['id']}: recorded {r['recorded_verdict']}, now {r['verdict']} (registry status "
            f"{r['recorded']} -> {r['status']})",
            file=sys.stderr,
        )
    if errors or changed:
        print(
            f"proofs_check: {len(errors)} check(s) errored, {len(changed)} outcome(s) changed",
            file=sys.stderr,
        )
        return 1
    print(f"\n{len(results)} claim(s) checked; every outcome matches the registry")
    return 0


def run(argv) -> int:
    args = parse_args(argv)
    ids = check_arguments(args)
    if args.list:
        for i, (group, words) in enumerate(GROUPS.items()):
            members = [cid for cid in ids if REGISTRY[cid].group == group]
            if members:
                print(("\n" if i else "") + f"== {words} ({len(members)}) ==")
                for cid in members:
                    print(list_line(REGISTRY[cid]))
        return 0
    options = Options(thorough=args.thorough, weights=tuple(args.weights))
    with contextlib.ExitStack() as held:
        if args.report is not None:  # DIR locked from before the claims run until its report is written
            try:
                held.enter_context(report_dir_lock(args.report))
            except OutputError as error:
                raise UsageError(str(error)) from None
        results = run_claims(ids, options)
        print(format_table(results))
        if args.json is not None:
            try:
                write_json(results, args.json, options)
            except (OutputError, OSError) as error:  # checked before, but the disk may have changed since
                raise UsageError(f"--json: cannot write {args.json}: {error}") from None
            print(f"\nwrote {args.json}")
        if args.report is not None:
            write_report_dir(args, results)
    return report(results)


def list_line(c) -> str:
    """One claim as --list prints it: id, recorded verdict word (the runner's word for the recorded
    status, rounding and evidence class), origin, statement, source; then what a verified
    statement rests on."""
    from .report.mathtext import plain  # the statement's $...$ math as plain text (issue 43)

    line = f"{c.id:<24} [{c.recorded_verdict()}] <{c.origin or 'origin not recorded'}> {plain(c.statement)}  ({c.source})"
    if c.evidence is not None:
        line += f"\n{'':<24} rests on: {c.evidence.cls}" + (
            f": {plain(c.evidence.cases)}" if c.evidence.cases else ""
        )
        line += "".join(
            f"\n{'':<26} step {i}: {plain(step.text)}  [{step.how}]"
            for i, step in enumerate(c.evidence.steps, 1)
        )
    return line


def report_command(args) -> str:
    """The command the report names in its footer: the options that shape it, DIR as a placeholder."""
    words = [PROG, "--report DIR"] + ([f"--only {args.only}"] if args.only is not None else [])
    return " ".join(
        words + (["--thorough"] if args.thorough else []) + [f"--weights {w}" for w in args.weights]
    )


def write_report_dir(args, results) -> None:
    try:
        written = generate(args.report, results, partial=args.only is not None, command=report_command(args))
    except (OutputError, OSError) as error:  # checked before, but the disk may have changed since
        raise UsageError(f"--report: cannot write {args.report}: {error}") from None
    figures = sum(path.parent.name == "figures" for path in written)
    print(
        f"\nwrote {args.report}/index.html and {args.report}/REPORT.md ({figures} figure file(s) in "
        f"{args.report}/figures)"
    )


def main(argv=None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted(PROG)


if __name__ == "__main__":
    sys.exit(main())
