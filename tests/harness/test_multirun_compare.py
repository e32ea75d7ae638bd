"""A Hydra multirun over protocols lands as one MLflow run per protocol under one parent, and
`python -m harness.compare` tabulates them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_protocol_sweep_then_compare(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'mlruns.db'}"
    sweep = subprocess.run(
        [sys.executable, "-m", "harness", "-m", "protocol=plausibility,blind", "limit=1", "n=2", "bootstrap_samples=50",
         f"tracking.uri={store}", f"cache.path={tmp_path / 'cache.sqlite'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    assert sorted(path.name for path in (tmp_path / "sweep").iterdir() if path.is_dir()) == ["0", "1"]

    import mlflow

    client = mlflow.tracking.MlflowClient(tracking_uri=store)
    runs = client.search_runs([client.get_experiment_by_name("harness").experiment_id])
    parents = [run for run in runs if "harness.sweep" in run.data.tags]
    children = [run for run in runs if run.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and len(children) == 2
    assert {run.data.tags["mlflow.parentRunId"] for run in children} == {parents[0].info.run_id}

    compare = subprocess.run(
        [sys.executable, "-m", "harness.compare", "--tracking-uri", store, "--output", str(tmp_path / "cmp")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert compare.returncode == 0, compare.stderr
    lines = [line for line in compare.stdout.splitlines() if line.startswith("| ")]
    assert any(line.startswith("| blind") for line in lines) and any(line.startswith("| plausibility") for line in lines)
    assert (tmp_path / "cmp" / "comparison.png").stat().st_size > 0
