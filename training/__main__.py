"""Command line: python -m training <command> ...

A small dispatcher and nothing else.  Each room's ``cli`` module exposes one
``add_<command>_parser(subparsers)`` per command, which registers its parser and sets
``handler`` (a function of the parsed arguments returning the exit status).  To add a
command, append its parser function to COMMANDS (the order is the order of ``--help``).

What the dispatcher promises for every command: a usage error or an output that cannot be
written (``UsageError``, ``OutputError``) is one line on stderr and exit status 2; Ctrl-C is
one line and exit status 130, no traceback.  An interrupt leaves files consistent because
every output and checkpoint is written atomically (theory.io.files): the old file or none.
"""

from __future__ import annotations

import sys

from .cli_common import quiet_interrupt_while_starting  # light: standard library and theory.io.cli only

with quiet_interrupt_while_starting("python -m training"):  # Ctrl-C during the imports: one line, exit 130
    from training.run import cli as model_cli

    from .analysis import cli as analysis_cli
    from .analysis import dilution_cli
    from .cli_common import OneLineParser, OutputError, UsageError, interrupted, report_usage_error
    from .llm import cache_cli
    from .llm import cli as llm_cli
    from .studies import cli as studies_cli
    from .tasks import cli as tasks_cli

DESCRIPTION = (
    "Generate the tasks' data, train and evaluate the paper's GPT-J, analyse its heads and those of "
    "pretrained models, run studies, and manage the model cache."
)
COMMANDS = [
    tasks_cli.add_data_parser,
    model_cli.add_train_parser,
    model_cli.add_bench_parser,
    llm_cli.add_llm_parser,
    analysis_cli.add_evaluate_parser,
    analysis_cli.add_analyze_parser,
    dilution_cli.add_dilution_parser,
    studies_cli.add_study_parser,
    cache_cli.add_cache_parser,
]


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m training", description=DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parser in COMMANDS:
        add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    prog = f"python -m training {args.command}"
    try:
        return args.handler(args)
    except (UsageError, OutputError) as error:
        return report_usage_error(prog, error)
    except KeyboardInterrupt:
        return interrupted(prog)


if __name__ == "__main__":
    sys.exit(main())
