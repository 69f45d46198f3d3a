"""figures: layouts a reader can read and colours a colour-blind reader can tell apart.

Layout: in "discrepancy_trained" (one panel per trained layer) no legend may cover a panel
and no title may run into a panel or a legend, checked on the drawn figure's window extents.
Colour: every colour role is an Okabe-Ito colour, and every colour any figure draws is one of
them, a neutral grey, or a sample of a colour-blind-safe map (viridis, cividis).  The inputs
are the synthetic files of ``test_figures`` (plotting code only, never shown as results).
"""

import copy
import json

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.collections import Collection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from test_figures import options, synthetic_analysis, write_inputs  # noqa: E402

from figures import style  # noqa: E402
from figures.__main__ import main  # noqa: E402
from figures.discrepancy_figure import build_discrepancy_trained  # noqa: E402
from figures.loaders import Inputs  # noqa: E402


# The shipped runs' classes: number, one other layer, four Index, seven Retrieval; letter, all Retrieval
KINDS = {"number": ["other"] + ["index"] * 4 + ["retrieval"] * 7, "letter": ["retrieval"] * 12}


def twelve_layers(task: str) -> dict:
    """An analysis.json whose measured_discrepancy has 12 layers of the shipped run's kinds, one
    with a construction margin that turns negative (drawn as marks on the axis)."""
    analysis = synthetic_analysis(task)
    block = analysis["measured_discrepancy"]
    template = block["layers"][0]
    layers = []
    for number, kind in enumerate(KINDS[task]):
        layer = copy.deepcopy(template)
        layer.update(layer=number, kind=kind, decays=number % 2 == 0, theory_says_decays=kind == "index",
                     agrees_with_theory=number % 2 == 0)
        layers.append(layer)
    layers[1]["theory"] = {"reading": "margin", "values": [0.2, 0.1, -0.5, -1.9]}
    block["layers"] = layers
    return analysis


@pytest.fixture(scope="module")
def discrepancy(tmp_path_factory):
    """The drawn figure, built once for the layout checks (drawing 24 panels takes seconds)."""
    root = tmp_path_factory.mktemp("discrepancy")
    for task in style.TASKS:
        (root / task).mkdir()
        (root / task / "analysis.json").write_text(json.dumps(twelve_layers(task)))
    figs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(style, "save", lambda fig, out, name: figs.setdefault(name, fig) and [out / name])
        build_discrepancy_trained(Inputs(runs_dir=root), root)
    fig = figs["discrepancy_trained"]
    fig.canvas.draw()  # runs the constrained layout: the extents below are the saved ones
    yield fig
    plt.close(fig)


def overlap(a, b) -> float:
    """Area (square pixels) shared by two window extents; touching edges share none."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, width) * max(0.0, height)


def panels(fig) -> list:
    return [ax for ax in fig.get_axes() if ax.axison]


def legends(fig) -> list:
    found = [legend for f in [fig, *fig.subfigs] for legend in f.legends]
    return found + [ax.get_legend() for ax in fig.get_axes() if ax.get_legend() is not None]


def titles(fig) -> list:
    """Every title: the figure's, each task's (subfigure) and each panel's, with the axes it heads."""
    found = [(f._suptitle, None) for f in [fig, *fig.subfigs] if f._suptitle is not None]
    return found + [(ax.title, ax) for ax in panels(fig) if ax.get_title()]


def test_discrepancy_trained_draws_one_panel_per_layer(discrepancy):
    assert len(panels(discrepancy)) == sum(len(kinds) for kinds in KINDS.values())


def test_discrepancy_trained_legends_cover_no_panel(discrepancy):
    renderer = discrepancy.canvas.get_renderer()
    assert legends(discrepancy), "the figure explains its curves somewhere"
    for legend in legends(discrepancy):
        box = legend.get_window_extent(renderer)
        for ax in panels(discrepancy):
            assert overlap(box, ax.get_window_extent(renderer)) == 0, f"a legend covers {ax.get_title()!r}"


def test_discrepancy_trained_titles_clear_of_panels_and_legends(discrepancy):
    renderer = discrepancy.canvas.get_renderer()
    boxes = [(ax.get_window_extent(renderer), ax.get_title()) for ax in panels(discrepancy)]
    boxes += [(legend.get_window_extent(renderer), "the legend") for legend in legends(discrepancy)]
    for title, own in titles(discrepancy):
        extent = title.get_window_extent(renderer)
        for box, name in boxes:
            assert overlap(extent, box) == 0, f"title {title.get_text()!r} runs into {name!r}"
        if own is not None:  # and a panel title stays over its own panel, not beside it
            assert own.get_window_extent(renderer).x0 - 1 <= extent.x0 < extent.x1 <= \
                own.get_window_extent(renderer).x1 + 1, f"title {title.get_text()!r} wider than its panel"


# --- colour ----------------------------------------------------------------------------------

OKABE_ITO_RGB = np.array([to_rgba(c)[:3] for c in style.OKABE_ITO.values()])
SAFE_MAPS = np.concatenate([plt.get_cmap(name)(np.linspace(0, 1, 256))[:, :3] for name in ("viridis", "cividis")])


def nearest(rgb, table) -> float:
    return float(np.abs(table - np.asarray(rgb)[:3]).max(axis=1).min())


def allowed(colour) -> bool:
    """An Okabe-Ito colour, a neutral grey (black to white), or a sample of viridis/cividis."""
    rgba = to_rgba(colour)
    if rgba[3] == 0:
        return True  # not drawn
    grey = max(rgba[:3]) - min(rgba[:3]) < 0.02
    return grey or nearest(rgba, OKABE_ITO_RGB) < 1.5 / 255 or nearest(rgba, SAFE_MAPS) < 1.5 / 255


def drawn_colours(fig):
    """(what, colour) for every line, marker, patch, collection and text of the figure, and
    samples of every colour map a mappable (image, colour bar, coloured points) uses."""
    for artist in fig.findobj():
        if isinstance(artist, ScalarMappable) and getattr(artist, "get_array", lambda: None)() is not None:
            for sample in artist.get_cmap()(np.linspace(0, 1, 9)):
                yield f"colour map {artist.get_cmap().name}", sample
            continue
        if isinstance(artist, Line2D):
            colours = [artist.get_color(), artist.get_markerfacecolor(), artist.get_markeredgecolor()]
        elif isinstance(artist, Patch):
            colours = [artist.get_facecolor(), artist.get_edgecolor()]
        elif isinstance(artist, Collection):
            colours = list(artist.get_facecolors()) + list(artist.get_edgecolors())
        elif isinstance(artist, Text):
            colours = [artist.get_color()]
        else:
            continue
        for colour in colours:
            if not (isinstance(colour, str) and colour == "none"):
                yield type(artist).__name__, colour


def test_every_colour_role_is_okabe_ito():
    roles = style.palette()
    assert {"task: number", "task: letter", "kind: index", "kind: retrieval", "paper mark"} <= set(roles)
    for role, colour in roles.items():
        assert nearest(to_rgba(colour), OKABE_ITO_RGB) < 1e-9, f"{role}: {colour} is not Okabe-Ito"


def test_the_allowed_check_rejects_non_okabe_ito_colours():
    """The check below can fail: matplotlib's default cycle and a red-green map are refused."""
    assert not allowed("#1f77b4") and not allowed("#ff7f0e") and not allowed("#d62728")
    assert not any(allowed(c) for c in plt.get_cmap("RdYlGn")([0.0, 1.0]))
    assert allowed(style.OKABE_ITO["blue"]) and allowed("0.6") and allowed(plt.get_cmap("viridis")(0.3))


def test_every_figure_draws_only_colour_blind_safe_colours(tmp_path, kept):
    paths = write_inputs(tmp_path)
    assert main(options(paths, tmp_path / "out")) == 0
    assert set(kept) >= {"fig2", "fig4a", "fig4bc", "fig5a", "fig5b", "fig5cd", "fig6", "fig7", "fig8",
                         "discrepancy_trained"}
    for name, fig in kept.items():
        bad = {f"{what}: {matplotlib.colors.to_hex(colour)}" for what, colour in drawn_colours(fig)
               if not allowed(colour)}
        assert not bad, f"{name} draws colours outside Okabe-Ito, greys and viridis/cividis: {sorted(bad)}"


# --- printed labels (Figures 4A and 4B) --------------------------------------------------------

def test_group_numbers_never_print_on_each_other():
    """Keys collapsed onto one direction (Figure 4B): each printed number's box clears every
    other, however close the groups' centres lie; a number that cannot is left out."""
    from figures.geometry_figures import LABEL_BOX, _label_places

    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(17), 20)
    points = np.column_stack([rng.normal(0, 0.2, groups.size), 10 - 0.3 * groups + rng.normal(0, 0.1, groups.size)])
    places = _label_places(points, groups)
    reach = np.abs(points).max()
    spots = list(places.values())
    assert len(spots) >= 2
    for i, (x, y) in enumerate(spots):
        for u, v in spots[i + 1:]:
            assert abs(x - u) >= LABEL_BOX[0] * reach - 1e-9 or abs(y - v) >= LABEL_BOX[1] * reach - 1e-9


def test_labels_of_neighbouring_arrows_are_staggered():
    """Figure 4A: at theta = 0.8 the arrows of offsets 0 and 8 lie 0.117 rad apart (8 theta
    wraps past 2 pi); labels of arrows that close must sit at different radii."""
    from figures.theory_figures import _label_radii

    angles = [0.0, 0.117, 2.0, -0.05]
    radii = _label_radii(angles, 1.15)
    assert radii[2] == 1.15  # a lone arrow keeps the base radius
    assert len({radii[0], radii[1], radii[3]}) == 3  # three close ones: three radii
