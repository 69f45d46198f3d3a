"""The referee report (python -m proofs_check --report DIR): the committed report is what the
command writes now, every claim is there once with its verdict, the HTML is self-contained with
no broken internal link, numbers follow their results files, and a bad folder costs nothing.

The full report runs every claim (about forty seconds), so it is generated once per module."""

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from proofs_check import __main__ as cli
from proofs_check.registry import GROUPS, REGISTRY
from proofs_check.report import build, check_report_dir, markdown, study_sections
from proofs_check.report.build import all_sources, build_document
from proofs_check.report.figures_map import FIGURE_OF, figure_file
from proofs_check.report.paper_places import (
    PAGES_FILE,
    PAPER_NAME,
    build_table,
    load_table,
    missing_places,
    places_in,
    registry_places,
)
from proofs_check.verdicts import ALL_WORDS
from theory.io.files import OutputError

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "reference" / PAPER_NAME
COMMITTED = ROOT / "report"


@pytest.fixture(scope="module")
def fresh(generated_report):
    """A full report written by the command, and the rows of the same run (its --json): the
    session's one generation (tests/conftest.py), shared with the other report tests."""
    return generated_report


class Page(HTMLParser):
    """Ids, links, image sources and external resources of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.srcs, self.tags, self.headings, self._heading = [], [], [], [], {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        if "src" in attrs:
            self.srcs.append(attrs["src"])
        if tag == "h3":
            self._heading = self.ids[-1] if self.ids else None

    def handle_data(self, data):
        if self._heading is not None:
            self.headings[self._heading] = self.headings.get(self._heading, "") + data

    def handle_endtag(self, tag):
        if tag == "h3":
            self._heading = None


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def test_the_committed_report_is_a_fresh_generation(fresh):
    out, _ = fresh
    for name in ("REPORT.md", "index.html"):
        assert (COMMITTED / name).read_text(encoding="utf-8") == (out / name).read_text(encoding="utf-8"), (
            f"report/{name} is stale: regenerate it with python -m proofs_check --report report"
        )
    committed = sorted(p.name for p in (COMMITTED / "figures").iterdir())
    assert committed == sorted(p.name for p in (out / "figures").iterdir())
    for name in committed:  # copies of figures/output, byte for byte
        assert (COMMITTED / "figures" / name).read_bytes() == (
            ROOT / "figures" / "output" / name
        ).read_bytes(), name


def test_every_claim_appears_once_with_its_verdict_and_the_counts_add_up(fresh):
    out, rows = fresh
    assert [r["id"] for r in rows] == list(REGISTRY)
    page, text = parse(out / "index.html"), (out / "REPORT.md").read_text(encoding="utf-8")
    for row in rows:
        assert page.ids.count(row["id"]) == 1 and text.count(f'<a id="{row["id"]}"></a>') == 1, row["id"]
        assert page.headings[row["id"]] == f"{row['id']}: {row['verdict']}"
        assert f"### {row['id']}: {row['verdict']}" in text
    table = text[text.index("| verdict | the paper's claims |") :].split("\n\n")[0].splitlines()[2:]
    cells = {line.split("|")[1].strip().strip("*"): [int(c) for c in line.split("|")[2:-1]] for line in table}
    # every verdict word has its row; "error" only when a check failed to run
    shown = [w for w in ALL_WORDS if w != "error" or any(r["verdict"] == w for r in rows)]
    assert list(cells) == [*shown, "all"]
    groups, order = [r["group"] for r in rows], list(GROUPS.values())  # the table's column order
    for word in shown:  # per group, then the row's total
        per_group = [sum(r["verdict"] == word and r["group"] == g for r in rows) for g in order]
        assert cells[word] == [*per_group, sum(per_group)], word
    assert cells["all"] == [*(groups.count(g) for g in order), len(REGISTRY)]


def test_the_page_is_self_contained_and_no_internal_link_is_broken(fresh):
    out, _ = fresh
    page = parse(out / "index.html")
    assert not {"script", "link", "iframe", "object", "embed"} & set(page.tags)
    assert len(page.ids) == len(set(page.ids))
    assert all(
        not s.startswith(("http:", "https:", "//", "data:")) and (out / s).is_file() for s in page.srcs
    )
    internal = [h[1:] for h in page.hrefs if h.startswith("#")]
    assert internal and set(internal) <= set(page.ids)
    local = [h for h in page.hrefs if not h.startswith(("#", "https://", "http://"))]
    assert all((out / h).is_file() for h in local), local
    html_text = (out / "index.html").read_text(encoding="utf-8")
    assert "@media print" in html_text and "url(" not in html_text
    md = (out / "REPORT.md").read_text(encoding="utf-8")
    md_anchors = set(markdown_anchors(md))
    assert set(md_links(md)) <= md_anchors == set(page.ids)
    assert all((out / image).is_file() for image in md_images(md))


def markdown_anchors(text):
    return re.findall(r'<a id="([^"]+)"></a>', text)


def md_links(text):
    return re.findall(r"\]\(#([^)]+)\)", text)


def md_images(text):
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)


def test_every_figure_is_used_and_every_mapped_figure_exists(fresh):
    from figures.__main__ import FIGURES

    out, _ = fresh
    assert set(FIGURE_OF) <= set(REGISTRY)
    mapped = {name for names in FIGURE_OF.values() for name in names}
    assert mapped <= set(FIGURES) and all((ROOT / figure_file(n)).is_file() for n in mapped)
    shipped = {p.name for p in (out / "figures").iterdir()}
    assert {Path(figure_file(name)).name for name in FIGURES} <= shipped  # each drawn by a claim or a study


def test_every_source_the_report_names_exists(fresh):
    _, rows = fresh
    sections = build_document(rows, ROOT, *study_sections())
    sources = all_sources(sections)
    assert build.RUN_SOURCE in sources and "proofs_check/report/paper_pages.json" in sources
    # a source is a file or folder, or a pattern naming many files (every model's dilution.json)
    assert [s for s in sources if not ((ROOT / s).exists() or any(ROOT.glob(s)))] == []


def shadow(root: Path, relative: str, into: Path) -> Path:
    """A copy of ``root`` made of symbolic links, except ``relative``: a real file, to change."""
    here, target = into, Path(relative)
    for depth, part in enumerate(target.parts):
        source = root.joinpath(*target.parts[:depth])
        for entry in source.iterdir():
            if entry.name != part:
                (here / entry.name).symlink_to(entry)
        here = here / part
        if depth < len(target.parts) - 1:
            here.mkdir()
    shutil.copyfile(root / relative, here)
    return here


def test_a_value_changed_in_a_copy_of_a_results_file_changes_the_report(tmp_path):
    studies, prior_art = study_sections()
    assert studies and prior_art is not None, "the study sections (proofs_check.report.studies) are missing"
    summary = shadow(ROOT, "training/reference/variants/summary.json", tmp_path)
    data = json.loads(summary.read_text())
    block = data["results"]["log-scale-3k"]["letter"]["length"]
    block["accuracy"][block["lengths"].index(850)]["mean"] = 0.7771
    summary.write_text(json.dumps(data))

    def render(root):
        return markdown.render([section(root) for section in studies] + [prior_art(root)], "t")

    before, after = render(ROOT), render(tmp_path)
    assert "0.777 \\[" not in before and "0.777 \\[" in after  # Markdown escapes the interval's bracket


def test_the_report_is_byte_identical_across_runs_and_a_partial_one_says_so(tmp_path, capsys):
    picked = "=C7-index-sup,=C10,=C12-summary,=V-scale,=F3B-proper,=C4-index-irrational-angle"
    assert cli.main(["--only", picked, "--report", str(tmp_path / "a")]) == 0
    assert cli.main(["--only", picked, "--report", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.count("wrote ") == 2
    for name in ("REPORT.md", "index.html", "figures/fig5a.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    text = (tmp_path / "a" / "REPORT.md").read_text(encoding="utf-8")
    assert "This report is partial" in text and '"theta": {"decimal": "0.8", "exact": "4/5"}' in text


def test_regenerating_replaces_a_previous_report_and_drops_its_unused_figures(tmp_path):
    out = tmp_path / "r"
    assert cli.main(["--only", "=C7-index-sup", "--report", str(out)]) == 0
    first = {p.name for p in (out / "figures").iterdir()}
    assert cli.main(["--only", "=C12-summary", "--report", str(out)]) == 0
    page = parse(out / "index.html")
    shown = {Path(s).name for s in page.srcs} | {Path(h).name for h in page.hrefs if h.startswith("figures/")}
    assert {p.name for p in (out / "figures").iterdir()} == shown and "fig5a.png" in first - shown
    assert "C12-summary" in page.ids and "C7-index-sup" not in page.ids


def test_the_exit_status_stays_that_of_the_claim_run(tmp_path, monkeypatch):
    real = cli.run_claims

    def changed(ids, options):
        rows = real(ids, options)
        rows[0]["status"], rows[0]["verdict"] = "undecided", "undecided"
        return rows

    monkeypatch.setattr(cli, "run_claims", changed)
    assert cli.main(["--only", "=C12-summary", "--report", str(tmp_path / "r")]) == 1
    assert "The registry records" in (tmp_path / "r" / "REPORT.md").read_text()


def bad_folders(tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    not_ours = tmp_path / "not-ours"
    not_ours.mkdir()
    (not_ours / "REPORT.md").write_text("# my own report\n")
    odd_figures = tmp_path / "odd-figures"
    (odd_figures / "figures").mkdir(parents=True)
    (odd_figures / "figures" / "data.csv").write_text("1,2")
    return {
        "a file": a_file,
        "under a file": a_file / "sub",
        "a foreign file": foreign,
        "a REPORT.md not ours": not_ours,
        "a foreign file in figures": odd_figures,
    }


@pytest.mark.parametrize(
    "case",
    [
        "a file",
        "under a file",
        "a foreign file",
        "a REPORT.md not ours",
        "a foreign file in figures",
        "unwritable",
    ],
)
def test_a_bad_folder_exits_2_with_one_line_before_any_claim_runs(tmp_path, monkeypatch, capsys, case):
    if case == "unwritable":
        if os.geteuid() == 0:
            pytest.skip("running as root: every folder is writable")
        path = tmp_path / "locked"
        path.mkdir()
        path.chmod(0o500)
    else:
        path = bad_folders(tmp_path)[case]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.setattr(cli, "run_claims", lambda *a: pytest.fail("a claim ran"))
    assert cli.main(["--report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--report" in err and "Traceback" not in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    with pytest.raises(OutputError):
        check_report_dir(path)


def test_report_cannot_be_combined_with_list(capsys):
    assert cli.main(["--list", "--report", "x"]) == 2
    assert "--list" in capsys.readouterr().err


def test_places_are_read_from_the_registry_sources():
    assert places_in("Figures 1, 3A-3D; Table 2") == ["Figure 1", "Figure 3", "Table 2"]
    assert places_in("Remark 3.1; Appendix F.2.3 (via the predecessor's Theorem 4)") == [
        "Remark 3.1",
        "Appendix F.2.3",
    ]
    assert places_in("Section 3.1-3.3, Figure 2B-C") == ["Section 3.1", "Figure 2"]
    assert places_in("issue 15 (variant e)") == []
    assert missing_places(load_table(), registry_places()) == []


@pytest.mark.skipif(not PAPER.exists(), reason=f"the paper's text ({PAPER_NAME}) is not available here")
def test_the_page_table_is_what_the_paper_text_gives():
    table = build_table(PAPER.read_text(encoding="utf-8"), registry_places())
    assert table == json.loads(PAGES_FILE.read_text()), (
        "regenerate it: python -m proofs_check.report.paper_places " + str(PAPER)
    )
    assert table["places"]["Theorem 3.2"] == {"page": 8, "part": "3.5"}  # the statement, not a later mention
    assert table["places"]["Appendix F.2.1"]["part"] == "F"
