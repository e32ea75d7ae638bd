"""The HTTP engine: judges served elsewhere behind an OpenAI-compatible chat-completions API.

For `vllm serve`, llama.cpp's server (`python -m llama_cpp.server`) or a hosted endpoint. Only the
standard library is used (`urllib`, `json`, threads), so selecting this backend adds no dependency.

Verdict requests (`max_tokens == 0`) ask for one token at temperature 0 with `logprobs=true,
top_logprobs=20`, and sum (logsumexp) the probability of every returned top token whose text,
stripped and lower-cased, equals the option lower-cased ("Yes", " Yes", "yes" all count for "Yes").
This mirrors what the CPU engine does over the whole vocabulary, but a server only shows its top-k:
an option with no matching token among them is left out of `option_logprobs` (the judge reads a
missing option as no mass), rather than inventing a number. A server that returns no logprobs at
all yields `option_logprobs=None` and the generated text, from which the judge parses the verdict.

Generation requests (`max_tokens > 0`) send `max_tokens`, `temperature`, `top_p` and `seed`. When
options are also asked for, the chat API cannot continue the assistant's own turn with the verdict
suffix the way the CPU engine continues raw tokens, so we make an honest approximation: a follow-up
request with messages `[user: prompt, assistant: generated, user: verdict_suffix.strip() or
"Verdict (Yes or No)?"]` scored with the verdict settings above. Scores from this path are therefore
comparable across HTTP judges but not bit-for-bit with the CPU engine's continuation.

Network faults are the normal case for a remote judge: requests run with bounded concurrency, each
with a timeout, and HTTP 429, 5xx and connection errors are retried with exponential backoff and
jitter (honouring `Retry-After`). A request still failing after the last attempt comes back as an
`EngineResult` with `error` set, so the judge records it as unscored and the run goes on. 401, 403
and 404 mean the endpoint, key or model name is wrong, which no retry fixes and which would make
every verdict unscored, so they raise `HarnessError` at once.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.core import EngineRequest, EngineResult, HarnessError

_FATAL_STATUS = (401, 403, 404)
_DEFAULT_VERDICT_QUESTION = "Verdict (Yes or No)?"
_TOP_LOGPROBS = 20


class _Retryable(Exception):
    """A failure worth another attempt (429, 5xx, connection trouble); `delay` is the server's
    Retry-After in seconds when it sent one."""

    def __init__(self, message: str, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


class _Failed(Exception):
    """A failure no retry will fix for this request (a 4xx other than 429/401/403/404, a bad body)."""


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(value - top) for value in values))


def option_logprobs_by_text(top_logprobs: list[dict[str, Any]], options: Sequence[str]) -> dict[str, float]:
    """Per option, the logsumexp of the top tokens that match it after strip + lower-case.

    Options with no matching top token are omitted (their mass is unknown but below the top-k)."""
    result: dict[str, float] = {}
    for option in options:
        matched = [float(entry["logprob"]) for entry in top_logprobs if str(entry.get("token", "")).strip().lower() == option.lower()]
        if matched:
            result[option] = _logsumexp(matched)
    return result


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP-date; fall back to our own backoff rather than parse calendars


class OpenAIChatEngine:
    """A remote chat model behind `{base_url}/chat/completions`; see the module docstring."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        max_concurrency: int = 4,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
    ) -> None:
        if max_concurrency < 1 or max_retries < 1:
            raise HarnessError(f"openai backend needs max_concurrency >= 1 and max_retries >= 1 (got {max_concurrency}, {max_retries})")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._api_key = api_key
        self._max_concurrency = max_concurrency
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s

    def _post_once(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            self._url,
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            status = error.code
            if status in _FATAL_STATUS:
                raise HarnessError(
                    f"openai backend: POST {self._url} (model {self._model!r}) answered HTTP {status}; check base_url, served_model and the API key"
                ) from error
            if status == 429 or status >= 500:
                raise _Retryable(f"HTTP {status} from {self._url}", _retry_after(error.headers)) from error
            raise _Failed(f"HTTP {status} from {self._url}: {error.read()[:200].decode('utf-8', 'replace')}") from error
        except (
            urllib.error.URLError,
            http.client.HTTPException,
            TimeoutError,
            ConnectionError,
        ) as error:  # refused, reset, DNS, timeout
            raise _Retryable(f"cannot reach {self._url}: {getattr(error, 'reason', error)}") from error
        try:
            return json.loads(payload)
        except json.JSONDecodeError as error:
            raise _Failed(f"non-JSON answer from {self._url}: {payload[:200]!r}") from error

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST with retries; raises `_Failed` (with the last reason) when attempts run out."""
        last = ""
        for attempt in range(self._max_retries):
            try:
                return self._post_once(body)
            except _Retryable as error:
                last = str(error)
                if attempt + 1 == self._max_retries:
                    break
                backoff = min(self._max_backoff_s, self._backoff_s * 2**attempt)
                delay = error.delay if error.delay is not None else backoff * (0.5 + random.random())  # jitter spreads retries apart
                time.sleep(min(delay, self._max_backoff_s))
        raise _Failed(f"{last} (after {self._max_retries} attempts)")

    def _verdict_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": messages,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": _TOP_LOGPROBS,
            "temperature": 0,
        }

    @staticmethod
    def _parse(response: dict[str, Any], options: Sequence[str]) -> tuple[str, dict[str, float] | None, int, int]:
        try:
            choice = response["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise _Failed(f"malformed chat completion: {str(response)[:200]}") from error
        usage = response.get("usage") or {}
        logprobs = None
        content = (choice.get("logprobs") or {}).get("content") or []
        if options and content and content[0].get("top_logprobs"):
            logprobs = option_logprobs_by_text(content[0]["top_logprobs"], options)
        return (
            text,
            logprobs,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
        )

    def _answer(self, request: EngineRequest) -> EngineResult:
        user = [{"role": "user", "content": request.prompt}]
        try:
            if request.max_tokens == 0:
                text, logprobs, prompt_tokens, completion_tokens = self._parse(self._post(self._verdict_body(user)), request.options)
                return EngineResult(
                    text=text,
                    option_logprobs=logprobs,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            body = {
                "model": self._model,
                "messages": user,
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
                "top_p": request.top_p,
                "seed": request.seed,
            }
            generated, _, prompt_tokens, completion_tokens = self._parse(self._post(body), ())
            if not request.options:
                return EngineResult(
                    text=generated,
                    option_logprobs=None,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            question = request.verdict_suffix.strip() or _DEFAULT_VERDICT_QUESTION
            follow_up = user + [
                {"role": "assistant", "content": generated},
                {"role": "user", "content": question},
            ]
            _, logprobs, _, _ = self._parse(self._post(self._verdict_body(follow_up)), request.options)
            return EngineResult(
                text=generated,
                option_logprobs=logprobs,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        except _Failed as error:
            return EngineResult(
                text="",
                option_logprobs=None,
                prompt_tokens=0,
                completion_tokens=0,
                error=str(error),
            )

    def close(self) -> None:
        """Nothing to release: every request opens and closes its own connection."""

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]:
        """Answer `requests` in order, at most `max_concurrency` in flight (a HarnessError propagates)."""
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(self._max_concurrency, len(requests))) as pool:
            return list(pool.map(self._answer, requests))


def api_key_from_env(variable: str) -> str | None:
    """The key from `variable` at run time (never stored in config); None when unset or empty,
    since local servers need no key."""
    return os.environ.get(variable) or None
