"""The report's sections about the package's own studies, and the prior-art section.

Each section is a function ``section(root) -> doc.Section`` that reads the shipped results
under ``root`` (the repository) and formats every number from them; none runs a claim check
or trains anything.  ``STUDY_SECTIONS`` lists them in the report's order.
"""

from __future__ import annotations

from . import llm, premise, rescale, seeds, variants
from .prior_art import prior_art

STUDY_SECTIONS = [seeds.section, variants.section, rescale.section, premise.section, llm.section]

__all__ = ["STUDY_SECTIONS", "prior_art"]
