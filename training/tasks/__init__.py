"""The number and letter multi-hop tasks: vocabularies, generators, task definitions,
the paper's cached splits, length extension, and ``python -m training data``.

Imports no other room of ``training`` (only ``theory``), so anything may build on it.
"""
