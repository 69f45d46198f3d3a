"""Run registered checks and report them as a table or JSON."""

from __future__ import annotations

import time
import traceback

from theory.files import atomic_write_json
from theory.inputs import InputError

from .registry import REGISTRY, Options


def run_claims(ids, options: Options) -> list[dict]:
    """Run the checks of ``ids`` in order; an exception becomes status ``error``."""
    results = []
    for claim_id in ids:
        claim = REGISTRY[claim_id]
        start = time.perf_counter()
        try:
            outcome = claim.check(options)
            row = {
                "id": claim.id, "kind": claim.kind, "statement": claim.statement, "source": claim.source,
                "recorded": claim.recorded, "status": outcome.status,
                "verdict": claim.verdict(outcome.status, outcome.up_to_rounding),
                "recorded_verdict": claim.verdict(claim.recorded, outcome.up_to_rounding),
                "summary": outcome.summary, "evidence": outcome.evidence,
            }
            if outcome.counterexample is not None:
                row["counterexample"] = outcome.counterexample
            if outcome.corrected is not None:
                row["corrected_by"] = outcome.corrected
        except InputError as error:  # a damaged shipped file: the loader's line names it and the field
            row = {
                "id": claim.id, "kind": claim.kind, "statement": claim.statement, "source": claim.source,
                "recorded": claim.recorded, "status": "error", "verdict": "error",
                "recorded_verdict": claim.verdict(claim.recorded), "summary": str(error),
                "evidence": {"input_error": str(error)},
            }
        except Exception as error:  # a broken check is reported, never hidden
            row = {
                "id": claim.id, "kind": claim.kind, "statement": claim.statement, "source": claim.source,
                "recorded": claim.recorded, "status": "error", "verdict": "error",
                "recorded_verdict": claim.verdict(claim.recorded),
                "summary": f"{type(error).__name__}: {error}",
                "evidence": {"traceback": traceback.format_exc()},
            }
        row["seconds"] = round(time.perf_counter() - start, 3)
        results.append(row)
    return results


def format_table(results: list[dict], width: int = 100) -> str:
    """Two lines a claim: id, verdict word (``verdicts``) and statement; then the evidence."""
    lines = [f"{'claim':<24} {'verdict':<22} statement / evidence", "-" * width]
    for row in results:
        flag = "" if row["status"] == row["recorded"] else f"  [recorded: {row['recorded_verdict']}]"
        lines.append(f"{row['id']:<24} {row['verdict']:<22} {row['statement']}")
        lines.append(f"{'':<47} -> {row['summary']}{flag}")
    return "\n".join(lines)


def write_json(results: list[dict], path: str, options: Options) -> None:
    """Write atomically (``theory.files``), creating missing parent folders."""
    payload = {"options": {"thorough": options.thorough, "weights": list(options.weights)},
               "claims": results}
    atomic_write_json(path, payload, indent=2, default=str)
