"""python -m proofs_check: every claim of the paper checked, with a status and evidence.

Claims live in ``proofs_check.claims`` (one module per topic) and register
themselves in ``proofs_check.registry.REGISTRY``.
"""
