"""Importing this package registers every claim module's checks."""

from . import (
    bounded_positional,  # noqa: F401  (C6-retrieval-bounded)
    break_concordance,  # noqa: F401  (P-break-concordance, issue 42 B)
    constructions,  # noqa: F401
    coverage_costs,  # noqa: F401
    coverage_numbers,  # noqa: F401
    coverage_text,  # noqa: F401
    coverage_trained,  # noqa: F401
    discrepancy,  # noqa: F401
    foundation,  # noqa: F401
    impossibility,  # noqa: F401
    index_literal,  # noqa: F401  (Theorem 3.1 under the literal reading of F.1)
    lemma_f1,  # noqa: F401  (C5)
    llm,  # noqa: F401
    llm_heads,  # noqa: F401
    llm_layers,  # noqa: F401  (LLM-local-global, Gemma 3)
    llm_local,  # noqa: F401
    paper_defects,  # noqa: F401  (issue 42 B: constructions, proofs, Listing 1)
    paper_defects_text,  # noqa: F401  (issue 42 B: paper text, figures, task data)
    paper_defects_trained,  # noqa: F401  (issue 42 B: decided on trained models)
    premise,  # noqa: F401
    rescale,  # noqa: F401
    retrieval_discrepancy,  # noqa: F401
    retrieval_margin,  # noqa: F401
    table1,  # noqa: F401
    trained,  # noqa: F401
    variants,  # noqa: F401
    window,  # noqa: F401
)
