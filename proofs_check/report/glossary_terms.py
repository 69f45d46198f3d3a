"""The glossary's terms: every term of art the report uses, defined once in words (``glossary``
links each from its first use in the prose).

A term is (label, pattern, definition): the pattern finds the term in the prose (case-insensitive,
whole words); the definition is words only (``doc.check_words``: no typed number), naming the
paper's places as ``Ref``s where it cites one.
"""

from __future__ import annotations

from .doc import Ref

# (label, pattern, definition parts)
TERMS = [
    (
        "evidence classes: proved, exhaustive, finite cases",
        r"verified \(proved\)|verified \(exhaustive\)|holds in every case checked|evidence class",
        [
            "What a verified statement rests on. Proved: an argument whose every step is checked by a "
            "function named under it. Exhaustive: a finite statement, every case checked. Finite cases: "
            "finitely many of infinitely many cases, each named; the statement may still fail elsewhere."
        ],
    ),
    (
        "holds up to rounding",
        r"holds up to rounding",
        [
            "A statement about a printed number that fails only where the printed value sits on its rounding "
            "boundary (the text says above a value the table prints, which may stand for a slightly larger one)."
        ],
    ),
    (
        "supported, not supported",
        r"not supported|supported",
        [
            "The verdicts of the package's own hypotheses: the decision rule registered with the "
            "hypothesis was met, or not. They say nothing about the paper."
        ],
    ),
    (
        "registered (a rule fixed before the data)",
        r"registered",
        [
            "A hypothesis or decision rule is registered when it is written into the package before the data "
            "that decide it exist; the date given is when the rule was fixed, so the rule could not be fitted "
            "to the outcome."
        ],
    ),
    (
        "discrepancy",
        r"discrepanc(?:y|ies)",
        [
            "The gap between the largest and second-largest attention logit of a head (",
            Ref("Definition 3.1"),
            "). The paper's definition takes the largest such gap over inputs of a length; ",
            Ref("Lemma F.1"),
            " needs the smallest positive one. The package checks both readings.",
        ],
    ),
    (
        "reading",
        r"readings?",
        [
            "One precise way to read a statement that the paper leaves open, such as the largest gap over "
            "inputs (max reading) or the smallest (min or Lemma reading). A claim names its reading; a "
            "statement false under every reasonable reading is false, one false under some is said so."
        ],
    ),
    (
        "average-hard attention",
        r"average-hard",
        [
            "Attention that gives equal weight to the positions with the largest logit and none to the "
            "others; with a unique largest logit it attends one position. The paper's constructions are "
            "exact under it and pass to softmax by ",
            Ref("Lemma F.1"),
            ".",
        ],
    ),
    (
        "valid input",
        r"valid inputs?",
        [
            "An input of the number task as ",
            Ref("Definition F.1"),
            " allows it, read as the package reads it: every integer points to a position inside the "
            "sequence.",
        ],
    ),
    (
        "proper input",
        r"proper inputs?|is proper",
        [
            "An input of the letter task on which Retrieval is defined (",
            Ref("Definition F.2"),
            "): at every position at most one earlier token starts with the letter the token asks for.",
        ],
    ),
    (
        "pure head, positional and symbolic scores, gamma",
        r"pure|purity|gamma",
        [
            "The paper scores each head by how much its attention follows positions (positional score) or "
            "contents (symbolic score) (",
            Ref("Appendix D"),
            "). A head is pure when one score is at least one minus gamma and the other at most gamma; the "
            "paper uses gamma one tenth and, in ",
            Ref("Figure 7"),
            ", one twentieth.",
        ],
    ),
    (
        "seed, recipe, member, stage",
        r"members?|stages?|recipes?",
        [
            "A seed is one training run of a recipe (the paper's model and task with one choice of training "
            "options). A member is one trained model in a study that pools several recipes; a stage is one "
            "saved point of a training run (a checkpoint)."
        ],
    ),
    (
        "over seeds (how a verdict is reached)",
        r"over seeds|over the seeds",
        [
            "An experiment is checked on each seed; the verdict is reproduced (or not) only when at least "
            "four of five seeds agree, otherwise undecided. A seed that holds or fails is said in those words."
        ],
    ),
    (
        "break (of length generalisation)",
        r"break(?:s)?\b",
        [
            "The shortest input length at which a trained model's accuracy over all hops falls below the "
            "threshold the claim names."
        ],
    ),
    (
        "answer-path layers",
        r"answer-path",
        [
            "The layers whose attention, at the last token, moves the answer toward the output: the layers "
            "whose top-attended position is the next hop's target."
        ],
    ),
    (
        "mass, lemma and relative readings of the premise",
        r"mass reading|lemma reading|relative reading",
        [
            "Three ways to predict where a model breaks from its attention: where the attention weight on "
            "the right position falls below what ",
            Ref("Lemma F.1"),
            " needs (mass), where the measured top-logit gap falls below what the lemma's inverse temperature "
            "needs (lemma), or where the top attention weight falls below half its value at the training "
            "length (relative).",
        ],
    ),
    (
        "arb ball",
        r"\barb\b|ball",
        [
            "An interval written as a centre and a radius, computed with the arb library's rigorous "
            "arithmetic: the true value lies inside it, so a comparison of two disjoint balls is certified."
        ],
    ),
    (
        "Wilson bound",
        r"Wilson",
        [
            "The Wilson score interval for an accuracy measured on finitely many inputs, at the ninety-five "
            "percent level. A rule on a point estimate (the measured accuracy) fails on one wrong answer too "
            "many; a rule on the Wilson upper bound fails only where even the interval lies below the threshold."
        ],
    ),
    (
        "Student t interval",
        r"Student t",
        [
            "The interval for a mean over seeds: the mean plus or minus the Student t quantile times the "
            "standard deviation over the square root of the number of seeds."
        ],
    ),
    (
        "Harrell's C and censoring",
        r"Harrell|censor(?:ed|ing)",
        [
            "Harrell's concordance: the share of comparable pairs of models whose predicted and measured "
            "breaks are in the same order. A break beyond the longest length measured is censored: known only "
            "to lie beyond it."
        ],
    ),
    (
        "sink-dominated and mixed heads",
        r"sink-dominated|mixed",
        [
            "Heads of a pretrained model left out of the positional or symbolic comparison: a sink-dominated "
            "head puts most attention on the first token; a mixed head is neither clearly positional nor "
            "clearly symbolic."
        ],
    ),
    (
        "frequency ID, RoPE plane",
        r"frequency ID|RoPE planes?|plane",
        [
            "Rotary position embedding rotates pairs of coordinates (planes), each at its own angle; the "
            "frequency ID numbers the planes from the fastest to the slowest (",
            Ref("Table 1"),
            ").",
        ],
    ),
    (
        "GGUF, four-bit weights",
        r"GGUF|4-bit|four-bit",
        [
            "A file format for a pretrained model's weights; the local models' heads were analysed on "
            "weights quantised to four bits in that format, not on the full-precision weights."
        ],
    ),
    (
        "parse rate, chat template",
        r"parse rate|chat template|unparseable",
        [
            "The parse rate is the share of a language model's replies from which an answer could be read at "
            "all; an unparseable reply counts as wrong. A chat template is the wrapping an instruction-tuned "
            "model was trained with; a model run without it sees its prompts as plain text."
        ],
    ),
]
