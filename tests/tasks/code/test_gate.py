"""The jail's audit gate (`sandbox/_gate.c`): it hands the Python judge only what the judge must
see, and what it settles in C the judge would have let pass too.

Why it exists: with the judge as a plain audit hook, every audited call ran a Python function, and
a program timing `sys._getframe()` against `sys.getrecursionlimit()` saw a ratio of about 120 in the
jail against 0.7 in python3 (red team sandbox5 `w3`; its attack is in test_sandbox_ordinary.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).with_name("gate_probe.py")
ROOT = Path(__file__).resolve().parents[3]

# Which operations of gate_probe.py reach the Python judge.
HANDED = {
    "id": False,
    "own_frame": False,
    "sandbox_frame": True,
    "own_tb_frame": False,
    "sandbox_tb_frame": True,
    "generator_frame": True,  # the judge reads the frame with the type's own getter
    "code_read": False,
    "own_defaults": False,
    "sandbox_defaults": True,
    "class_attribute": False,
    "open_relative": False,
    "open_inside": False,
    "open_parent_step": True,  # resolved by the judge: inside as it happens, but "..": not plainly
    "open_outside_write": True,
    "open_descriptor": False,
    "open_elsewhere": True,  # a relative path once the working directory is outside
    "kill_self": False,
    "kill_other": True,
    "pthread_kill_self": False,
    "socketpair": False,
    "datagram_socket": True,
    "hostname": False,
    "coroutine_flag": True,  # judged by the code object it holds (red team sandbox7 `g1`)
    "settrace_none": False,  # the gate reads the argument (its `sys.settrace` wrapper): None
    "settrace_tracer": True,
    "code_replace": True,
    "remove_inside": False,
    "rename_outside": True,
    "gc_objects": True,
    "current_exceptions": True,
    "seal_event": True,
    "other_event": False,
    "ctypes_prefix": True,
    "exec": False,
    "<second install refused>": True,
    "<pending notes the handed events>": True,
}
# What the judge alone records or refuses of the same operations.
JUDGED_AS_VIOLATIONS = {
    "settrace_none", "settrace_tracer",  # the judge alone sees no argument: it refuses both
    "sandbox_frame", "sandbox_tb_frame", "sandbox_defaults", "open_outside_write", "open_elsewhere", "kill_other",
    "datagram_socket", "code_replace", "rename_outside", "gc_objects", "current_exceptions", "ctypes_prefix",
}


def probe(mode: str, inside: Path) -> dict[str, bool]:
    done = subprocess.run(
        [sys.executable, str(PROBE), mode, str(inside)], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_gate_hands_the_judge_exactly_what_it_must_judge(tmp_path: Path) -> None:
    assert probe("gate", tmp_path) == HANDED


def test_what_the_gate_settles_in_c_the_judge_lets_pass(tmp_path: Path) -> None:
    judged = probe("judge", tmp_path)
    assert {name for name, violation in judged.items() if violation} == JUDGED_AS_VIOLATIONS
    settled_in_c = {name for name, handed in HANDED.items() if not handed}
    # The one the gate knows more of than the judge: `sys.settrace`'s argument, None.
    assert settled_in_c & JUDGED_AS_VIOLATIONS == {"settrace_none"}


# A judge that never settles leaves every note: each must hold no reference to the event's
# arguments (red team sandbox10 `p1`: a note left over held the candidate's generator until the
# seal let it go in the judge's frame, where its `finally` walked `f_back` into the judge).
NOTE_HOLDS_NOTHING = """
import os, sys
from tasks.code.sandbox import _gate
pending = {}
_gate.install(lambda name, args: None, pending, ("open",), (), (), "/nonexistent-sandbox/", (), os.getpid())
class Path(str):
    pass
path = Path("/etc/hostname")
before = sys.getrefcount(path)
open(path).close()
print(sys.getrefcount(path) - before, sorted((name, type(note).__name__) for name, note in pending.items()))
"""


def test_a_note_of_the_gate_holds_nothing_of_the_event() -> None:
    done = subprocess.run([sys.executable, "-c", NOTE_HOLDS_NOTHING], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1) == ["0", "[('open', 'int')]\n"]
