"""A real llama.cpp OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1, for tests
that reach a model over HTTP the way a user's endpoint would be reached."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(model: Path, log_dir: Path, n_ctx: int = 1024, startup_s: float = 120.0) -> Iterator[str]:
    """Serve the GGUF file `model`; yields the base URL (ending in /v1) once `/models` answers."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:  # a file, not a pipe: the load log would fill a pipe and block the server
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + startup_s
            while True:
                if process.poll() is not None:
                    pytest.fail(f"llama_cpp.server exited with {process.returncode}: {log_path.read_text(errors='replace')[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/models", timeout=2):
                        break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    if time.monotonic() > deadline:
                        pytest.fail(f"llama_cpp.server did not answer within {startup_s:.0f} s")
                    time.sleep(0.5)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
