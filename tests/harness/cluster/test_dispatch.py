"""The scheduling policy on a virtual clock: pull, backpressure, stealing, resubmission."""

from __future__ import annotations

import heapq

import pytest

from harness.cluster.dispatch import BatchFailed, Dispatcher
from harness.core.errors import HarnessError


def simulate(sizes: list[int], speeds: dict[str, float], max_inflight: int = 2, steal: bool = True) -> tuple[float, Dispatcher, list]:
    """Run the dispatcher against replicas that process their queue in order at `speeds` requests/s."""
    dispatcher = Dispatcher(sizes, list(speeds), max_inflight=max_inflight, steal=steal)
    free_at = {replica: 0.0 for replica in speeds}
    events: list[tuple[float, int, str, int]] = []
    log, now, tie = [], 0.0, 0
    while not dispatcher.done:
        for replica, batch in dispatcher.assignments(now):
            start = max(now, free_at[replica])
            free_at[replica] = start + sizes[batch] / speeds[replica]
            tie += 1
            heapq.heappush(events, (free_at[replica], tie, replica, batch))
        now, _, replica, batch = heapq.heappop(events)
        log.append((replica, batch, dispatcher.finished(replica, batch, now)))
    return now, dispatcher, log


def test_every_batch_is_answered_exactly_once_and_fast_replicas_take_more() -> None:
    sizes = [16] * 40
    makespan, dispatcher, log = simulate(sizes, {"fast": 4.0, "slow": 1.0})
    used = [batch for _, batch, first in log if first]
    assert sorted(used) == list(range(40))
    by_fast = sum(1 for replica, _, first in log if first and replica == "fast")
    assert by_fast >= 30
    assert makespan <= 1.15 * sum(sizes) / 5.0


def test_backpressure_never_queues_more_than_max_inflight_per_replica() -> None:
    dispatcher = Dispatcher([1] * 10, ["a", "b"], max_inflight=2)
    first = dispatcher.assignments(0.0)
    assert sorted(replica for replica, _ in first) == ["a", "a", "b", "b"]
    assert dispatcher.assignments(0.0) == []
    dispatcher.finished("a", first[0][1], 1.0)
    assert [replica for replica, _ in dispatcher.assignments(1.0)] == ["a"]


def test_tail_stealing_beats_static_pull_with_a_very_slow_replica() -> None:
    sizes = [16] * 12
    speeds = {"fast": 10.0, "slow": 0.5}
    with_steal, stealing, _ = simulate(sizes, speeds, steal=True)
    without, _, _ = simulate(sizes, speeds, steal=False)
    assert stealing.copies >= 1
    assert with_steal < without
    assert with_steal <= 1.15 * sum(sizes) / sum(speeds.values())


def test_a_late_copy_is_not_used_twice() -> None:
    dispatcher = Dispatcher([4, 4], ["a", "b"], max_inflight=1)
    dispatcher.assignments(0.0)
    assert dispatcher.finished("a", 0, 1.0)
    dispatcher.finished("b", 1, 1.0)
    assert dispatcher.done


def test_a_failed_batch_is_resubmitted_once_then_the_run_fails() -> None:
    dispatcher = Dispatcher([2, 2], ["a", "b"], max_inflight=1, steal=False)
    assert dispatcher.assignments(0.0) == [("a", 0), ("b", 1)]
    dispatcher.failed("a", 0, 1.0, "actor died")
    assert dispatcher.resubmissions == 1
    assert dispatcher.assignments(1.0) == [("a", 0)]
    with pytest.raises(BatchFailed, match="batch 0 failed twice"):
        dispatcher.failed("a", 0, 2.0, "actor died again")


def test_a_finished_batch_is_never_resubmitted() -> None:
    dispatcher = Dispatcher([2], ["a"], max_inflight=1)
    dispatcher.assignments(0.0)
    dispatcher.finished("a", 0, 1.0)
    dispatcher.failed("a", 0, 1.0, "late error")
    assert dispatcher.done and dispatcher.resubmissions == 0 and dispatcher.assignments(2.0) == []


def test_paused_replicas_get_no_work_and_losing_all_of_them_is_an_error() -> None:
    dispatcher = Dispatcher([1, 1, 1], ["a", "b"], max_inflight=1, steal=False)
    dispatcher.assignments(0.0)
    dispatcher.failed("a", 0, 1.0, "died")
    dispatcher.pause("a")
    dispatcher.finished("b", 1, 1.0)
    assert dispatcher.assignments(1.0) == [("b", 0)]
    dispatcher.resume("a", 2.0)
    assert dispatcher.assignments(2.0) == [("a", 2)]
    dispatcher.lose("a")
    dispatcher.lose("b")
    with pytest.raises(HarnessError, match="every replica"):
        dispatcher.assignments(3.0)
