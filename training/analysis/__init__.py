"""Analysis of trained weights: adapters for every RoPE family, positional/symbolic scores
and their dynamics, purity, frequency use, geometry, measured discrepancy, evaluation and
length generalisation; ``python -m training analyze`` and ``evaluate``.

May import ``training.model``, ``training.tasks``, ``training.llm`` (its local-model loader),
``theory`` and ``constructions``.
"""
