"""figures llm_heads: the head maps draw the analysis' numbers where they belong (layer on x,
head on y), one column per model and task found, on colour-blind-safe maps with fixed ranges;
full-attention layers are marked where the file's layer_kind says; missing and wrong inputs are
reported as for every other figure.  The inputs are tiny made-up analyses (plotting code only)
and a copy of the shipped SmolLM2 analysis."""

import json
import shutil

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


from figures import style  # noqa: E402
from figures.__main__ import FIGURES, main  # noqa: E402
from figures.input_files import ROOT, MissingInput  # noqa: E402
from figures.llm_heads_figure import ANGLE, FULL_MARK, QUANTITIES, build_llm_heads  # noqa: E402
from figures.loaders import Inputs  # noqa: E402

LAYERS, HEADS, PLANES = 4, 3, 8
SMOLLM2 = ROOT / "training" / "reference" / "llm" / "smollm2"


def fake_analysis(task: str, layers: int = LAYERS, heads: int = HEADS, kinds: list | None = None) -> dict:
    """The fields the figure reads, in the schema of ``python -m training analyze --model``;
    every quantity distinct per (layer, head), one null score (an input without swaps).  With
    ``kinds`` (one per layer), the per-layer-base fields of a Gemma 3 analysis too."""
    grid = np.arange(layers * heads).reshape(layers, heads) / (layers * heads)
    positional = grid.tolist()
    positional[2][1] = None
    analysis = {
        "model": "tiny.gguf",
        "task": task,
        "n_inputs": 5,
        "layers": layers,
        "heads": heads,
        "per_head": {
            "positional": positional,
            "symbolic": (1 - grid).tolist(),
            "sink": (grid / 2).tolist(),
            "entropy": grid.tolist(),
        },
        "frequency": {
            "base": 10000.0,
            "dominant_id": (1 + np.arange(layers * heads).reshape(layers, heads) % PLANES).tolist(),
            "weighted_id": grid.tolist(),
            "weights": np.ones((layers, heads, PLANES)).tolist(),
        },
    }
    if kinds is not None:
        analysis["frequency"].update(
            base=None,
            layer_kind=kinds,
            dominant_angle=(10.0 ** -(1 + 5 * grid)).tolist(),
            layer_base=[1e6 if kind == "full" else 1e4 for kind in kinds],
        )
    return analysis


def write(folder, tasks=style.TASKS, **shape):
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        (folder / f"analysis_{task}.json").write_text(json.dumps(fake_analysis(task, **shape)))
    return folder


GEMMA_LIKE = {
    "layers": 14,
    "heads": 2,
    "kinds": ["full" if layer in (3, 9, 13) else "sliding" for layer in range(14)],
}


def two_models(root, **shape):
    """A folder of model folders as shipped: a copy of SmolLM2's analysis and a small model with
    layer kinds (``shape`` changes it)."""
    shutil.copytree(SMOLLM2, root / "smollm2")
    write(root / "tiny", **dict(GEMMA_LIKE, **shape))
    return root


def head_maps(fig) -> list:
    return [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]


def bottom_axes(fig, model: str) -> list:
    """The lowest panel of each of the model's columns (the one whose x labels show)."""
    columns = {}
    for ax in fig.axes:
        if ax.get_label() != "<colorbar>" and ax.get_title().startswith(f"{model} "):
            column = ax.get_title().split(":")[0]
            if column not in columns or ax.get_position().y0 < columns[column].get_position().y0:
                columns[column] = ax
    return list(columns.values())


def marked_layers(ax) -> list[int]:
    return [
        round(tick)
        for tick, label in zip(ax.get_xticks(), ax.get_xticklabels())
        if FULL_MARK in label.get_text()
    ]


def test_each_map_is_the_analysis_with_layers_across_and_heads_up(tmp_path, kept):
    build_llm_heads(Inputs(llm_heads_dir=write(tmp_path)), tmp_path)
    fig = kept["llm_heads"]
    maps = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(maps) == len(QUANTITIES) * len(style.TASKS)
    analysis = fake_analysis("number")
    for (keys, *_), ax in zip(QUANTITIES, maps[::2]):  # rows: quantities; first column: number task
        expected = np.array(
            [[np.nan if v is None else v for v in row] for row in analysis[keys[0]][keys[1]]]
        ).T
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


def test_one_map_per_model_and_task_found_each_the_model_s_own_numbers(tmp_path, kept):
    root = two_models(tmp_path / "llm")
    (root / "notes").mkdir()  # a folder without analysis files is no model
    build_llm_heads(Inputs(llm_heads_dir=root), tmp_path)
    fig = kept["llm_heads"]
    titles = [ax.get_title() for ax in head_maps(fig)]
    columns = [f"{model} {task}" for model in ("smollm2", "tiny") for task in style.TASKS]
    # four quantities for both models, the angle for the one whose files have it
    assert sorted(titles) == sorted(
        [f"{c}: {q[1]}" for c in columns for q in QUANTITIES]
        + [f"tiny {task}: {ANGLE[1]}" for task in style.TASKS]
    )
    for ax in head_maps(fig):
        model, task = ax.get_title().split(":")[0].split()
        analysis = json.loads((root / model / f"analysis_{task}.json").read_text())
        keys = next(q[0] for q in QUANTITIES + (ANGLE,) if ax.get_title().endswith(q[1]))
        expected = np.array(
            [[np.nan if v is None else v for v in row] for row in analysis[keys[0]][keys[1]]]
        ).T
        np.testing.assert_array_equal(np.ma.filled(ax.images[0].get_array().astype(float), np.nan), expected)
    assert "smollm2 = SmolLM2-135M-Instruct.Q4_1 (30 layers x 9 heads" in fig._suptitle.get_text()
    assert "tiny = tiny (14 layers x 2 heads" in fig._suptitle.get_text()


def test_the_angle_is_on_a_log_scale_shared_by_every_model_that_has_it(tmp_path, kept):
    root = two_models(tmp_path / "llm")
    write(root / "other", **dict(GEMMA_LIKE, layers=6, kinds=["sliding"] * 5 + ["full"]))
    build_llm_heads(Inputs(llm_heads_dir=root), tmp_path)
    angles = [ax.images[0] for ax in head_maps(kept["llm_heads"]) if ax.get_title().endswith(ANGLE[1])]
    assert len(angles) == 4 and {type(image.norm).__name__ for image in angles} == {"LogNorm"}
    every = np.concatenate([np.ravel(image.get_array()) for image in angles])
    assert {image.get_clim() for image in angles} == {(every.min(), every.max())}


@pytest.mark.parametrize("full", [(3, 9, 13), (0, 7)])
def test_full_layers_are_marked_exactly_where_layer_kind_says(tmp_path, kept, full):
    kinds = ["full" if layer in full else "sliding" for layer in range(14)]
    build_llm_heads(Inputs(llm_heads_dir=two_models(tmp_path / "llm", kinds=kinds)), tmp_path)
    fig = kept["llm_heads"]
    tiny = bottom_axes(fig, "tiny")
    assert len(tiny) == len(style.TASKS)
    for ax in tiny:
        assert marked_layers(ax) == list(full)
        assert "full attention" in ax.get_xlabel() and "sliding" in ax.get_xlabel()
    for ax in bottom_axes(fig, "smollm2"):  # its file has no layer_kind
        assert marked_layers(ax) == [] and ax.get_xlabel() == "Layer"


def test_a_model_without_layer_kind_is_drawn_without_marks_or_angle_row(tmp_path, kept):
    build_llm_heads(Inputs(llm_heads_dir=write(tmp_path / "plain", layers=14)), tmp_path)
    fig = kept["llm_heads"]
    assert len(head_maps(fig)) == len(QUANTITIES) * len(style.TASKS)
    assert not any(FULL_MARK in label.get_text() for ax in head_maps(fig) for label in ax.get_xticklabels())
    assert {ax.get_xlabel() for ax in bottom_axes(fig, "plain")} == {"Layer"}


def test_titles_are_one_line_and_fit_their_panel(tmp_path, kept):
    build_llm_heads(Inputs(llm_heads_dir=two_models(tmp_path / "llm")), tmp_path)
    fig = kept["llm_heads"]
    renderer = fig.canvas.get_renderer()
    for ax in head_maps(fig):
        title, box = ax.title, ax.get_window_extent(renderer)
        extent = title.get_window_extent(renderer)
        assert "\n" not in title.get_text() and box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, (
            title.get_text()
        )
    assert "\n" not in fig._suptitle.get_text()


@pytest.mark.parametrize(
    "damage, field",
    [
        (lambda a: a["frequency"].update(layer_kind=a["frequency"]["layer_kind"][:-1]), "layer_kind"),
        (lambda a: a["frequency"]["dominant_angle"][0].__setitem__(0, -1.0), "dominant_angle[0][0]"),
        (lambda a: a["per_head"]["sink"].pop(), "per_head.sink"),
        (lambda a: a["per_head"].pop("symbolic"), "per_head.symbolic"),
    ],
)
def test_a_damaged_analysis_file_is_an_error_naming_the_file_and_field(tmp_path, capsys, damage, field):
    root = two_models(tmp_path / "llm")
    path = root / "tiny" / "analysis_letter.json"
    analysis = json.loads(path.read_text())
    damage(analysis)
    path.write_text(json.dumps(analysis))
    out = tmp_path / "out"
    assert main(["llm_heads", "--llm-heads", str(root), "--out", str(out)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "llm_heads: failed, InputError" in err[0], err
    assert "tiny/analysis_letter.json" in err[0] and field in err[0], err[0]
    assert not (out / "llm_heads.png").exists()


def test_a_file_that_is_not_json_is_an_error(tmp_path, capsys):
    root = two_models(tmp_path / "llm")
    (root / "tiny" / "analysis_number.json").write_text('{"layers": 14, "heads"')
    assert main(["llm_heads", "--llm-heads", str(root), "--out", str(tmp_path / "out")]) == 1
    assert "tiny/analysis_number.json" in capsys.readouterr().err


def test_the_shipped_folder_of_models_is_the_default(tmp_path, kept):
    """The default input is the folder of model folders, and SmolLM2's is among them."""
    assert Inputs().llm_heads_dir == SMOLLM2.parent
    assert SMOLLM2 in Inputs().llm_head_models(style.TASKS)
