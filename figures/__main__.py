"""python -m figures [NAMES] [--out DIR] [--list] [--jobs N] [--runs DIR] [--seeds DIR] [--llm DIR]
[--llm-heads DIR] [--variants DIR] [--figure5a F] [--figure4a F]

Regenerate the paper's figures (PNG + PDF) and Table 1 (Markdown) from saved results only.

Missing inputs.  With NAMES, every named figure is required: one whose input file is absent
is reported (the file and the command that writes it) and the exit status is 1, after the
other named figures are built.  Without NAMES, every figure is attempted; those whose inputs
are absent are skipped with a warning, and the exit status is 0 as long as at least one
figure was built (Figures 4A, 5A and 5C/D need only committed files, so a fresh checkout
always builds something).  A figure drawn for one task while the other task's file is
absent is written with a panel naming the missing file; it counts as missing input (an error
with NAMES, a warning without).  An input that exists but does not follow its schema is an
error in both modes.  An unknown name, an output folder that cannot be written, or an input
path of the wrong kind (a file given to --runs, a folder to --figure5a): one line on stderr,
exit status 2, checked before anything is drawn.  Ctrl-C: one line, exit status 130.

Seeds.  Figures 2 and 5B draw the seed study (``--seeds``, the folder ``python -m training
study training/studies/seeds.json --collect`` ships: <DIR>/paper/<task>/seed-<S>/) as the
median and min-max band over its members, and the run in ``--runs`` (shipped: seed 0) thin.
Members still running lack some files and are left out of the panels that need them; each
panel says how many seeds it draws.  A study with no member for a task is missing input.
"fig_variants" (and variants_table.md) draws the variants study's summary.json (``--variants``,
the ship folder of ``python -m training study training/studies/variants.json --collect``);
until that study is collected it is missing input like any other.  "fig_breaks" draws the
dilution.json of both studies' members (predicted against measured breaks; claim P-break).
"fig_rescale" draws the same summary's rescale stage: the models trained without a query scale,
as trained and with the scale switched on at inference (claims V-rescale, V-rescale-number).

Processes.  Figures are drawn side by side, each in a worker process (figures/jobs.py), one
worker per CPU this process may use; ``--jobs N`` sets the number, and ``--jobs 1`` draws them
one after another in this process.  A line is printed as each figure is written (in the order
they finish); the warnings and errors at the end follow the registry's order.  The files are
the same bytes whatever the number of workers, and from one run to the next.  A worker that
dies (killed, out of memory): one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from theory.io.cli import quiet_interrupt_while_starting

with quiet_interrupt_while_starting("python -m figures"):  # Ctrl-C during the imports: one line, exit 130
    from theory.io.cli import OneLineParser, UsageError, ascii_int, interrupted
    from theory.io.output_policy import check_output, output_argument

    from .breaks_figure import build_fig_breaks
    from .discrepancy_figure import build_discrepancy_trained
    from .figure2 import build_fig2
    from .frequency_figures import build_fig8, build_table1
    from .generalisation_figures import build_fig5b, build_fig5cd
    from .geometry_figures import build_fig4bc
    from .input_files import ROOT
    from .jobs import default_jobs, outcomes
    from .llm_heads_figure import build_llm_heads
    from .loaders import Inputs
    from .rescale_figure import build_fig_rescale
    from .style import show_path
    from .theory_figures import build_fig4a, build_fig5a
    from .training_figures import build_fig6, build_fig7
    from .variants_figure import build_fig_variants

FIGURES = {
    "fig2": (build_fig2, "accuracy per hop, scores of L1/L5/L11, purity; median and min-max over seeds"),
    "fig4a": (
        build_fig4a,
        "T_Index geometry: key v and rotated queries (constructions/results/figure4a.json)",
    ),
    "fig4bc": (build_fig4bc, "trained layer-1 queries/keys on the dominant plane; contribution per ID"),
    "fig5a": (build_fig5a, "stated vs exact vs corrected discrepancy (proofs_check/results/figure5a.json)"),
    "fig5b": (build_fig5b, "trained GPT-J accuracy against length per hop; median and min-max over seeds"),
    "fig5cd": (build_fig5cd, "LLM 1-hop accuracy against length: paper's Table 3 and our result files"),
    "fig6": (build_fig6, "scores and entropy of every layer over training (analysis.json)"),
    "fig7": (build_fig7, "head purity counts for gamma 0.1 and 0.05 (analysis.json)"),
    "fig8": (build_fig8, "frequency-ID weights per layer with Table 1's ID marked (analysis.json)"),
    "table1": (build_table1, "Table 1 as table1.md: paper's IDs beside ours (analysis.json)"),
    "discrepancy_trained": (
        build_discrepancy_trained,
        "measured logit gap per trained layer vs the construction's exact discrepancy",
    ),
    "llm_heads": (
        build_llm_heads,
        (
            "pretrained LLM head maps, a column per model and task: scores, sink share, "
            "dominant RoPE plane, its angle, full layers marked (training/reference/llm/*/)"
        ),
    ),
    "fig_variants": (
        build_fig_variants,
        (
            "variants study: accuracy against length and by hop, median and min-max "
            "over seeds; variants_table.md (training/reference/variants/)"
        ),
    ),
    "fig_breaks": (
        build_fig_breaks,
        "predicted vs measured length-generalisation breaks per model (dilution.json)",
    ),
    "fig_rescale": (
        build_fig_rescale,
        "variants trained without a query scale: as trained and with the scale switched "
        "on at inference (variants study, rescale stage)",
    ),
}
GROUPS = {"fig4": ("fig4a", "fig4bc"), "fig5": ("fig5a", "fig5b", "fig5cd")}
PROG = "python -m figures"


def build_parser() -> OneLineParser:
    # the docstring's first paragraph after the usage lines: one sentence (tests/test_help_texts.py)
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[1].strip())
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"figures to build (default: all): {', '.join(list(FIGURES) + list(GROUPS))}",
    )
    # paths stay text until checked: argparse's type=Path would turn an empty --out into "."
    output_argument(parser, "--out", kind="folder", default=ROOT / "figures" / "output", help="output folder")
    parser.add_argument("--list", action="store_true", help="list the figure names and exit")
    parser.add_argument(
        "--jobs",
        type=ascii_int,
        default=None,
        metavar="N",
        help="figures drawn at once, each in its own process (default: the CPUs this process may use; "
        "1: one after another in this process); the files are the same bytes either way",
    )
    parser.add_argument(
        "--runs",
        default=Inputs.runs_dir,
        help="folder with <task>/analysis.json, length_generalisation.json, metrics.jsonl",
    )
    parser.add_argument(
        "--seeds",
        default=Inputs.seeds_dir,
        help="seed study folder with paper/<task>/seed-<S>/ (figures 2 and 5B)",
    )
    parser.add_argument("--llm", default=Inputs.llm_dir, help="folder of LLM results JSON files")
    parser.add_argument(
        "--llm-heads",
        default=Inputs.llm_heads_dir,
        help="folder of model folders, each with analysis_<task>.json of `training analyze --model` "
        "(head maps; a folder holding these files is one model)",
    )
    parser.add_argument(
        "--variants",
        default=Inputs.variants_dir,
        help="variants study folder with summary.json (fig_variants, variants_table.md, fig_rescale)",
    )
    parser.add_argument("--figure5a", default=Inputs.figure5a, help="proofs_check Figure 5A JSON")
    parser.add_argument("--figure4a", default=Inputs.figure4a, help="constructions Figure 4A JSON")
    return parser


def parse(argv) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def select(names: list[str]) -> list[str]:
    """Expand groups, keep the registry's order, drop repeats; unknown names raise ValueError."""
    unknown = [n for n in names if n not in FIGURES and n not in GROUPS]
    if unknown:
        raise ValueError(
            f"unknown figure name(s): {', '.join(unknown)}; known: {', '.join(list(FIGURES) + list(GROUPS))}"
        )
    wanted = {m for n in names for m in GROUPS.get(n, (n,))}
    return [name for name in FIGURES if name in wanted]


def check_inputs(args) -> None:
    """Input paths of the wrong kind are usage errors (ValueError); an absent one is not: it is
    a missing input, reported by the figures that need it."""
    for flag, path, folder in (
        ("--runs", args.runs, True),
        ("--seeds", args.seeds, True),
        ("--llm", args.llm, True),
        ("--llm-heads", args.llm_heads, True),
        ("--variants", args.variants, True),
        ("--figure5a", args.figure5a, False),
        ("--figure4a", args.figure4a, False),
    ):
        text = str(path)
        if not text:
            raise ValueError(f"{flag}: empty path")
        if folder and os.path.exists(text) and not os.path.isdir(text):
            raise ValueError(f"{flag}: {text} is not a directory")
        if not folder and os.path.exists(text) and not os.path.isfile(text):
            raise ValueError(f"{flag}: {text} is not a regular file")


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.list:
        for name, (_, description) in FIGURES.items():
            print(f"{name:20s} {description}")
        return 0
    try:
        names = select(args.names) if args.names else list(FIGURES)
        check_inputs(args)
        if args.jobs is not None and args.jobs < 1:
            raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
        # figures/output is this command's own documented output; an input folder is never one
        out = check_output(
            args.out,
            "--out",
            kind="folder",
            documented=[ROOT / "figures" / "output"],
            replace_shipped=args.replace_shipped,
            inputs=[args.runs, args.seeds, args.llm, args.llm_heads, args.variants],
        )
    except (ValueError, UsageError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    inputs = Inputs(
        runs_dir=Path(args.runs),
        seeds_dir=Path(args.seeds),
        llm_dir=Path(args.llm),
        llm_heads_dir=Path(args.llm_heads),
        figure5a=Path(args.figure5a),
        figure4a=Path(args.figure4a),
        variants_dir=Path(args.variants),
    )
    try:
        jobs = default_jobs() if args.jobs is None else args.jobs
        return build_all(names, inputs, out, explicit=bool(args.names), jobs=jobs)
    except KeyboardInterrupt:
        return interrupted(PROG)


def build_all(names: list[str], inputs: Inputs, out: Path, explicit: bool, jobs: int = 1) -> int:
    start, built, problems, failed = time.perf_counter(), [], {}, {}
    builders = {name: FIGURES[name][0] for name in names}
    with contextlib.closing(outcomes(names, builders, inputs, out, jobs)) as results:
        try:
            for result in results:
                name = result.name
                if result.kind == "output":
                    # a full disk or a folder turned unwritable: every next figure would fail alike
                    print(f"{PROG}: error: {name}: {result.detail}", file=sys.stderr)
                    return 2
                if result.kind == "missing":
                    problems[name] = [f"{name}: skipped, {result.detail}"]
                    continue
                if result.kind == "failed":
                    # A file that exists but breaks its schema, or an output that turned unwritable
                    # during the run: always an error, whatever the mode.
                    failed[name] = f"{name}: failed, {result.detail}"
                    continue
                built.append(name)
                print(f"{name}: wrote " + ", ".join(result.paths), flush=True)
                problems[name] = [f"{name}: partial, {absent}" for absent in result.missing]
        except BrokenProcessPool as error:  # a worker killed (out of memory, a signal): its figure is lost
            print(f"{PROG}: error: a worker process died: {error}", file=sys.stderr)
            return 2
    seconds = time.perf_counter() - start
    # the summary in the registry's order, whichever worker finished first
    problem_lines = [line for name in names for line in problems.get(name, [])]
    failed_lines = [failed[name] for name in names if name in failed]
    for line in problem_lines + failed_lines:
        print(("error: " if explicit or line in failed_lines else "warning: ") + line, file=sys.stderr)
    print(
        f"{len(built)} of {len(names)} built in {seconds:.1f} s into {show_path(out)}"
        + (f"; {len(problem_lines)} with missing input" if problem_lines else "")
    )
    if failed or not built or (explicit and problem_lines):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
