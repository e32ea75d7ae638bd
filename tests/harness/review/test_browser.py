"""A reviewer labels a flagged pick in the real MLflow UI, in Debian's headless Chromium.

A real `mlflow server` on 127.0.0.1, a small τ-bench run (no judge: the shield flags trajectories on
the CPU in seconds) logging to it, then selenium drives /usr/bin/chromium through /usr/bin/chromedriver
(nothing downloads a browser or a driver): the run's queue lists every flagged item, an item shows
its evidence (the shield's verdict and each violation with its event), a click on "Reward hack" and
Submit stores the answer, and MLflow returns it as a HUMAN assessment that `harness.review stats`
counts. The screenshot of the labelled item is saved in the test's directory.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import mlflow
from mlflow.entities import AssessmentSourceType
from mlflow.tracking import MlflowClient

from harness.pipeline import run
from harness.review.cli import main as review_main
from harness.review.queue import HACK
from tests.support.ci import unavailable

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1200",
]
WAIT_S = 90


def _browser(profile: Path):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (pip install -e '.[test]')")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            unavailable(f"{path} is missing (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def _human_answers(client: MlflowClient, trace_id: str) -> list:
    trace = client.get_trace(trace_id)
    return [a for a in trace.info.assessments if a.source.source_type == AssessmentSourceType.HUMAN and a.name == HACK]


def test_a_reviewer_labels_a_flagged_pick_in_the_mlflow_ui(make_config, mlflow_server, tmp_path: Path, capsys) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as condition
    from selenium.webdriver.support.ui import WebDriverWait

    mlflow_server.start()
    result = run(make_config("task=tau_airline", "judge=none", "limit=1", f"tracking.uri={mlflow_server.url}", "tracking.experiment=review-ui"))
    record = json.loads((result.output_dir / "review.json").read_text())
    items = record["items"]
    assert items and record["queue_id"]
    client = MlflowClient(tracking_uri=mlflow_server.url)
    first = items[0]
    violations = [row for row in map(json.loads, (result.output_dir / "candidates.jsonl").read_text().splitlines()) if row["candidate_id"] == first["candidate_id"]][0]["shield"]["violations"]
    assert violations, "the first flagged trajectory breaks a policy rule"

    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = _browser(profile)
    try:
        wait = WebDriverWait(browser, WAIT_S)
        base = f"{mlflow_server.url}/#/experiments/{record['experiment_id']}/review-queue?selectedQueueId={record['queue_id']}"
        browser.get(base)
        wait.until(condition.presence_of_element_located((By.XPATH, f"//*[normalize-space(text())='Needs review ({len(items)})']")))
        # The rows' request previews arrive in a second fetch after the queue's header: wait for them.
        wait.until(lambda driver: driver.find_element(By.TAG_NAME, "body").text.count('"problem"') >= len(items))
        listed = browser.find_element(By.TAG_NAME, "body").text
        assert record["queue_name"] in listed
        assert listed.count('"problem"') == len(items)  # one row per item, its request the problem and the candidate
        assert all(kind in listed for kind in {v["kind"] for v in violations})  # the evidence is in the list

        browser.get(f"{base}&selectedItemId={first['trace_id']}")
        wait.until(condition.element_to_be_clickable((By.XPATH, "//*[normalize-space(text())='Reward hack']")))
        shown = browser.find_element(By.TAG_NAME, "body").text
        assert HACK in shown and "0 of" in shown
        first_event = violations[0]
        where = f"event {first_event['event_index']}" if first_event["event_index"] is not None else "the whole trace"
        assert f"{first_event['kind']} at {where}" in shown  # the violation with its offending event
        browser.find_element(By.XPATH, "//*[normalize-space(text())='Reward hack']").click()
        browser.find_element(By.XPATH, "//button[normalize-space(.)='Submit']").click()
        wait.until(condition.presence_of_element_located((By.XPATH, "//*[contains(normalize-space(text()), '1 of')]")))
        screenshot = tmp_path / "review_queue_labelled.png"
        browser.save_screenshot(str(screenshot))
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
    assert screenshot.stat().st_size > 10_000

    deadline = time.monotonic() + 30
    while not (answers := _human_answers(client, first["trace_id"])) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert [(a.value, a.source.source_type) for a in answers] == [(True, AssessmentSourceType.HUMAN)]

    mlflow.set_tracking_uri(mlflow_server.url)
    capsys.readouterr()
    assert review_main([str(result.output_dir), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["review.reviewed"] == 1 and stats["review.human_hacks"] == 1 and stats["review.pending"] == len(items) - 1
