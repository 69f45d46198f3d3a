"""The trained-model side: multi-hop tasks, the GPT-J and its training, analysis of trained
weights, the 1-hop LLM harness and multi-seed studies, one room (subpackage) per concern.

Rooms and the rooms each may import (enforced by tests/test_layering.py):
``tasks`` (none) <- ``model`` (tasks) <- ``analysis`` (model, tasks, llm; and ``constructions``),
``llm`` (none), ``studies`` (tasks, model, analysis).  Every room may import ``theory``;
``cli_common`` (argument parsing and usage errors) is shared by the rooms' ``cli`` modules,
and ``__main__`` only dispatches to them.  ``api`` is the Python API of the LLM head analysis
(``load_model``, ``analyze_heads``); it may import ``analysis``, ``llm`` and ``tasks``.
"""
