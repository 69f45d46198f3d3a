"""figures: the same inputs give the same bytes, in one process or in workers (issue 41).

Saved figures are tracked files (figures/output, and the report's copies of its PNGs): two runs
must write identical bytes, whichever process drew a figure, and the one-pass PNG of
``style.render`` must be the bytes ``savefig`` writes.  Drawn from committed inputs only
(Figure 4A's JSON, the shipped runs' analysis.json), the small figures, in seconds.
"""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from test_cli_safety import outcome  # noqa: E402

import figures.__main__ as figures_main  # noqa: E402
from figures import style  # noqa: E402
from figures.input_files import InputError  # noqa: E402
from theory.io.files import OutputError  # noqa: E402


def files(folder) -> dict:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_two_runs_write_identical_bytes(tmp_path):
    for run in ("a", "b"):
        assert figures_main.main(["fig4a", "--jobs", "1", "--out", str(tmp_path / run)]) == 0
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert sorted(first) == ["fig4a.pdf", "fig4a.png"]
    assert first == second


def test_workers_write_the_bytes_of_one_process(tmp_path, capsys):
    # two names, so that --jobs 2 starts two workers (one name is drawn in this process)
    for jobs in ("1", "2"):
        assert figures_main.main(["fig4a", "table1", "--jobs", jobs, "--out", str(tmp_path / jobs)]) == 0
    assert files(tmp_path / "1") == files(tmp_path / "2")
    wrote = [line for line in capsys.readouterr().out.splitlines() if ": wrote " in line]
    assert len(wrote) == 4  # progress: one line per figure, in both modes


def test_the_one_pass_png_is_the_bytes_savefig_writes():
    def drawn():
        fig = style.new_figure(3, 2)
        ax = fig.add_subplot()
        ax.plot([0, 1, 2], [1, 0, 1], label="a line")
        ax.set_title("a title that the layout must make room for")
        ax.legend(loc="upper right")
        fig.supxlabel("a caption")
        return fig

    fig = drawn()
    saved = io.BytesIO()
    fig.savefig(saved, format="png", metadata=style.PNG_METADATA)
    plt.close(fig)
    fig = drawn()
    dpi = fig.dpi
    assert style.render(fig, "png") == saved.getvalue()
    assert fig.dpi == dpi  # the figure is left at its own dpi
    plt.close(fig)


def broken(inputs, out):
    raise InputError("analysis.json: 'layers' is not a list")


def unwritable(inputs, out):
    raise OutputError("cannot write fig4a.png: No space left on device")


@pytest.mark.parametrize("builder, status", [(broken, 1), (unwritable, 2)])
def test_an_error_in_a_worker_is_the_line_of_one_process(builder, status, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(figures_main.FIGURES, "fig4a", (builder, ""))
    results = {}
    for jobs in ("1", "2"):
        argv = ["fig4a", "table1", "--jobs", jobs, "--out", str(tmp_path / jobs)]
        results[jobs] = outcome(figures_main.main, argv, capsys)
    assert results["1"] == results["2"]
    got, lines = results["2"]
    assert got == status and len(lines) == 1 and "fig4a" in lines[0] and "Traceback" not in lines[0], lines


def test_jobs_below_one_is_refused_before_drawing(tmp_path, capsys):
    status, lines = outcome(figures_main.main, ["fig4a", "--jobs", "0", "--out", str(tmp_path)], capsys)
    assert status == 2 and len(lines) == 1 and "--jobs" in lines[0], lines
    assert list(tmp_path.iterdir()) == []
