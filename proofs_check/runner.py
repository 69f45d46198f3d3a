"""Run registered checks and report them as a table or JSON."""

from __future__ import annotations

import time
import traceback

from proofs_check.evidence import binding
from proofs_check.evidence.classes import describe, run_steps
from theory.io.files import atomic_write_json
from theory.io.inputs import InputError
from theory.io.provenance import provenance

from .registry import GROUPS, REGISTRY, Options


def _row(claim, status: str, verdict: str, summary: str, evidence: dict) -> dict:
    return {
        "id": claim.id,
        "kind": claim.kind,
        "origin": claim.origin,
        "group": GROUPS[claim.group],  # the paper's claims, corrected statements, own hypotheses
        "statement": claim.statement,
        "source": claim.source,
        "recorded": claim.recorded,
        "status": status,
        "verdict": verdict,
        "recorded_verdict": claim.recorded_verdict(),
        "summary": summary,
        "evidence": evidence,
        "evidence_class": describe(claim.evidence),
    }


def _checked_proof(claim, row: dict) -> dict:
    """A proved statement's steps run after its check; a failed step makes the row an error
    (the argument the verdict word names no longer holds, whatever the finite checks found)."""
    steps = run_steps(claim.evidence)
    row["evidence_class"]["steps"] = steps
    failed = [s for s in steps if not s["passed"]]
    if failed:
        first = failed[0]
        row.update(
            status="error",
            verdict="error",
            summary=f"proof step {first['step']} of {len(steps)} fails ({first['checked_by']}): "
            f"{first['failure']}; the check itself said: {row['summary']}",
        )
        row["evidence"] = {
            **row["evidence"],
            "traceback": "\n".join(s.get("traceback", f"step {s['step']}: {s['failure']}\n") for s in failed),
        }
    return row


def _bound_text(claim, row: dict) -> dict:
    """A statement that no longer prints the formulas its check evaluated (``binding``) is
    undecided, whatever the check found: the statement shown is not the one checked."""
    found = binding.problems(claim)
    if found:
        row.update(
            status="undecided",
            verdict=claim.verdict("undecided"),
            summary=f"{'; '.join(found)}; the check itself said: {row['summary']}",
        )
        row["evidence"] = {**row["evidence"], "statement_binding": found}
    return row


def changed(row: dict) -> bool:
    """The run's verdict word differs from the recorded one (status, rounding word or evidence
    class); an error is reported as an error, not as a change."""
    return row["status"] != "error" and row["verdict"] != row["recorded_verdict"]


def run_claims(ids, options: Options) -> list[dict]:
    """Run the checks of ``ids`` in order; an exception, or a failed step of a proved
    statement's argument, becomes status ``error``.  ``changed``: the verdict word differs from
    the recorded one (status, rounding word or evidence class), errors aside."""
    results = []
    for claim_id in ids:
        claim = REGISTRY[claim_id]
        start = time.perf_counter()
        try:
            outcome = claim.check(options)
            row = _row(
                claim,
                outcome.status,
                claim.verdict(outcome.status, outcome.up_to_rounding),
                outcome.summary,
                outcome.evidence,
            )
            if outcome.counterexample is not None:
                row["counterexample"] = outcome.counterexample
            if outcome.corrected is not None:
                row["corrected_by"] = outcome.corrected
            row = _bound_text(claim, row)
            if claim.evidence is not None and claim.evidence.steps:  # an argument: its steps run every time
                row = _checked_proof(claim, row)
        except InputError as error:  # a damaged shipped file: the loader's line names it and the field
            row = _row(claim, "error", "error", str(error), {"input_error": str(error)})
        except Exception as error:  # a broken check is reported, never hidden
            row = _row(
                claim,
                "error",
                "error",
                f"{type(error).__name__}: {error}",
                {"traceback": traceback.format_exc()},
            )
        row["changed"] = changed(row)
        row["seconds"] = round(time.perf_counter() - start, 3)
        results.append(row)
    return results


def format_table(results: list[dict], width: int = 100) -> str:
    """Two lines a claim: id, verdict word (``verdicts``) and statement; then the evidence."""
    from .report.mathtext import plain  # $...$ math as plain text (issue 43)

    lines = [f"{'claim':<24} {'verdict':<28} statement / evidence", "-" * width]
    for row in results:
        flag = "" if row["verdict"] == row["recorded_verdict"] else f"  [recorded: {row['recorded_verdict']}]"
        lines.append(f"{row['id']:<24} {row['verdict']:<28} {plain(row['statement'])}")
        lines.append(f"{'':<53} -> {plain(row['summary'])}{flag}")
    return "\n".join(lines)


def write_json(results: list[dict], path: str, options: Options) -> None:
    """Write atomically (``theory.io.files``), creating missing parent folders."""
    payload = {
        "options": {"thorough": options.thorough, "weights": list(options.weights)},
        "provenance": provenance(options.weights),
        "groups": {
            words: [row["id"] for row in results if row["group"] == words] for words in GROUPS.values()
        },
        "claims": results,
    }
    atomic_write_json(path, payload, indent=2, default=str)
