"""The Python API of the head analysis (``training.api``, issue 44) and the refusal of an
unsupported family before anything loads (``training.analysis.llm_load``), on a tiny random
LLaMA saved to a temporary folder with a character tokenizer (no download):

* ``analyze_heads`` gives exactly the numbers of ``python -m training analyze --model``, from a
  path and from a model already in memory; its records are the JSON's lists, one per head;
* ``examples/score_heads.py`` and the README's snippet run (the example prints one line per head);
* a model of a family the adapters do not read (``config.json``'s model_type, a GGUF header's
  general.architecture) is refused in one line naming it and the supported list, exit status
  2, with the loader replaced by a failure (so nothing loaded);
* ``to_dataframe`` needs pandas: a clear ImportError without it, one row per head with it.
"""

import importlib.util
import json
import math
import os
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from test_llm_models import char_tokenizer, run_cli, tiny_llama  # noqa: E402

from theory.rope import rope_angles  # noqa: E402
from training.analysis.adapters import supported_families  # noqa: E402
from training.analysis.head_classes import classify_heads  # noqa: E402
from training.api import HeadRecord, analyze_heads, load_model  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "score_heads.py"
SAME = (
    "model",
    "family",
    "dtype",
    "task",
    "n_inputs",
    "seed",
    "tau",
    "inputs",
    "swap_rule",
    "model_tokens",
    "layers",
    "heads",
    "swaps",
    "per_head",
    "frequency",
)  # every key but the timing


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-llama")
    tiny_llama(dtype=torch.float32).save_pretrained(path)
    char_tokenizer().save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def command_json(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("command") / "heads.json"
    assert (
        run_cli(
            "--model",
            str(folder),
            "--task",
            "letter",
            "--json",
            str(out),
            "--n-inputs",
            "5",
            "--batch-size",
            "2",
            "--no-progress",
        )
        == 0
    )
    return json.loads(out.read_text())


def same(a, b) -> bool:
    """Equal, NaN (a null score) equal to NaN or None."""
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


def test_analyze_heads_gives_the_commands_numbers(folder, command_json):
    heads = analyze_heads(load_model(folder), task="letter", n_inputs=5, batch_size=2)
    assert {k: heads.analysis[k] for k in SAME} == {k: command_json[k] for k in SAME}
    per_head, frequency, classes = (
        command_json["per_head"],
        command_json["frequency"],
        classify_heads(command_json),
    )
    assert len(heads) == 2 * 4 and all(isinstance(r, HeadRecord) for r in heads)
    assert [(r.layer, r.head) for r in heads] == [(layer, h) for layer in range(2) for h in range(4)]
    angles = rope_angles(8, command_json["frequency"]["base"])
    for r in heads:
        for field, value in (
            ("positional", per_head["positional"]),
            ("symbolic", per_head["symbolic"]),
            ("entropy", per_head["entropy"]),
            ("sink", per_head["sink"]),
            ("weighted_plane", frequency["weighted_id"]),
            ("dominant_plane", frequency["dominant_id"]),
        ):
            assert same(getattr(r, field), value[r.layer][r.head]), field
        assert r.head_class == classes[r.layer][r.head] and r.layer_kind == "full"
        assert r.angle_per_token == float(angles[r.dominant_plane - 1])
    assert {r.head_class for r in heads} <= {"positional", "symbolic", "mixed", "sink"}


def test_a_model_in_memory_gives_the_same_numbers(folder, command_json):
    """Loaded by transformers (sdpa, float32, as the command), its tokenizer found beside it."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    heads = analyze_heads(model, task="letter", n_inputs=5, batch_size=2)
    assert heads.analysis["per_head"] == command_json["per_head"]
    assert heads.analysis["frequency"] == command_json["frequency"]
    with pytest.raises(ValueError, match="pass tokenizer="):
        load_model(tiny_llama())  # built in memory: no folder, no tokenizer
    assert load_model(tiny_llama(), tokenizer=char_tokenizer()).family == "hf-llama"


def test_the_example_runs_and_prints_every_head(folder, monkeypatch, capsys):
    code = [
        line
        for line in EXAMPLE.read_text().splitlines()
        if line.strip() and not line.startswith(('"""', " "))
    ]
    assert len(code) < 10, code
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), str(folder), "letter"])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * 4 and lines[0].startswith("layer  0 head  0") and "rad/token" in lines[0]


def test_the_readmes_snippet_runs(folder, capsys):
    """The README's "Use it from Python" block, on the tiny model (5 inputs, not 100)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Use it from Python") :]
    start = section.index("```python") + len("```python")
    block = section[start : section.index("```\n", start)]
    block = block.replace('"path/to/hf-folder"', repr(str(folder))).replace("n_inputs=100", "n_inputs=5")
    if importlib.util.find_spec("pandas") is None:
        block = "\n".join(line for line in block.splitlines() if "to_dataframe" not in line)
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)
    assert len(scope["heads"]) == 8 and len(capsys.readouterr().out.split()) == 3


@pytest.mark.parametrize("model_type", ["phi3", "stablelm", "mamba"])
def test_an_unsupported_family_is_refused_before_loading(model_type, tmp_path, monkeypatch, capsys):
    import training.llm.local_model as local_model

    monkeypatch.setattr(local_model, "load_local", lambda *a, **k: pytest.fail("the model was loaded"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_size": 8}))
    assert run_cli("--model", str(tmp_path), "--task", "number", "--json", str(tmp_path / "out.json")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"model family {model_type!r} is not supported" in err, err
    assert f"supported: {supported_families()}" in err and "Qwen3 (qwen3)" in err
    with pytest.raises(ValueError, match=f"model family {model_type!r} is not supported"):
        load_model(tmp_path)


def test_the_commands_help_lists_the_adapters_families(capsys):
    with pytest.raises(SystemExit):
        run_cli("--help")
    assert f"families: {supported_families()}" in " ".join(capsys.readouterr().out.split())


def test_a_config_without_model_type_is_one_line(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    assert run_cli("--model", str(tmp_path), "--task", "number", "--json", str(tmp_path / "out.json")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "config.json names no model_type" in err


@pytest.mark.llm
@pytest.mark.skipif(
    importlib.util.find_spec("gguf") is None, reason="needs gguf: pip install 'rope-heads[llm]'"
)
@pytest.mark.parametrize(
    "architecture, model_type", [("phi3", None), ("gemma3", "gemma3_text"), ("qwen3", "qwen3")]
)
def test_a_gguf_family_is_read_from_its_header(architecture, model_type, tmp_path, monkeypatch, capsys):
    import gguf

    import training.llm.local_model as local_model
    from training.analysis.llm_load import check_source, source_model_type

    path = tmp_path / "model.gguf"
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert source_model_type(path) == (model_type or architecture)
    if model_type is not None:
        check_source(path)
        return
    monkeypatch.setattr(local_model, "load_local", lambda *a, **k: pytest.fail("the model was loaded"))
    assert run_cli("--model", str(path), "--task", "number", "--json", str(tmp_path / "out.json")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "model family 'phi3' is not supported" in err


def test_an_unsupported_model_in_memory_and_bad_values_are_refused():
    from transformers import Phi3Config, Phi3ForCausalLM

    phi3 = Phi3ForCausalLM(
        Phi3Config(
            vocab_size=40,
            hidden_size=32,
            num_attention_heads=4,
            num_hidden_layers=1,
            intermediate_size=48,
            pad_token_id=None,
        )
    )
    with pytest.raises(ValueError, match=r"model_type 'phi3'.*supported: .*Mistral \(mistral\)"):
        load_model(phi3, tokenizer=char_tokenizer())
    model = load_model(tiny_llama(), tokenizer=char_tokenizer())
    for bad, message in (
        ({"n_inputs": 0}, "n_inputs must be an int >= 1"),
        ({"batch_size": 0}, "batch_size must"),
        ({"seed": -1}, "seed"),
    ):
        with pytest.raises(ValueError, match=message):
            analyze_heads(model, **bad)
    with pytest.raises(ValueError, match="dtype must be one of float32, float64"):
        load_model(tiny_llama(), tokenizer=char_tokenizer(), dtype="float16")


def test_to_dataframe_names_pandas_when_it_is_absent(monkeypatch):
    from training.api import HeadResults

    results = HeadResults([HeadRecord(0, 0, 0.1, 0.9, "symbolic", 3, 0.01, "full", 2.5, 1.2, 0.1)], {})
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match=r"needs pandas \(pip install pandas\)"):
        results.to_dataframe()


def test_to_dataframe_has_one_row_per_head():
    pd = pytest.importorskip("pandas", reason="pandas is optional (HeadResults.to_dataframe)")
    from training.api import HeadResults

    records = [HeadRecord(0, h, 0.1, 0.9, "symbolic", 3, 0.01, "full", 2.5, 1.2, 0.1) for h in range(3)]
    frame = HeadResults(records, {}).to_dataframe()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 3
    assert list(frame.columns) == list(HeadRecord.__dataclass_fields__)
    assert np.array_equal(frame["head"].to_numpy(), [0, 1, 2])
