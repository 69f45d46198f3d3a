"""Every result JSON the package writes says where it came from (theory.io.provenance): the package
version, the git commit, the torch and transformers versions, and the sha256 of each model file
it read.  Each writer is run for real, on a 2-step smoke run in a temporary folder (the heavy
``evaluate --split`` computation is replaced by a stub: what is checked is the writer).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from test_llm import constant_model, tiny_tokenizer  # noqa: F401  (tiny_tokenizer is a fixture)

from theory.io import provenance as prov
from training.__main__ import main
from training.run.loop import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ROOT = Path(__file__).resolve().parents[1]
KEYS = {"package", "version", "git_commit", "python", "torch", "transformers", "model_sha256"}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(record: dict, models: dict | None) -> None:
    """``record`` is a provenance record of this checkout that read exactly ``models``."""
    assert set(record) == KEYS
    assert record["package"] == "rope-heads" and record["torch"] and record["python"]
    assert record["git_commit"] == prov.git_commit()
    assert record["model_sha256"] == models


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("provenance") / "run"
    train("number", folder, preset="smoke", steps=2, device="cpu", progress=False)
    return folder


def test_the_record_names_this_checkout_and_the_model_files(tmp_path):
    if (ROOT / ".git").exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        if head.returncode == 0:
            assert prov.git_commit() == head.stdout.strip()
    assert prov.git_commit(tmp_path) is None  # no checkout: null, never a guess
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    assert prov.provenance(tmp_path)["model_sha256"] == {str(weights): sha(weights)}
    assert prov.provenance()["model_sha256"] is None and prov.provenance(None)["model_sha256"] is None


def test_a_packed_ref_and_a_detached_head_are_read(tmp_path):
    git = tmp_path / ".git"
    git.mkdir()
    commit = "0123456789abcdef0123456789abcdef01234567"
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{commit} refs/heads/main\n")
    assert prov.git_commit(tmp_path) == commit
    (git / "HEAD").write_text(commit.replace("0", "f") + "\n")
    assert prov.git_commit(tmp_path) == commit.replace("0", "f")


def test_the_settings_line_of_a_new_run(run):
    settings = json.loads((run / "metrics.jsonl").read_text().splitlines()[0])
    assert settings["split"] == "settings"
    check(settings["provenance"], None)


# command -> the input shapes its result must still pass with the extra key: the studies' stage
# (training.studies.member_files.STAGE_SHAPES) and the figures' input (figures.input_files.SHAPES)
COMMANDS = {
    "evaluate --lengths": (["evaluate", "--lengths", "17,25", "--count", "4"], "lengths", "length"),
    "evaluate --split": (["evaluate", "--split", "test"], "test", None),
    "analyze": (["analyze", "--n-inputs", "4", "--no-discrepancy"], "analyze", "analysis"),
    "dilution": (["dilution", "--lengths", "17,25", "--count", "2"], "dilution", None),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_the_commands_that_read_a_run(name, run, tmp_path, monkeypatch):
    from figures.input_files import SHAPES
    from theory.io.inputs import check_shape
    from training.analysis import evaluate
    from training.studies.member_files import STAGE_SHAPES

    monkeypatch.setattr(
        evaluate,
        "split_accuracy",
        lambda *a, **k: {"split": "test", "n": 1, "accuracy": 1.0, "per_hop": {"1": 1.0}},
    )
    command, stage, figure = COMMANDS[name]
    out = tmp_path / "out.json"
    assert (
        main(
            [
                command[0],
                "--run",
                str(run),
                "--task",
                "number",
                "--json",
                str(out),
                "--no-progress",
                *command[1:],
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    check(result["provenance"], {str(run / "model.safetensors"): sha(run / "model.safetensors")})
    check_shape(result, STAGE_SHAPES[stage], name)  # InputError if a reader refused the extra key
    if figure is not None:
        check_shape(result, SHAPES[figure], name)


def test_llm_records_the_local_model_it_ran(tiny_tokenizer, tmp_path):  # noqa: F811
    model = tmp_path / "tiny"
    constant_model(tiny_tokenizer, "y").save_pretrained(model)
    tiny_tokenizer.save_pretrained(model)
    out = tmp_path / "llm.json"
    assert (
        main(
            [
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
                "2",
                "--max-new-tokens",
                "1",
                "--device",
                "cpu",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    weights = model / "model.safetensors"
    check(json.loads(out.read_text())["provenance"], {str(weights): sha(weights)})


def test_bench_save_figure5a_figure4a_and_proofs_check(tmp_path, run):
    import proofs_check.__main__ as proofs_main
    from constructions.geometry import write_figure4a
    from proofs_check import figure5a

    table = tmp_path / "k.json"
    assert (
        main(
            [
                "bench",
                "--k-table",
                "--preset",
                "smoke",
                "--k",
                "1",
                "--compiled-k",
                "none",
                "--rounds",
                "1",
                "--steps",
                "1",
                "--save",
                str(table),
            ]
        )
        == 0
    )
    check(json.loads(table.read_text())["provenance"], None)
    assert figure5a.main(["--n-max", "10", "--out", str(tmp_path / "5a.json")]) == 0
    check(json.loads((tmp_path / "5a.json").read_text())["provenance"], None)
    write_figure4a(tmp_path / "4a.json", "0.8", range(1, 3))
    check(json.loads((tmp_path / "4a.json").read_text())["provenance"], None)
    assert proofs_main.main(["--only", "=C1", "--json", str(tmp_path / "claims.json")]) == 0
    check(json.loads((tmp_path / "claims.json").read_text())["provenance"], None)
