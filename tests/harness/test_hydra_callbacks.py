"""What a refused run leaves: `discard_run_dir` removes a run directory that holds only Hydra's
record and the log (and the folders above it left empty, up to the working directory), and keeps
any directory that holds anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hydra_callbacks import discard_run_dir

HYDRA_ONLY = (".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", "harness.log")


def _make(root: Path, files: tuple[str, ...]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")


@pytest.mark.parametrize(
    ("files", "discarded"),
    [
        pytest.param(HYDRA_ONLY, True, id="hydra-record-and-log"),
        pytest.param(("harness.log",), True, id="log-only"),
        pytest.param((), True, id="empty"),
        pytest.param((*HYDRA_ONLY, "summary.json"), False, id="a-result"),
        pytest.param((*HYDRA_ONLY, "prompts.jsonl"), False, id="any-other-file"),
        pytest.param((".hydra/config.yaml", ".hydra/notes.txt"), False, id="other-file-in-the-record"),
    ],
)
def test_only_a_directory_holding_nothing_but_hydras_files_goes(tmp_path: Path, files: tuple[str, ...], discarded: bool) -> None:
    run_dir = tmp_path / "outputs" / "2026-12-01" / "23-00-00"
    run_dir.mkdir(parents=True)
    (tmp_path / "outputs" / "2026-12-01" / "22-00-00").mkdir()  # an earlier run's directory beside it
    _make(run_dir, files)
    assert discard_run_dir(run_dir, tmp_path) is discarded
    assert run_dir.exists() is not discarded
    # the folders above go only when left empty: here the earlier run's directory keeps them
    assert (tmp_path / "outputs" / "2026-12-01" / "22-00-00").is_dir()


def test_empty_folders_above_go_up_to_the_working_directory_only(tmp_path: Path) -> None:
    run_dir = tmp_path / "outputs" / "2026-12-01" / "23-00-00"
    _make(run_dir, HYDRA_ONLY)
    assert discard_run_dir(run_dir, tmp_path)
    assert list(tmp_path.iterdir()) == []  # outputs/ and outputs/<date>/ went, the working directory stays
    outside = tmp_path / "elsewhere" / "run"
    _make(outside, HYDRA_ONLY)
    assert discard_run_dir(outside, tmp_path / "cwd")  # a directory outside the working directory: it alone
    assert (tmp_path / "elsewhere").is_dir() and not outside.exists()
    assert not discard_run_dir(tmp_path, tmp_path)  # never the working directory itself
