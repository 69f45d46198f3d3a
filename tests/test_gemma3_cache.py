"""Gemma 3 (issue 32): the cached GGUF conversion (``training.llm.hf_cache``).

With a converter stub: one conversion per content (sha256 key, a renamed copy hits), the
marker written last, a damaged folder reported in one line and rebuilt, a failed conversion
leaving nothing trusted, a concurrent finished copy winning the rename and dead temporaries
removed; then the whole route on a tiny Gemma 3 GGUF written with the ``gguf`` package (the
tiny model of ``test_gemma3``): the cached folder loads the same weights, config and
tokenization as the direct GGUF load, a second load converts nothing, and
``ROPE_HEADS_NO_CACHE`` bypasses it.  Separate from ``test_gemma3``: these tests are about
files on disk, not about attention.
"""

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from test_gemma3 import CHARS, tiny_gemma3  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def fake_converter(calls, content=b"weights"):
    """A converter writing two files; it checks that nothing is in place or marked while it runs."""
    from training.llm import hf_cache

    def convert(source, out):
        calls.append(out)
        assert out.name.startswith(".tmp-") and not (out / hf_cache.MARKER).exists()
        (out / "model.safetensors").write_bytes(content)
        (out / "config.json").write_text("{}")

    return convert


@pytest.fixture
def gguf_file(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 50)
    return path


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    from training.llm.hf_cache import cache_root

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ROPE_HEADS_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_root() == tmp_path / "home" / ".cache" / "rope-heads"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "rope-heads"
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_one_conversion_per_content_marked_last(gguf_file, tmp_path, capsys):
    import hashlib
    import json

    from training.llm.hf_cache import MARKER, cached_folder

    calls, root = [], tmp_path / "cache"
    sha = hashlib.sha256(gguf_file.read_bytes()).hexdigest()

    def first(source, out):  # nothing stands at the final name while the conversion runs
        assert not (root / "gguf" / sha).exists()
        fake_converter(calls)(source, out)

    folder = cached_folder(gguf_file, root=root, convert=first)
    assert folder == root / "gguf" / sha and len(calls) == 1
    marker = json.loads((folder / MARKER).read_text())
    assert marker["sha256"] == sha and marker["files"] == {"config.json": 2, "model.safetensors": 7}
    moved = tmp_path / "renamed.gguf"
    gguf_file.rename(moved)  # the same bytes under another name: a hit
    assert cached_folder(moved, root=root, convert=fake_converter(calls)) == folder and len(calls) == 1
    moved.write_bytes(moved.read_bytes() + b"x")  # changed bytes: another folder
    assert cached_folder(moved, root=root, convert=fake_converter(calls)) != folder and len(calls) == 2
    assert sorted(p.name for p in (root / "gguf").iterdir()) == sorted(
        [sha, hashlib.sha256(moved.read_bytes()).hexdigest()]
    )  # no temporaries left


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda f: (f / "complete.json").unlink(), "no complete.json"),
        (
            lambda f: (f / "model.safetensors").write_bytes(b"w"),
            "model.safetensors is missing or not 7 bytes",
        ),
        (
            lambda f: (f / "complete.json").write_text(
                (f / "complete.json").read_text().replace('"sha256": "', '"sha256": "0')
            ),
            "complete.json names sha256",
        ),
        (lambda f: (f / "complete.json").write_text("{"), "cache marker"),
    ],
)
def test_a_damaged_folder_is_reported_in_one_line_and_rebuilt(gguf_file, tmp_path, capsys, damage, why):
    from training.llm.hf_cache import cached_folder

    calls, root = [], tmp_path / "cache"
    folder = cached_folder(gguf_file, root=root, convert=fake_converter(calls), announce=False)
    assert capsys.readouterr().err == ""
    damage(folder)
    assert cached_folder(gguf_file, root=root, convert=fake_converter(calls)) == folder and len(calls) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "damaged" in err[0] and why in err[0], err
    assert cached_folder(gguf_file, root=root, convert=fake_converter(calls)) == folder and len(calls) == 2


def test_a_failed_conversion_leaves_nothing_trusted(gguf_file, tmp_path):
    from training.llm.hf_cache import cached_folder

    def crash(source, out):
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    root = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        cached_folder(gguf_file, root=root, convert=crash)
    assert list((root / "gguf").iterdir()) == []
    calls = []
    cached_folder(gguf_file, root=root, convert=fake_converter(calls))
    assert len(calls) == 1


def test_a_concurrent_finished_copy_wins_and_dead_temporaries_go(gguf_file, tmp_path):
    import json
    import socket
    import subprocess
    import sys

    from training.llm.hf_cache import MARKER, cached_folder, file_sha256

    root, sha = tmp_path / "cache", file_sha256(gguf_file)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = root / "gguf" / f".tmp-{sha}-{socket.gethostname()}-{int(dead.stdout)}"
    stale.mkdir(parents=True)

    def slow(source, out):  # meanwhile another process puts its finished folder in place
        theirs = cached_folder(source, root=tmp_path / "other", convert=fake_converter([], b"theirs!"))
        theirs.rename(root / "gguf" / sha)
        fake_converter([], b"mine!!!")(source, out)

    folder = cached_folder(gguf_file, root=root, convert=slow)
    assert (folder / "model.safetensors").read_bytes() == b"theirs!"
    assert json.loads((folder / MARKER).read_text())["files"]["model.safetensors"] == 7
    assert [p.name for p in (root / "gguf").iterdir()] == [sha]  # the stale and our own temporaries are gone


def write_tiny_gguf(path, model, tokens):
    """A GGUF of ``model`` (F32 tensors, llama.cpp's Gemma 3 names, norms stored as 1 + w as
    llama.cpp writes them) with a sentencepiece-style vocabulary ``tokens``."""
    import gguf

    c = model.config
    writer = gguf.GGUFWriter(str(path), "gemma3")
    writer.add_context_length(c.max_position_embeddings)
    writer.add_block_count(c.num_hidden_layers)
    writer.add_feed_forward_length(c.intermediate_size)
    writer.add_embedding_length(c.hidden_size)
    writer.add_head_count(c.num_attention_heads)
    writer.add_head_count_kv(c.num_key_value_heads)
    writer.add_key_length(c.head_dim)
    writer.add_value_length(c.head_dim)
    writer.add_layer_norm_rms_eps(c.rms_norm_eps)
    writer.add_sliding_window(c.sliding_window)
    writer.add_rope_freq_base(c.rope_parameters["full_attention"]["rope_theta"])
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types([3, 3, 3, 2] + [1] * (len(tokens) - 4))
    for name, token_id in (("pad", 0), ("eos", 1), ("bos", 2), ("unk", 3)):
        getattr(writer, f"add_{name}_token_id")(token_id)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GEMMA3, c.num_hidden_layers)
    for name, tensor in model.state_dict().items():
        if name != "lm_head.weight":  # tied to the embedding
            stem, suffix = name.removeprefix("model.").rsplit(".", 1)
            array = tensor.float().numpy()
            writer.add_tensor(f"{names.get_name(stem)}.{suffix}", array + 1.0 if "norm" in stem else array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_a_gguf_loads_through_its_cached_folder_as_it_loads_directly(tmp_path, monkeypatch, capsys):
    pytest.importorskip("gguf", reason="writing a GGUF needs the 'gguf' package (the [llm] extra)")
    from training.llm import hf_cache
    from training.llm.local_model import load_local

    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", "\u2581"] + list(CHARS[1:]) + ["\u2581a", "\u2581b", "12"]
    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, tiny_gemma3(vocab_size=len(tokens), layer_types=None), tokens)
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(tmp_path / "cache"))
    direct, direct_tokenizer = load_local(path, cache=False)
    assert not (tmp_path / "cache").exists()
    cached, cached_tokenizer = load_local(path, progress=True)
    assert "converting tiny.gguf once into the cache" in capsys.readouterr().err
    monkeypatch.setattr(hf_cache, "convert_gguf", lambda *a: pytest.fail("converted again"))
    again, again_tokenizer = load_local(path)
    text = "ab 12 c a9"
    for model, tokenizer in ((cached, cached_tokenizer), (again, again_tokenizer)):
        assert model.config.to_dict()["layer_types"] == direct.config.layer_types
        assert model.config.rope_parameters == direct.config.rope_parameters
        assert getattr(model.config, "quantization_config", None) is None
        reference = direct.state_dict()
        assert all(torch.equal(reference[k], v) for k, v in model.state_dict().items())
        assert tokenizer(text).input_ids == direct_tokenizer(text).input_ids
    monkeypatch.setenv("ROPE_HEADS_NO_CACHE", "1")
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(tmp_path / "unused"))
    load_local(path)
    assert not (tmp_path / "unused").exists()
