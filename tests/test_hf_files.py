"""Runs as standard Hugging Face artifacts (training.run.hf_files, training.run.model_card).

The shipped reference runs load with ``AutoTokenizer`` and ``AutoModelForCausalLM`` as they
stand and give the package's own logits; their tokenizer encodes generated task inputs exactly
as ``Task.encode``; their tokenizer files and model cards are what the code generates from the
shipped files (else: regenerate them with the command in the failure message); ``train`` writes
the tokenizer files into every new run; the command refuses what it must not write.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from training.run import hf_files
from training.run.loop import train
from training.run.model_card import CARD, CARD_MARKER, model_card
from training.run.weights import load_model
from training.tasks.definitions import get_task

pytestmark = pytest.mark.usefixtures("one_torch_thread")
REPO = Path(__file__).resolve().parents[1]
SHIPPED = {"number": REPO / "training/reference/number", "letter": REPO / "training/reference/letter"}
REGENERATE = (
    "python -m training.run.hf_files training/reference/number training/reference/letter --replace-shipped"
)
# float32 logits of one model computed by two implementations, at the task's 17 tokens (measured: at
# most 2e-6 for number and 5e-6 for letter; the difference grows with the position, 1e-4 at 217 tokens)
LOGIT_TOLERANCE = 1e-5


def task_texts(task: str, count: int, extra_target: int = 0):
    """(texts, ids) of generated inputs: space-separated tokens, and the package's own ids."""
    batch = get_task(task).generate(count, seed=7, extra_target=extra_target)
    return [" ".join(get_task(task).decode(row)) for row in batch.inputs], batch.inputs


@pytest.mark.parametrize("task", sorted(SHIPPED))
def test_the_shipped_files_are_the_generated_ones(task):
    """Stale after a change to the code or to a result file: regenerate (the message says how)."""
    run = SHIPPED[task]
    for name in hf_files.TOKENIZER_FILES + (CARD,):
        assert (run / name).is_file(), f"{run / name} is missing: run {REGENERATE}"
    assert json.loads((run / "tokenizer.json").read_text()) == hf_files.tokenizer_json(
        get_task(task).vocab
    ), REGENERATE
    assert (run / CARD).read_text() == model_card(run.relative_to(REPO), task) or (
        run / CARD
    ).read_text() == model_card(run, task), f"{run / CARD} is stale: run {REGENERATE}"


@pytest.mark.parametrize("task", sorted(SHIPPED))
def test_the_tokenizer_encodes_generated_inputs_as_the_package_does(task):
    tokenizers = pytest.importorskip("tokenizers", reason="needs tokenizers (the [dev] extra's transformers)")
    tokenizer = tokenizers.Tokenizer.from_file(str(SHIPPED[task] / "tokenizer.json"))
    texts, ids = task_texts(task, 256, extra_target=40)
    encoded = [e.ids for e in tokenizer.encode_batch(texts)]
    assert np.array_equal(np.array(encoded), ids)
    assert [tokenizer.decode(row) for row in encoded] == texts  # and back
    vocab_size = len(get_task(task).vocab)  # an unknown token is the id past the vocabulary (hf_files doc)
    assert tokenizer.encode("zz " + texts[0]).ids == [vocab_size, *encoded[0]]


@pytest.mark.parametrize("task", sorted(SHIPPED))
def test_a_shipped_run_loads_with_auto_classes_and_gives_the_package_logits(task):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers", reason="needs transformers: pip install -e '.[dev]'")
    run = SHIPPED[task]
    tokenizer = transformers.AutoTokenizer.from_pretrained(run)  # vocab.json there must not be read as BPE
    model = transformers.AutoModelForCausalLM.from_pretrained(run).eval()
    texts, ids = task_texts(task, 8)  # at the task's length: float32 differences grow with the position
    encoded = tokenizer(texts, return_tensors="pt").input_ids
    assert torch.equal(encoded, torch.from_numpy(ids))
    with torch.no_grad():
        theirs = model(encoded).logits
        ours = load_model(run)(torch.from_numpy(ids))
    assert torch.allclose(theirs, ours, atol=LOGIT_TOLERANCE, rtol=0)
    assert tokenizer.decode(theirs[0, -1].argmax()) == get_task(task).vocab[int(ours[0, -1].argmax())]
    unknown = tokenizer("zz " + texts[0], return_tensors="pt").input_ids
    with pytest.raises(IndexError):  # the model refuses an unknown token rather than reading another
        model(unknown)


@pytest.mark.llm
def test_a_shipped_run_loads_in_transformer_lens():
    torch = pytest.importorskip("torch")
    bridge = pytest.importorskip(
        "transformer_lens.model_bridge", reason="needs transformer-lens>=4: pip install -e '.[llm]'"
    )
    run = SHIPPED["letter"]
    lens = bridge.TransformerBridge.boot_transformers(str(run), device="cpu")
    texts, ids = task_texts("letter", 4)
    tokens = lens.to_tokens(texts, prepend_bos=False)
    assert torch.equal(tokens, torch.from_numpy(ids))
    with torch.no_grad():
        assert torch.allclose(lens(tokens), load_model(run)(tokens), atol=LOGIT_TOLERANCE, rtol=0)


def digest(folder: Path) -> dict:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("hf") / "run"
    train("letter", run, preset="smoke", steps=2, device="cpu", progress=False)
    return run


def test_train_writes_the_tokenizer_files(smoke_run):
    tokenizer = json.loads((smoke_run / "tokenizer.json").read_text())
    assert tokenizer == hf_files.tokenizer_json(get_task("letter").vocab)
    assert (
        json.loads((smoke_run / "tokenizer_config.json").read_text())["tokenizer_class"]
        == "PreTrainedTokenizerFast"
    )
    assert not (smoke_run / CARD).exists()  # the card waits for measured accuracy: the command writes it


def test_the_command_writes_the_card_and_names_missing_results(smoke_run, tmp_path, capsys):
    run = tmp_path / "copy"
    shutil.copytree(smoke_run, run, ignore=shutil.ignore_patterns("checkpoints", ".lock"))
    (run / "tokenizer.json").unlink()
    assert hf_files.main([str(run)]) == 0
    card = (run / CARD).read_text()
    assert card.startswith("---\n") and CARD_MARKER in card and "--preset smoke" in card
    assert "Test accuracy not measured: `python -m training evaluate" in card
    assert (run / "tokenizer.json").is_file()
    assert hf_files.main([str(run)]) == 0  # its own card is replaced


def test_the_command_refuses_before_writing_anything(smoke_run, tmp_path, capsys):
    run = tmp_path / "copy"
    shutil.copytree(smoke_run, run, ignore=shutil.ignore_patterns("checkpoints", ".lock"))
    (run / CARD).write_text("# my notes\n")
    before = digest(run)
    assert hf_files.main([str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not a model card" in err
    (run / CARD).unlink()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert hf_files.main([str(run), str(plain)]) == 2  # every run checked before any is written
    assert "not the folder of a training run" in capsys.readouterr().err
    assert digest(run) == {k: v for k, v in before.items() if k != CARD}
    shipped = digest(SHIPPED["number"])
    assert hf_files.main([str(SHIPPED["number"])]) == 2  # shipped results need --replace-shipped
    assert "--replace-shipped" in capsys.readouterr().err and digest(SHIPPED["number"]) == shipped
