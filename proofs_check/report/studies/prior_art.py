"""Prior art for the query-scale findings: what the package confirms of published log-n scaling
of attention logits, and what is new here.  Written in the package's own words; each numerical
finding is read from the variants study (``training/reference/variants/summary.json``).
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.claims.rescale import break_within_factor, holds_everywhere, rescaled_models
from proofs_check.report.doc import Link, Num, Para, Ref, Section, num
from training.analysis.break_prediction import THRESHOLD

from .common import (
    LENGTH_BLOCK,
    at_length,
    claim,
    counts,
    counts_text,
    load,
    not_shipped,
    span,
    stat_num,
    tokens,
)
from .rescale import learned

ANCHOR, TITLE = "prior-art", "Prior art: attention logits scaled like log n"
SUMMARY = "training/reference/variants/summary.json"
COMMAND = "python -m training study training/studies/variants.json --collect"
THRESHOLD_SOURCE = "training/analysis/break_prediction.py"
SHAPE = {"results": {"*": {"*": {"length?": LENGTH_BLOCK, "rescaled?": LENGTH_BLOCK}}}}
SSMAX = "https://arxiv.org/abs/2501.19399"
CHIANG_CHOLAK = "https://aclanthology.org/2022.acl-long.527/"
LLAMA4 = "https://ai.meta.com/blog/llama-4-multimodal-intelligence/"


def prior_art(root: Path) -> Section:
    summary = load(root, SUMMARY, SHAPE)
    if summary is None:
        return not_shipped(ANCHOR, TITLE, SUMMARY, COMMAND)
    src = SUMMARY
    blocks = [
        Para(
            [
                "The query scale of the variants study multiplies the query at position i by ",
                Ref("log(i+1)/log(17)"),
                ", so every attention logit grows like the log of the context length. "
                "The idea is published. Scalable-Softmax (Nakanishi, ",
                Link("arXiv 2501.19399", SSMAX),
                ") multiplies the logits by s log n with a learned s, and reports that it helps also when it is "
                "put in after pretraining. ",
                Ref("Llama 4"),
                " sets an attention temperature at inference time for long contexts (",
                Link("Meta's announcement", LLAMA4),
                "). Chiang and Cholak (",
                Link("Overcoming a theoretical limitation of self-attention, ACL 2022", CHIANG_CHOLAK),
                ") scale the logits by log n so that attention does not flatten as inputs grow, for length "
                "generalisation.",
            ]
        )
    ]
    confirmed = _confirmed(summary, src)
    if confirmed is not None:
        blocks.append(confirmed)
    blocks.append(_new_here(summary, src))
    return Section(ANCHOR, TITLE, blocks)


def _confirmed(summary: dict, src: str) -> Para | None:
    """Trained with the scale, and switched on at inference only: both rescue the letter task."""
    trained = summary["results"].get("log-scale", {}).get("letter", {}).get("length")
    letter = {m: holds_everywhere(c) for m, c in rescaled_models(summary, "letter").items() if learned(c)}
    if not trained or not trained.get("n_per_length") or not letter:
        return None
    longest = max(trained["lengths"])
    found = counts(trained, longest)
    held = sum(ok for ok, _ in letter.values())
    grid = max(next(iter(rescaled_models(summary, "letter").values()))["rescaled"][0])
    return Para(
        [
            "What the package confirms: scaling the logits like log n rescues length generalisation, also "
            "when the scale is switched on only at inference. Trained with the fixed scale on the paper's "
            "schedule, the letter task answers ",
            Num(counts_text(found), src),
            " inputs at ",
            Num(tokens(longest), src),
            " tokens over its ",
            num(len(found), "d", src),
            " seeds (",
            claim("V-scale-6k"),
            "), where the paper's recipe fails",
            *_forms(summary, src),
            ". Switched on at inference in models trained without it, the same scale keeps ",
            num(held, "d", src),
            " of ",
            num(len(letter), "d", src),
            " letter models at or above ",
            num(THRESHOLD, "g", THRESHOLD_SOURCE),
            " at every length up to ",
            Num(tokens(grid), src),
            " tokens, their weights unchanged (",
            claim("V-rescale"),
            ").",
        ]
    )


def _forms(summary: dict, src: str) -> list:
    """The learned per-head form (Scalable-Softmax's) beside the fixed one, on the shorter schedule."""
    blocks = {
        name: summary["results"].get(name, {}).get("letter", {}).get("length")
        for name in ("learned-scale-3k", "log-scale-3k")
    }
    if not all(blocks.values()):
        return []
    n = max(blocks["log-scale-3k"]["lengths"])
    return [
        "; on the shorter schedule the learned per-head form, which is Scalable-Softmax's, scores ",
        stat_num(at_length(blocks["learned-scale-3k"], n), src),
        " there against the fixed form's ",
        stat_num(at_length(blocks["log-scale-3k"], n), src),
    ]


def _new_here(summary: dict, src: str) -> Para:
    """The split the discrepancy theory predicts, and the link to Lemma F.1's temperature."""
    number = [break_within_factor(c)[1] for c in rescaled_models(summary, "number").values()]
    parts = [
        "What is new here: the scale rescues the symbolic letter task and leaves the positional number task "
        "where it was"
    ]
    if number:
        parts += [
            ", its breaks at ",
            Num(span(r["break_without"] for r in number), src),
            " tokens as trained and ",
            Num(span(r["break_with"] for r in number), src),
            " with the scale (",
            claim("V-rescale-number"),
            ")",
        ]
    parts += [
        ". The discrepancy theory predicts this split before any training: a symbolic head on a slow plane keeps "
        "its logit gap as n grows and fails only because the growing number of keys dilutes its softmax, which "
        "a growing temperature undoes, while a positional head's gap itself decays with n, whatever its "
        "temperature (",
        Ref("Theorem 3.2"),
        ", corrected). And the scale is ",
        Ref("Lemma F.1"),
        "'s temperature made explicit: the lemma's hand-built heads need a softmax inverse temperature that "
        "grows like ln n (",
        Ref("constructions.temperature"),
        ", ",
        claim("C5"),
        "); the query scale supplies that growth from the architecture instead of asking the weights for it.",
    ]
    return Para(parts)
