"""The findings at a glance: per claim, how much it matters and the words the report's first
table shows for it; the numbers come from the claim's run (``number``), never from here.

``PAPER`` holds one entry per claim of the paper whose recorded verdict is a failure (false,
not reproduced, holds up to rounding; a test keeps the two in step): its ``severity`` (``major``:
a theorem, a proof step, a construction or a central empirical claim of the paper; ``minor``: a
definition's typo, a printed number, a figure's label), the paper's words ``quote``d verbatim
from the paper's text (``tests/test_report_reader.py`` finds every quote in the text; its page is
looked up in ``paper_quotes.json``, generated from the text by ``paper_places``), what is wrong
in one line, and ``number``: the decisive value, formatted from the row's evidence.  The
corrected statement is the one the registry links (``corrected_by``, ``doc.correction_of``).

``SHORT`` says each corrected statement in a line of words, for the table's "what holds instead"
cell (the full statement stays in the claim's own section).  The decisive numbers' formatters are
in ``findings_numbers``; the package's own hypotheses in ``findings_own``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .findings_numbers import (
    b1,
    c2,
    c6,
    c10,
    c11,
    c12_letter,
    c12_summary,
    competitor_gap,
    d_alpha,
    e_gamma,
    f2c,
    f3b,
    f5a,
    f21,
    f22_ii,
    f22_omega,
    irrational_angle,
    l1,
    literal_reading,
    r31,
    retrieval_ball,
    retrieval_inf,
    s32,
    s33_hops,
    s33_l11,
    s34,
    s36_53x,
    s36_second,
    sup_index,
)

SEVERITIES = ("major", "minor")


@dataclass(frozen=True)
class Finding:
    severity: str  # SEVERITIES
    quote: str  # the paper's words, verbatim (whitespace and line-end hyphenation aside)
    wrong: str  # what is wrong, in one line of words (no digits: numbers come from ``number``)
    number: Callable[[dict], str]  # the decisive value, from the run's row (evidence, counterexample)


THEOREM_32 = (
    "Theorem 3.2 (Robustness). Consider the Transformers TIndex and TRetrieval constructed in Theorem 3.1."
)
RETRIEVAL_BOUND = "TRetrieval we have that ∆Retrieval (n) ≤ 1 − cos (ω − nθ)"

PAPER: dict[str, Finding] = {
    "C7-index-sup": Finding(
        "major",
        THEOREM_32,
        "The bound on the Index head's discrepancy fails: at the paper's own angle some inputs keep a larger gap",
        sup_index,
    ),
    "C7-index-inf": Finding(
        "major",
        "the discrepancy (for any input σ̄) is also affected by the length n of the input sequence",
        "Read with Lemma F.1's least gap, the Index bound fails at rational angles (a tie at the top)",
        sup_index,
    ),
    "C7-retrieval-sup": Finding(
        "major",
        RETRIEVAL_BOUND,
        "The Retrieval bound fails: an input whose other keys carry the opposite letter keeps a gap near two",
        retrieval_ball,
    ),
    "C7-retrieval-competitor": Finding(
        "major",
        "Let us define the discrepancy for an input σ̄ as the difference between the largest logit value and any other",
        "The proof's own discrepancy is off by one offset, so it exceeds the bound at every length",
        competitor_gap,
    ),
    "C7-retrieval-inf": Finding(
        "major",
        RETRIEVAL_BOUND,
        "The Retrieval bound with Lemma F.1's least gap holds up to the longest input, not for every length",
        retrieval_inf,
    ),
    "C7-retrieval-margin": Finding(
        "major",
        "Theorem 3.2 can be thought of as imposing hard limitations on the ability of the model to achieve "
        "perfect accuracy when the length of the input increases",
        "The margin average-hard attention needs exceeds the stated upper bound at short lengths",
        retrieval_ball,
    ),
    "C4-index-irrational-angle": Finding(
        "major",
        "From now we consider θ be irrational. In this way, for input of length at least n > 1, the logit "
        "function has an unique maximum.",
        "An irrational angle does not make the top logit unique (pi, two pi over three): the construction errs",
        irrational_angle,
    ),
    "C4-index-literal": Finding(
        "major",
        "for every input σ̄ (valid for the multi-hop number task) with length n ≤ n0 , TIndex (σ̄) = Index(σ̄)",
        "With Definition F.1 read as written (an integer may point before the start), the construction errs",
        literal_reading,
    ),
    "C6-retrieval": Finding(
        "major",
        "the Retrieval function cannot be computed by a purely positional one",
        "A purely positional softmax head computes Retrieval exactly: the impossibility needs hard attention",
        c6,
    ),
    "R31-retrieval-symbolic": Finding(
        "major",
        "our constructed models TIndex and TRetrieval have, respectively, purely positional and purely symbolic "
        "attention heads",
        "The Retrieval construction's head is not purely symbolic wherever it computes Retrieval",
        r31,
    ),
    "F22-angle-omega": Finding(
        "major",
        "the minimum discrepancy (on non-constant inputs) induced by angle θ = 2π/|A LPH| is strictly positive",
        "At the angle the proof's conclusion names, the Retrieval construction errs",
        f22_omega,
    ),
    "F22-step-ii": Finding(
        "major",
        "if all the symbol σj , with j ≤ n, has the same left-symbol σjL , then all the sequence is attended equally",
        "Keys with the same left letter at different positions get different logits, so the proof step fails",
        f22_ii,
    ),
    "S34-single-frequency": Finding(
        "major",
        "they use standard RoPE with a single frequency and softmax attention",
        "At a standard RoPE frequency the Retrieval construction errs; it needs an angle no standard plane has",
        s34,
    ),
    "C2": Finding(
        "major",
        "We observe that when accuracy converges, both head types are pure.",
        "In every seed some heads are still impure when accuracy converges",
        c2,
    ),
    "C10": Finding(
        "major",
        "symbolic mechanisms in the letter task allow for near perfect generalization (i.e., over 90% accuracy) "
        "with sequence lengths up to 850",
        "Our letter models fall well below the stated accuracy at that length (the qualitative contrast holds)",
        c10,
    ),
    "S33-positional-per-hop": Finding(
        "major",
        "reliably solving an n-hop condition requires the emergence of sufficiently many positional heads to "
        "perform successive selective-indexing steps",
        "Models solve four hops with fewer pure positional heads than hops",
        s33_hops,
    ),
    "S33-L11-needed": Finding(
        "major",
        "The last required symbolic head appears in layer 11, which is needed for every n-hop condition",
        "Zeroing layer eleven's attention leaves every hop count solved",
        s33_l11,
    ),
    "C11": Finding(
        "minor",
        "Table 1: Weighted averaged ID’s and the corresponding frequencies.",
        "Our models' frequency use per layer does not match Table 1 at most thresholds",
        c11,
    ),
    "F21-case1-3E": Finding(
        "minor",
        "the residual stream equals to three times the input embedding",
        "The bias coordinate is not tripled (the decoding conclusion still holds)",
        f21,
    ),
    "B1-formal": Finding(
        "minor",
        "2. n1 − jkHL + 1 ∈ {1, 2, ..., n1 }.",
        "The formal number task drops the last hop's position and gives no answer on the paper's own example",
        b1,
    ),
    "F3B-proper": Finding(
        "minor",
        "Letter task. Here, hops are defined by the letter pairs in the pre-target window",
        "The input Figure 3B prints is not proper: Retrieval is undefined at some positions",
        f3b,
    ),
    "F5A-theta": Finding(
        "minor",
        "For Index function, θ = θ2 = 0.8",
        "The Index angle printed for Figure 5A is not Table 1's angle for that ID",
        f5a,
    ),
    "S36-53x": Finding(
        "minor",
        "sequence lengths up to 850 (53 times the original sequence length)",
        "The multiple is miscounted for the stated training length",
        s36_53x,
    ),
    "S36-second-layer": Finding(
        "minor",
        "The plot is made with the angles corresponding to the second layer in each model.",
        "The Retrieval angle of Figure 5A is Table 1's third layer, not its second",
        s36_second,
    ),
    "L1-listing-index": Finding(
        "minor",
        "See Listing 1 for pseudo-code formalization of these basic functions",
        "Listing one's index wraps around where the definition keeps the integer",
        l1,
    ),
    "S32-letter-decomposition": Finding(
        "minor",
        "fL ET (σL ET ) = Reflexiveℓ−h Retrievalh (σL ET ) n",
        "The decomposition is undefined on most task inputs, which are not proper",
        s32,
    ),
    "E-gamma-shape": Finding(
        "minor",
        "the shape of the curve remains consistent, aside from a small shift along the x-axis",
        "At the smaller threshold some labelled layers disappear: not a shift",
        e_gamma,
    ),
    "F2C-F7-labels": Finding(
        "minor",
        "Note that while smaller values are more restrictive",
        "Figure 2C and Figure 7 group the number task's layers differently",
        f2c,
    ),
    "D-alpha-signed": Finding(
        "minor",
        "α(π) = softmax di (x) − dj (x) /τ",
        "The printed signed weights change which heads are pure; the authors' code uses the absolute value",
        d_alpha,
    ),
    "C12-summary": Finding(
        "minor",
        "the letter task achieves accuracy above 0.88 at length 32 and above 0.65 at length 100 for all models",
        "One cell of Table 3 sits on the printed boundary, so the summary holds only up to rounding",
        c12_summary,
    ),
    "C12-letter-higher": Finding(
        "minor",
        "accuracy on the letter task is consistently higher than on the number task",
        "One cell of Table 3 has the number task ahead",
        c12_letter,
    ),
}


# each corrected statement (and each statement shown in the three answers) in a line of words, for
# the findings table's "what holds instead" cell; the full statement stays in the claim's section
SHORT: dict[str, str] = {
    "C4-index-corrected": "exact iff no multiple of the angle up to the longest offset is a full turn",
    "C4-index-unique-top": "the top logit is unique iff the angle is no rational turn with a small denominator",
    "C4-index-literal-corrected": "exact on every input iff exact on the valid ones and the cosines rise",
    "C7-index-sup-corrected": "the Index gap's bound with its true length dependence, sharp in the angle",
    "C7-index-inf-corrected": "the least Index gap's bound, attained at a full turn over the length",
    "C7-retrieval-sup-exact": "the largest Retrieval gap in closed form: near two, not small",
    "C7-retrieval-competitor-corrected": "the bound holds with the length shifted by one",
    "C7-retrieval-inf-corrected": "the least Retrieval gap in closed form at every length",
    "C7-retrieval-margin-exact": "the margin in closed form, a product of two sines",
    "C6-retrieval-hard": "impossible under hard attention that misses an earlier position",
    "C6-retrieval-bounded": "with bounded logits a positional head errs from some length on",
    "B1-formal-corrected": "with the last hop's position kept, the definition gives the figures' answers",
    "C10-relative": "the letter models generalise further than the number models at every length",
    "C11-pattern": "fast planes early and slow late in the number task, slow throughout in the letter task",
    "C4-retrieval-exact-condition": "exact iff its value-aware logit gap is positive; the paper's angle condition "
    "is sufficient only",
    "V-rescale": "switched on at inference, it keeps the letter models near perfect",
    "V-scale": "trained with it, every seed near perfect at the longest length",
    "V-learned-scale": "the same, learned",
}
