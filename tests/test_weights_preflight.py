"""``python -m proofs_check --weights RUN`` checks the run's files before any claim runs
(reliability round 4): a truncated model.safetensors, a config of another task or of another
shape, or a missing vocabulary is one line on stderr and exit 2, never "CHANGED C1" after a
claim failed half-way.  Only headers are read (``trained_sources._check_run``)."""

from __future__ import annotations

import json
import shutil

import pytest
from test_proofs_check import tiny_run

from proofs_check import __main__ as cli


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("weights")
    return {task: tiny_run(root / task, task) for task in ("number", "letter")}


def _truncate(run, made):
    weights = run / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])


def _other_task_config(run, made):
    shutil.copy(made["letter"] / "config.json", run / "config.json")


def _config(**changes):
    def change(run, made):
        config = json.loads((run / "config.json").read_text())
        (run / "config.json").write_text(json.dumps({**config, **changes}))

    return change


def _padded(run, made):
    weights = run / "model.safetensors"
    weights.write_bytes(weights.read_bytes() + b"\0" * 8)


def _no_vocab(run, made):
    (run / "vocab.json").unlink()


CASES = [  # (damage, what the line says, the file it names)
    (_truncate, "bytes, but its header describes", "model.safetensors"),  # and "truncated": below
    (_padded, "bytes after the last tensor", "model.safetensors"),
    (
        _other_task_config,
        "has vocab_size 128, but its vocab.json is the number task's (136 tokens); "
        "a config of the letter task",
        "config.json",
    ),
    (_config(n_layer=2), "does not match", "model.safetensors"),  # a config of another shape
    (
        _config(n_inner=64),
        "shape of transformer.h.0.mlp.fc_in.weight (32, 16) (config: (64, 16))",
        "model.safetensors",
    ),
    (_config(model_type="llama"), "model_type must be 'gptj'", "config.json"),  # not this package's model
    (_no_vocab, "is not a run: missing vocab.json", ""),
]


@pytest.mark.parametrize(
    "damage, says, names",
    CASES,
    ids=[
        "truncated",
        "padded",
        "another-task-config",
        "another-n-layer",
        "another-n-inner",
        "not-gpt-j",
        "no-vocab",
    ],
)
def test_a_bad_weights_run_is_one_line_exit_2_before_any_claim(
    made, tmp_path, capsys, monkeypatch, damage, says, names
):
    def started(*args, **kwargs):
        raise AssertionError("a claim ran")

    monkeypatch.setattr(cli, "run_claims", started)
    run = shutil.copytree(made["number"], tmp_path / "run")
    damage(run, made)
    assert cli.main(["--weights", str(run), "--only", "C1"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and out == "", err
    assert says in lines[0] and str(run / names) in lines[0], lines[0]
    if damage is _truncate:
        size = (run / "model.safetensors").stat().st_size
        assert lines[0].endswith(f"is {size} bytes, but its header describes {size + 100}: truncated")


def test_an_intact_run_passes_the_checks(made, monkeypatch):
    from proofs_check.evidence import trained_sources

    monkeypatch.setattr(trained_sources, "_CHECKED", {})
    assert trained_sources.runs_by_task([made["number"], made["letter"]]) == {t: str(made[t]) for t in made}
