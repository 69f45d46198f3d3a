"""figures: layouts a reader can read and colours a colour-blind reader can tell apart.

Layout: in "discrepancy_trained" (one panel per trained layer) no legend may cover a panel
and no title may run into a panel or a legend, checked on the drawn figure's window extents.
Colour: every colour role is an Okabe-Ito colour, and every colour any figure draws is one of
them, a neutral grey, or a sample of a colour-blind-safe map (viridis, cividis).  The inputs
are the synthetic files of ``test_figures`` (plotting code only, never shown as results).
At a glance (fig5a and fig_breaks, drawn from the shipped inputs): one-line titles, no legend
over data, no blank band between panels, the paper's dashed bounds visible over the exact
curves, and every series named directly (fig5a: at its end; fig_breaks C: one small panel each).
"""

import copy
import json
from pathlib import Path

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
        layer.update(
            layer=number,
            kind=kind,
            decays=number % 2 == 0,
            theory_says_decays=kind == "index",
            agrees_with_theory=number % 2 == 0,
        )
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
            assert (
                own.get_window_extent(renderer).x0 - 1
                <= extent.x0
                < extent.x1
                <= own.get_window_extent(renderer).x1 + 1
            ), f"title {title.get_text()!r} wider than its panel"


# --- colour ----------------------------------------------------------------------------------

OKABE_ITO_RGB = np.array([to_rgba(c)[:3] for c in style.OKABE_ITO.values()])
SAFE_MAPS = np.concatenate(
    [plt.get_cmap(name)(np.linspace(0, 1, 256))[:, :3] for name in ("viridis", "cividis")]
)


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
    # in this process (--jobs 1): the figures are inspected here, where ``kept`` collects them
    assert main(options(paths, tmp_path / "out") + ["--jobs", "1"]) == 0
    assert set(kept) >= {
        "fig2",
        "fig4a",
        "fig4bc",
        "fig5a",
        "fig5b",
        "fig5cd",
        "fig6",
        "fig7",
        "fig8",
        "discrepancy_trained",
    }
    for name, fig in kept.items():
        bad = {
            f"{what}: {matplotlib.colors.to_hex(colour)}"
            for what, colour in drawn_colours(fig)
            if not allowed(colour)
        }
        assert not bad, f"{name} draws colours outside Okabe-Ito, greys and viridis/cividis: {sorted(bad)}"


# --- printed labels (Figures 4A and 4B) --------------------------------------------------------


def test_group_numbers_never_print_on_each_other():
    """Keys collapsed onto one direction (Figure 4B): each printed number's box clears every
    other, however close the groups' centres lie; a number that cannot is left out."""
    from figures.geometry_figures import LABEL_BOX, _label_places

    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(17), 20)
    points = np.column_stack(
        [rng.normal(0, 0.2, groups.size), 10 - 0.3 * groups + rng.normal(0, 0.1, groups.size)]
    )
    places = _label_places(points, groups)
    reach = np.abs(points).max()
    spots = list(places.values())
    assert len(spots) >= 2
    for i, (x, y) in enumerate(spots):
        for u, v in spots[i + 1 :]:
            assert abs(x - u) >= LABEL_BOX[0] * reach - 1e-9 or abs(y - v) >= LABEL_BOX[1] * reach - 1e-9


def test_labels_of_neighbouring_arrows_are_staggered():
    """Figure 4A: at theta = 0.8 the arrows of offsets 0 and 8 lie 0.117 rad apart (8 theta
    wraps past 2 pi); labels of arrows that close must sit at different radii."""
    from figures.theory_figures import _label_radii

    angles = [0.0, 0.117, 2.0, -0.05]
    radii = _label_radii(angles, 1.15)
    assert radii[2] == 1.15  # a lone arrow keeps the base radius
    assert len({radii[0], radii[1], radii[3]}) == 3  # three close ones: three radii


# --- fig5a and fig_breaks, built from the shipped inputs: read at a glance ---------------------
# (issue 31): one-line titles that say what the panel shows, no legend over data, no blank
# between panels, the paper's dashed bounds visible over the exact curves, each series named.


@pytest.fixture(scope="module")
def shipped():
    """fig5a and fig_breaks drawn from the committed inputs (proofs_check/results/figure5a.json,
    the studies' dilution.json), laid out as saved; {name: figure}."""
    from figures.breaks_figure import build_fig_breaks
    from figures.theory_figures import build_fig5a

    figs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(style, "save", lambda fig, out, name: figs.setdefault(name, fig) and [out / name])
        for build in (build_fig5a, build_fig_breaks):
            build(Inputs(), Path("unused"))  # nothing is written: save is replaced
    for fig in figs.values():
        fig.canvas.draw()
    yield figs
    for fig in figs.values():
        plt.close(fig)


def all_figures(fig) -> list:
    """The figure and every subfigure in it, however deep."""
    return [fig] + [inner for sub in fig.subfigs for inner in all_figures(sub)]


def every_legend(fig) -> list:
    found = [legend for f in all_figures(fig) for legend in f.legends]
    return found + [ax.get_legend() for ax in fig.get_axes() if ax.get_legend() is not None]


def panel_titles(ax) -> list:
    return [t for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]


def pieces(fig, renderer) -> list:
    """Window extents of what the panels draw: data areas, axes with their ticks and labels,
    titles, texts (direct labels) and legends, and every (sub)figure's title and axis labels."""
    boxes = []
    for ax in panels(fig):
        boxes += [
            ax.get_window_extent(renderer),
            ax.xaxis.get_tightbbox(renderer),
            ax.yaxis.get_tightbbox(renderer),
        ]
        boxes += [
            t.get_window_extent(renderer) for t in panel_titles(ax) + [t for t in ax.texts if t.get_text()]
        ]
    boxes += [legend.get_window_extent(renderer) for legend in every_legend(fig)]
    for f in all_figures(fig)[1:]:  # the root's title and caption frame the panels, they are not between them
        boxes += [
            t.get_window_extent(renderer) for t in (f._suptitle, f._supxlabel, f._supylabel) if t is not None
        ]
    return [b for b in boxes if b is not None and b.width > 0 and b.height > 0]


def widest_blank(fig, horizontal: bool) -> float:
    """The widest empty band between panels, as a fraction of the figure's width (horizontal:
    columns, counting only what lies level with the panels' data areas) or height (rows)."""
    renderer = fig.canvas.get_renderer()
    areas = [ax.get_window_extent(renderer) for ax in panels(fig)]
    low, high = min(a.y0 for a in areas), max(a.y1 for a in areas)
    spans = sorted(
        (b.x0, b.x1) if horizontal else (b.y0, b.y1)
        for b in pieces(fig, renderer)
        if not horizontal or (b.y1 > low and b.y0 < high)
    )
    start = min(a.x0 if horizontal else a.y0 for a in areas)
    end = max(a.x1 if horizontal else a.y1 for a in areas)
    widest, reach = 0.0, start
    for x0, x1 in spans:
        if x0 > reach and reach < end:
            widest = max(widest, min(x0, end) - reach)
        reach = max(reach, x1)
    size = fig.bbox.width if horizontal else fig.bbox.height
    return widest / size


GLANCE = ["fig5a", "fig_breaks"]
BLANK_AT_MOST = {"fig5a": ("columns", 0.02), "fig_breaks": ("rows", 0.025)}  # fractions of the figure


@pytest.mark.parametrize("name", GLANCE)
def test_no_legend_lies_over_a_panels_data(shipped, name):
    fig = shipped[name]
    renderer = fig.canvas.get_renderer()
    for legend in every_legend(fig):
        box = legend.get_window_extent(renderer)
        for ax in panels(fig):
            assert overlap(box, ax.get_window_extent(renderer)) == 0, (
                f"{name}: a legend covers the data of {panel_titles(ax)[0].get_text()!r}"
            )


@pytest.mark.parametrize("name", GLANCE)
def test_every_title_is_one_line(shipped, name):
    fig = shipped[name]
    renderer = fig.canvas.get_renderer()
    titles = [t for ax in panels(fig) for t in panel_titles(ax)] + [
        f._suptitle for f in all_figures(fig) if f._suptitle is not None
    ]
    assert all(panel_titles(ax) for ax in panels(fig)), f"{name}: a panel without a title"
    for title in titles:
        height = title.get_window_extent(renderer).height
        one_line = 1.6 * title.get_fontsize() * fig.dpi / 72
        assert "\n" not in title.get_text() and height < one_line, f"{name}: {title.get_text()!r} spans lines"
    boxes = [t.get_window_extent(renderer) for t in titles]
    for i, box in enumerate(boxes):  # and runs into no other title and no panel's data
        assert not any(overlap(box, other) for other in boxes[i + 1 :]), titles[i].get_text()
        assert not any(overlap(box, ax.get_window_extent(renderer)) for ax in panels(fig)), titles[
            i
        ].get_text()


@pytest.mark.parametrize("name", GLANCE)
def test_no_blank_band_between_panels(shipped, name):
    along, most = BLANK_AT_MOST[name]
    assert widest_blank(shipped[name], along == "columns") < most


def test_the_blank_measure_finds_a_gap():
    """The measure above can fail: two panels far apart leave a blank band of their distance."""
    fig = style.new_figure(10, 3)
    left, right = fig.subplots(1, 2, gridspec_kw={"wspace": 0.5})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    tick_start = right.yaxis.get_tightbbox(renderer).x0
    assert widest_blank(fig, True) == pytest.approx(
        (tick_start - left.get_window_extent(renderer).x1) / fig.bbox.width
    )
    assert widest_blank(fig, True) > 0.03
    plt.close(fig)


def near(a: Line2D, b: Line2D, within: float = 0.05) -> bool:
    """Whether two curves come within ``within`` (relative) of each other at some shared n."""
    ours = {float(x): float(y) for x, y in zip(a.get_xdata(), a.get_ydata()) if np.isfinite(y)}
    return any(
        float(x) in ours and np.isfinite(y) and abs(y - ours[float(x)]) <= within * max(abs(y), 1e-300)
        for x, y in zip(b.get_xdata(), b.get_ydata())
    )


def test_fig5a_paper_bounds_are_drawn_visibly_over_the_curves_they_meet(shipped):
    """The paper's dashed bounds lie on exact curves (Retrieval: within 1 %): each is drawn over
    every curve it meets, and a curve of its own colour is a wider, paler stroke beneath it."""
    met = {}
    for ax in panels(shipped["fig5a"]):
        curves = [line for line in ax.get_lines() if line not in style.vertical_lines(ax)]
        for bound in [line for line in curves if line.get_label().startswith("paper:")]:
            assert bound.get_linestyle() == "--"
            met[bound.get_label()] = [
                line for line in curves if not line.get_label().startswith("paper:") and near(bound, line)
            ]
            for line in met[bound.get_label()]:
                assert bound.get_zorder() > line.get_zorder(), f"{bound.get_label()} under {line.get_label()}"
                if to_rgba(line.get_color())[:3] == to_rgba(bound.get_color())[:3]:
                    assert line.get_linewidth() >= bound.get_linewidth() + 1.5 and line.get_alpha() < 1
    retrieval = [label for label in met if "Retrieval" in label or "ω − nθ" in label]
    assert len(retrieval) == 2 and all(
        met[label] for label in retrieval
    )  # both Retrieval bounds meet a curve


def test_fig5a_every_curve_and_mark_is_named_directly_in_its_colour(shipped):
    fig = shipped["fig5a"]
    renderer = fig.canvas.get_renderer()
    labels = []
    for ax in panels(fig):
        named = {t.get_text(): t for t in ax.texts}
        drawn = [line.get_label() for line in ax.get_lines()]
        assert len(named) == len(ax.texts) and sorted(named) == sorted(drawn)  # one label per series
        for line in ax.get_lines():
            assert to_rgba(named[line.get_label()].get_color()) == to_rgba(line.get_color())
        labels += ax.texts
    assert labels
    boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the words, not their leads
    for i, box in enumerate(boxes):  # no label prints on another, on a panel's data, axis or title
        assert not any(overlap(box, other) > 0 for other in boxes[i + 1 :]), labels[i].get_text()
        for ax in panels(fig):
            for part in [ax.get_window_extent(renderer), ax.yaxis.get_tightbbox(renderer)] + [
                t.get_window_extent(renderer) for t in panel_titles(ax)
            ]:
                assert overlap(box, part) == 0, f"{labels[i].get_text()!r} covers part of a panel"


def test_fig5a_titles_say_where_the_stated_bounds_fail(shipped):
    """Each panel's message is formatted from figure5a.json: found again here from the file."""
    data = json.loads((Path(__file__).parents[1] / "proofs_check" / "results" / "figure5a.json").read_text())
    ns = data["n"]

    def first_above(values, bound, upto=float("inf")):
        return next(
            n
            for n, v, b in zip(ns, values, bound)
            if n <= upto and v is not None and b is not None and v > b * (1 + 1e-12)
        )

    paper, index, retrieval = (panel_titles(ax)[0].get_text() for ax in panels(shipped["fig5a"]))
    index_sup, competitor = data["index"]["sup"], data["retrieval"]["competitor"]
    assert f"Index bound fails from n = {first_above(index_sup, data['index']['stated_bound'], 100)}" in paper
    assert (
        f"Retrieval bound fails from n = {first_above(competitor, data['retrieval']['stated_bound'], 100)}"
        in paper
    )
    assert (
        f"stated bound fails from n = {first_above(data['index']['sup'], data['index']['stated_bound'])}"
        in index
    )
    negative = next(n for n, m in zip(ns, data["retrieval"]["margin"]) if m is not None and m <= 0)
    assert (
        f"margin ≤ 0 from n = {negative}" in retrieval and f"n0 = {data['retrieval']['n0_max']}" in retrieval
    )


def test_fig_breaks_names_each_letter_variant_by_its_own_small_panel(shipped):
    """C: one small panel per variant, named by the panel's title, its median drawn over the
    others' medians (light grey, behind); as many names as variants, each variant named once."""
    small = [ax for ax in panels(shipped["fig_breaks"]) if ax.get_title().startswith("C. ")]
    everyone = {line.get_label() for line in small[0].get_lines() if "threshold" not in line.get_label()}
    named = []
    for ax in small:
        curves = [line for line in ax.get_lines() if "threshold" not in line.get_label()]
        own = [line for line in curves if ax.get_title() == f"C. {line.get_label()}"]
        assert len(own) == 1, f"{ax.get_title()!r} names none or several of its curves"
        named.append(own[0].get_label())
        for line in curves:
            if line is not own[0]:
                rgb = to_rgba(line.get_color())[:3]
                assert max(rgb) - min(rgb) < 0.02 and min(rgb) > 0.7, "the other variants: light grey"
                assert (
                    line.get_zorder() < own[0].get_zorder() and line.get_linewidth() < own[0].get_linewidth()
                )
        assert {line.get_label() for line in curves} == everyone  # every variant drawn, once
    assert sorted(named) == sorted(everyone) and len(everyone) >= 2


# --- legible in the report's page (issue 43): every text at least MIN_TEXT_PX tall at COLUMN_PX ---


def shown_figures() -> list:
    """Every figure the report shows as an image (claims' figures; tables are linked, not shown)."""
    from proofs_check.report.figures_map import FIGURE_OF, TABLES

    return sorted({name for names in FIGURE_OF.values() for name in names} - set(TABLES))


@pytest.fixture(scope="module")
def printed_sizes(tmp_path_factory):
    """{name: (figure width in inches, [(points, text)] of every text drawn)} for every shown figure,
    drawn from the shipped inputs through the real ``style.save`` (its PNG rendering recorded, nothing written)."""
    from matplotlib.backends.backend_agg import RendererAgg

    from figures.__main__ import FIGURES

    found, drawn = {}, []
    original = RendererAgg.draw_text

    def record(self, gc, x, y, s, prop, *args, **kwargs):
        if s.strip():
            drawn.append((prop.get_size_in_points(), s))
        return original(self, gc, x, y, s, prop, *args, **kwargs)

    def measure(fig, fmt):
        if fmt == "png":
            drawn.clear()
            fig.canvas.draw()
            found[current] = (fig.get_figwidth(), list(drawn))
        return b""

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RendererAgg, "draw_text", record)
        patch.setattr(style, "render", measure)
        patch.setattr(style, "atomic_write_bytes", lambda path, data: None)
        out = tmp_path_factory.mktemp("unused")  # fig_variants writes its table beside the figure itself
        for current in shown_figures():
            FIGURES[current][0](Inputs(), out)
    return found


@pytest.mark.parametrize("name", shown_figures())
def test_every_text_is_legible_at_the_reports_column_width(printed_sizes, name):
    width, sizes = printed_sizes[name]
    assert sizes, f"{name}: no text drawn"
    points, words = min(sizes)
    pixels = points * plt.rcParams["savefig.dpi"] / 72  # at the saved dpi
    image_width = width * plt.rcParams["savefig.dpi"]
    assert pixels * style.COLUMN_PX / image_width >= style.MIN_TEXT_PX - 1e-9, (
        f"{name}: {words!r} prints {pixels * style.COLUMN_PX / image_width:.1f} px tall at {style.COLUMN_PX} px"
    )


@pytest.mark.parametrize("name", shown_figures())
def test_the_committed_image_is_the_measured_one(printed_sizes, name):
    """The sizes above are those of the committed PNG: same width in pixels (regenerate if not)."""
    from PIL import Image

    with Image.open(Path(__file__).parents[1] / "figures" / "output" / f"{name}.png") as image:
        assert image.width == round(printed_sizes[name][0] * plt.rcParams["savefig.dpi"])


def test_the_legibility_floor_raises_small_text():
    """The check above can fail without ``style.legible``: a 7-point label on a 20-inch figure."""
    fig = style.new_figure(20, 3)
    label = fig.text(0.5, 0.5, "small", fontsize=7)
    assert label.get_fontsize() * style.COLUMN_PX / (20 * 72) < style.MIN_TEXT_PX
    style.legible(fig)
    assert label.get_fontsize() * style.COLUMN_PX / (20 * 72) == pytest.approx(style.MIN_TEXT_PX)
    plt.close(fig)
