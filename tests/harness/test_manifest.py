"""manifest.json: what a run was (code, data, models, templates, seeds, packages, hardware, Slurm job,
command line), written by every run and logged as the same MLflow tags."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from harness import manifest, provenance
from harness.core.digest import file_sha256
from harness.core.errors import HarnessError
from harness.pipeline import run
from judges import load_protocol
from judges.model_files import resolve_model_file
from tasks import load_task


def _head() -> str | None:
    head = subprocess.run(["git", "-C", str(Path(manifest.__file__).parent), "rev-parse", "HEAD"], capture_output=True, text=True)
    return head.stdout.strip() if head.returncode == 0 else None


def test_a_run_writes_every_fact_and_logs_it_as_tags(make_config, monkeypatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "777")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "770")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "7")
    monkeypatch.delenv("SLURM_RESTART_COUNT", raising=False)
    config = make_config("judge=llama_tiny", "limit=1", "n=2", "seed=5")
    heads = [_head()]
    result = run(config)
    heads.append(_head())  # a commit landing during the run may be either
    written = json.loads((result.output_dir / "manifest.json").read_text())

    model_sha = file_sha256(resolve_model_file(config.judge.members["llama_tiny"].model))
    assert written["model"]["llama_tiny"]["identity"] == f"gguf-sha256:{model_sha}"
    assert written["model"]["llama_tiny"]["sha256"] == model_sha and written["model"]["llama_tiny"]["family"] == "llama"
    assert written["data"]["sha256"] == load_task(config.task).data_hash and written["data"]["pool_file"] is None
    assert written["templates"] == {"protocol": load_protocol(config.protocol).template_hash}
    assert written["seeds"]["seed"] == 5
    assert written["slurm"]["job_id"] == "777" and written["slurm"]["array_job_id"] == "770"
    assert written["slurm"]["array_task_id"] == "7" and written["slurm"]["restart_count"] is None
    assert len(written["code"]["source_sha256"]) == 64
    assert written["code"]["git_commit"] in heads
    assert isinstance(written["code"]["git_dirty"], bool) or written["code"]["git_commit"] is None
    for name in ("judge-harness", "torch", "vllm", "ray", "transformers", "mlflow", "llama-cpp-python"):
        try:
            assert written["packages"][name] == metadata.version(name)
        except metadata.PackageNotFoundError:
            assert written["packages"][name] == "absent"
    assert written["packages"]["mlflow"] == mlflow.__version__
    assert written["hardware"]["cpu_model"] == provenance.cpu_model() and written["hardware"]["cpu_count"] >= 1
    assert written["config"]["limit"] == 1 and written["config"]["judge"]["name"] == "llama_tiny"
    assert written["run_uid"] and len(written["run_uid"]) == 32

    tags = MlflowClient(tracking_uri=mlflow.get_tracking_uri()).get_run(result.mlflow_run_id).data.tags
    expected = manifest.tags(manifest.read(result.output_dir))
    assert {key: tags.get(key) for key in expected} == expected
    assert tags["slurm.array_task_id"] == "7" and tags["model.llama_tiny.sha256"] == model_sha
    assert tags["packages.mlflow"] == mlflow.__version__ and tags["harness.run_uid"] == written["run_uid"]
    assert "config.limit" not in tags  # the config is the run's params, not repeated as tags


def test_missing_packages_are_recorded_as_absent(monkeypatch) -> None:
    monkeypatch.setattr(provenance, "PACKAGES", ("mlflow", "no-such-distribution-for-the-manifest"))
    assert provenance.package_versions() == {"mlflow": mlflow.__version__, "no-such-distribution-for-the-manifest": "absent"}


def test_gpus_are_what_nvidia_smi_lists() -> None:
    found = provenance.gpus()
    smi = shutil.which("nvidia-smi")
    if smi is None:
        assert found == [] and provenance.hardware()["gpu_driver"] == "absent"
        return
    listed = [line for line in subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.splitlines() if line.startswith("GPU ")]
    assert len(found) == len(listed) and all(gpu["name"] in line for gpu, line in zip(found, listed))
    assert all(gpu["driver"] for gpu in found) and provenance.hardware()["gpu_driver"] == found[0]["driver"]


def test_a_pool_file_is_hashed(make_config, tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"problem_id": "gsm8k-test-0", "candidate_id": "a", "text": "A: 18"}\n')
    result = run(make_config("judge=none", "pool=file", f"pool.path={pool}", "tracking.enabled=false"))
    data = manifest.read(result.output_dir).data
    assert data["pool_file"] == str(pool.resolve()) and data["pool_sha256"] == file_sha256(pool)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda m: m.pop("seeds"), "field seeds: Field required", id="missing-part"),
        pytest.param(lambda m: m.update(extra=1), "field extra: Extra inputs are not permitted", id="unknown-key"),
        pytest.param(lambda m: m.update(model=[]), "field model: Input should be a valid dictionary", id="wrong-type"),
    ],
)
def test_a_broken_manifest_is_named_by_field(make_config, edit, message) -> None:
    result = run(make_config("judge=none", "limit=1", "tracking.enabled=false"))
    path = result.output_dir / "manifest.json"
    written = json.loads(path.read_text())
    edit(written)
    path.write_text(json.dumps(written))
    with pytest.raises(HarnessError, match=f"manifest.json: {message}"):
        manifest.read(result.output_dir)


def test_an_unusable_tracking_uri_stops_the_run_before_any_work(make_config) -> None:
    config = make_config("judge=none", "limit=1", "tracking.uri=nosuchscheme://host/x")
    with pytest.raises(HarnessError, match=r"tracking.uri='nosuchscheme://host/x': MLflow has no tracking store for this URI"):
        run(config)
    assert not Path(config.output_dir).exists()
