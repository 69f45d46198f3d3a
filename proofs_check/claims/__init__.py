"""Importing this package registers every claim module's checks."""

from . import foundation  # noqa: F401
from . import constructions  # noqa: F401
from . import index_literal  # noqa: F401  (Theorem 3.1 under the literal reading of F.1)
from . import lemma_f1  # noqa: F401  (C5)
from . import discrepancy  # noqa: F401
from . import retrieval_discrepancy  # noqa: F401
from . import retrieval_margin  # noqa: F401
from . import bounded_positional  # noqa: F401  (C6-retrieval-bounded)
from . import impossibility  # noqa: F401
from . import trained  # noqa: F401
from . import table1  # noqa: F401
from . import llm  # noqa: F401
from . import llm_heads  # noqa: F401
from . import llm_local  # noqa: F401
from . import llm_layers  # noqa: F401  (LLM-local-global, Gemma 3)
from . import premise  # noqa: F401
from . import variants  # noqa: F401
from . import rescale  # noqa: F401
from . import window  # noqa: F401
from . import coverage_text  # noqa: F401
from . import coverage_numbers  # noqa: F401
from . import coverage_costs  # noqa: F401
from . import coverage_trained  # noqa: F401
from . import break_concordance  # noqa: F401  (P-break-concordance, issue 42 B)
from . import paper_defects  # noqa: F401  (issue 42 B: constructions, proofs, Listing 1)
from . import paper_defects_text  # noqa: F401  (issue 42 B: paper text, figures, task data)
from . import paper_defects_trained  # noqa: F401  (issue 42 B: decided on trained models)
