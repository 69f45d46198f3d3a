"""Backends that answer the 1-hop prompts: a local Hugging Face causal LM, or an
OpenAI-compatible chat endpoint over HTTP (standard library only).

Both expose ``complete(prompts, on_done=None, on_reply=None) -> list[Reply]`` (one
reply per prompt, in order; ``on_done(k)`` is called as k more prompts finish, and
``on_reply(i, reply)`` with each reply as it arrives, so it can be saved at once) and
``describe() -> dict`` (settings recorded in the results JSON; never a secret).

A :class:`Reply` with ``text is None`` means the model never answered: every call
failed.  Such an item is excluded from accuracy and counted, never scored
(``training.llm.evaluate``).  ``failed_calls`` counts every failed call of the item,
including ones a later retry recovered from.

Where a reply ends.  A chat endpoint, or a local model under its chat template,
ends its turn itself, so its whole reply is kept: "y\\n\\nExplanation..." is then not
a single token.  A local model prompted with raw text has no end of turn and keeps
writing (often the next "Example"), so there the reply is cut at the first newline
after its first non-blank character, the stop sequence a completion API would use.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from theory.io.inputs import Checked, InputError, check_shape, parse_json

from .guards import check_api_key, check_base_url, check_seconds

__all__ = ["Reply", "BackendError", "HFBackend", "OpenAIBackend", "first_line"]


@dataclass(frozen=True)
class Reply:
    text: str | None  # None: no answer, every call failed
    failed_calls: int = 0
    error: str | None = None  # the last failure, if any
    raw: str | None = None  # the generated text before any stop sequence was applied

    @property
    def ok(self) -> bool:
        return self.text is not None


class BackendError(RuntimeError):
    """A failure that no retry can fix (bad credentials, unknown model or URL)."""


def first_line(text: str) -> str:
    """``text`` up to the first newline after its first non-blank character."""
    return text.lstrip().split("\n", 1)[0]


# -- local Hugging Face model --------------------------------------------------------------------


class HFBackend:
    """Greedy decoding of ``max_new_tokens`` tokens with a transformers causal LM.

    ``tokenizer`` needs only ``__call__(text, add_special_tokens=...)`` returning
    ``input_ids``, ``decode(ids, skip_special_tokens=True)``, and a ``pad_token_id``
    or ``eos_token_id`` (used for left padding; the attention mask hides it).
    """

    def __init__(
        self,
        model,
        tokenizer,
        *,
        name: str | None = None,
        max_new_tokens: int = 5,
        batch_size: int = 8,
        chat_template: bool = False,
    ):
        if max_new_tokens < 1 or batch_size < 1:
            raise ValueError("max_new_tokens and batch_size must be positive")
        if chat_template and not getattr(tokenizer, "chat_template", None):
            raise ValueError("chat_template=True but the tokenizer has no chat template")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.name = (
            name or getattr(getattr(model, "config", None), "_name_or_path", None) or type(model).__name__
        )
        self.max_new_tokens, self.batch_size, self.chat_template = max_new_tokens, batch_size, chat_template
        pad = getattr(tokenizer, "pad_token_id", None)
        self.pad_id = pad if pad is not None else getattr(tokenizer, "eos_token_id", None)
        if self.pad_id is None:
            raise ValueError("the tokenizer has neither a pad nor an eos token to pad batches with")

    @classmethod
    def from_pretrained(cls, path: str, *, device: str = "auto", dtype: str = "auto", **options) -> HFBackend:
        """Load a model and tokenizer from a local folder or GGUF file (``training.llm.local_model``);
        never downloads."""
        import torch

        from .local_model import load_local

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        model, tokenizer = load_local(path, device=device, dtype=dtype)
        return cls(model, tokenizer, name=options.pop("name", None) or str(path), **options)

    def describe(self) -> dict:
        return {
            "backend": "hf",
            "model": self.name,
            "max_new_tokens": self.max_new_tokens,
            "batch_size": self.batch_size,
            "chat_template": self.chat_template,
            "decoding": "greedy",
            "stop": "end of turn" if self.chat_template else "first newline after the answer",
            "device": str(next(self.model.parameters()).device),
            "dtype": str(next(self.model.parameters()).dtype),
        }

    def _encode(self, prompt: str) -> list[int]:
        if self.chat_template:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])  # the template has them
        return list(self.tokenizer(prompt)["input_ids"])

    def complete(self, prompts, on_done=None, on_reply=None) -> list[Reply]:
        import torch

        encoded = [self._encode(p) for p in prompts]
        # Similar lengths share a batch, so little compute goes to padding.
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        replies: list[Reply | None] = [None] * len(encoded)
        device = next(self.model.parameters()).device
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encoded[i]) for i in chunk)
            ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):  # left padding: every prompt ends at the last column
                ids[row, width - len(encoded[i]) :] = torch.tensor(encoded[i])
                mask[row, width - len(encoded[i]) :] = 1
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    pad_token_id=self.pad_id,
                )
            for row, i in enumerate(chunk):
                raw = self.tokenizer.decode(out[row, width:].tolist(), skip_special_tokens=True)
                replies[i] = Reply(raw if self.chat_template else first_line(raw), raw=raw)
                if on_reply:
                    on_reply(i, replies[i])
            if on_done:
                on_done(len(chunk))
        return replies


# -- OpenAI-compatible chat endpoint --------------------------------------------------------------

_FATAL_STATUS = {
    401: "unauthorised (check the API key)",
    403: "forbidden",
    404: "not found (check URL/model)",
}


class OpenAIBackend:
    """POST ``{base_url}/chat/completions`` with one user message per prompt.

    Network errors, timeouts, HTTP 429 and 5xx and malformed replies are retried up
    to ``max_attempts`` calls in all, waiting ``backoff * 2**k`` seconds (at most
    ``max_backoff``; a 429's ``Retry-After`` is honoured within that cap).  Other 4xx
    answers fail the item at once (the same request would fail again); 401, 403 and
    404 raise :class:`BackendError`, since every item would fail alike.
    ``timeout`` bounds each socket operation of a call (urllib's meaning).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        workers: int = 1,
        max_tokens: int | None = 16,
        max_tokens_field: str = "max_tokens",
        temperature: float | None = 0.0,
        extra_body: dict | None = None,
        sleep=time.sleep,
    ):
        if max_attempts < 1 or workers < 1:
            raise ValueError(f"max_attempts and workers must be >= 1, got {max_attempts} and {workers}")
        check_base_url("base_url", base_url)
        timeout = check_seconds("timeout", timeout, zero_allowed=False)
        backoff, max_backoff = (
            check_seconds(name, value, zero_allowed=True)
            for name, value in (("backoff", backoff), ("max_backoff", max_backoff))
        )
        self.model, self.url = model, base_url.rstrip("/") + "/chat/completions"
        self.api_key_env, self.timeout, self.max_attempts = api_key_env, timeout, max_attempts
        self.backoff, self.max_backoff, self.workers = backoff, max_backoff, workers
        self.max_tokens, self.max_tokens_field, self.temperature = max_tokens, max_tokens_field, temperature
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        check_api_key(api_key_env, key)  # before any call: a newline would fail inside http.client
        self._headers = {"Content-Type": "application/json"}
        if key:  # a local server may need none
            self._headers["Authorization"] = f"Bearer {key}"

    def describe(self) -> dict:
        return {
            "backend": "openai",
            "model": self.model,
            "url": self.url,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout,
            "max_attempts": self.max_attempts,
            "backoff_s": self.backoff,
            "max_backoff_s": self.max_backoff,
            "workers": self.workers,
            "max_tokens": self.max_tokens,
            "max_tokens_field": self.max_tokens_field,
            "temperature": self.temperature,
            "extra_body": self.extra_body,
        }

    def _body(self, prompt: str) -> bytes:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}]}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body[self.max_tokens_field] = self.max_tokens
        body.update(self.extra_body)
        return json.dumps(body).encode("utf-8")

    def _call(self, data: bytes):
        """One call: ``(content, None, retry_after)`` or ``(None, error, retry_after)``;
        a non-retryable failure comes back as ``error`` starting with ``final:``."""
        request = urllib.request.Request(self.url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as refused:  # (not `http`: that would shadow http.client below)
            status = refused.code
            refused.close()
            if status in _FATAL_STATUS:
                raise BackendError(f"{self.url}: HTTP {status} {_FATAL_STATUS[status]}") from None
            if status == 429 or status >= 500:
                return None, f"HTTP {status}", _retry_after(refused.headers)
            return None, f"final: HTTP {status}", None
        except TimeoutError:
            return None, "timeout", None
        except urllib.error.URLError as bad:
            reason = bad.reason
            return (
                None,
                "timeout" if isinstance(reason, (TimeoutError, socket.timeout)) else f"network: {reason}",
                None,
            )
        except (OSError, http.client.HTTPException) as bad:  # e.g. a reset or a truncated reply
            return None, f"network: {bad}", None
        try:
            return reply_content(payload), None, None
        except InputError as bad:  # retried: a proxy or an overloaded server may garble one reply
            return None, f"malformed reply: {bad}", None

    def _one(self, prompt: str) -> Reply:
        data = self._body(prompt)
        failed, error = 0, None
        for attempt in range(self.max_attempts):
            content, error, retry_after = self._call(data)
            if error is None:
                return Reply(content, failed_calls=failed, error=None, raw=content)
            failed += 1
            if error.startswith("final: ") or attempt + 1 == self.max_attempts:
                break
            wait = self.backoff * 2**attempt
            if retry_after is not None:
                wait = max(wait, retry_after)
            self._sleep(min(wait, self.max_backoff))
        return Reply(None, failed_calls=failed, error=error.removeprefix("final: "))

    def complete(self, prompts, on_done=None, on_reply=None) -> list[Reply]:
        prompts = list(prompts)
        replies = []

        def arrived(reply):
            if on_reply:
                on_reply(len(replies), reply)
            replies.append(reply)
            if on_done:
                on_done(1)

        if self.workers == 1:
            for prompt in prompts:
                arrived(self._one(prompt))
            return replies
        pool = ThreadPoolExecutor(max_workers=self.workers)
        try:
            futures = [pool.submit(self._one, prompt) for prompt in prompts]
            for future in futures:  # in order; a BackendError surfaces here
                arrived(future.result())
            return replies
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


REPLY = "the endpoint's reply"
_REPLY_SHAPE = {"choices": Checked(list, bool, "a non-empty list")}
_CHOICE_SHAPE = {"message": {"content": str}}  # null content: no answer was returned


def reply_content(payload: bytes) -> str:
    """``choices[0].message.content`` of a chat-completions reply, through the package's one
    JSON loader (``theory.io.inputs``: bounded nesting, strict UTF-8, checked shape), so a hostile
    reply is an InputError naming the field, never a RecursionError or KeyError."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise InputError(f"{REPLY}: not UTF-8 text (byte {bad.start})") from None
    value = parse_json(text, REPLY, _REPLY_SHAPE)
    check_shape(value["choices"][0], _CHOICE_SHAPE, REPLY, "choices[0]")
    return value["choices"][0]["message"]["content"]


def _retry_after(headers) -> float | None:
    """A ``Retry-After`` given in seconds (the HTTP-date form is ignored: backoff applies)."""
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
