"""The LLM evaluation of Appendix H: Table 2 prompts, datasets, answer parsing, the
Table 3 reference, the HF backend on a tiny local model and the HTTP backend against
a local server (127.0.0.1 only; nothing is downloaded)."""

import json
import re
import string
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from theory.functions import is_integer_token, solve_letter, solve_number
from theory.paper_data import TABLE3, TABLE3_LENGTHS, TABLE3_MODELS, reference_curve
from training.__main__ import main
from training.llm.backends import BackendError, HFBackend, OpenAIBackend, Reply, first_line
from training.llm.evaluate import evaluate, make_items, parse_answer, score, summarize
from training.llm.prompts import INSTRUCTIONS, WORKED_EXAMPLES, build_prompt, check_worked_examples
from training.llm.tasks import LLM_SEEDS, LLM_TARGET_WINDOWS, one_hop_llm

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "reference" / "paper-2605.31558.txt"
SOLVERS = {"number": solve_number, "letter": solve_letter}


def normalised(text: str) -> str:
    """Whitespace collapsed and the PDF's quote glyphs folded, to compare wording."""
    return " ".join(re.sub("[\u2018\u2019`]", "'", text).split())


# -- prompts (Table 2) ---------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["number", "letter"])
def test_prompt_has_table2_structure_and_correct_examples(task):
    check_worked_examples()
    tokens = one_hop_llm(task, 12, 1, seed=0)[0][0]
    prompt = build_prompt(task, tokens)
    assert prompt.startswith(INSTRUCTIONS[task] + "\n\n")
    assert "Output just the target token and absolutely nothing else." in prompt
    pairs = re.findall(r'Input: "([^"]*)"\nOutput:(.*)', prompt)
    assert len(pairs) == 4 and pairs[-1] == (" ".join(tokens), "")  # three examples, then the query
    assert prompt.endswith(f'Task:\nInput: "{" ".join(tokens)}"\nOutput:')
    for (sequence, answer), expected in zip(pairs[:3], WORKED_EXAMPLES[task]):
        assert (sequence, answer.strip()) == expected
        assert SOLVERS[task](sequence.split()) == (answer.strip(), 1)
    labels = re.findall(r"^Example[^\n]*:$", prompt, flags=re.M)
    assert labels == (["Example 1:", "Example 2:", "Example 3:"] if task == "number" else ["Example:"])


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available")
def test_prompt_wording_is_the_papers():
    text = PAPER.read_text(encoding="utf-8")
    table2 = normalised(text[text.index("Task     Prompt") : text.index("Table 2: Prompts used")])
    for task in ("number", "letter"):
        for line in INSTRUCTIONS[task].splitlines():
            assert normalised(line) in table2, line
        for sequence, answer in WORKED_EXAMPLES[task]:
            assert f'Input: "{sequence}"' in table2 and f"Output: {answer}" in table2


def test_prompt_rejects_bad_tokens():
    for bad in ("a b 1", ["a b", "1"], ['a"', "1"], []):
        with pytest.raises(ValueError):
            build_prompt("number", bad)
    with pytest.raises(ValueError):
        build_prompt("nope", ["a", "1"])


# -- datasets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["number", "letter"])
def test_items_cover_lengths_and_seeds_and_are_resolved(task):
    items = make_items(task, LLM_TARGET_WINDOWS, LLM_SEEDS, count=3)
    assert len(items) == len(LLM_TARGET_WINDOWS) * len(LLM_SEEDS) * 3
    assert {(i.length, i.seed) for i in items} == {(L, s) for L in LLM_TARGET_WINDOWS for s in LLM_SEEDS}
    for item in items:
        assert len(item.tokens) == item.length + 1
        assert SOLVERS[task](list(item.tokens)) == (item.answer, 1)
    first = [i for i in items if (i.length, i.seed) == (48, 3)]
    assert ([list(i.tokens) for i in first], [i.answer for i in first]) == one_hop_llm(task, 48, 3, 3)
    assert items == make_items(task, LLM_TARGET_WINDOWS, LLM_SEEDS, count=3)


def test_items_reject_bad_arguments():
    for lengths, seeds in (([], [0]), ([12, 12], [0]), ([0], [0]), ([12], [-1]), ([12], [True])):
        with pytest.raises(ValueError):
            make_items("number", lengths, seeds, 1)


# -- parsing and scoring ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, task, parsed",
    [
        ("y", "number", "y"),
        ("  y\n", "number", "y"),
        ('"y"', "number", "y"),
        ("'y'", "number", "y"),
        ("`y`", "number", "y"),
        ("y.", "number", "y"),
        ('"y".', "number", "y"),
        ('"y."', "number", "y"),
        ("\u201cy\u201d", "number", "y"),
        ("k7", "letter", "k7"),
        (" 'k7'. ", "letter", "k7"),
        ("y z", "number", None),
        ("Output: y", "number", None),
        ("", "number", None),
        ("Y", "number", None),
        ("k7 is the answer", "letter", None),
        ("k", "letter", None),
        ("k0", "letter", None),
        ("5", "number", None),
        ('"y', "number", None),
        ("yy", "number", None),
        ("k7\nk7", "letter", None),
    ],
)
def test_parse_answer(reply, task, parsed):
    assert parse_answer(reply, task) == parsed


def test_summary_excludes_failed_items_and_counts_unparseable():
    items = make_items("number", [12], [0, 1], count=2)
    replies = [
        Reply(items[0].answer),
        Reply("nonsense words"),
        Reply(None, failed_calls=3, error="timeout"),
        Reply(items[3].answer, failed_calls=1),
    ]
    (row,) = summarize(score(items, replies), [12], [0, 1])
    assert row["per_seed"] == [0.5, 1.0] and row["accuracy_mean"] == 0.75 and row["accuracy_std"] == 0.25
    assert (row["n_items"], row["n_scored"], row["n_correct"]) == (4, 3, 2)
    assert (row["n_unparseable"], row["n_failed_items"], row["n_failed_calls"]) == (1, 1, 4)
    (row,) = summarize(score(items, replies), [12], [0, 1], ddof=1)
    assert row["accuracy_std"] == pytest.approx(0.5**0.5 / 2)
    (row,) = summarize(score(items, [Reply(None, 1)] * 4), [12], [0, 1])
    assert row["accuracy_mean"] is None and row["per_seed"] == [None, None] and row["n_failed_items"] == 4


# -- Table 3 -----------------------------------------------------------------------------------------


def test_table3_is_complete():
    for model in TABLE3_MODELS:
        for task in ("number", "letter"):
            assert sorted(TABLE3[model][task]) == list(TABLE3_LENGTHS)
            curve = reference_curve(model, task)
            assert len(curve["accuracy_mean"]) == len(TABLE3_LENGTHS) == 10
            assert all(0 <= m <= 1 and 0 <= s <= 0.1 for m, s in TABLE3[model][task].values())
    assert TABLE3["Claude Sonnet 3.7"]["letter"][32] == (0.88, 0.02)  # "above 0.88" in Section 3.7


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available")
def test_table3_matches_the_paper_text():
    text = PAPER.read_text(encoding="utf-8")
    block = text[text.index("Length    GPT 5.4") : text.index("Table 3: Mean accuracy")]
    rows = {}
    for line in block.splitlines()[2:]:
        numbers = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]
        if numbers:
            rows[int(numbers[0])] = numbers[1:]
    assert tuple(rows) == TABLE3_LENGTHS
    for length, cells in rows.items():
        expected = []
        for model in TABLE3_MODELS:
            for task in ("number", "letter"):
                expected += TABLE3[model][task][length]
        assert cells == expected, length


# -- HF backend on a tiny local model ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pre = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"[^\S\n]+"), "removed"),
            pre_tokenizers.Split("\n", "isolated"),
            pre_tokenizers.Punctuation("isolated"),
        ]
    )
    words = ["[UNK]", "[PAD]", "[EOS]"] + list(string.ascii_lowercase)
    words += [a + d for a in string.ascii_lowercase for d in "123456789"]
    words += [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase] + [
        str(i) for i in range(1, 301)
    ]
    for task in ("number", "letter"):
        words += [w for w, _ in pre.pre_tokenize_str(build_prompt(task, ["a1", "1"]))]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )


def tiny_gpt2(tokenizer, seed=0):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        tie_word_embeddings=False,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config).eval()


def test_hf_backend_batches_like_unpadded_greedy_decoding(tiny_tokenizer):
    import torch

    model = tiny_gpt2(tiny_tokenizer)
    items = make_items("letter", [12, 16], [0], count=3)
    prompts = [item.prompt for item in items]
    done, arrived = [], {}
    replies = HFBackend(model, tiny_tokenizer, max_new_tokens=3, batch_size=4).complete(
        prompts, done.append, on_reply=arrived.__setitem__
    )
    assert sum(done) == len(prompts) and [arrived[i] for i in range(len(prompts))] == replies
    for prompt, reply in zip(prompts, replies):
        ids = torch.tensor([tiny_tokenizer(prompt)["input_ids"]])
        for _ in range(3):  # greedy by hand, one prompt at a time, no padding
            with torch.no_grad():
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        new = ids[0, -3:].tolist()
        if tiny_tokenizer.eos_token_id in new:
            new = new[: new.index(tiny_tokenizer.eos_token_id)]
        raw = tiny_tokenizer.decode(new, skip_special_tokens=True)
        assert reply.raw == raw and reply.text == first_line(raw) and reply.failed_calls == 0


def constant_model(tokenizer, token: str):
    """A GPT-2 whose greedy continuation is always ``token``: the final LayerNorm
    outputs a constant vector and only ``token``'s output row is non-zero."""
    import torch

    model = tiny_gpt2(tokenizer)
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.fill_(1.0)
        model.lm_head.weight.zero_()
        model.lm_head.weight[tokenizer.convert_tokens_to_ids(token)] = 1.0
    return model


def test_hf_backend_scores_a_model_that_always_says_y(tiny_tokenizer):
    model = constant_model(tiny_tokenizer, "y")
    backend = HFBackend(model, tiny_tokenizer, name="always-y", max_new_tokens=1, batch_size=8)
    results, records = evaluate(backend, "number", [12, 16], [0, 1], count=10)
    assert results["model"] == "always-y" and results["backend"] == "hf"
    for row in results["per_length"]:
        mine = [r for r in records if r["length"] == row["length"]]
        assert all(r["reply"] == "y" for r in mine)
        assert row["per_seed"] == [
            sum(r["answer"] == "y" for r in mine if r["seed"] == s) / 10 for s in (0, 1)
        ]
        assert (row["n_scored"], row["n_unparseable"], row["n_failed_items"]) == (20, 0, 0)
    backend.max_new_tokens = 3  # "y y y" is not a single token
    results, _ = evaluate(backend, "number", [12], [0], count=4)
    assert results["per_length"][0]["n_unparseable"] == 4 and results["per_length"][0]["accuracy_mean"] == 0


def test_hf_backend_cuts_raw_completions_at_a_newline_but_not_chat_turns(tiny_tokenizer):
    model = constant_model(tiny_tokenizer, "\n")
    prompt = make_items("number", [12], [0], count=1)[0].prompt
    with pytest.raises(ValueError, match="chat template"):
        HFBackend(model, tiny_tokenizer, chat_template=True)
    (raw,) = HFBackend(model, tiny_tokenizer, max_new_tokens=2).complete([prompt])
    assert (raw.raw, raw.text) == ("\n \n", "")
    tiny_tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    try:
        (chat,) = HFBackend(model, tiny_tokenizer, max_new_tokens=2, chat_template=True).complete([prompt])
    finally:
        tiny_tokenizer.chat_template = None
    assert chat.text == chat.raw == "\n \n"  # the turn is kept whole: not a single token


# -- OpenAI-compatible backend against a local server -------------------------------------------------

# Hostile reply bodies (a model name "<key>-<tag>" gets one) and the field each message must name.
HOSTILE_REPLIES = {
    "deep": (
        b'{"choices": [{"message": {"content": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}]}",
        "nested deeper",
    ),
    "choicesastext": (b'{"choices": "y"}', "field choices: expected a list, got a string"),
    "nochoices": (b'{"choices": []}', "field choices: [] is not allowed; expected a non-empty list"),
    "contentnumber": (
        b'{"choices": [{"message": {"content": 7}}]}',
        "field choices[0].message.content: expected a string, got an integer",
    ),
    "truncatedjson": (b'{"choices": [{"message": {"content": "y', "not valid JSON"),
    "latin1": ('{"choices": [{"message": {"content": "\xe9"}}]}'.encode("latin-1"), "not UTF-8"),
}


class ChatHandler(BaseHTTPRequestHandler):
    """Behaviour chosen by the request's model name, ``<behaviour>-<unique tag>``."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][0]["content"]
        server = self.server
        with server.lock:
            server.requests.append((dict(self.headers), body))
            key = (body["model"], prompt)
            server.calls[key] = calls = server.calls.get(key, 0) + 1
            budget = server.budget.get(body["model"])  # calls left before the key is revoked
            if budget is not None:
                server.budget[body["model"]] = budget - 1
        if budget is not None and budget <= 0:
            return self.send(401, b"{}")
        sequence = prompt.rsplit('Input: "', 1)[1].split('"', 1)[0].split()
        answer = (solve_number if is_integer_token(sequence[-1]) else solve_letter)(sequence)[0]
        wrong = chr((ord(answer[0]) - 96) % 26 + 97) + answer[1:]
        behaviour = body["model"].split("-")[0]
        if behaviour == "flaky" and calls <= 2:
            return self.send(500 if calls == 1 else 429, b"busy", {"Retry-After": "3"} if calls == 2 else {})
        if behaviour == "malformed":
            return self.send(200, b'{"choices": [')
        if behaviour in HOSTILE_REPLIES:
            return self.send(200, HOSTILE_REPLIES[behaviour][0])
        if behaviour == "hangup":  # close without a reply: the client sees RemoteDisconnected
            self.close_connection = True
            return
        if behaviour == "truncated":  # fewer bytes than announced: the client sees IncompleteRead
            self.close_connection = True
            return self.send(200, b'{"choices": [', {"Content-Length": "1000"})
        if behaviour == "slow":
            time.sleep(0.6)
        statuses = {"auth": 401, "bad": 400, "unavailable": 503}
        if behaviour in statuses:
            return self.send(statuses[behaviour], b"{}")
        content = {"wrong": wrong, "quoted": f'"{answer}".', "null": None}.get(behaviour, answer)
        self.send(
            200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        )

    def send(self, status, payload, headers=()):
        self.send_response(status)
        headers = {"Content-Length": str(len(payload)), **dict(headers)}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(payload)
        except OSError:  # the client gave up (timeout test)
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    httpd.daemon_threads, httpd.block_on_close = True, False
    httpd.lock, httpd.requests, httpd.calls, httpd.budget = threading.Lock(), [], {}, {}
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def api(server, behaviour, **options):
    options = {"backoff": 0.0, "api_key_env": None, "sleep": lambda seconds: None, **options}  # no real waits
    return OpenAIBackend(
        f"{behaviour}-{uuid.uuid4().hex[:8]}", base_url=f"http://127.0.0.1:{server.server_port}/v1", **options
    )


@pytest.mark.parametrize(
    "behaviour, options, accuracy, failed_calls_per_item, failed",
    [
        ("correct", {}, 1.0, 0, False),
        ("wrong", {}, 0.0, 0, False),
        ("quoted", {}, 1.0, 0, False),
        ("flaky", {"max_attempts": 3}, 1.0, 2, False),
        ("flaky", {"max_attempts": 2}, None, 2, True),
        ("malformed", {"max_attempts": 3}, None, 3, True),
        ("null", {"max_attempts": 2}, None, 2, True),
        ("hangup", {"max_attempts": 2}, None, 2, True),
        ("truncated", {"max_attempts": 2}, None, 2, True),
        ("bad", {"max_attempts": 4}, None, 1, True),
        ("slow", {"max_attempts": 2, "timeout": 0.2}, None, 2, True),
    ],
)
def test_openai_backend_counts_every_outcome(
    server, behaviour, options, accuracy, failed_calls_per_item, failed
):
    count = 2 if behaviour == "slow" else 3
    results, records = evaluate(api(server, behaviour, **options), "letter", [12], [0], count=count)
    (row,) = results["per_length"]
    assert row["accuracy_mean"] == accuracy and row["n_items"] == count
    assert row["n_failed_calls"] == failed_calls_per_item * count
    assert (row["n_failed_items"], row["n_scored"]) == ((count, 0) if failed else (0, count))
    assert row["n_unparseable"] == 0
    if failed:
        assert all(r["correct"] is None and r["error"] for r in records)


def test_openai_backend_request_backoff_and_fatal_errors(server, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    waits = []
    backend = api(
        server,
        "flaky",
        max_attempts=3,
        backoff=0.5,
        workers=3,
        api_key_env="TEST_LLM_KEY",
        max_tokens=7,
        max_tokens_field="max_completion_tokens",
        extra_body={"reasoning_effort": "none"},
        sleep=waits.append,
    )
    prompts = [item.prompt for item in make_items("number", [16], [1], count=4)]
    replies = backend.complete(prompts)
    assert [r.text for r in replies] == [solve_number(p.rsplit('"', 2)[1].split())[0] for p in prompts]
    assert sorted(waits) == [0.5] * 4 + [3.0] * 4  # doubling backoff, then the 429's Retry-After
    headers, body = next((h, b) for h, b in server.requests if b["model"] == backend.model)
    assert headers["Authorization"] == "Bearer sk-test"
    assert (
        body["temperature"] == 0 and body["max_completion_tokens"] == 7 and body["reasoning_effort"] == "none"
    )
    assert "sk-test" not in json.dumps(backend.describe())
    with pytest.raises(BackendError, match="401"):
        api(server, "auth").complete(prompts[:1])
    dead = OpenAIBackend("x", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_attempts=2, backoff=0)
    assert dead.complete(prompts[:1])[0].failed_calls == 2  # connection refused: retried, then failed


def test_cli_writes_results_json(server, tmp_path, capsys):
    out, replies = tmp_path / "r.json", tmp_path / "r.jsonl"
    base = [
        "llm",
        "--backend",
        "openai",
        "--base-url",
        f"http://127.0.0.1:{server.server_port}/v1",
        "--api-key-env",
        "UNSET_TEST_VAR",
        "--task",
        "letter",
        "--lengths",
        "12,16",
        "--seeds",
        "0,1",
        "--count",
        "2",
        "--backoff",
        "0",
        "--json",
        str(out),
    ]
    assert main(base + ["--model", "correct-cli", "--name", "Local", "--replies", str(replies)]) == 0
    results = json.loads(out.read_text())
    assert (results["model"], results["backend"], results["task"]) == ("Local", "openai", "letter")
    assert results["lengths"] == [12, 16] and results["seeds"] == [0, 1]
    assert [row["accuracy_mean"] for row in results["per_length"]] == [1.0, 1.0]
    assert results["settings"]["count_per_length_and_seed"] == 2
    assert len(replies.read_text().splitlines()) == 8
    assert main(base + ["--model", "auth-cli"]) == 1 and "401" in capsys.readouterr().err
    assert main(base + ["--model", "correct-cli", "--lengths", "0"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.jsonl"]  # no temporary files left


def test_cli_hf_backend_loads_a_local_directory(tiny_tokenizer, tmp_path):
    model_dir, out = tmp_path / "tiny", tmp_path / "hf.json"
    constant_model(tiny_tokenizer, "y").save_pretrained(model_dir)
    tiny_tokenizer.save_pretrained(model_dir)
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(model_dir),
        "--task",
        "number",
        "--lengths",
        "12",
        "--seeds",
        "0",
        "--count",
        "5",
        "--max-new-tokens",
        "1",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]
    assert main(args) == 0
    results = json.loads(out.read_text())
    assert results["backend"] == "hf" and results["settings"]["backend"]["chat_template"] is False
    assert results["per_length"][0]["n_scored"] == 5 and results["per_length"][0]["n_unparseable"] == 0
    assert main(args[:4] + [str(tmp_path / "missing")] + args[5:]) == 2
    replies = ["--replies", str(tmp_path / "hf.jsonl")]
    assert main(args + replies) == 0 and json.loads(out.read_text())["summary"]["n_resumed"] == 0
    assert main(args + replies) == 0 and json.loads(out.read_text())["summary"]["n_resumed"] == 5
    assert json.loads(out.read_text())["per_length"] == results["per_length"]


def test_cli_hf_backend_decodes_raw_by_default_even_with_a_chat_template(tiny_tokenizer, tmp_path):
    """An instruct model under its chat template explains instead of answering (SmolLM2-135M:
    0% parseable, training.llm.decoding), so ``auto`` no longer applies the template."""
    model_dir, out = tmp_path / "tiny", tmp_path / "hf.json"
    constant_model(tiny_tokenizer, "y").save_pretrained(model_dir)
    tiny_tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    try:
        tiny_tokenizer.save_pretrained(model_dir)
    finally:
        tiny_tokenizer.chat_template = None
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(model_dir),
        "--task",
        "number",
        "--lengths",
        "12",
        "--seeds",
        "0,1",
        "--count",
        "3",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]
    assert main(args) == 0
    results = json.loads(out.read_text())
    settings = results["settings"]["backend"]
    assert (settings["chat_template"], settings["max_new_tokens"]) == (False, 8)
    assert results["per_length"][0]["parse_rate"] == 0  # "y y y ..." is not one token
    assert main(args + ["--max-new-tokens", "1"]) == 0
    row = json.loads(out.read_text())["per_length"][0]
    assert row["parse_rate"] == 1 and row["parse_rate_per_seed"] == [1, 1]
    assert main(args + ["--chat-template", "on"]) == 0
    settings = json.loads(out.read_text())["settings"]["backend"]
    assert (settings["chat_template"], settings["max_new_tokens"]) == (True, 32)


# -- the llm command survives misuse (issue 13) ------------------------------------------------------


def llm_args(port, model, out, *extra):
    """A small openai-backend run: 8 items (lengths 12 and 16, seeds 0 and 1, 2 each)."""
    return [
        "llm",
        "--backend",
        "openai",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--api-key-env",
        "UNSET_TEST_VAR",
        "--task",
        "letter",
        "--lengths",
        "12,16",
        "--seeds",
        "0,1",
        "--count",
        "2",
        "--backoff",
        "0",
        "--max-attempts",
        "1",
        "--model",
        model,
        "--json",
        str(out),
        *extra,
    ]


def calls_to(server, model) -> int:
    with server.lock:
        return sum(n for (m, _), n in server.calls.items() if m == model)


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("python -m training llm: error: "), err
    return err


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: connections are refused


@pytest.mark.parametrize(
    "where", ["json is a folder", "replies is a folder", "json folder missing", "same file"]
)
def test_cli_checks_outputs_before_any_call(server, tmp_path, capsys, where):
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    folder = tmp_path / "folder"
    folder.mkdir()
    out, replies = {
        "json is a folder": (folder, replies),
        "replies is a folder": (out, folder),
        "json folder missing": (tmp_path / "no" / "r.json", replies),
        "same file": (out, out),
    }[where]
    assert main(llm_args(server.server_port, model, out, "--replies", str(replies))) == 2
    one_error_line(capsys)
    assert calls_to(server, model) == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


@pytest.mark.parametrize("failure", ["closed port", "non-JSON body", "HTTP 503"])
def test_cli_exits_1_when_too_many_items_get_no_reply(server, tmp_path, capsys, failure):
    behaviour = {"non-JSON body": "malformed", "HTTP 503": "unavailable"}.get(failure, "correct")
    port = free_port() if failure == "closed port" else server.server_port
    out = tmp_path / "r.json"
    args = llm_args(port, f"{behaviour}-{uuid.uuid4().hex[:8]}", out)
    assert main(args) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "8/8 items (100%) got no reply" in err[0] and "--max-failed-share 0.1" in err[0]
    summary = json.loads(out.read_text())["summary"]
    assert (summary["n_items"], summary["n_failed_items"], sum(summary["errors"].values())) == (8, 8, 8)
    out.unlink()
    assert main(args + ["--max-failed-share", "1"]) == 0  # the stated share is an option
    assert "warning: 8/8 items" in capsys.readouterr().err
    assert main(args + ["--max-failed-share", "1.5"]) == 2
    one_error_line(capsys)


def test_cli_never_replaces_results_with_fewer_answered(server, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(llm_args(server.server_port, f"correct-{uuid.uuid4().hex[:8]}", out)) == 0
    before = out.read_bytes()
    failing = llm_args(
        server.server_port, f"unavailable-{uuid.uuid4().hex[:8]}", out, "--max-failed-share", "1"
    )
    capsys.readouterr()
    assert main(failing) == 1
    err = capsys.readouterr().err
    aside = tmp_path / "r.new.json"
    assert out.read_bytes() == before and f"went to {aside}" in err
    assert json.loads(aside.read_text())["summary"]["n_answered"] == 0
    assert main(failing) == 1 and (tmp_path / "r.new-2.json").exists()  # an earlier aside file is kept too
    capsys.readouterr()
    out.write_text("[]")  # not a results file: not ours to replace
    assert main(failing) == 2 and out.read_text() == "[]"
    one_error_line(capsys)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--base-url", "not a url"),
        ("--base-url", "ftp://host/v1"),
        ("--base-url", "http://host:99999/v1"),
        ("--base-url", "http://host/v1?x=1"),
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "0"),
        ("--backoff", "nan"),
        ("--temperature", "nan"),
        ("--max-attempts", "0"),
        ("--api-key-env", "TEST_LLM_KEY"),
    ],
)
def test_cli_rejects_bad_values_before_any_call(server, tmp_path, capsys, monkeypatch, option, value):
    secret = "sk-secret\n"
    monkeypatch.setenv("TEST_LLM_KEY", secret)  # read with its newline: not a valid HTTP header
    model = f"correct-{uuid.uuid4().hex[:8]}"
    assert main(llm_args(server.server_port, model, tmp_path / "r.json", option, value)) == 2
    err = one_error_line(capsys)
    assert option in err and "allowed" in err and "sk-secret" not in err
    assert calls_to(server, model) == 0 and not list(tmp_path.iterdir())


def test_cli_streams_replies_and_a_rerun_asks_only_the_rest(server, tmp_path, capsys):
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    args = llm_args(server.server_port, model, out, "--replies", str(replies))
    server.budget[model] = 3  # the key is revoked after three calls: the run stops with HTTP 401
    assert main(args) == 1 and "401" in capsys.readouterr().err and not out.exists()
    kept = replies.read_text().splitlines()
    assert len(kept) == 3 and all(json.loads(line)["correct"] for line in kept)  # saved as they arrived
    with replies.open("a") as handle:
        handle.write('{"length": 16, "seed": 0, "ind')  # a crash in the middle of an append
    del server.budget[model]
    assert main(args) == 0 and "torn last line" in capsys.readouterr().err
    assert calls_to(server, model) == 4 + 5  # 3 answered + the refused one, then only the 5 without a reply
    results = json.loads(out.read_text())
    assert results["summary"]["n_resumed"] == 3 and [r["accuracy_mean"] for r in results["per_length"]] == [
        1,
        1,
    ]
    lines = [json.loads(line) for line in replies.read_text().splitlines()]
    assert [(r["seed"], r["length"], r["index"]) for r in lines] == [
        (s, L, i) for s in (0, 1) for L in (12, 16) for i in (0, 1)
    ]
    fresh = tmp_path / "fresh.json"
    assert main(llm_args(server.server_port, f"correct-{uuid.uuid4().hex[:8]}", fresh)) == 0
    assert json.loads(fresh.read_text())["per_length"] == results["per_length"]  # as if never interrupted
    assert main(args) == 0 and calls_to(server, model) == 9  # all answered: nothing is asked again


def test_cli_refuses_replies_of_another_configuration(server, tmp_path, capsys):
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    args = llm_args(server.server_port, model, out, "--replies", str(replies))
    assert main([a if a != "12,16" else "12" for a in args]) == 0
    assert main(args) == 0 and calls_to(server, model) == 8  # the length-12 items were not asked again
    before = replies.read_bytes()
    other = f"correct-{uuid.uuid4().hex[:8]}"
    for changed in (
        llm_args(server.server_port, other, out, "--replies", str(replies)),
        args + ["--extra-body", '{"reasoning_effort": "none"}'],
        [a if a != "letter" else "number" for a in args],
    ):
        assert main(changed) == 2
        assert "another configuration" in one_error_line(capsys) and replies.read_bytes() == before
    lines = before.splitlines()
    replies.write_bytes(b"\n".join(lines[:2] + [b"[1, 2]"] + lines[2:]) + b"\n")  # bad line in the middle
    assert main(args) == 2 and "line 3" in one_error_line(capsys)
    assert calls_to(server, other) == 0 and calls_to(server, model) == 8


def test_cli_hf_backend_names_a_folder_without_a_model(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [
        "llm",
        "--backend",
        "hf",
        "--model",
        str(empty),
        "--task",
        "number",
        "--json",
        str(tmp_path / "o.json"),
    ]
    assert main(args) == 2
    err = one_error_line(capsys)
    assert "config.json" in err and "sentencepiece" not in err


# -- 1-hop LLM variants (Appendix H) ---------------------------------------------------------


@pytest.mark.parametrize("name", ["number", "letter"])
@pytest.mark.parametrize("window", [12, 100, 300])
def test_one_hop_llm(name, window):
    sequences, answers = one_hop_llm(name, window, 40, seed=1)
    assert (sequences, answers) == one_hop_llm(name, window, 40, seed=1)
    for tokens, answer in zip(sequences, answers):
        assert len(tokens) == window + 1
        assert SOLVERS[name](tokens) == (answer, 1)
        if name == "number":
            assert all(t in string.ascii_lowercase for t in tokens[:-1]) and 1 <= int(tokens[-1]) <= window
        else:
            assert all(
                len(t) == 2 and t[0] in string.ascii_lowercase and t[1] in "123456789" for t in tokens[:-1]
            )
            q1, q2 = tokens[-1]
            assert q1 != q2 and [t[0] for t in tokens[:-1]].count(q2) == 1


# -- issue 29: every JSON the harness reads goes through theory.io.inputs; one line per error ----------


@pytest.mark.parametrize("hostile", sorted(HOSTILE_REPLIES))
def test_a_hostile_endpoint_reply_fails_the_item_and_names_the_field(server, hostile):
    """Deep nesting was a RecursionError in a worker thread; now every hostile reply is a failed
    call (retried, counted), its error naming the reply and the field."""
    from theory.io.inputs import InputError
    from training.llm.backends import reply_content

    body, named = HOSTILE_REPLIES[hostile]
    with pytest.raises(InputError, match=re.escape(named)):
        reply_content(body)
    results, records = evaluate(api(server, hostile, max_attempts=2), "letter", [12], [0], count=2)
    (row,) = results["per_length"]
    assert (row["n_failed_items"], row["n_failed_calls"], row["n_scored"]) == (2, 4, 0)
    assert all(
        r["error"].startswith("malformed reply: the endpoint's reply: ") and named in r["error"]
        for r in records
    )


def test_a_torn_replies_file_of_another_configuration_is_one_line(server, tmp_path, capsys):
    """It printed the torn-line warning and then the refusal: two lines for one exit-2 error.
    The warning is said only once the file is resumed (when the torn line is really dropped)."""
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    assert main(llm_args(server.server_port, model, out, "--replies", str(replies))) == 0
    with replies.open("a") as handle:
        handle.write('{"length": 16, "seed": 0, "ind')  # a crash in the middle of an append
    capsys.readouterr()
    before = replies.read_bytes()
    other = f"correct-{uuid.uuid4().hex[:8]}"
    assert main(llm_args(server.server_port, other, tmp_path / "o.json", "--replies", str(replies))) == 2
    assert "another configuration" in one_error_line(capsys)
    assert (
        replies.read_bytes() == before and calls_to(server, other) == 0
    )  # the torn line is not dropped either


HOSTILE_JSON = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "truncated": b'{"per_length": [{"n_scored": 1',
    "a list": b'[{"n_scored": 1}]',
    "wrong field": b'{"per_length": [{"n_scored": "1"}], "task": 7}',
    "latin1": '{"\xe9": 1}'.encode("latin-1"),
}
FIELD_NAMED = {
    "--json": "field per_length[0].n_scored: expected an integer",
    "--replies": "field task: expected a string",
}  # "wrong field" in each file that has a shape beyond "an object"


# every (input, damage) pair that can be damaged so: any object is a valid config.json or --extra-body (no
# "wrong field" there), and a command-line value is already text (no Latin-1 --extra-body)
HOSTILE_CASES = [
    (where, hostile)
    for where in ("--json", "--replies", "--model config.json", "--extra-body")
    for hostile in sorted(HOSTILE_JSON)
    if not (hostile == "wrong field" and where not in FIELD_NAMED)
    and not (hostile == "latin1" and where == "--extra-body")
]


@pytest.mark.parametrize("where, hostile", HOSTILE_CASES)
def test_hostile_json_inputs_are_one_line_naming_the_file(server, tmp_path, capsys, where, hostile):
    data = HOSTILE_JSON[hostile]
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    if where == "--extra-body":
        with pytest.raises(SystemExit) as exit_:
            main(llm_args(server.server_port, model, out, "--extra-body", data.decode()))
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and len(err.splitlines()) == 1 and "--extra-body" in err, err
        assert calls_to(server, model) == 0
        return
    if where == "--model config.json":
        folder = tmp_path / "model"
        folder.mkdir()
        (folder / "config.json").write_bytes(data)
        args = ["llm", "--backend", "hf", "--model", str(folder), "--task", "number", "--json", str(out)]
        path = folder / "config.json"
    else:
        path = out if where == "--json" else replies
        if where == "--replies":  # a damaged line with a good one after it: not a torn last line
            good = json.dumps(
                {
                    "task": "letter",
                    "length": 12,
                    "seed": 0,
                    "index": 0,
                    "failed_calls": 0,
                    "prompt_sha256": "0",
                    "config": {},
                    "reply": None,
                    "raw": None,
                    "error": None,
                }
            )
            data = data.replace(b"\n", b" ") + b"\n" + good.encode() + b"\n"
        path.write_bytes(data)
        args = llm_args(server.server_port, model, out, "--replies", str(replies))
    before = path.read_bytes()
    assert main(args) == 2
    err = one_error_line(capsys)
    assert str(path) in err and where.split()[0] in err
    if hostile == "wrong field":
        assert FIELD_NAMED[where] in err
    assert path.read_bytes() == before and calls_to(server, model) == 0
