"""`python -m harness.compare` against a real MLflow SQLite store, logged the way the pipeline logs:
flattened config params (`protocol.name`, `judge.name`, `task.name`), headline metrics with
`_ci_low`/`_ci_high`, and a multirun parent whose children carry `mlflow.parentRunId`."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compare import main
from harness.compare._runs import RunRecord
from harness.compare._table import Cell, build_rows, grouping_params

mlflow = pytest.importorskip("mlflow")


def _log(params: dict[str, str], metrics: dict[str, float], *, nested: bool = False, status: str = "FINISHED") -> str:
    with mlflow.start_run(nested=nested) as run:
        mlflow.log_params(params)
        mlflow.log_metrics(metrics)
    if status != "FINISHED":
        mlflow.tracking.MlflowClient().set_terminated(run.info.run_id, status=status)
    return run.info.run_id


def _params(protocol: str, judge: str = "ensemble_min") -> dict[str, str]:
    return {"protocol.name": protocol, "judge.name": judge, "task.name": "gsm8k", "seed": "0"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Experiment `harness`: a multirun parent with plausibility and blind children, a rerun of
    recompute (the later one wins), a failed run, and a second experiment with another judge."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlruns.db'}"
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("harness")
    with mlflow.start_run(run_name="multirun-parent"):
        mlflow.log_params({"hydra.mode": "MULTIRUN"})
        mlflow.log_metrics({"selection_accuracy": 0.99})  # a parent's own numbers must not become a row
        _log(
            _params("plausibility"),
            {"selection_accuracy": 0.62, "selection_accuracy_ci_low": 0.54, "selection_accuracy_ci_high": 0.70, "hack_rate": 0.25, "auroc": 0.71},
            nested=True,
        )
        _log(_params("blind"), {"selection_accuracy": 0.55, "hack_rate": 0.30, "order_invariance": 0.9}, nested=True)
    _log(_params("recompute"), {"selection_accuracy": 0.10, "hack_rate": 0.9})
    _log(_params("recompute"), {"selection_accuracy": 0.70, "hack_rate": 0.15})
    _log(_params("solve_first"), {"selection_accuracy": 0.01}, status="FAILED")
    mlflow.set_experiment("judges")
    _log(_params("plausibility", judge="llama_tiny"), {"selection_accuracy": 0.5})
    _log(_params("plausibility", judge="gemma_tiny"), {"selection_accuracy": 0.4})
    mlflow.set_experiment("formats")
    # a run of today's format (tie-expected selection metrics, the seeded pick's beside them) and one from before
    _log(_params("plausibility"), {"format_version": 2, "selection_accuracy": 0.5, "selection_accuracy_seeded": 0.6, "auroc": 0.7})
    _log(_params("blind"), {"selection_accuracy": 0.55, "selection_accuracy_ci_low": 0.4, "selection_accuracy_ci_high": 0.7, "auroc": 0.6})
    return uri


def test_cli_prints_table_and_writes_png_csv_markdown(store: str, tmp_path: Path) -> None:
    output = tmp_path / "cmp"
    completed = subprocess.run(
        [sys.executable, "-m", "harness.compare", "--tracking-uri", store, "--output", str(output)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    lines = {line.split("|")[1].strip(): line for line in completed.stdout.splitlines() if line.startswith("| ")}
    assert set(lines) == {"protocol.name", "blind", "plausibility", "recompute"}  # no parent, no failed run
    assert "0.620 [0.540, 0.700]" in lines["plausibility"]
    assert "0.700" in lines["recompute"] and "0.900" not in lines["recompute"]  # the later rerun
    header = [cell.strip() for cell in lines["protocol.name"].split("|")[1:-1]]
    assert header == ["protocol.name", "runs", "selection_accuracy", "hack_rate", "auroc", "order_invariance"]
    assert "left out 1 multirun parent run(s) and 1 unfinished run(s)" in completed.stderr
    assert "2 runs for recompute" in completed.stderr
    assert (output / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (output / "comparison.md").read_text(encoding="utf-8").splitlines()[0] == lines["protocol.name"]
    with (output / "comparison.csv").open(encoding="utf-8") as handle:
        rows = {row["protocol.name"]: row for row in csv.DictReader(handle)}
    assert rows["plausibility"]["selection_accuracy_ci_low"] == "0.54"
    assert rows["blind"]["auroc"] == ""


def test_filter_and_judge_grouping(store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["--tracking-uri", store, "--experiment", "judges", "--filter", "params.`judge.name` LIKE '%tiny'", "--output", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "| protocol.name / judge.name" in out
    assert "plausibility / gemma_tiny" in out and "plausibility / llama_tiny" in out


def test_runs_from_before_tie_expected_metrics_are_read_and_marked(store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = "selection_accuracy,selection_accuracy_seeded,auroc"
    assert main(["--tracking-uri", store, "--experiment", "formats", "--metrics", metrics, "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    cells = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[3:-1]] for line in out.splitlines() if line.startswith("| ")}
    assert cells["plausibility"] == ["0.500", "0.600", "0.700"]
    # the old run's selection_accuracy is its seeded pick's: marked where the expectation stands, plain
    # as the seeded figure; auroc does not depend on the tie-break and is not marked
    assert cells["blind"] == ["0.550 [0.400, 0.700]*", "0.550 [0.400, 0.700]", "0.600"]
    assert "* a run from before format_version 2" in out
    with (tmp_path / "comparison.csv").open(encoding="utf-8") as handle:
        versions = {row["protocol.name"]: row["format_version"] for row in csv.DictReader(handle)}
    assert versions == {"blind": "1", "plausibility": "2"}


def test_explicit_metrics(store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--tracking-uri", store, "--metrics", "hack_rate", "--output", str(tmp_path)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert [cell.strip() for cell in header.split("|")[1:-1]] == ["protocol.name", "runs", "hack_rate"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--experiment", "nope"], "error: no experiment named 'nope'", id="no-such-experiment"),
        pytest.param(["--filter", "params.`protocol.name` = 'missing'"], "error: no runs in experiment 'harness' match", id="no-match"),
        pytest.param(["--filter", "metrics.selection_accuracy >"], "error: bad --filter", id="bad-filter"),
        pytest.param(["--filter", "params.`hydra.mode` = 'MULTIRUN'"], "is a finished leaf run", id="only-a-parent"),
        pytest.param(["--metrics", "selection_acuracy"], "error: --metrics: not logged by any matching run: selection_acuracy", id="typo-in-metric"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["--tracking-uri", store, "--output", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0]


def test_missing_sqlite_store_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "absent.db"
    assert main(["--tracking-uri", f"sqlite:///{store}", "--output", str(tmp_path / "out")]) == 2
    assert "error: no MLflow store at" in capsys.readouterr().err
    assert not store.exists()


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        pytest.param(Cell(0.62, 0.54, 0.7), "0.620 [0.540, 0.700]", id="with-interval"),
        pytest.param(Cell(0.62, None, None), "0.620", id="no-interval"),
        pytest.param(Cell(0.62, 0.5, None), "0.620", id="half-interval"),
        pytest.param(Cell(None, None, None), "-", id="not-logged"),
    ],
)
def test_cell_text(cell: Cell, text: str) -> None:
    assert cell.text() == text


def test_rows_group_by_protocol_and_only_the_params_that_vary() -> None:
    runs = [
        RunRecord("a", 1, {"protocol.name": "blind", "judge.name": "j1", "task.name": "gsm8k"}, {"m": 0.1}),
        RunRecord("b", 2, {"protocol.name": "blind", "judge.name": "j2", "task.name": "gsm8k"}, {"m": 0.2}),
        RunRecord("c", 3, {"judge.name": "j2", "task.name": "gsm8k"}, {}),
    ]
    assert grouping_params(runs) == ["protocol.name", "judge.name"]
    rows = build_rows(runs, ["m"])
    assert [(row.label, row.cells["m"].value) for row in rows] == [("- / j2", None), ("blind / j1", 0.1), ("blind / j2", 0.2)]
