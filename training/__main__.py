"""Command line: python -m training <command> ...

A small dispatcher.  Each subcommand lives in its own module exposing
``add_parser(subparsers)``, which registers its parser and sets ``handler`` (a
function of the parsed arguments returning the exit status).  To add one, import
its module and append it to COMMANDS.
"""

from __future__ import annotations

import sys

from . import cli_analyze, cli_bench, cli_data, cli_evaluate, cli_llm, cli_train
from .cli_common import OneLineParser, UsageError, report_usage_error

COMMANDS = [cli_data, cli_train, cli_bench, cli_llm, cli_evaluate, cli_analyze]


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m training", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except UsageError as error:
        return report_usage_error(f"python -m training {args.command}", error)


if __name__ == "__main__":
    sys.exit(main())
