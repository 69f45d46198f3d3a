"""Which figure shows which claim: an explicit map from claim id to the names of
``python -m figures`` (figures/__main__.py's FIGURES), and where each figure's file is.

The figures are drawn from saved results by ``python -m figures`` into ``figures/output/``
(committed); the report copies those bytes and never redraws.  ``tests/test_report.py`` checks
that every mapped file exists and that every figure ``python -m figures --list`` names is used by
some claim here or by a study section.
"""

from __future__ import annotations

from .doc import FIGURES_OUTPUT

FIGURE_OF = {
    # the trained models' mechanism (Sections 3.1-3.4, Appendix E)
    "C1": ("fig2",),
    "C2": ("fig2", "fig7"),
    "C3": ("fig2",),
    "S31-start-high": ("fig6",),
    "F2C-steps": ("fig2",),
    "S33-last-symbolic-L11": ("fig2",),
    "F7-gamma-shift": ("fig7",),
    "C9": ("fig4bc",),
    # the constructions and their discrepancy (Theorems 3.1 and 3.2, Appendix F.2)
    "C4-index": ("fig4a",),
    "C4-index-corrected": ("fig4a",),
    "C4-index-irrational-angle": ("fig4a",),
    "C4-index-unique-top": ("fig4a",),
    "C7-index-sup": ("fig5a",),
    "C7-index-sup-corrected": ("fig5a",),
    "C7-index-inf": ("fig5a",),
    "C7-index-inf-corrected": ("fig5a",),
    "C7-retrieval-sup": ("fig5a",),
    "C7-retrieval-sup-exact": ("fig5a",),
    "C7-retrieval-competitor": ("fig5a",),
    "C7-retrieval-competitor-corrected": ("fig5a",),
    "C7-retrieval-inf": ("fig5a",),
    "C7-retrieval-inf-corrected": ("fig5a",),
    "C7-retrieval-margin": ("fig5a",),
    "C7-retrieval-margin-exact": ("fig5a",),
    "R32-separation": ("fig5a",),
    "F5A-theta": ("fig5a",),
    "MD-over-seeds": ("discrepancy_trained",),
    # length generalisation (Section 3.6) and what moves it
    "C10": ("fig5b",),
    "C10-relative": ("fig5b",),
    "P-break": ("fig_breaks",),
    "P-break-relative": ("fig_breaks",),
    "P-break-rescaled": ("fig_breaks",),
    "V-scale": ("fig_variants",),
    "V-learned-scale": ("fig_variants",),
    "V-scale-6k": ("fig_variants",),
    "V-scale-6k-20k": ("fig_variants",),
    "V-scale-number": ("fig_variants",),
    "V-window": ("fig_variants",),
    "V-rescale": ("fig_rescale",),
    "V-rescale-number": ("fig_rescale",),
    # frequency use (Appendix G, Table 1) and the LLMs (Section 3.7, Appendix H)
    "C11": ("fig8", "table1"),
    "C11-pattern": ("fig8", "table1"),
    "C11-id-to-frequency": ("table1",),
    "C11-llm": ("llm_heads",),
    "C12": ("fig5cd",),
    "C12-summary": ("fig5cd",),
    "C12-letter-higher": ("fig5cd",),
    "C12-local": ("fig5cd",),
}

# figures drawn as a Markdown table rather than an image: linked, not shown
TABLES = {"table1": "table1.md"}


def figure_file(name: str) -> str:
    """The repository-relative file of figure ``name``: its PNG, or its Markdown table."""
    return f"{FIGURES_OUTPUT}/{TABLES.get(name, name + '.png')}"


def figure_command(name: str) -> str:
    """The command that redraws figure ``name`` alone from saved results."""
    return f"python -m figures {name}"


def figures_of(claim_id: str) -> tuple:
    return FIGURE_OF.get(claim_id, ())
