"""Command line: python -m training <command> ...

A small dispatcher and nothing else.  Each room's ``cli`` module exposes one
``add_<command>_parser(subparsers)`` per command, which registers its parser and sets
``handler`` (a function of the parsed arguments returning the exit status).  To add a
command, append its parser function to COMMANDS (the order is the order of ``--help``).
"""

from __future__ import annotations

import sys

from .analysis import cli as analysis_cli
from .cli_common import OneLineParser, UsageError, report_usage_error
from .llm import cli as llm_cli
from .model import cli as model_cli
from .tasks import cli as tasks_cli

COMMANDS = [tasks_cli.add_data_parser, model_cli.add_train_parser, model_cli.add_bench_parser,
            llm_cli.add_llm_parser, analysis_cli.add_evaluate_parser, analysis_cli.add_analyze_parser]


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m training", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parser in COMMANDS:
        add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except UsageError as error:
        return report_usage_error(f"python -m training {args.command}", error)


if __name__ == "__main__":
    sys.exit(main())
