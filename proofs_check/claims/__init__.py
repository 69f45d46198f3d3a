"""Importing this package registers every claim module's checks."""

from . import foundation  # noqa: F401
from . import constructions  # noqa: F401
from . import discrepancy  # noqa: F401
from . import retrieval_discrepancy  # noqa: F401
from . import impossibility  # noqa: F401
from . import trained  # noqa: F401
from . import table1  # noqa: F401
from . import llm  # noqa: F401
from . import llm_heads  # noqa: F401
from . import llm_local  # noqa: F401
from . import premise  # noqa: F401
from . import variants  # noqa: F401
from . import rescale  # noqa: F401
from . import window  # noqa: F401
from . import coverage_text  # noqa: F401
from . import coverage_numbers  # noqa: F401
from . import coverage_costs  # noqa: F401
from . import coverage_trained  # noqa: F401
