"""A real `mlflow server` for the tracking tests: SQLite store and artifact root in a temp directory,
on a free 127.0.0.1 port, stoppable and restartable on the same port and store (outage tests)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runs import harness_command, harness_environment


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MlflowServer:
    """`python -m mlflow server` as a process group this fixture started and alone stops (by PID)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root / "server.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout_s: float = 240) -> None:
        if self.running:
            return
        command = [
            sys.executable, "-m", "mlflow", "server",
            "--backend-store-uri", f"sqlite:///{self.root / 'mlflow.db'}",
            "--artifacts-destination", str(self.root / "artifacts"),
            "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
        ]
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                pytest.fail(f"mlflow server exited with {self._process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        self.stop()
        pytest.fail(f"mlflow server not healthy after {timeout_s:.0f}s: {self.log.read_text()[-2000:]}")

    def runs(self, experiment: str) -> list:
        """The experiment's runs as `mlflow.search_runs` returns them (none when it does not exist yet)."""
        import mlflow
        from mlflow.tracking import MlflowClient

        mlflow.set_tracking_uri(self.url)
        if MlflowClient(self.url).get_experiment_by_name(experiment) is None:
            return []
        return mlflow.search_runs(experiment_names=[experiment], output_format="list")

    def stop(self, crash: bool = False) -> None:
        """Stop the server: SIGKILL at once when `crash` (an outage), else SIGTERM, then SIGKILL after 5 s."""
        if self._process is None:
            return
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGKILL if crash else signal.SIGTERM)
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=20)
        self._process = None


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """One server for the session, not started yet: each test starts or stops it as it needs."""
    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    try:
        yield server
    finally:
        server.stop(crash=True)  # its store is a temp directory: nothing to shut down gracefully


@pytest.fixture
def run_harness(tmp_path: Path, shared_cache: Path):
    """`python -m harness <overrides>` in a subprocess in the test's directory, with the session's
    judge-call cache (or `cache`) and no inherited MLFLOW_TRACKING_URI; `wait=False` returns the process."""

    def run(
        *overrides: str, env: dict[str, str] | None = None, cache: Path | None = None, wait: bool = True
    ) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
        command = harness_command(overrides, cache or shared_cache)
        environment = harness_environment(env)
        if not wait:
            return subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=environment)

    return run
