"""The prompts put to LLMs on the 1-hop number and letter tasks (Appendix H, Table 2).

Each prompt has Table 2's three parts: natural-language instructions (the rules and
the single-token output requirement), worked examples with their answers, and the
query ``Task: Input: "<sequence>"`` followed by ``Output:``.  The wording is the
paper's, with two transcription decisions, both forced by the PDF text:

* Lines that the PDF wraps inside a paragraph are joined into one line; blank
  lines separate paragraphs, rules and examples as printed.
* The PDF shows the number rules' variable as ``‘n‘`` (two identical opening
  quotes), which is how LaTeX renders a Markdown code span; we write `` `n` ``.

The number prompt labels its examples ``Example 1:``..``Example 3:``; the letter
prompt has a single ``Example:`` label before the first of its three examples, as
printed.  Every example's answer is checked against ``theory.functions`` by the
tests (and by :func:`check_worked_examples`).
"""

from __future__ import annotations

from collections.abc import Sequence

from theory.functions import solve_letter, solve_number

__all__ = ["WORKED_EXAMPLES", "INSTRUCTIONS", "build_prompt", "check_worked_examples", "SOLVERS"]

SOLVERS = {"number": solve_number, "letter": solve_letter}

# (input sequence, answer) exactly as in Table 2.
WORKED_EXAMPLES = {
    "number": (
        ("a z b y c x d w 5", "y"),
        ("v t k g n k o h m p 4", "o"),
        ("w y b c v t r i p p 10", "w"),
    ),
    "letter": (
        ("a4 b3 c2 d1 fc", "c2"),
        ("w9 t7 l5 g1 n4 l6 u9 k7 m5 p8 gk", "k7"),
        ("q5 r7 x4 t7 f4 k7 q4 u2 u3 r5 ex", "x4"),
    ),
}

_OUTPUT_RULE = (
    "Output just the target token and absolutely nothing else. Do not include any explanations or formatting."
)
_OPENING = (
    "You will be given a sequence of space-separated tokens. Your task is to find the target "
    "token by following these rules:"
)

INSTRUCTIONS = {
    "number": "\n".join(
        [
            _OPENING,
            "",
            "1. Identify the very last token in the sequence, which will always be a number `n`.",
            "2. Move `n` positions to the left from that final token.",
            "3. The token you land on is the target token.",
            "",
            _OUTPUT_RULE,
        ]
    ),
    "letter": "\n".join(
        [
            _OPENING,
            "",
            "1. Start with the very last token in the sequence.",
            "2. Identify the second character of that token.",
            "3. Scan backwards (to the left) to find the token that starts with that exact character; "
            "there is only one token that fulfills this condition.",
            "4. This is your target token.",
            "",
            _OUTPUT_RULE,
        ]
    ),
}


def _example_block(task: str) -> str:
    blocks = []
    for i, (sequence, answer) in enumerate(WORKED_EXAMPLES[task], start=1):
        if task == "number":
            label = f"Example {i}:\n"
        else:  # Table 2's letter prompt labels only the first example
            label = "Example:\n" if i == 1 else ""
        blocks.append(f'{label}Input: "{sequence}"\nOutput: {answer}')
    return "\n\n".join(blocks)


def _check_tokens(tokens: Sequence[str]) -> list[str]:
    if isinstance(tokens, str):
        raise ValueError("expected a sequence of token strings, got one string; split it first")
    tokens = list(tokens)
    if not tokens:
        raise ValueError("the sequence is empty")
    for token in tokens:
        # A token with a space or quote would change how the prompt's sequence reads.
        if not isinstance(token, str) or not token or any(c.isspace() or c in '"' for c in token):
            raise ValueError(f"token {token!r} must be a non-empty string without whitespace or quotes")
    return tokens


def build_prompt(task: str, tokens: Sequence[str]) -> str:
    """The Table 2 prompt for ``task`` with ``tokens`` (window, then the query) as the query sequence."""
    if task not in INSTRUCTIONS:
        raise ValueError(f"unknown task {task!r}; allowed: number, letter")
    sequence = " ".join(_check_tokens(tokens))
    return f'{INSTRUCTIONS[task]}\n\n{_example_block(task)}\n\nTask:\nInput: "{sequence}"\nOutput:'


def check_worked_examples() -> None:
    """Raise if a worked example's printed answer is not the 1-hop answer by theory.functions."""
    for task, examples in WORKED_EXAMPLES.items():
        for sequence, answer in examples:
            solved = SOLVERS[task](sequence.split())
            if solved != (answer, 1):
                raise AssertionError(
                    f"{task} example {sequence!r}: printed {answer!r}, solver gives {solved}"
                )
