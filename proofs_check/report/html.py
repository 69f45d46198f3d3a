"""The report as one self-contained HTML page (index.html): inline CSS with a print stylesheet,
images from the report folder's ``figures/`` by relative links, no script and no external
resource, so it reads from disk without a server and prints cleanly.

Every section is an element with ``id`` = its anchor (a claim's id), so ``#C10`` links work.
A number shows its source file on hover (``title``), and a paragraph, bullet or table that holds
numbers ends with a small note naming them, as in the Markdown.
"""

from __future__ import annotations

import re
from html import escape

from ..verdicts import ALL_WORDS
from . import mathtext
from .doc import (
    Box,
    Bullets,
    Code,
    Data,
    Figure,
    Link,
    Num,
    Para,
    Quote,
    Ref,
    Said,
    Section,
    Strong,
    Table,
    local_target,
    parts_of,
    sources_in,
)

GENERATOR = '<meta name="generator" content="python -m proofs_check --report">'

STYLE = """
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; margin: 0; }
main { max-width: 58rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: .3rem 0 .6rem; line-height: 1.3; } #findings > h2 { margin-top: 1rem; } h2 { border-bottom: 2px solid #ccd; padding-bottom: .2rem; margin-top: 2.5rem; }
h3 { margin-top: 2rem; } section.claim { border-left: 3px solid #ccd; padding-left: 1rem; }
a { color: #1a4fa0; } blockquote { margin: .5rem 0; padding: .4rem .8rem; background: #f4f4f8; border-left: 3px solid #99a; }
pre { background: #f6f6f6; padding: .5rem .8rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: break-word; }
code, pre { font: .9em/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
table { border-collapse: collapse; margin: .5rem 0; table-layout: fixed; width: 100%; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
table.findings { font-size: .9em; } table.findings th:nth-child(1) { width: 16%; }
table.findings th:nth-child(2) { width: 27%; } table.findings th:nth-child(3) { width: 21%; }
table.findings th:nth-child(4) { width: 20%; } table.findings th:nth-child(5) { width: 16%; }
table.hypotheses th:nth-child(1) { width: 20%; } table.hypotheses th:nth-child(2) { width: 14%; }
table.hypotheses th:nth-child(4) { width: 28%; }
.glance { background: #f6f7fb; border: 1px solid #dde; padding: .2rem .8rem; margin: .5rem 0 1rem; font-size: .88em; line-height: 1.36; }
.glance p { margin: .3rem 0; } .glance ul { margin: 0 0 .2rem; padding-left: 1.2rem; } .glance .src { font-size: .9em; }
figure { margin: 1rem 0; } img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption, .src { font-size: .85em; color: #555; } .num { font-variant-numeric: tabular-nums; }
.verdict-false, .verdict-not-reproduced, .verdict-error { color: #a01818; }
.verdict-verified-proved, .verdict-verified-exhaustive, .verdict-reproduced { color: #17702a; }
.verdict-holds-in-every-case-checked { color: #2f6a3a; } .verdict-holds-up-to-rounding { color: #8a5a00; }
@media print {
  body { font-size: 11pt; } main { max-width: none; padding: 0; } a { color: inherit; text-decoration: none; }
  #contents { display: none; } h2 { break-before: page; } h3, figure, pre, table, blockquote { break-inside: avoid; }
  pre { white-space: pre-wrap; } img { max-height: 45vh; }
}
"""


def verdict_class(word: str) -> str:
    """A verdict word as a CSS class name: "verified (proved)" -> "verified-proved"."""
    return re.sub(r"[^a-z]+", "-", word.lower()).strip("-")


def inline(part) -> str:
    if isinstance(part, str):
        return escape(part)
    if isinstance(part, Num):
        return f'<span class="num" title="source: {escape(part.source)}">{mathtext.html(part.text)}</span>'
    if isinstance(part, Strong):
        kind = f' class="verdict-{verdict_class(part.text)}"' if part.text in ALL_WORDS else ""
        return f"<strong{kind}>{escape(part.text)}</strong>"
    if isinstance(part, Ref):
        return (
            f'<a href="#{escape(part.anchor)}">{escape(part.text)}</a>' if part.anchor else escape(part.text)
        )
    if isinstance(part, Link):
        return f'<a href="{escape(local_target(part.target))}">{escape(part.text)}</a>'
    if isinstance(part, Said):  # quoted verbatim; the quoted file on hover
        return f'<q title="quoted from {escape(part.source)}">{mathtext.html(part.text)}</q>'
    raise TypeError(f"not an inline part: {type(part).__name__}")


def sources_note(sources: list[str]) -> str:
    if not sources:
        return ""
    return ' <span class="src">source: ' + ", ".join(f"<code>{escape(s)}</code>" for s in sources) + "</span>"


def text(parts) -> str:
    return "".join(inline(p) for p in parts) + sources_note(sources_in(parts))


def block(item) -> str:
    if isinstance(item, Para):
        return f"<p>{text(item.parts)}</p>"
    if isinstance(item, Bullets):
        return "<ul>\n" + "\n".join(f"<li>{text(parts_of(entry))}</li>" for entry in item.items) + "\n</ul>"
    if isinstance(item, Box):  # one note for the box's numbers, after it
        inner, sources = [], []
        for b in item.blocks:
            entries = b.items if isinstance(b, Bullets) else [b]
            sources += [s for e in entries for s in sources_in(parts_of(e))]
            lis = ["<li>" + "".join(inline(p) for p in parts_of(e)) + "</li>" for e in entries]
            inner.append("<ul>" + "".join(lis) + "</ul>" if isinstance(b, Bullets) else lis[0][4:-5])
        inner = [x if x.startswith("<ul>") else f"<p>{x}</p>" for x in inner]
        note = sources_note(list(dict.fromkeys(sources)))
        return (
            f'<div id="{escape(item.anchor)}" class="glance">\n'
            + "\n".join(inner)
            + (f"\n<p>{note.strip()}</p>" if note else "")
            + "\n</div>"
        )
    if isinstance(item, Table):
        head = "".join(f"<th>{escape(h)}</th>" for h in item.header)
        rows, sources = [], []
        for row in item.rows:
            rows.append(
                "<tr>" + "".join(f"<td>{''.join(inline(p) for p in parts_of(c))}</td>" for c in row) + "</tr>"
            )
            sources += [s for cell in row for s in sources_in(parts_of(cell))]
        note = sources_note(list(dict.fromkeys(sources)))
        kind = f' class="{escape(item.kind)}"' if item.kind else ""
        return (
            f"<table{kind}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows)
            + "\n</tbody>\n</table>"
            + (f"\n<p>{note.strip()}</p>" if note else "")
        )
    if isinstance(item, Figure):
        alt = "".join(p if isinstance(p, str) else p.text for p in item.caption.parts)
        anchor = f' id="{escape(item.anchor)}"' if item.anchor else ""
        target = escape(local_target(item.path))  # the image links to its full-size file: wide figures shrink
        return (
            f'<figure{anchor}><a href="{target}"><img src="{target}" alt="{escape(alt)}"></a>'
            f"<figcaption>{text(item.caption.parts)}</figcaption></figure>"
        )
    if isinstance(item, Code):
        return f'<pre class="command"><code>{escape(item.text)}</code></pre>'
    if isinstance(item, Quote):
        return f"<blockquote><p>{mathtext.html(item.text)}</p><p>{sources_note([item.source]).strip()}</p></blockquote>"
    if isinstance(item, Data):
        return f'<pre class="data"><code>{escape(item.text)}</code></pre>\n<p>{sources_note([item.source]).strip()}</p>'
    raise TypeError(f"not a block: {type(item).__name__}")


def section(sec: Section, depth: int) -> list[str]:
    kind = f' class="{escape(sec.kind)}"' if sec.kind else ""
    out = [f'<section id="{escape(sec.anchor)}"{kind}>', f"<h{depth}>{escape(sec.title)}</h{depth}>"]
    out += [block(item) for item in sec.blocks]
    for sub in sec.subsections:
        out += section(sub, min(depth + 1, 6))
    if depth == 2 and sec.anchor != "summary":  # a long page: a way back after each top-level section
        out.append('<p class="back"><a href="#contents">back to contents</a></p>')
    return out + ["</section>"]


def render(sections: list[Section], title: str) -> str:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        GENERATOR,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{escape(title)}</h1>",
    ]
    body = []
    for sec in sections:
        body += section(sec, 2)
    return "\n".join(head + body + ["</main>", "</body>", "</html>"]) + "\n"
