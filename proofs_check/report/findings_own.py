"""The package's own hypotheses at a glance: what each asked, and the prior work it builds on
(``PACKAGE``); and the words of the report's three answers at the top (``glance``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OwnFinding:
    asked: str  # what the package asked, in words
    prior: str  # the prior work it builds on, in words
    link: str  # an anchor in the report ("#prior-art") or an external address


URRUTIA = "https://arxiv.org/abs/2511.11579"
PRIOR_ART = "#prior-art"

PACKAGE: dict[str, OwnFinding] = {
    "MD-over-seeds": OwnFinding(
        "Do trained positional layers' top-logit gaps decay with length while symbolic ones do not?",
        "the paper's Theorem 3.2, asked of trained heads",
        "#part-3.5",
    ),
    "V-rescale": OwnFinding(
        "Does a log-length query scale switched on at inference rescue the letter models?",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-rescale-number": OwnFinding(
        "Does the same scale leave the number models' break in place?",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-scale": OwnFinding(
        "Does training with the fixed query scale keep the letter task near perfect at long lengths?",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-learned-scale": OwnFinding(
        "Does a learned per-head query scale do the same?",
        "Scalable-Softmax's learned scale",
        PRIOR_ART,
    ),
    "V-scale-6k": OwnFinding(
        "The fixed scale with the paper's training length in steps",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-scale-6k-20k": OwnFinding(
        "The same models at four times the length",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-scale-number": OwnFinding(
        "Does the number task still train under the scale?",
        "log-length logit scaling (Scalable-Softmax; Chiang and Cholak)",
        PRIOR_ART,
    ),
    "V-window": OwnFinding(
        "Does training on longer inputs move the letter task's break?",
        "length generalisation by longer training inputs",
        PRIOR_ART,
    ),
    "P-break": OwnFinding(
        "Does Lemma F.1's condition predict where a trained model breaks?",
        "the paper's future work (its Section 4)",
        "#part-beyond",
    ),
    "P-break-relative": OwnFinding(
        "Does a relative drop of the top attention weight predict the break?",
        "the paper's future work (its Section 4)",
        "#part-beyond",
    ),
    "P-break-rescaled": OwnFinding(
        "Does the prediction hold for models given the query scale?",
        "the paper's future work (its Section 4)",
        "#part-beyond",
    ),
    "P-break-concordance": OwnFinding(
        "The relative reading judged with censored breaks",
        "Harrell's concordance for censored data",
        "#part-beyond",
    ),
    "C11-llm": OwnFinding(
        "Do positional heads of a pretrained model use faster RoPE planes?",
        "the paper's Table 1, asked of a real model",
        "#part-G",
    ),
    "C11-llm-gemma3": OwnFinding(
        "The same question of a second model family",
        "the paper's Table 1, asked of a real model",
        "#part-G",
    ),
    "LLM-local-global": OwnFinding(
        "Are positional heads more frequent in sliding-window layers?",
        "the paper's Section 3.5 geometry, asked of a model with two RoPE bases",
        "#part-beyond",
    ),
    "C12-local": OwnFinding(
        "Are local models, like the frontier ones, better on the letter task?",
        "the paper's Table 3, asked of local models",
        "#part-3.7",
    ),
    "C4-retrieval-exact-condition": OwnFinding(
        "When exactly is the Retrieval construction exact?",
        "the paper's Appendix F.2.2",
        "#part-F",
    ),
    "C13-sharp-constant": OwnFinding(
        "Is the exclusion principle's constant sharp?",
        "the predecessor's exclusion principle (Urrutia et al.)",
        URRUTIA,
    ),
}


# --- the three answers at the top of the report (``glance``): which claims, in which words ---


@dataclass(frozen=True)
class Theorem:
    """A theorem (or lemma, remark, appendix) of the paper whose statements are found false."""

    place: str  # the paper's place, e.g. "Theorem 3.2" (shown as an identifier)
    what: str  # what it states, in words (may name paper places)
    claims: tuple  # the registry's claims of the paper that belong to it
    instead: str  # what holds instead, in a short phrase of words
    also: tuple = ()  # claims holding what holds instead, besides the corrections the registry links


THEOREMS = (
    Theorem(
        "Theorem 3.2",
        "its robustness bounds",
        (
            "C7-index-sup",
            "C7-index-inf",
            "C7-retrieval-sup",
            "C7-retrieval-competitor",
            "C7-retrieval-inf",
            "C7-retrieval-margin",
        ),
        "exact gaps and bounds with their length dependence",
    ),
    Theorem(
        "Theorem 3.1",
        "the Index construction",
        ("C4-index-irrational-angle", "C4-index-literal"),
        "exact iff no small multiple of the angle is a full turn",
        ("C4-index-unique-top",),
    ),
    Theorem(
        "Appendix F.2.2",
        "the Retrieval construction's proof",
        ("F22-angle-omega", "F22-step-ii", "S34-single-frequency", "R31-retrieval-symbolic"),
        "exact iff its value-aware logit gap is positive",
        ("C4-retrieval-exact-condition",),
    ),
    Theorem(
        "Remark 3.1",
        "no purely positional head computes Retrieval",
        ("C6-retrieval",),
        "true under hard attention, or with bounded logits from some length on",
        ("C6-retrieval-bounded",),
    ),
)

HEADLINE = "C10"  # the paper's headline experiment
HEADLINE_SAYS = "symbolic heads let the letter task generalise almost perfectly far past its training length"
SCALE = ("V-rescale", "V-scale", "V-learned-scale")  # the package's log-length query scale, in this order
SCALE_SAYS = "the package's log-length query scale"
NEW = ("V-rescale", "MD-over-seeds", "C11-llm")  # the package's most important own hypotheses
