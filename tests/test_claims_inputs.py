"""Issue 29, class 5 in proofs_check: every shipped results file a claim reads goes through
``theory.io.inputs`` (proofs_check.evidence.shipped).  A damaged copy of each, pointed at through
the module's path constant, makes THAT claim report an error naming the file and the field
(no traceback, one line), and the next claim of the same run is checked as usual.
"""

import json
import shutil
from pathlib import Path

import pytest

from proofs_check.claims import llm_heads, llm_local, premise, rescale, variants, window
from proofs_check.evidence import seeds, trained_sources
from proofs_check.registry import REGISTRY, Options
from proofs_check.runner import run_claims

REFERENCE = Path(__file__).resolve().parents[1] / "training" / "reference"
BYSTANDER = "C12-summary"  # a claim on the paper's printed numbers only: it must not notice


def _set(data: dict, field: str, value) -> None:
    """Set ``data``'s dotted ``field`` ("a.b.0.c": list indices as numbers) to ``value``."""
    *parents, last = field.split(".")
    for key in parents:
        data = data[int(key)] if isinstance(data, list) else data[key]
    data[int(last) if isinstance(data, list) else last] = value


# (claim, shipped file, where the copy goes: (module, constant, how the copy is pointed at),
#  a field the claim reads, and how the loader names it)
CASES = {
    "variants summary": (
        "V-scale",
        REFERENCE / "variants" / "summary.json",
        (variants, "SUMMARY", "file"),
        "results.log-scale-3k.letter.length.lengths.0",
        "field results.log-scale-3k.letter.length.lengths[0]: expected an integer",
    ),
    "rescale summary": (
        "V-rescale",
        REFERENCE / "variants" / "summary.json",
        (rescale, "SUMMARY", "file"),
        "results.paper-3k.letter.rescaled.accuracy.0.values.0",
        "field results.paper-3k.letter.rescaled.accuracy[0].values.0: expected a number or null",
    ),
    "window baseline": (
        "V-window",
        REFERENCE / "seeds" / "summary.json",
        (window, "SEEDS", "file"),
        "results.paper.letter.breaks",
        "field results.paper.letter.breaks: expected an object",
    ),
    "llm results": (
        "C12-local",
        REFERENCE / "llm" / "smollm2_letter.json",
        (llm_local, "REFERENCE", "folder"),
        "per_length.0.per_seed",
        "field per_length[0].per_seed: expected a list",
    ),
    "llm heads": (
        "C11-llm",
        REFERENCE / "llm" / "smollm2" / "analysis_number.json",
        (llm_heads, "SHIPPED", "folder"),
        "per_head.sink",
        "field per_head.sink: expected a list",
    ),
    "dilution": (
        "P-break",
        REFERENCE / "seeds" / "paper" / "number" / "seed-0" / "dilution.json",
        (premise, "STUDIES", "study"),
        "breaks.measured",
        "field breaks.measured: expected a number or null",
    ),
}

HOSTILE = ("deep", "truncated", "wrong type", "latin1")


def _damaged(source: Path, hostile: str, field: str) -> bytes:
    data = source.read_bytes()
    if hostile == "deep":
        return b"[" * 100_000 + b"]" * 100_000
    if hostile == "truncated":
        return data[: len(data) // 2]
    if hostile == "latin1":
        return b'{"caf\xe9": 1, ' + data.lstrip()[1:]
    value = json.loads(data)
    _set(value, field, "a string where the claim reads something else")
    return json.dumps(value).encode()


def _point_at_copy(monkeypatch, tmp_path: Path, source: Path, how, data: bytes) -> Path:
    """Write ``data`` where the claim will read it instead of ``source``; return that path."""
    module, constant, kind = how
    if kind == "file":
        copy = tmp_path / source.name
        monkeypatch.setattr(module, constant, copy)
    elif kind == "folder":  # the module reads several files of one folder: copy them all
        folder = tmp_path / "folder"
        shutil.copytree(source.parent, folder)
        copy = folder / source.name
        monkeypatch.setattr(module, constant, folder)
    else:  # a study: <variant>/<task>/seed-S/<file>
        copy = tmp_path / "study" / source.relative_to(source.parents[3])
        copy.parent.mkdir(parents=True)
        monkeypatch.setattr(module, constant, (tmp_path / "study",))
    if kind == "file" and module is window:  # V-window reads both summaries: the variants one stays shipped
        monkeypatch.setattr(window, "VARIANTS", REFERENCE / "variants" / "summary.json")
    copy.write_bytes(data)
    return copy


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_shipped_file_is_that_claims_error_naming_file_and_field(
    monkeypatch, tmp_path, case, hostile
):
    claim_id, source, how, field, named = CASES[case]
    copy = _point_at_copy(monkeypatch, tmp_path, source, how, _damaged(source, hostile, field))
    before = copy.read_bytes()
    damaged, bystander = run_claims([claim_id, BYSTANDER], Options())
    assert damaged["status"] == "error" and str(copy) in damaged["summary"], damaged["summary"]
    assert len(damaged["summary"].splitlines()) == 1 and "traceback" not in damaged["evidence"]
    expected = {
        "deep": "JSON nested deeper than 64 levels",
        "truncated": "not valid JSON",
        "latin1": "not UTF-8",
        "wrong type": named,
    }[hostile]
    assert expected in damaged["summary"], damaged["summary"]
    assert bystander["status"] == REGISTRY[BYSTANDER].recorded  # the run goes on
    assert copy.read_bytes() == before


def test_the_shipped_files_pass_their_shapes(monkeypatch):
    """The shapes describe the files as shipped: every claim reading them still decides."""
    outcomes = run_claims([case[0] for case in CASES.values()], Options())
    assert [row["status"] for row in outcomes] == [REGISTRY[case[0]].recorded for case in CASES.values()]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_damaged_seed_summary_leaves_the_trained_claims_undecided_naming_the_field(
    monkeypatch, tmp_path, hostile
):
    """The seed study's members are left out one by one (test_proofs_check covers a member's
    file); a damaged summary.json leaves every trained claim undecided, naming what is wrong."""
    source = REFERENCE / "seeds" / "summary.json"
    study = tmp_path / "seeds"
    study.mkdir()
    (study / "summary.json").write_bytes(_damaged(source, hostile, "members"))
    monkeypatch.setattr(seeds, "SHIPPED", study)
    monkeypatch.setattr(trained_sources, "_CACHE", {})
    outcome = REGISTRY["C10"].check(Options())
    expected = {
        "deep": "JSON nested deeper than 64 levels",
        "truncated": "not valid JSON",
        "latin1": "not UTF-8",
        "wrong type": "field members: expected an object, got a string",
    }[hostile]
    assert outcome.status == "undecided" and "summary.json unreadable (" in outcome.summary
    assert expected in outcome.summary, outcome.summary
