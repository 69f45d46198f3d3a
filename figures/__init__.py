"""Figures of the paper regenerated from saved results: ``python -m figures [NAMES] [--out DIR]``.

Nothing here trains a model or computes an analysis: every figure reads JSON written by
``training`` (analysis, length generalisation, metrics, LLM results), ``proofs_check``
(Figure 5A data) and ``constructions`` (Figure 4A data); paper values come from
``theory.paper_data``.

Modules: ``input_files`` (each input file's shape and the command that writes it; reading one),
``loaders`` (where every input lives, seeds and model folders), ``style`` (colours, saving),
one module per family of figures, ``__main__`` (names, CLI).
"""
