"""The report folder never loses data: a folder is a previous report only by its manifest, only
files that manifest lists are removed, a ``figures`` swapped for a symbolic link is never
followed, two reports never write one folder at once, and names from files or folders cannot
put live HTML into REPORT.md or index.html.

Small hand-made documents over a scratch root keep these fast: no claim runs."""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from proofs_check import __main__ as cli
from proofs_check.report import check_report_dir, folder, html, markdown, report_dir_lock, write_report
from proofs_check.report.doc import (
    Bullets,
    Code,
    Data,
    Figure,
    Link,
    Num,
    Para,
    Quote,
    Ref,
    Section,
    Strong,
    Table,
)
from proofs_check.report.studies import llm
from theory.io.files import OutputError
from theory.io.locks import ExclusiveLock, LockHeld

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root(tmp_path):
    """A scratch repository root with two figures to copy."""
    base = tmp_path / "repo"
    (base / "figures" / "output").mkdir(parents=True)
    for name in ("a", "b"):
        (base / "figures" / "output" / f"{name}.png").write_bytes(f"png {name}".encode())
    return base


def document(*names) -> list[Section]:
    return [Section("s", "S", [Figure(f"figures/output/{n}.png", Para(["Figure."])) for n in names])]


def tree(path: Path) -> dict:
    """Every file under ``path`` (links not followed) with its bytes: what must not change."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def refuse_claims(monkeypatch):
    monkeypatch.setattr(cli, "run_claims", lambda *a: pytest.fail("a claim ran"))


# -- 1. recognised by a manifest, not by shape -----------------------------------------------------


def test_a_figures_folder_of_the_users_own_pictures_is_refused_and_kept(tmp_path, root, monkeypatch, capsys):
    out = tmp_path / "mine"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "holiday.png").write_bytes(b"my photo")
    (out / "figures" / "notes.md").write_text("my notes")
    before = tree(out)
    with pytest.raises(OutputError, match=r"mine holds figures/holiday\.png"):
        check_report_dir(out)
    with pytest.raises(OutputError):
        write_report(out, document("a"), root)
    refuse_claims(monkeypatch)
    assert cli.main(["--report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(out) in err and "figures/holiday.png" in err
    assert tree(out) == before


def test_a_report_writes_its_manifest_and_removes_only_what_the_previous_one_listed(tmp_path, root):
    out = tmp_path / "r"
    write_report(out, document("a", "b"), root)
    manifest = json.loads((out / folder.MANIFEST).read_text())
    assert manifest == {
        "generator": folder.GENERATOR,
        "files": ["REPORT.md", "figures/a.png", "figures/b.png", "index.html"],
    }
    assert not (out / folder.LOCK).exists()  # released and removed once written

    (out / "figures" / "mine.png").write_bytes(b"mine")  # someone's file beside the report
    with pytest.raises(OutputError, match="figures/mine.png"):
        write_report(out, document("a"), root)
    assert (out / "figures" / "mine.png").read_bytes() == b"mine" and (out / "figures" / "b.png").exists()

    (out / "figures" / "mine.png").unlink()
    write_report(out, document("a"), root)  # b.png was listed and is shown no more: removed
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["a.png"]
    assert json.loads((out / folder.MANIFEST).read_text())["files"] == [
        "REPORT.md",
        "figures/a.png",
        "index.html",
    ]


@pytest.mark.parametrize(
    "manifest",
    [
        "not json",
        json.dumps({"generator": "me", "files": []}),
        json.dumps({"generator": folder.GENERATOR, "files": ["figures/../../x.png"]}),
    ],
)
def test_a_manifest_not_ours_is_refused(tmp_path, root, manifest):
    out = tmp_path / "r"
    write_report(out, document("a"), root)
    (out / folder.MANIFEST).write_text(manifest)
    before = tree(out)
    with pytest.raises(OutputError, match=r"holds \.report-manifest\.json, which is not a report manifest"):
        check_report_dir(out)
    with pytest.raises(OutputError):
        write_report(out, document("b"), root)
    assert tree(out) == before


def test_a_report_from_before_manifests_is_accepted_and_only_its_shown_figures_removed(tmp_path, root):
    check_report_dir(ROOT / "report")  # the committed report, written before manifests existed
    out = tmp_path / "legacy"
    write_report(out, document("a", "b"), root)
    (out / folder.MANIFEST).unlink()
    write_report(out, document("a"), root)  # b.png is shown by the old pages: removed
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["a.png"]

    (out / folder.MANIFEST).unlink()
    (out / "figures" / "unshown.png").write_bytes(b"mine")  # shown by neither old page: not the report's
    with pytest.raises(OutputError, match="figures/unshown.png"):
        check_report_dir(out)
    (out / "figures" / "unshown.png").unlink()
    (out / "REPORT.md").write_text("# my own report\n")  # the Markdown marker gone: not a report
    with pytest.raises(OutputError, match="holds REPORT.md"):
        check_report_dir(out)


# -- 2. a swapped symbolic link redirects nothing ---------------------------------------------------


def victim(tmp_path) -> Path:
    place = tmp_path / "victim"
    place.mkdir()
    for name in ("a.png", "b.png", "keep.png"):
        (place / name).write_bytes(b"theirs " + name.encode())
    return place


def test_figures_swapped_for_a_link_after_the_check_is_not_followed(tmp_path, root):
    out, target = tmp_path / "r", victim(tmp_path)
    write_report(out, document("a", "b"), root)
    check_report_dir(out)
    shutil.rmtree(out / "figures")
    (out / "figures").symlink_to(target)  # while the claims run
    before = tree(target)
    with pytest.raises(OutputError) as error:
        write_report(out, document("a"), root)
    assert "\n" not in str(error.value) and "figures" in str(error.value)
    assert tree(target) == before


def test_figures_swapped_between_the_last_check_and_its_opening_is_not_followed(tmp_path, root, monkeypatch):
    out, target = tmp_path / "r", victim(tmp_path)
    write_report(out, document("a", "b"), root)
    real = folder.open_figures

    def swapped(where, dir_fd, *, create=False):
        if create:  # the write opens figures/ now: swap it just before
            shutil.rmtree(out / "figures")
            (out / "figures").symlink_to(target)
        return real(where, dir_fd, create=create)

    monkeypatch.setattr(folder, "open_figures", swapped)
    before = tree(target)
    with pytest.raises(OutputError, match="not a plain folder"):
        write_report(out, document("a"), root)
    assert tree(target) == before


def test_figures_renamed_and_replaced_by_a_link_mid_write_keeps_the_writes_in_the_opened_folder(
    tmp_path, root, monkeypatch
):
    out, target = tmp_path / "r", victim(tmp_path)
    write_report(out, document("a", "b"), root)
    real, swapped = folder.atomic_write_bytes_at, []

    def swap_once(dir_fd, name, data, **kwargs):
        if name.endswith(".png") and not swapped:
            (out / "figures").rename(out / "moved")
            (out / "figures").symlink_to(target)
            swapped.append(name)
        return real(dir_fd, name, data, **kwargs)

    monkeypatch.setattr(folder, "atomic_write_bytes_at", swap_once)
    before = tree(target)
    write_report(out, document("a"), root)
    assert swapped and tree(target) == before  # nothing written into, nothing removed from the link's target
    assert sorted(p.name for p in (out / "moved").iterdir()) == ["a.png"]


# -- 3. one report at a time per folder --------------------------------------------------------------


def test_a_second_report_into_a_locked_folder_exits_2_naming_the_folder_and_holder(
    tmp_path, monkeypatch, capsys
):
    out = tmp_path / "busy"
    out.mkdir()
    refuse_claims(monkeypatch)
    with ExclusiveLock(out / folder.LOCK):  # another generation holds it
        assert cli.main(["--report", str(out)]) == 2
        with pytest.raises(OutputError, match=f"pid {os.getpid()}"):
            with report_dir_lock(out):
                pass
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(out) in err and f"pid {os.getpid()}" in err and "Traceback" not in err
    assert sorted(os.listdir(out)) == []  # the lock file went with its holder; nothing written


def test_the_command_holds_the_lock_while_the_claims_run(tmp_path, monkeypatch):
    out = tmp_path / "r"

    class Stop(Exception):
        pass

    def claims(ids, options):
        with pytest.raises(LockHeld, match=f"pid {os.getpid()}"):
            ExclusiveLock(out / folder.LOCK).acquire()
        raise Stop

    monkeypatch.setattr(cli, "run_claims", claims)
    with pytest.raises(Stop):
        cli.main(["--only", "=C10", "--report", str(out)])
    assert not (out / folder.LOCK).exists()  # released on the way out


# -- 4. names from files and folders cannot inject HTML ---------------------------------------------

HOSTILE = "`<img src=x onerror=alert(1)>` *a* _b_ [x](javascript:alert(1)) | c &amp; \\ ``d\n\n# e"
WORDS = "<img src=x onerror=alert()> *a* _b_ [x](javascript:alert()) | c &amp; \\ ``d\n\n# e"  # no digit


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def markdown_as_html(text: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")
    return (
        markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    )  # raw HTML kept, as GitHub keeps some


def assert_inert(page_html: str, names: list[str]) -> None:
    page = Page(page_html)
    images = [attrs.get("src", "") for tag, attrs in page.tags if tag == "img"]
    assert all(src.startswith("figures/") for src in images), images
    assert not [attrs for _, attrs in page.tags if any(key.startswith("on") for key in attrs)]
    assert not [attrs for tag, attrs in page.tags if tag == "a" and "javascript" in attrs.get("href", "")]
    shown = " ".join("".join(page.text).split())
    for name in names:
        assert " ".join(name.split()) in shown, name


def hostile_document() -> list[Section]:
    figure = Figure("figures/output/a.png", Para([WORDS, Num("0.5", HOSTILE)]))
    table = Table(["name | column"], [[Para([Ref(HOSTILE), Num("1", HOSTILE)])], [Para([Strong(WORDS)])]])
    return [
        Section(
            'x"onmouseover="alert(1)',
            HOSTILE,
            [
                Para(
                    [
                        WORDS,
                        Ref(HOSTILE),
                        Link(HOSTILE, "#x"),
                        Num(HOSTILE, "training/reference/llm/" + HOSTILE),
                    ]
                ),
                Bullets([Para([Num("2", HOSTILE)])]),
                table,
                figure,
                Code(HOSTILE),
                Quote(HOSTILE, HOSTILE),
                Data(HOSTILE, HOSTILE),
            ],
        )
    ]


def test_hostile_names_are_shown_as_text_in_both_pages(tmp_path, root):
    out = tmp_path / "r"
    write_report(out, hostile_document(), root, title=HOSTILE)
    md_html = markdown_as_html((out / "REPORT.md").read_text(encoding="utf-8"))
    assert_inert(md_html, [HOSTILE, WORDS])
    assert_inert((out / "index.html").read_text(encoding="utf-8"), [HOSTILE, WORDS])
    rows = [row for row in md_html.split("<tr>")[1:]]
    assert all(row.count("<td>") + row.count("<th>") == 1 for row in rows)  # no | split a cell
    assert md_html.count("<h1>") == 1 and md_html.count("<h2>") == 1  # no name started a heading


def test_every_figure_links_to_its_full_size_file_in_both_pages():
    """A wide figure shrinks to the text column: a click opens the image at full size."""
    sections = [Section("s", "S", [Figure("figures/output/fig5a.png", Para(["words"]))])]
    page = Page(html.render(sections, "t"))
    links = [(tag, attrs) for tag, attrs in page.tags if tag in ("a", "img")]
    assert ("a", {"href": "figures/fig5a.png"}) in links
    assert links[links.index(("a", {"href": "figures/fig5a.png"})) + 1][1]["src"] == "figures/fig5a.png"
    assert "[![words](figures/fig5a.png)](figures/fig5a.png)" in markdown.render(sections, "t")
    md_page = Page(markdown_as_html(markdown.render(sections, "t")))
    tags = [(tag, attrs.get("href", attrs.get("src"))) for tag, attrs in md_page.tags if tag in ("a", "img")]
    assert ("a", "figures/fig5a.png") in tags and tags[tags.index(("a", "figures/fig5a.png")) + 1] == (
        "img",
        "figures/fig5a.png",
    )


def test_a_hostile_model_folder_name_reaches_neither_page_as_html(tmp_path):
    """The reported case: a source note named the model folder in backticks without escaping."""
    fake = tmp_path / "repo"
    for entry in ("figures", "proofs_check"):
        (fake / entry).parent.mkdir(parents=True, exist_ok=True)
        (fake / entry).symlink_to(ROOT / entry)
    llm_dir = fake / llm.FOLDER
    llm_dir.mkdir(parents=True)
    name = "`<img src=x onerror=alert(1)>` *a*_b_|[x](javascript:alert(1))\nz"
    (llm_dir / name).mkdir()
    for source in (ROOT / llm.FOLDER / "smollm2").glob("analysis_*.json"):
        shutil.copyfile(source, llm_dir / name / source.name)
    section = llm.section(fake)
    md_html = markdown_as_html(markdown.render([section], "t"))
    assert_inert(md_html, [f"{llm.FOLDER}/{name}/analysis_number.json"])
    assert_inert(html.render([section], "t"), [f"{llm.FOLDER}/{name}/analysis_number.json"])
