"""Where a run is logged: `tracking.uri=` beats MLFLOW_TRACKING_URI, which beats `sqlite:///mlruns.db`
in the working directory, as docs/outputs-and-metrics.md says."""

from __future__ import annotations

from pathlib import Path

import mlflow


def _runs(store: Path) -> list[str]:
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{store}")
    return [run.info.run_name for experiment in client.search_experiments() for run in client.search_runs([experiment.experiment_id])]


def test_the_command_line_beats_the_environment_which_beats_the_default(run_harness, tmp_path: Path) -> None:
    base = ("judge=none", "limit=1", "bootstrap_samples=0")
    default = run_harness(*base, f"output_dir={tmp_path / 'a'}")
    assert default.returncode == 0, default.stderr[-2000:]
    assert _runs(tmp_path / "mlruns.db") == ["gsm8k-none-plausibility"]

    env = {"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'env.db'}"}
    from_env = run_harness(*base, f"output_dir={tmp_path / 'b'}", env=env)
    assert from_env.returncode == 0, from_env.stderr[-2000:]
    assert _runs(tmp_path / "env.db") == ["gsm8k-none-plausibility"]

    from_cli = run_harness(*base, f"output_dir={tmp_path / 'c'}", f"tracking.uri=sqlite:///{tmp_path / 'cli.db'}", env=env)
    assert from_cli.returncode == 0, from_cli.stderr[-2000:]
    assert _runs(tmp_path / "cli.db") == ["gsm8k-none-plausibility"]
    # each store holds only its own run: the environment's got nothing from the third run
    assert len(_runs(tmp_path / "env.db")) == 1 and len(_runs(tmp_path / "mlruns.db")) == 1
