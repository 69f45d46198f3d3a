"""What claim checks rest on, apart from the claims themselves (``proofs_check.claims`` registers
claims and nothing else): evidence classes (``classes``), statements bound to the formulas they
check (``binding``), the brute-force references (``brute_index``, ``brute_retrieval``), and the
trained-model plumbing (``over_seeds``, ``seeds``, ``shipped``, ``trained_sources``).
"""
