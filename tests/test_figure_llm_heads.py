"""figures llm_heads: the head maps draw the analysis' numbers where they belong (layer on x,
head on y), on colour-blind-safe maps with fixed ranges; missing and wrong inputs are reported
as for every other figure.  The inputs are tiny made-up analyses (plotting code only)."""

import json

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


from figures import style  # noqa: E402
from figures.__main__ import FIGURES, main  # noqa: E402
from figures.llm_heads_figure import QUANTITIES, build_llm_heads  # noqa: E402
from figures.loaders import Inputs, MissingInput  # noqa: E402

LAYERS, HEADS, PLANES = 4, 3, 8


def fake_analysis(task: str) -> dict:
    """The fields the figure reads, in the schema of ``python -m training analyze --model``;
    every quantity distinct per (layer, head), one null score (an input without swaps)."""
    grid = np.arange(LAYERS * HEADS).reshape(LAYERS, HEADS) / (LAYERS * HEADS)
    positional = grid.tolist()
    positional[2][1] = None
    return {"model": "tiny.gguf", "task": task, "n_inputs": 5, "layers": LAYERS, "heads": HEADS,
            "per_head": {"positional": positional, "symbolic": (1 - grid).tolist(), "sink": (grid / 2).tolist(),
                         "entropy": grid.tolist()},
            "frequency": {"dominant_id": (1 + np.arange(LAYERS * HEADS).reshape(LAYERS, HEADS) % PLANES).tolist(),
                          "weighted_id": grid.tolist(),
                          "weights": np.ones((LAYERS, HEADS, PLANES)).tolist()}}


def write(folder, tasks=style.TASKS):
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        (folder / f"analysis_{task}.json").write_text(json.dumps(fake_analysis(task)))
    return folder


def test_each_map_is_the_analysis_with_layers_across_and_heads_up(tmp_path, kept):
    build_llm_heads(Inputs(llm_heads_dir=write(tmp_path)), tmp_path)
    fig = kept["llm_heads"]
    maps = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(maps) == len(QUANTITIES) * len(style.TASKS)
    analysis = fake_analysis("number")
    for (keys, *_), ax in zip(QUANTITIES, maps[::2]):  # rows: quantities; first column: number task
        expected = np.array([[np.nan if v is None else v for v in row] for row in analysis[keys[0]][keys[1]]]).T
        drawn = np.ma.filled(ax.images[0].get_array().astype(float), np.nan)
        assert drawn.shape == (HEADS, LAYERS)
        np.testing.assert_array_equal(drawn, expected)


def test_scores_share_a_fixed_range_and_the_plane_id_spans_every_plane(tmp_path, kept):
    build_llm_heads(Inputs(llm_heads_dir=write(tmp_path)), tmp_path)
    maps = [ax for ax in kept["llm_heads"].axes if ax.images and ax.get_label() != "<colorbar>"]
    ranges = [ax.images[0].get_clim() for ax in maps]
    assert ranges == [(0.0, 1.0)] * 6 + [(1.0, float(PLANES))] * 2
    assert {ax.images[0].get_cmap().name for ax in maps} <= {"cividis", "viridis"}
    bars = [ax for ax in kept["llm_heads"].axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == len(QUANTITIES)


def test_registered_and_written_as_png_and_pdf(tmp_path):
    assert "llm_heads" in FIGURES
    out = tmp_path / "out"
    assert main(["llm_heads", "--llm-heads", str(write(tmp_path / "in")), "--out", str(out)]) == 0
    for suffix in (".png", ".pdf"):
        assert (out / f"llm_heads{suffix}").stat().st_size > 1000


def test_one_task_missing_is_a_partial_figure_naming_the_file_and_command(tmp_path, capsys):
    folder = write(tmp_path / "in", tasks=("number",))
    assert main(["llm_heads", "--llm-heads", str(folder), "--out", str(tmp_path / "out")]) == 1
    assert (tmp_path / "out" / "llm_heads.png").is_file()
    err = capsys.readouterr().err
    assert "analysis_letter.json" in err and "python -m training analyze --model" in err


def test_no_analysis_at_all_is_missing_input(tmp_path):
    with pytest.raises(MissingInput, match="analysis_number.json"):
        build_llm_heads(Inputs(llm_heads_dir=tmp_path / "nowhere"), tmp_path)


def test_a_file_given_as_the_folder_exits_2_with_one_line(tmp_path, capsys):
    stray = tmp_path / "analysis_number.json"
    stray.write_text("{}")
    assert main(["llm_heads", "--llm-heads", str(stray), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--llm-heads" in err[0] and "not a directory" in err[0]
