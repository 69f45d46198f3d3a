"""The report's study sections and prior art (proofs_check.report.studies): built from the shipped
results, every number moving with its file, a missing study said in one paragraph."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import proofs_check.claims  # noqa: F401  (registers every claim, for the link check)
from proofs_check.registry import REGISTRY
from proofs_check.report.doc import Bullets, Figure, HandTypedNumber, Link, Num, Para, Ref, Table
from proofs_check.report.studies import STUDY_SECTIONS, llm, premise, prior_art, seeds, variants

ROOT = Path(__file__).resolve().parents[1]
ALL = STUDY_SECTIONS + [prior_art]


def _inline(parts) -> str:
    return "".join(p if isinstance(p, str) else p.text for p in parts)


def render(section) -> str:
    """The section's text: every paragraph, bullet and table cell, in order (no markup)."""
    out = [section.title]
    for block in section.blocks:
        if isinstance(block, Para):
            out.append(_inline(block.parts))
        elif isinstance(block, Bullets):
            out += [_inline(p.parts) for p in block.items]
        elif isinstance(block, Table):
            out += [" | ".join(_inline(cell.parts) for cell in row) for row in block.rows]
        elif isinstance(block, Figure):
            out.append(block.path + " " + _inline(block.caption.parts))
    return "\n".join(out)


def _paras(section) -> list:
    found = []
    for block in section.blocks:
        found += [block] if isinstance(block, Para) else block.items if isinstance(block, Bullets) else []
        if isinstance(block, Table):
            found += [cell for row in block.rows for cell in row]
    return found


@pytest.fixture(scope="module")
def shipped():
    return [build(ROOT) for build in ALL]  # building checks every word for a hand-typed digit (doc.Para)


def test_every_section_builds_from_the_shipped_files(shipped):
    assert [s.anchor for s in shipped] == [
        "study-seeds",
        "study-variants",
        "study-rescale",
        "study-premise",
        "study-llm",
        "prior-art",
    ]
    for section in shipped:
        assert section.title
        assert any(isinstance(b, Para) for b in section.blocks), section.anchor
        for block in section.blocks:
            if isinstance(block, Figure):
                assert (ROOT / block.path).is_file(), block.path
    figures = {b.path for s in shipped for b in s.blocks if isinstance(b, Figure)}
    assert {
        f"figures/output/{n}.png" for n in ("fig5b", "fig_variants", "fig_rescale", "fig_breaks", "llm_heads")
    } <= figures


def test_every_number_names_a_file_that_exists(shipped):
    for section in shipped:
        for para in _paras(section):
            for part in para.parts:
                if isinstance(part, Num):
                    assert list(ROOT.glob(part.source)), (section.anchor, part)


def test_every_claim_link_names_a_registered_claim(shipped):
    links = [
        p.target
        for s in shipped
        for para in _paras(s)
        for p in para.parts
        if isinstance(p, Link) and p.target.startswith("#")
    ]
    assert {"#C10", "#V-scale-6k", "#V-rescale", "#V-rescale-number", "#P-break", "#C11-llm", "#C5"} <= set(
        links
    )
    assert all(target[1:] in REGISTRY for target in links), [t for t in links if t[1:] not in REGISTRY]


def _copy(tmp_path: Path, *relative: str) -> Path:
    for name in relative:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tmp_path / name)
        else:
            shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


VARIANTS = "training/reference/variants/summary.json"
SEEDS = "training/reference/seeds/summary.json"


def test_one_changed_seed_value_changes_the_variants_and_prior_art_text(tmp_path):
    root = _copy(tmp_path, VARIANTS, SEEDS, "training/studies/variants.json")
    before = render(variants.section(root)), render(prior_art(root))
    assert "100/100, 100/100, 100/100" in before[0] and "100/100, 100/100, 100/100" in before[1]

    def lower_seed_one(data):  # log-scale, letter task, longest length: seed 1 misses three of its inputs
        block = data["results"]["log-scale"]["letter"]["length"]
        block["accuracy"][block["lengths"].index(max(block["lengths"]))]["values"]["1"] = 0.97

    _edit(root / VARIANTS, lower_seed_one)
    after = render(variants.section(root)), render(prior_art(root))
    assert "100/100, 97/100, 100/100" in after[0] and "100/100, 97/100, 100/100" in after[1]
    assert before[0].replace("100/100, 100/100, 100/100", "100/100, 97/100, 100/100") == after[0]


def test_one_changed_break_changes_the_seeds_text(tmp_path):
    root = _copy(tmp_path, SEEDS)
    before = render(seeds.section(root))
    _edit(root / SEEDS, lambda d: d["results"]["paper"]["letter"]["breaks"]["measured"].update({"0": 321.0}))
    after = render(seeds.section(root))
    assert "111, 200, 179" in before and "321, 200, 179" in after and "321, 200, 179" not in before


def test_the_variants_seed_count_follows_the_files(tmp_path):
    """A variant the plan gives more seeds than the summary holds reads 'n of m planned', both from files."""
    root = _copy(tmp_path, VARIANTS, SEEDS, "training/studies/variants.json")
    summary = json.loads((root / VARIANTS).read_text())
    measured = len(summary["results"]["log-scale"]["letter"]["length"]["accuracy"][0]["values"])
    planned = measured + 2  # the plan asks for two seeds the summary does not hold yet
    _edit(
        root / "training/studies/variants.json",
        lambda d: d["variants"]["log-scale"]["seeds"].update({"letter": list(range(planned))}),
    )
    assert f"{measured} of {planned} planned" in render(variants.section(root))
    _edit(
        root / "training/studies/variants.json",
        lambda d: d["variants"]["log-scale"]["seeds"].update({"letter": list(range(measured))}),
    )
    assert "planned" not in render(variants.section(root))


@pytest.mark.parametrize("build", ALL, ids=lambda f: f.__module__.rsplit(".", 1)[-1])
def test_a_missing_study_gives_one_paragraph_saying_so(tmp_path, build):
    section = build(tmp_path)
    assert len(section.blocks) == 1 and isinstance(section.blocks[0], Para)
    text = _inline(section.blocks[0].parts)
    assert "not shipped" in text and any(isinstance(p, Ref) for p in section.blocks[0].parts)


def test_a_second_model_folder_is_picked_up_by_globbing(tmp_path):
    root = _copy(tmp_path, "training/reference/llm")
    for other in (root / "training/reference/llm").iterdir():  # SmolLM2 alone, then a copy of it beside it
        if not other.name.startswith("smollm2"):
            shutil.rmtree(other) if other.is_dir() else other.unlink()
    one = llm.section(root)
    shutil.copytree(root / "training/reference/llm/smollm2", root / "training/reference/llm/another-model")
    for task in ("number", "letter"):
        shutil.copy(
            root / f"training/reference/llm/smollm2_{task}.json",
            root / f"training/reference/llm/another-model_{task}.json",
        )
    two = llm.section(root)
    bullets = lambda s: sum(len(b.items) for b in s.blocks if isinstance(b, Bullets))  # noqa: E731
    assert bullets(two) == 2 * bullets(one)
    assert (
        render(two).count("answers the letter task") == 2 * render(one).count("answers the letter task") == 2
    )


def test_a_digit_typed_into_the_words_fails_the_build(monkeypatch):
    monkeypatch.setitem(premise.READING_WORDS, "lemma", "Lemma F.1's condition")
    with pytest.raises(HandTypedNumber):
        premise.section(ROOT)


def test_a_damaged_results_file_is_an_input_error_naming_it(tmp_path):
    from theory.io.inputs import InputError

    root = _copy(tmp_path, SEEDS)
    (root / SEEDS).write_text('{"results": {"paper": {"letter": "a string"}}}')
    with pytest.raises(InputError, match="summary.json"):
        seeds.section(root)


def test_the_layer_kinds_and_the_screen_are_read_from_the_files(tmp_path):
    root = _copy(tmp_path, "training/reference/llm")
    before = render(llm.section(root))
    assert "positional heads 26 of 51 in sliding layers against 0 of 4 in full layers" in before
    assert (
        "gemma3 scores 0.093 there (an answer could be read from 0.253 of its replies; screened out)"
        in before
    )
    analysis = root / "training/reference/llm/gemma3/analysis_number.json"
    _edit(
        analysis, lambda d: d["frequency"]["layer_kind"].__setitem__(0, "full")
    )  # layer 0: three positional heads, one symbolic
    letter = root / "training/reference/llm/gemma3_letter.json"
    _edit(
        letter,
        lambda d: next(r for r in d["per_length"] if r["length"] == 16).__setitem__("per_seed", [0.9] * 3),
    )
    after = render(llm.section(root))
    assert "positional heads 23 of 47 in sliding layers against 3 of 8 in full layers" in after
    assert "gemma3 scores 0.900 there (an answer could be read from 0.253 of its replies; passes)" in after


def test_parse_rates_the_chat_template_and_the_weights_are_read_from_the_files(tmp_path):
    """The harness runs' parse rates (overall, lowest at a length), their recorded chat-template
    setting and the GGUF type of the analysed weights all move with their files."""
    root = _copy(tmp_path, "training/reference/llm")
    folder = root / "training/reference/llm"
    before = render(llm.section(root))
    assert "0.443 on the letter task (lowest 0.253, at length 16)" in before
    assert before.count("without the model's chat template") == 2
    assert before.count("this model is instruction-tuned") == 1  # SmolLM2-135M-Instruct, not Gemma 3 base
    assert "gemma-3-270m-Q4_K_M.gguf (type Q4_K_M, 4-bit weights)" in before
    assert "SmolLM2-135M-Instruct.Q4_1.gguf (type Q4_1, 4-bit weights)" in before

    def lower_and_template(d):
        next(r for r in d["per_length"] if r["length"] == 24)["parse_rate"] = 0.125
        d["summary"]["parse_rate"] = 0.5
        d["settings"]["backend"]["chat_template"] = True

    for task in ("number", "letter"):
        _edit(folder / f"gemma3_{task}.json", lower_and_template)
    _edit(folder / "smollm2/analysis_number.json", lambda d: d.__setitem__("model", "SmolLM2-135M.Q8_0.gguf"))
    after = render(llm.section(root))
    assert "0.500 on the letter task (lowest 0.125, at length 24)" in after
    assert (
        "wrapped in the model's chat template" in after
        and after.count("without the model's chat template") == 1
    )
    assert "SmolLM2-135M.Q8_0.gguf (type Q8_0, 8-bit weights)" in after
