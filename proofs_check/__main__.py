"""Command line: python -m proofs_check [--json FILE] [--only IDS] [--list] [--thorough] [--weights RUN ...]

Exit status: 0 when every check ran and reproduced its recorded outcome;
1 when a check errored or an outcome changed (both listed); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys

from . import claims  # noqa: F401  (registers the checks)
from .registry import REGISTRY, Options
from .runner import format_table, run_claims, write_json


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m proofs_check", description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write every result, with evidence, to FILE")
    parser.add_argument("--only", metavar="IDS", help="comma-separated claim ids (prefixes allowed: C7 runs C7-*)")
    parser.add_argument("--list", action="store_true", help="list the registered claims and exit")
    parser.add_argument("--thorough", action="store_true", help="search further (slower)")
    parser.add_argument("--weights", nargs="+", default=(), metavar="RUN", help="trained runs to analyse")
    return parser.parse_args(argv)


def select(only: str | None) -> list[str]:
    if not only:
        return list(REGISTRY)
    chosen = []
    for wanted in (part.strip() for part in only.split(",") if part.strip()):
        matches = [cid for cid in REGISTRY if cid == wanted or cid.startswith(wanted + "-")]
        if not matches:
            raise SystemExit(f"proofs_check: unknown claim id {wanted!r}; known ids: {', '.join(REGISTRY)}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        ids = select(args.only)
    except SystemExit as bad:
        print(bad, file=sys.stderr)
        return 2
    if args.list:
        for cid in ids:
            c = REGISTRY[cid]
            print(f"{cid:<24} [{c.recorded}] {c.statement}  ({c.source})")
        return 0
    options = Options(thorough=args.thorough, weights=tuple(args.weights))
    results = run_claims(ids, options)
    print(format_table(results))
    if args.json:
        write_json(results, args.json, options)
        print(f"\nwrote {args.json}")
    errors = [r for r in results if r["status"] == "error"]
    changed = [r for r in results if r["status"] not in ("error", r["recorded"])]
    for r in errors:
        print(f"\nERROR in {r['id']}: {r['summary']}\n{r['evidence']['traceback']}", file=sys.stderr)
    for r in changed:
        print(f"CHANGED {r['id']}: recorded {r['recorded']}, now {r['status']}", file=sys.stderr)
    if errors or changed:
        print(f"proofs_check: {len(errors)} check(s) errored, {len(changed)} outcome(s) changed", file=sys.stderr)
        return 1
    print(f"\n{len(results)} claim(s) checked; every outcome matches the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
