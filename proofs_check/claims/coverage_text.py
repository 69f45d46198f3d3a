"""Paper items decided from the paper's own text and numbers (issue 30, section 5).

* B1-formal / B1-formal-corrected: Appendix B.1's definition of the number task, read as
  written and with the position of the last hop restored, against the figures' reading (the
  package's ``solve_number``, which S2 checks on Figures 1 and 3), exhaustively on small inputs;
* F3B-proper: Figure 3B's printed input against Definition F.2's properness.

The items decided from printed numbers live in ``coverage_numbers`` and ``coverage_costs``; the
ones decided on the shipped trained results in ``coverage_trained``.  Appendix B.1's definition
is transcribed in ``theory.appendix_b1``.

Each check is a function of the data it decides on, so the tests can feed it a perturbed
definition, input or number and watch the outcome change.
"""

from __future__ import annotations

import itertools

from proofs_check.evidence.words import listed
from theory import paper_data
from theory.appendix_b1 import b1_as_written, b1_corrected, chain  # noqa: F401  (the definitions under test; tests read them here)
from theory.functions import solve_number

from ..proofs import foundations
from ..registry import Outcome, claim


def _answers(by_hops: dict) -> str:
    """The definition's {hop count: answer} in words: "C in 4 hops", or "no answer at any hop count"."""
    found = [f"{answer} in {hops} hops" for hops, answer in by_hops.items() if answer is not None]
    if found:
        return ", ".join(found)
    return f"no answer at any hop count {min(by_hops)}..{max(by_hops)}" if by_hops else "no answer"


SIZES = ((1, 1), (1, 3), (2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 3))  # (n1, n2); INT = [n1 + n2]


def _figure_reading(s: list, j: list):
    """(answer, hops) by the figures' reading, or None when the chain leaves the input."""
    try:
        return solve_number(s + j)
    except ValueError:
        return None


def b1_outcome(definition, sizes=SIZES, example=None) -> Outcome:
    """``definition`` ({HL: answer} of Appendix B.1) against the figures' reading on every input
    s_1..s_n1 j_1..j_n2 with distinct symbols and INT = [n1 + n2], for each (n1, n2) of ``sizes``;
    verified when it accepts every input the figures answer, at the figures' hop count, with the
    figures' answer, and accepts nothing else."""
    text, printed, hops = example or paper_data.WORKED_EXAMPLES[0][2:5]
    tokens = text.split()
    n1 = next(i for i, x in enumerate(tokens) if x.isdigit())
    s, j = tokens[:n1], [int(x) for x in tokens[n1:]]
    hops_taken = chain(j)
    k, jk, n2 = hops_taken[-1], j[hops_taken[-1] - 1], len(j)
    at_end = {
        "condition_2_as_written": f"n1 - j_kHL + 1 = {n1 - jk + 1} (allowed 1..{n1})",
        "f_as_written": f"s_(n2 - j_kHL + 1) = s_{n2 - jk + 1} = {s[n2 - jk] if 1 <= n2 - jk + 1 <= n1 else None}",
        "f_kept_position": f"s_(n1 + k_HL - j_kHL) = s_{n1 + k - jk} = {s[n1 + k - jk - 1] if 1 <= n1 + k - jk <= n1 else None}",
    }
    on_example = {
        "input": text,
        "n1": n1,
        "n2": n2,
        "chain_k": hops_taken,
        "k_HL": k,
        "j_kHL": jk,
        "at_chain_end": at_end,
        "figure_answer": printed,
        "figure_hops": hops,
        "definition_gives": definition(s, j),
    }
    rows, first_bad = [], None
    for n1_, n2_ in sizes:
        symbols = [f"s{i}" for i in range(1, n1_ + 1)]
        count = {
            "n1": n1_,
            "n2": n2_,
            "inputs": 0,
            "figure_answers": 0,
            "agree": 0,
            "wrong_answer": 0,
            "rejected": 0,
            "accepted_without_figure_answer": 0,
            "ambiguous": 0,
        }
        for js in itertools.product(range(1, n1_ + n2_ + 1), repeat=n2_):
            count["inputs"] += 1
            got, want = definition(symbols, list(js)), _figure_reading(symbols, list(js))
            count["ambiguous"] += len(set(got.values())) > 1
            if want is None:
                bad = bool(got)
                count["accepted_without_figure_answer"] += bad
            else:
                count["figure_answers"] += 1
                answer = got.get(want[1], "rejected")
                kind = (
                    "agree" if answer == want[0] else "rejected" if answer == "rejected" else "wrong_answer"
                )
                count[kind] += 1
                bad = kind != "agree" or len(got) > 1
            if bad and first_bad is None:
                first_bad = {
                    "input": " ".join(symbols + [str(x) for x in js]),
                    "definition_gives": got,
                    "figure_answer_and_hops": want,
                }
        rows.append(count)
    total = {k: sum(r[k] for r in rows) for k in rows[0] if k not in ("n1", "n2")}
    evidence = {
        "rule": "every input s_1..s_n1 j_1..j_n2 with distinct symbols and INT = [n1 + n2], for each (n1, n2) "
        f"in {list(SIZES) if sizes is SIZES else list(sizes)}: verified when the definition accepts "
        "exactly the inputs the figures' reading (theory.functions.solve_number) answers, at its hop "
        "count, with its answer; refuted on the first input where it does not",
        "figure_1": on_example,
        "per_size": rows,
        "total": total,
    }
    summary = (
        f"Figure 1 ({text}): chain k = {listed(hops_taken)} ends at k_HL = {k} (j_kHL = {jk}): "
        f"{at_end['condition_2_as_written']}, {at_end['f_as_written']}, {at_end['f_kept_position']}; the "
        f"definition gives {_answers(on_example['definition_gives'])}, the figure {printed} in {hops} "
        f"hops; on {total['inputs']} small inputs it agrees on {total['agree']} of "
        f"{total['figure_answers']} the figures answer ({total['wrong_answer']} wrong answers, "
        f"{total['rejected']} rejected) and accepts {total['accepted_without_figure_answer']} they do not"
    )
    if first_bad is None:
        return Outcome("verified", summary, evidence)
    return Outcome("refuted", summary, evidence, counterexample=first_bad)


@claim(
    "B1-formal",
    (
        "Appendix B.1's formal definition of the number task (condition 2: $n_1 - j_{k_{HL}} + 1 "
        r"\in \{1, \ldots, n_1\}$; $f_{\mathrm{NUM}} = s_{n_2 - j_{k_{HL}} + 1}$) gives the answer "
        "of the task as the figures define it (Figure 1: C B A 1 4 1 3 2 1 -> C, 4 hops)"
    ),
    "Appendix B.1; Figure 1",
    recorded="refuted",
    kind="statement",
    origin="paper",
)
def b1_formal(options):
    outcome = b1_outcome(b1_as_written)
    outcome.corrected = "B1-formal-corrected"
    return outcome


@claim(
    "B1-formal-corrected",
    (
        "Appendix B.1 with the last hop's position kept (the chain ends at the first $k_{HL}$ with "
        r"$k_{HL} - j_{k_{HL}} \le 0$; condition 2: $n_1 + k_{HL} - j_{k_{HL}} \in \{1, \ldots, "
        r"n_1\}$; $f_{\mathrm{NUM}} = s_{n_1 + k_{HL} - j_{k_{HL}}}$) gives the figures' answer and "
        "hop count on every input, and no answer where they have none"
    ),
    "corrects Appendix B.1",
    recorded="verified",
    kind="statement",
    origin="corrected",
    evidence=foundations.B1_CORRECTED,
)
def b1_formal_corrected(options):
    return b1_outcome(b1_corrected)


# -- Figure 3B -------------------------------------------------------------------------------------


def proper_outcome(text: str) -> Outcome:
    """Definition F.2 at every position of ``text``: proper when every ALPH x ALPH token has
    exactly one matching token (constructions' ``reference_where_defined`` runs F.2's own rule)."""
    from constructions.retrieval import letter_task
    from theory.functions import solve_letter, split_pair

    tokens = text.split()
    defined = letter_task(len(tokens)).reference_where_defined(tokens)
    undefined = [j for j, x in enumerate(defined) if x is None]
    shown = {
        j: {
            "token": tokens[j],
            "earlier_tokens_starting_with": sorted(
                {tokens[k] for k in range(j + 1) if split_pair(tokens[k])[0] == split_pair(tokens[j])[1]}
            ),
        }
        for j in undefined
    }
    answer, hops = solve_letter(tokens)
    evidence = {
        "rule": "Definition F.2: proper when every ALPH x ALPH token at position j has one matching token "
        "(the same token wherever its left letter equals j's right letter) at positions <= j",
        "input": text,
        "positions_without_a_unique_match": shown,
        "task_answer": [answer, hops],
    }
    said = (
        f"Retrieval is undefined at positions {listed(undefined)} (0-based): "
        + "; ".join(
            f"{v['token']} matches {', '.join(v['earlier_tokens_starting_with'])}" for v in shown.values()
        )
        if undefined
        else "every letter-letter token has a unique match"
    )
    summary = f"{said}; the chain from the query is still unique ({answer} in {hops} hops)"
    if undefined:
        return Outcome(
            "refuted", summary, evidence, counterexample={"position": undefined[0], **shown[undefined[0]]}
        )
    return Outcome("verified", summary, evidence)


@claim(
    "F3B-proper",
    "Figure 3B's printed input (e1 b2 e1 g6 a2 b2 e1 g6 be db ca ge eb hc dg fh eh) is proper "
    "(Definition F.2), so Retrieval, and the flow the figure draws from it, is defined at every position",
    "Figure 3B; Definition F.2",
    recorded="refuted",
    kind="statement",
    origin="paper",
)
def figure_3b_proper(options):
    return proper_outcome(paper_data.WORKED_EXAMPLES[3][2])
