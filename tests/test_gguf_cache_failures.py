"""The GGUF conversion cache (``training.llm.hf_cache``) under a full disk and with a damaged
folder, with fake converters (no ``gguf`` package, no real GGUF):

* a full disk while converting (an ``OSError`` with ENOSPC, or the plain ``Exception`` carrying
  "No space left on device" that tokenizers and safetensors raise) is one line naming the cache
  folder, through ``python -m training llm`` exit 2, and leaves no temporary folder; any other
  converter failure stays its own error;
* a folder damaged consistently with its marker (a truncated weights file whose new size was
  written into the marker) no longer passes for the conversion: the run says in one line that
  the folder (named) was damaged, rebuilds it and goes on with the same results.
"""

import errno
import json
import os
import shutil
import sys
import types

import pytest
from test_llm import constant_model, tiny_tokenizer  # noqa: F401  (tiny_tokenizer is a fixture)

from training.__main__ import main
from training.llm import hf_cache

TOKENIZERS_FULL = Exception("No space left on device (os error 28)")  # how tokenizers' save reports it
SAFETENSORS_FULL = Exception(
    'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'
)


@pytest.fixture
def gguf_file(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 50)
    return path


def failing(error):
    """A converter that writes part of a folder, then fails with ``error``."""

    def convert(source, out):
        (out / "model.safetensors").write_bytes(b"half")
        raise error

    return convert


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
        TOKENIZERS_FULL,
        SAFETENSORS_FULL,
        OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)),
    ],
    ids=["errno", "tokenizers", "safetensors", "quota"],
)
def test_a_full_disk_while_converting_is_one_line_naming_the_cache_folder(gguf_file, tmp_path, error):
    root = tmp_path / "cache"
    with pytest.raises(hf_cache.CacheError) as caught:
        hf_cache.cached_folder(gguf_file, root=root, convert=failing(error))
    text, folder = str(caught.value), root / "gguf" / hf_cache.file_sha256(gguf_file)
    assert len(text.splitlines()) == 1 and f"the model cache {folder}: " in text, text
    assert os.strerror(errno.EDQUOT if "quota" in str(error) else errno.ENOSPC) in text
    assert list((root / "gguf").iterdir()) == []  # the temporary folder is gone, nothing is trusted


@pytest.mark.parametrize(
    "error",
    [
        Exception("data did not match any variant of untagged enum ModelWrapper"),
        OSError(errno.EACCES, os.strerror(errno.EACCES)),
        KeyError("merges"),
    ],
    ids=["plain", "permission", "bug"],
)
def test_other_conversion_failures_are_not_taken_for_a_full_disk(gguf_file, tmp_path, error):
    root = tmp_path / "cache"
    with pytest.raises(type(error)) as caught:
        hf_cache.cached_folder(gguf_file, root=root, convert=failing(error))
    assert caught.value is error and list((root / "gguf").iterdir()) == []


@pytest.fixture
def cli_gguf(monkeypatch, tmp_path):
    """A .gguf file for ``--model``, a cache of this test, and the ``gguf`` package's import
    satisfied (the tests replace the converter, the only user of it)."""
    pytest.importorskip("transformers")
    monkeypatch.setitem(sys.modules, "gguf", sys.modules.get("gguf") or types.ModuleType("gguf"))
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(hf_cache.NO_CACHE_ENV, raising=False)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)))
    return path


def llm_hf(model, out):
    return [
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
        "3",
        "--max-new-tokens",
        "1",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]


@pytest.mark.parametrize(
    "error", [TOKENIZERS_FULL, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))], ids=["tokenizers", "errno"]
)
def test_cli_full_disk_while_converting_is_one_line_and_exit_2(
    cli_gguf, tmp_path, monkeypatch, capsys, error
):
    monkeypatch.setattr(hf_cache, "convert_gguf", failing(error))
    assert main(llm_hf(cli_gguf, tmp_path / "r.json")) == 2
    err, folder = capsys.readouterr().err, tmp_path / "cache" / "gguf" / hf_cache.file_sha256(cli_gguf)
    assert len(err.splitlines()) == 1 and err.startswith("python -m training llm: error: --model: "), err
    assert str(folder) in err and "No space left on device" in err
    assert list(folder.parent.iterdir()) == [] and not (tmp_path / "r.json").exists()


def test_cli_rebuilds_a_cache_folder_damaged_consistently_with_its_marker(
    cli_gguf, tmp_path, monkeypatch, capsys, tiny_tokenizer
):  # noqa: F811
    saved, calls, out = tmp_path / "saved", [], tmp_path / "r.json"
    constant_model(tiny_tokenizer, "7").save_pretrained(saved)
    tiny_tokenizer.save_pretrained(saved)

    def convert(source, folder):  # the "conversion": a tiny saved model
        calls.append(folder)
        for path in saved.iterdir():
            shutil.copy(path, folder)

    monkeypatch.setattr(hf_cache, "convert_gguf", convert)
    assert main(llm_hf(cli_gguf, out)) == 0 and len(calls) == 1
    results = json.loads(out.read_text())["per_length"]
    folder = tmp_path / "cache" / "gguf" / hf_cache.file_sha256(cli_gguf)
    weights, marker = folder / "model.safetensors", folder / hf_cache.MARKER
    os.truncate(weights, weights.stat().st_size // 2)  # and the marker agrees: only the content shows it
    info = json.loads(marker.read_text())
    info["files"]["model.safetensors"] = weights.stat().st_size
    marker.write_text(json.dumps(info))
    capsys.readouterr()
    assert main(llm_hf(cli_gguf, out)) == 0 and len(calls) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"cache folder {folder} is damaged (model.safetensors " in err[0], err
    assert "rebuilding it" in err[0] and json.loads(out.read_text())["per_length"] == results
    assert main(llm_hf(cli_gguf, out)) == 0 and len(calls) == 2  # the rebuilt folder is trusted
    assert capsys.readouterr().err == "" and sorted(p.name for p in folder.parent.iterdir()) == [folder.name]


def test_an_intact_folder_that_fails_to_load_is_not_rebuilt(gguf_file, tmp_path, capsys):
    calls = []

    def convert(source, out):
        calls.append(out)
        (out / "model.safetensors").write_bytes(b"weights")

    def load(folder):
        raise RuntimeError("CUDA out of memory")  # not the cache's fault: a conversion would not help

    with pytest.raises(RuntimeError, match="out of memory"):
        hf_cache.load_cached(gguf_file, load, root=tmp_path / "cache", convert=convert, announce=False)
    assert len(calls) == 1 and capsys.readouterr().err == ""
