"""The task's inputs as a pretrained LLM's tokens: token mapping, swap rule and batching for
``python -m training analyze --model`` (``training.analysis.llm_scores``).

Token mapping.  Each task token t ("a", "12", "c7", "bh") is tokenised on its own as it
stands in a space-separated prompt, with its leading space: ``tokenizer(" " + t)`` without
special tokens.  Every task token gets the space, the first included, so that a token's
model tokens never depend on where it stands (a swap must move contents, nothing else).
An input's model tokens are the special tokens the tokenizer puts before any text (its BOS,
if it adds one; none for SmolLM2), then the concatenation of its task tokens' pieces; no
end-of-text token, so the query's last model token is the last position.  Per task token
we keep its span of model positions.  SmolLM2's tokenizer splits a number into a space
token and one token per digit and some bigrams into two, so 17 task tokens become 25-33
model tokens.

Swap rule.  A swap exchanges two whole task tokens before the query (every model position
of one with the other's), positions fixed, the query token never swapped.  Two task tokens
of different model lengths cannot trade places without shifting every token between them,
which would move contents and positions at once; so only pairs of EQUAL model length are
swapped (``equal_length_pairs``), and the analysis reports how many of the 120 pairs each
input used.  The attention of the query on a task token is the sum of its attention on the
token's model positions; the score is read at the query's last model token.

Batching.  Rows are left-padded with the tokenizer's pad token (its EOS if it has none;
the value is irrelevant under the mask) so that every row's last model token is the last
column; ``attention_mask`` marks the real tokens and ``pad`` counts each row's padding.
``training.analysis.hf_adapters`` derives the position ids from the mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "token_pieces",
    "prefix_ids",
    "MappedInputs",
    "map_inputs",
    "equal_length_pairs",
    "pad_id_of",
    "SWAP_RULE",
]

SWAP_RULE = (
    "task tokens are tokenised one by one as ' ' + token (no special tokens) and concatenated after the "
    "tokenizer's own prefix (its BOS, if any); a swap exchanges two whole task tokens before the query, "
    "only pairs of equal model length (others would shift the tokens between them); attention on a task "
    "token is the sum over its model positions; scores are read at the query's last model token"
)


def _encode(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def token_pieces(tokenizer, vocab) -> dict[str, list[int]]:
    """Each task token's model ids: ``tokenizer(" " + token)`` without special tokens."""
    pieces = {token: _encode(tokenizer, " " + token) for token in vocab}
    empty = [token for token, ids in pieces.items() if not ids]
    if empty:
        raise ValueError(f"the tokenizer gives no tokens for the task token(s) {empty[:5]}")
    return pieces


def prefix_ids(tokenizer) -> list[int]:
    """The special tokens the tokenizer puts before any text (its BOS, if it adds one): the
    head of ``tokenizer(text)`` that ``tokenizer(text, add_special_tokens=False)`` lacks."""
    plain = _encode(tokenizer, " a")
    full = list(tokenizer(" a")["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start]
    return []


def pad_id_of(tokenizer) -> int:
    """Any valid id works under the mask; the tokenizer's pad token, else its EOS, else 0."""
    for name in ("pad_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0


@dataclass(frozen=True)
class MappedInputs:
    """Left-padded model inputs of task inputs: ``ids`` and ``attention_mask`` (B, T), ``pad``
    (B,) the padding of each row, ``spans`` (B, n_task, 2) each task token's [start, end) in
    the row WITHOUT its padding (add ``pad[i]`` for the padded column)."""

    ids: np.ndarray
    attention_mask: np.ndarray
    pad: np.ndarray
    spans: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, start: int, stop: int) -> MappedInputs:
        """Rows start..stop-1, re-padded to their own longest row (a batch)."""
        pad = self.pad[start:stop]
        trim = int(pad.min())
        return MappedInputs(
            self.ids[start:stop, trim:],
            self.attention_mask[start:stop, trim:],
            pad - trim,
            self.spans[start:stop],
        )


def map_inputs(task_tokens, pieces: dict, prefix=(), pad_id: int = 0) -> MappedInputs:
    """Model inputs of task inputs (a list of token-string lists), by the mapping above."""
    rows, spans = [], []
    for tokens in task_tokens:
        row, row_spans = list(prefix), []
        for token in tokens:
            row_spans.append((len(row), len(row) + len(pieces[token])))
            row.extend(pieces[token])
        rows.append(row)
        spans.append(row_spans)
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, width - len(row) :], mask[i, width - len(row) :] = row, 1
    return MappedInputs(ids, mask, width - mask.sum(1), np.asarray(spans, dtype=np.int64))


def equal_length_pairs(spans) -> np.ndarray:
    """(P, 2) task-token pairs (a < b, both before the query) whose model lengths are equal:
    the swaps the rule allows for one input (``spans``: (n_task, 2))."""
    lengths = np.asarray(spans)[:-1, 1] - np.asarray(spans)[:-1, 0]
    a, b = np.triu_indices(len(lengths), k=1)
    keep = lengths[a] == lengths[b]
    return np.stack([a[keep], b[keep]], axis=1)
