"""figures fig_rescale: the models trained without a query scale, as trained and with the
scale switched on at inference, drawn from a variants summary.json.

The summary is made by the study's own collector over made-up member files in the schema of
``training evaluate`` (plotting code only, never shown as results); the expected medians are
computed here from those files."""

import json
import statistics
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from figures.__main__ import FIGURES  # noqa: E402
from figures.input_files import MissingInput  # noqa: E402
from figures.loaders import Inputs  # noqa: E402
from figures.rescale_figure import TRAINED_WITH_SCALE, build_fig_rescale, path_weights  # noqa: E402
from training.studies.collect import collect  # noqa: E402
from training.studies.plan import load_plan  # noqa: E402

LENGTHS = [17, 100, 850]
SEEDS = [0, 1, 2, 3]
RESCALED = [0, 1, 2]  # seed 3 of "plain" has no rescaled file yet: panel A leaves it out too


def curve(seed: int, slope: float) -> list:
    return [max(0.0, 1.0 - slope * i + 0.03 * seed) if i else 1.0 for i in range(len(LENGTHS))]


def lengths_file(path: Path, accuracy: list) -> None:
    path.write_text(
        json.dumps(
            {
                "task": "letter",
                "lengths": LENGTHS,
                "n_per_length": [8] * len(LENGTHS),
                "accuracy": accuracy,
                "per_hop": {"1": accuracy},
            }
        )
    )


def weights(seed: int, slope: float) -> list:
    """Made-up top-key weights of the answer-path layer (layer 1) at LENGTHS."""
    return [0.95 - slope * i - 0.02 * seed for i in range(len(LENGTHS))]


def dilution_file(path: Path, path_weights: list) -> None:
    """A dilution JSON whose layer 0 is off the mass reading's path (top weight < 1/2 at 17)."""

    def layer(index, top):
        return {"layer": index, "gap": {"q0.1": [1.0] * len(LENGTHS)}, "top_weight": {"q0.1": top}}

    path.write_text(
        json.dumps(
            {
                "dilution": {
                    "lengths": LENGTHS,
                    "layers": [layer(0, [0.3] * len(LENGTHS)), layer(1, path_weights)],
                },
                "breaks": {},
            }
        )
    )


def write_study(root: Path, rescale: bool = True) -> Path:
    variants = {
        "plain": {"preset": "paper", "set": [], "about": "a. made up"},
        "scaled": {"preset": "paper", "set": ["model.query_scale=log"], "about": "f. made up"},
    }
    plan = {
        "name": "rescale-test",
        "root": str(root / "members"),
        "ship": str(root / "ship"),
        "tasks": ["letter"],
        "seeds": SEEDS,
        "analyze": False,
        "variants": variants,
    }
    if rescale:
        plan["rescale"] = {"lengths": LENGTHS}
    root.mkdir(parents=True, exist_ok=True)
    (root / "plan.json").write_text(json.dumps(plan))
    for seed in SEEDS:
        for variant, slope in (("plain", 0.4), ("scaled", 0.01)):
            folder = root / "members" / variant / "letter" / f"seed-{seed}"
            folder.mkdir(parents=True)
            lengths_file(folder / "length_generalisation.json", curve(seed, slope))
            if rescale and variant == "plain" and seed in RESCALED:
                lengths_file(folder / "length_rescaled.json", curve(seed, 0.05))
                dilution_file(folder / "dilution.json", weights(seed, 0.3))
                if seed != 2:  # seed 2 has no rescaled dilution yet: panel C leaves it out of both curves
                    dilution_file(folder / "dilution_rescaled.json", weights(seed, 0.02))
    collect(load_plan(root / "plan.json"))
    return root / "ship"


def lines_of(ax) -> dict:
    return {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}


def test_panels_draw_the_medians_of_the_files(tmp_path, kept):
    assert FIGURES["fig_rescale"][0] is build_fig_rescale
    build_fig_rescale(Inputs(variants_dir=write_study(tmp_path)), tmp_path / "out")
    fig = kept["fig_rescale"]
    left, right = (next(ax for ax in fig.axes if ax.get_title().startswith(t)) for t in ("A1.", "B1."))
    trained, rescaled = lines_of(left), lines_of(right)
    assert set(trained) == {"plain (a)"}  # a variant trained with the scale is not a rescaled model
    assert set(rescaled) == {"plain (a)", "scaled (f)"}
    for line, slope, seeds in (
        (trained["plain (a)"], 0.4, RESCALED),
        (rescaled["plain (a)"], 0.05, RESCALED),
        (rescaled["scaled (f)"], 0.01, SEEDS),
    ):
        medians = [statistics.median(curve(s, slope)[i] for s in seeds) for i in range(len(LENGTHS))]
        assert list(line.get_xdata()) == LENGTHS and list(line.get_ydata()) == pytest.approx(medians)
    assert rescaled["scaled (f)"].get_linestyle() == TRAINED_WITH_SCALE
    assert rescaled["plain (a)"].get_color() == trained["plain (a)"].get_color()
    # C: the path layer's top weight, as trained (solid) and scaled (dashed), over the same seeds
    mechanism = next(ax for ax in fig.axes if ax.get_title().startswith("C1."))
    medians = [line for line in mechanism.lines if len(line.get_xdata()) == len(LENGTHS)]
    assert [line.get_linestyle() for line in medians] == ["-", "--"]
    for line, slope in zip(medians, (0.3, 0.02)):
        expected = [statistics.median(weights(s, slope)[i] for s in (0, 1)) for i in range(len(LENGTHS))]
        assert list(line.get_ydata()) == pytest.approx(expected)
        assert line.get_color() == trained["plain (a)"].get_color()


def test_a_summary_without_the_stage_is_missing_input(tmp_path):
    with pytest.raises(MissingInput):
        build_fig_rescale(Inputs(variants_dir=write_study(tmp_path, rescale=False)), tmp_path / "out")


def test_a_model_below_the_threshold_at_the_training_length_has_no_path_to_draw(tmp_path):
    ship = write_study(tmp_path)
    shipped = ship / "plain" / "letter" / "seed-1" / "dilution.json"
    data = json.loads(shipped.read_text())
    assert path_weights(Inputs(variants_dir=ship), "dilution.json")[("plain", "letter")].keys() == {0, 1, 2}
    shipped.write_text(
        json.dumps({**data, "breaks": {**data["breaks"], "measured": 17.0}})
    )  # below 0.9 at 17
    assert path_weights(Inputs(variants_dir=ship), "dilution.json")[("plain", "letter")].keys() == {0, 2}
