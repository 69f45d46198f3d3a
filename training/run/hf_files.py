"""A run folder that Hugging Face tools load as it stands: tokenizer files and a model card.

A run's ``config.json`` and ``model.safetensors`` are already those of
``transformers.GPTJForCausalLM``; what ``AutoTokenizer.from_pretrained(RUN)`` (and so
TransformerLens' bridge) lacked was a tokenizer.  ``write_tokenizer_files`` writes one, the
only implementation, called by ``train`` for every new run (``runsetup.fresh_files``) and by
this module's command for runs made before it:

- ``tokenizer.json``: a ``tokenizers`` WordLevel model over the task's vocabulary in id
  order, split on whitespace, so ``"a b 3"`` encodes to the ids ``Task.encode(["a", "b",
  "3"])`` gives (tests/test_hf_files.py checks generated inputs both ways).  The model has no
  BOS, EOS or padding token.  An unknown token becomes ``<unk>``, the one entry past the
  task's vocabulary (id V = vocab_size): the model refuses that id (an index error, like
  ``Task.encode``'s error) instead of reading another token in its place, while tools that
  probe a tokenizer with arbitrary text still can (TransformerLens encodes "a", which the
  letter task lacks).
- ``tokenizer_config.json``: names the class (``PreTrainedTokenizerFast``), which reads
  ``tokenizer.json`` only.

Why ``vocab.json`` (the package's list of tokens) keeps its name: GPT-J's default tokenizer
class is GPT-2's BPE, which reads ``vocab.json`` as a BPE vocabulary and fails on our list;
that is what ``AutoTokenizer`` did before.  With ``tokenizer_config.json`` naming the class,
``vocab.json`` is never opened (tested), and every run already made stays readable.

The model card (``README.md``, ``training.run.model_card``) is written by the command only:
it reports the run's measured accuracy, which exists after ``evaluate``.  A README.md that is
not such a card is never replaced.

    python -m training.run.hf_files RUN [RUN ...] [--replace-shipped]

Each RUN is checked first (a run folder, of a known task, writable; under the shipped results
only with --replace-shipped); a bad one is one line on stderr, exit status 2, nothing written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from theory.io.cli import OneLineParser, UsageError, interrupted
from theory.io.files import atomic_write_json, atomic_write_text
from theory.io.output_policy import REPLACE_SHIPPED, RUN_FOLDER, check_output, folder_kind
from training.tasks.definitions import TASKS, get_task, load_vocab

from .model_card import CARD, is_card, model_card

__all__ = [
    "TOKENIZER_FILES",
    "CARD",
    "tokenizer_json",
    "tokenizer_config",
    "write_tokenizer_files",
    "task_of_run",
    "write_hf_files",
    "main",
]

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
UNK = "<unk>"
PROG = "python -m training.run.hf_files"
DESCRIPTION = (
    "Write the Hugging Face tokenizer files and the model card into existing training runs, so that "
    "AutoTokenizer and AutoModelForCausalLM load each run folder as it stands."
)


def tokenizer_json(vocab: list[str]) -> dict:
    """The ``tokenizers`` serialisation of a WordLevel tokenizer over ``vocab`` (ids in list order)."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None,
        "decoder": None,
        "model": {
            "type": "WordLevel",
            "vocab": {
                **{token: i for i, token in enumerate(vocab)},
                UNK: len(vocab),
            },  # past the embedding: module doc
            "unk_token": UNK,
        },
    }


def tokenizer_config(n_positions: int) -> dict:
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": n_positions,
        "unk_token": UNK,
        "clean_up_tokenization_spaces": False,
    }


def write_tokenizer_files(folder, task, n_positions: int) -> None:
    """``tokenizer.json`` and ``tokenizer_config.json`` of ``task`` in ``folder``, atomically."""
    folder = Path(folder)
    atomic_write_json(
        folder / TOKENIZER_FILES[0],
        tokenizer_json(get_task(task).vocab),
        indent=1,
        ensure_ascii=False,
        trailing_newline=True,
        parents=False,
    )
    atomic_write_json(
        folder / TOKENIZER_FILES[1],
        tokenizer_config(n_positions),
        indent=1,
        trailing_newline=True,
        parents=False,
    )


def task_of_run(run) -> str:
    """The task whose vocabulary ``RUN/vocab.json`` is (UsageError otherwise)."""
    for task in TASKS:
        try:
            load_vocab(Path(run) / "vocab.json", task)
            return task
        except ValueError:
            continue
    raise UsageError(f"{Path(run) / 'vocab.json'} is the vocabulary of neither task ({', '.join(TASKS)})")


def _check_run(run: Path, replace_shipped: bool) -> str:
    """The run's task, after the checks of the module doc (UsageError, one line)."""
    check_output(run, "RUN", kind="folder", own=[run], replace_shipped=replace_shipped)
    if folder_kind(run) != RUN_FOLDER or not (run / "config.json").is_file():
        raise UsageError(f"RUN {run} is not the folder of a training run (no metrics.jsonl or config.json)")
    card = run / CARD
    if os.path.lexists(card) and not is_card(card):
        raise UsageError(
            f"RUN {run}: {card} exists and is not a model card this command wrote; it is left alone: "
            f"move it away first"
        )
    return task_of_run(run)


def write_hf_files(run) -> list[Path]:
    """Tokenizer files and model card of the existing run ``run`` (unchecked: see ``main``)."""
    from .weights import read_config

    run = Path(run)
    task = task_of_run(run)
    write_tokenizer_files(run, task, read_config(run).n_positions)
    atomic_write_text(run / CARD, model_card(run, task), parents=False)
    return [run / name for name in (*TOKENIZER_FILES, CARD)]


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a training run folder (train --out)")
    parser.add_argument(
        REPLACE_SHIPPED,
        action="store_true",
        help="allow the runs shipped under training/reference (to regenerate their files on purpose)",
    )
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        runs = [Path(run) for run in args.runs]
        for run in runs:  # every run checked before any is written
            _check_run(run, args.replace_shipped)
        for run in runs:
            for path in write_hf_files(run):
                print(path)
    except (UsageError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted(PROG)
    return 0


if __name__ == "__main__":
    sys.exit(main())
