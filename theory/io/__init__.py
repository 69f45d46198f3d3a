"""The plumbing every package shares, kept apart from theory's mathematics: atomic writes
(``files``), the one input loader (``inputs``), one-line usage errors and integer parsing
(``cli``), locks, the output policy and result provenance.

Imports nothing of theory's mathematics, and no module of the mathematics imports it.
"""
