"""Appendix B.1's formal definition of the number task, transcribed as written and with the
position of the last hop restored (issue 30, section 5).

This is the paper's text under test, not the package's reading of the task (that is
``theory.functions.solve_number``, which the figures confirm); it lives in ``theory`` because
``proofs_check`` owns no maths.  The claims B1-formal and B1-formal-corrected compare both
against the figures' reading on every small input.
"""

from __future__ import annotations

__all__ = ["chain", "b1_as_written", "b1_corrected"]

# -- Appendix B.1 ----------------------------------------------------------------------------------
# Inputs are s_1..s_n1 (symbols) then j_1..j_n2 (integers), 1-based as in the appendix.  Conditions
# 1 and 3 fix the chain: k_1 = n2, k_(i+1) = k_i - j_(k_i); it goes on while k_i is in 1..n2.


def chain(j: list) -> list[int]:
    """k_1, k_2, ... of conditions 1 and 3, as long as they index the pre-target window."""
    ks, k = [], len(j)
    while 1 <= k <= len(j):
        ks.append(k)
        k -= j[k - 1]
    return ks


def b1_as_written(s: list, j: list) -> dict:
    """{HL: answer} for every hop length HL the definition as written accepts: the chain
    k_1..k_HL exists and condition 2 (n1 - j_kHL + 1 in {1..n1}) holds; f = s_(n2 - j_kHL + 1)
    (None where that index leaves 1..n1: the formula names no symbol)."""
    n1, n2 = len(s), len(j)
    out = {}
    for hl, k in enumerate(chain(j), start=1):
        if 1 <= n1 - j[k - 1] + 1 <= n1:
            i = n2 - j[k - 1] + 1
            out[hl] = s[i - 1] if 1 <= i <= n1 else None
    return out


def b1_corrected(s: list, j: list) -> dict:
    """The same with the last hop's own position kept: the chain ends at the first k_HL with
    k_HL - j_kHL <= 0, condition 2 reads n1 + k_HL - j_kHL in {1..n1}, f = s_(n1 + k_HL - j_kHL)."""
    n1, out = len(s), {}
    for hl, k in enumerate(chain(j), start=1):
        landing = n1 + k - j[k - 1]
        if k - j[k - 1] <= 0:
            if 1 <= landing <= n1:
                out[hl] = s[landing - 1]
            break
    return out
