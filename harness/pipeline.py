"""One run, wired from plain stages: task -> pool -> judges -> audit -> selection -> metrics -> outputs.

Each stage takes and returns plain values, so each is testable alone. The anchors go to the auditor
only; the judges receive public views. Output files are written only when every stage succeeded:
a failed run leaves no summary.json that could be mistaken for a result.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from tqdm import tqdm

from harness import manifest
from harness.adversarial import attack_selection_rates, plant_attacks
from harness.analysis import analyse_run
from harness.audit import audit
from harness.cluster import open_cluster
from harness.config import RunConfig
from harness.console_report import bar_chart, summary_table
from harness.core import CallCache, HarnessError, Stopped
from harness.generation import GenerationStopped, generate_pool
from harness.metrics import FORMAT_VERSION, disagreement_counts, selection_summary, summarise
from harness.pools import read_pool_file, select_run
from harness.preemption import record_attempt
from harness.review import record_review
from harness.selection import CandidateRecord, ProblemResult, majority_answer, pick_best, pick_probabilities, problem_rng, reselect
from harness.shielded_selection import shield_results, shield_summary
from harness.tracking import TrackedRun, flatten, tracked_run
from harness.validation import check_config
from judges import Judge, JudgeRequest, Verdict, aggregate, build_judges, load_protocol, resolve_model_file
from tasks import AnchorStore, Candidate, PublicProblem, TaskData, load_task

log = logging.getLogger(__name__)

Groups = list[tuple[PublicProblem, list[Candidate]]]


@dataclass(frozen=True)
class RunResult:
    summary: dict[str, Any]
    output_dir: Path
    mlflow_run_id: str | None


def prepare_output_dir(path: Path) -> Path:
    """`path`, created if need be and checked writable; a directory that is not is one line (HarnessError)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        raise HarnessError(f"output directory {path} is not writable: {error.strerror}") from error
    return path


def _generated(
    config: RunConfig, task: TaskData, cache: CallCache, output_dir: Path, replica_log: Path, stop: threading.Event | None
) -> tuple[list[Candidate], str, dict[str, int]]:
    """The generated pool's candidates, the file they were written to, and the policy model's call counts.

    The policy model runs on the run's cluster as the judges do, in a cluster of its own: its
    replicas (and the GPUs they hold) are released before the judges' start."""
    output = Path(config.pool.path) if config.pool.path else output_dir / "pool.jsonl"
    try:
        with open_cluster(config.cluster, replica_log, stop) as cluster:
            problems = task.problems[: config.limit]
            candidates, stats = generate_pool(problems, config.pool, config.pool.template, cache, config.seed, output, cluster.executor)
    except GenerationStopped as stopped:
        calls, hits = stopped.stats.calls, stopped.stats.cache_hits
        record_attempt(output_dir, "stopped", judge_calls=0, cache_hits=0, generator_calls=calls, generator_cache_hits=hits, signal_name=_signal(stop))
        raise _resumable(stopped, f"{calls} policy-model calls") from None
    return candidates, str(output), {"generator_calls": stats.calls, "generator_cache_hits": stats.cache_hits}


def _signal(stop: threading.Event | None) -> str | None:
    """The signal that set `stop` (a `StopRequest` names it), for the attempt record."""
    return getattr(stop, "signal_name", None)


def _resumable(stopped: Stopped, done: str) -> Stopped:
    """The error a stopped stage ends the run with: what it finished, and that rerunning resumes."""
    return Stopped(f"{stopped} after {done}, all kept in the cache; run the same command again to resume")


def _stored_candidates(config: RunConfig, task: TaskData) -> tuple[list[Candidate], str]:
    source = config.pool.base if config.pool.kind == "adversarial" else config.pool.kind
    if source == "task":
        return task.default_pool(), f"{task.name} default pool"
    assert source == "file" and config.pool.path  # check_config refused anything else
    return read_pool_file(config.pool.path, {problem.problem_id for problem in task.problems}), config.pool.path


def _log_ensemble(config: RunConfig) -> None:
    members = ", ".join(f"{key} ({member.family}, {member.backend})" for key, member in config.judge.member_configs().items())
    log.info("judge %s: %s; aggregate=%s", config.judge.name, members or "no members", config.judge.aggregate)
    present = {member.family for member in config.judge.members.values()}
    missing = [family for family in config.judge.families if family not in present]
    if missing:
        log.info(
            "judge %s runs the CPU judges of the families that have one (%s); no CPU judge for: %s",
            config.judge.name,
            ", ".join(sorted(present)),
            ", ".join(missing),
        )


def judging_order(groups: Groups, shuffle: bool, seed: int) -> list[int]:
    """Indices of the flat request list in the order judges see them: problem by problem (so a
    problem's candidates share an engine's prefix cache), each problem's candidates shuffled with the
    run seed when the protocol asks for it."""
    order, start = [], 0
    for problem, candidates in groups:
        indices = list(range(start, start + len(candidates)))
        if shuffle:
            problem_rng(seed, problem.problem_id).shuffle(indices)
        order.extend(indices)
        start += len(candidates)
    return order


def _judge_all(
    judges: Sequence[Judge], requests: Sequence[JudgeRequest], order: Sequence[int], concurrent: bool
) -> dict[str, list[Verdict]]:
    """Each judge's verdicts, indexed like `requests`, judged in `order`.

    On a Ray cluster the members are judged at the same time (each on its own replicas), so an
    ensemble keeps every family's GPUs busy; inline they take turns on this machine.
    """
    ordered = [requests[index] for index in order]

    def judge_one(position: int, judge: Judge) -> list[Verdict]:
        with tqdm(total=len(requests), desc=f"judging [{judge.name}]", unit="cand", leave=False, position=position) as bar:
            in_order = judge.judge(ordered, progress=bar.update)
        by_index = dict(zip(order, in_order))
        return [by_index[index] for index in range(len(requests))]

    if not concurrent or len(judges) < 2:
        return {judge.name: judge_one(0, judge) for judge in judges}
    with ThreadPoolExecutor(max_workers=len(judges), thread_name_prefix="judge") as pool:
        futures = {judge.name: pool.submit(judge_one, position, judge) for position, judge in enumerate(judges)}
        return {name: future.result() for name, future in futures.items()}


def _results(
    config: RunConfig, groups: Groups, outcomes: list[list[Any]], verdicts: dict[str, list[Verdict]], judged: bool
) -> list[ProblemResult]:
    results, flat_index = [], 0
    for (problem, candidates), problem_outcomes in zip(groups, outcomes):
        records = []
        for candidate, outcome in zip(candidates, problem_outcomes):
            member_verdicts = {name: found[flat_index] for name, found in verdicts.items()}
            score = aggregate([v.score for v in member_verdicts.values()], config.judge.aggregate, config.judge.threshold)
            records.append(CandidateRecord(candidate, outcome, member_verdicts, score if judged else None))
            flat_index += 1
        selected = pick_best([r.ensemble_score for r in records], problem_rng(config.seed, problem.problem_id)) if judged else None
        majority = majority_answer([r.outcome.extracted_answer for r in records], problem_rng(config.seed + 1, problem.problem_id))
        majority_correct = any(r.outcome.correct for r in records if majority is not None and r.outcome.extracted_answer == majority)
        results.append(ProblemResult(problem.problem_id, tuple(records), selected, majority_correct))
    return results


def _reselect_reversed(results: Sequence[ProblemResult], seed: int) -> list[ProblemResult] | None:
    """The selection with each problem's candidates in reversed order, for `order_invariance`.

    Verdicts are per candidate and content-cached, so reversing the order cannot change a score;
    it can change a pick only through the seeded tie-break, which is what this measures.
    """
    if all(result.selected is None for result in results):
        return None
    reversed_order = [dataclasses.replace(result, candidates=tuple(reversed(result.candidates))) for result in results]
    return reselect(reversed_order, lambda record: record.ensemble_score, seed)


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    partial = path.with_suffix(path.suffix + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    partial.replace(path)
    return path


def _candidate_rows(results: Sequence[ProblemResult], anchors: AnchorStore) -> list[dict[str, Any]]:
    """The audit's per-candidate record. It may name anchors' verdicts and planted attacks: it is
    written after judging and never read back into a prompt."""
    rows = []
    for result in results:
        chances = pick_probabilities([record.ensemble_score for record in result.candidates])
        shielded_chances = pick_probabilities([record.shielded_score for record in result.candidates])
        for index, record in enumerate(result.candidates):
            details = record.outcome.details
            rows.append(
                {
                    "format_version": FORMAT_VERSION,
                    "problem_id": result.problem_id,
                    "candidate_id": record.candidate.candidate_id,
                    "source": record.candidate.source,
                    "anchor_correct": record.outcome.correct,
                    "outcome": record.outcome.outcome,
                    "extracted_answer": record.outcome.extracted_answer,
                    "attack": anchors.planted_kind(result.problem_id, record.candidate.candidate_id),
                    "checker_disagreement": details.get("checker_disagreement"),
                    "scores": {name: verdict.score for name, verdict in record.verdicts.items()},
                    "verdicts": {
                        name: {"status": verdict.status, "reason": verdict.reason, "output": verdict.raw_text}
                        for name, verdict in record.verdicts.items()
                    },
                    "ensemble_score": record.ensemble_score,
                    "selected": result.selected == index,
                    "pick_probability": chances[index],
                }
            )
            if record.shield is not None:
                rows[-1]["shield"] = record.shield.model_dump(mode="json")
                rows[-1]["shielded_score"] = record.shielded_score
                rows[-1]["shielded_selected"] = result.shielded_selected == index
                rows[-1]["shielded_pick_probability"] = shielded_chances[index]
    return rows


def run(config: RunConfig, stop: threading.Event | None = None) -> RunResult:
    """Execute one run and return its summary; raises `HarnessError` on bad input.

    When `stop` is set during judging, the batches in flight land in the cache, the attempt is
    appended to `attempts.jsonl` and `Stopped` is raised; no summary is written. Every run that
    finishes appends its attempt too, so a requeued job's history shows each call made once.
    """
    check_config(config)
    output_dir = prepare_output_dir(Path(config.output_dir))
    protocol = load_protocol(config.protocol)
    task = load_task(config.task)
    # A stored pool is read, and a bad one (or a bad model file) refused, before the cache or anything else is made.
    stored = None if config.pool.kind == "generate" else _stored_candidates(config, task)
    for member in config.judge.member_configs().values():
        if member.backend == "cpu":
            resolve_model_file(member.model)
    cache = CallCache(config.cache.path if config.cache.enabled else None)
    replica_log = output_dir / "replicas.jsonl"
    replica_log.unlink(missing_ok=True)
    if stored is None:
        candidates, origin, generation = _generated(config, task, cache, output_dir, replica_log, stop)
    else:
        (candidates, origin), generation = stored, {}
    groups: Groups = select_run(task.problems, candidates, limit=config.limit, n=config.n, origin=origin)
    if not groups:
        raise HarnessError(f"{origin} has no candidates for any {task.name} problem")
    if config.pool.kind == "adversarial":
        groups = plant_attacks(groups, task.anchors, config.pool, config.seed)
    judged = bool(config.judge.members)
    _log_ensemble(config)
    log.info("%s: %d problems, %d candidates from %s", task.name, len(groups), sum(len(c) for _, c in groups), origin)

    resolved = OmegaConf.to_yaml(OmegaConf.structured(config))
    prompt_path = output_dir / "prompts.jsonl"
    run_name, run_uid = f"{task.name}-{config.judge.name}-{protocol.name}", manifest.unfinished_uid(output_dir, config)
    with tracked_run(config.tracking, run_name, output_dir, run_uid) as tracked, prompt_path.open(
        "w", encoding="utf-8"
    ) as prompt_log:
        tracked.log_params(flatten(dataclasses.asdict(config)))
        requests = [
            JudgeRequest(problem, protocol.candidate_view(candidate, task.extract_answer))
            for problem, group in groups
            for candidate in group
        ]
        with open_cluster(config.cluster, replica_log, stop) as cluster:
            judges, _ = build_judges(config.judge, protocol, cache, prompt_log, config.seed, cluster.executor)
            manifest_path = _write_manifest(config, tracked, task.data_hash, protocol.template_hash, output_dir)
            try:
                verdicts = _judge_all(judges, requests, judging_order(groups, protocol.shuffle, config.seed), cluster.concurrent)
            except Stopped as stopped:
                calls, hits = sum(judge.stats.calls for judge in judges), sum(judge.stats.cache_hits for judge in judges)
                record_attempt(output_dir, "stopped", judge_calls=calls, cache_hits=hits, signal_name=_signal(stop))
                raise _resumable(stopped, f"{calls} judge calls") from None
        outcomes = audit(groups, task.anchors)
        results = _results(config, groups, outcomes, verdicts, judged)
        title = f"{task.name} | judge={config.judge.name} | protocol={protocol.name}"
        results, summary, figures = _measure(config, task, [problem for problem, _ in groups], results, judges, output_dir, title)
        review_metrics, review_files = record_review(config, task, [problem for problem, _ in groups], results, tracked, output_dir, prompt_path)
        summary.update(review_metrics)
        summary.update(generation)
        summary["judge_calls"] = sum(judge.stats.calls for judge in judges)
        summary["cache_hits"] = sum(judge.stats.cache_hits for judge in judges)
        files = _write_outputs(output_dir, resolved, results, summary, title, task.anchors)
        files.append(
            record_attempt(
                output_dir,
                "finished",
                judge_calls=summary["judge_calls"],
                cache_hits=summary["cache_hits"],
                generator_calls=generation.get("generator_calls"),
                generator_cache_hits=generation.get("generator_cache_hits"),
            )
        )
        files += [manifest_path, prompt_path, *figures, *review_files]
        if config.pool.kind == "generate":
            files.append(Path(origin))
        if replica_log.exists():
            files.append(replica_log)
        tracked.log_metrics(summary)
        tracked.log_artifacts(files)
    cache.close()
    print(summary_table(summary, f"{task.name} best-of-N audit | judge={config.judge.name} | protocol={protocol.name}"))
    print(f"outputs: {output_dir}" + (f"  mlflow run: {tracked.run_id}" if tracked.mode == "online" else ""))
    notice = tracked.notice(summary.get("traces.not_logged", 0))
    if notice:
        print(notice)
    return RunResult(summary=summary, output_dir=output_dir, mlflow_run_id=tracked.run_id if tracked.mode == "online" else None)


def _measure(
    config: RunConfig,
    task: TaskData,
    problems: Sequence[PublicProblem],
    results: list[ProblemResult],
    judges: Sequence[Judge],
    output_dir: Path,
    title: str,
) -> tuple[list[ProblemResult], dict[str, Any], list[Path]]:
    """Every metric of the run: the headline ones, each member's, the shield's, the planted attacks',
    and the analyses (whose figures are returned). Returns the results with shield reports added."""
    judged = bool(judges)
    samples, seed = config.bootstrap_samples, config.seed
    summary = {"format_version": FORMAT_VERSION, **summarise(results, judged=judged, bootstrap_samples=samples, seed=seed)}
    if len(judges) > 1:
        for judge in judges:  # reselect scores at once, so the lambda reads this iteration's judge
            member = reselect(results, lambda record: record.verdicts[judge.name].score, seed)
            summary.update(selection_summary(member, f"member.{judge.name}.", judged=True, bootstrap_samples=samples, seed=seed))
    if config.shield.enabled:
        results = shield_results(results, problems, task, config.shield, seed)
        summary.update(shield_summary(results, judged=judged, bootstrap_samples=samples, seed=seed))
    if config.pool.kind == "adversarial" and judged:
        summary.update(attack_selection_rates(results, task.anchors))
        if config.shield.enabled:
            summary.update(attack_selection_rates(results, task.anchors, shielded=True))
    analysis = analyse_run(
        results,
        output_dir,
        seed=seed,
        judge_families={key: member.family for key, member in config.judge.members.items()},
        reordered=_reselect_reversed(results, seed),
        title=title,
    )
    summary.update(analysis["metrics"])
    summary["curve"] = analysis["curve"]
    return results, summary, [Path(path) for path in analysis["files"]]


def _write_manifest(config: RunConfig, tracked: TrackedRun, data_hash: str, template_hash: str, output_dir: Path) -> Path:
    """manifest.json, and the same facts as the run's MLflow tags."""
    built = manifest.build(config, tracked.run_uid, data_hash, template_hash)
    tracked.set_tags(manifest.tags(built))
    return manifest.write(built, output_dir)


def _write_outputs(
    output_dir: Path, resolved: str, results: Sequence[ProblemResult], summary: dict[str, Any], title: str, anchors: AnchorStore
) -> list[Path]:
    config_path = output_dir / "resolved_config.yaml"
    config_path.write_text(resolved, encoding="utf-8")
    rows = _candidate_rows(results, anchors)
    candidates_path = _write_jsonl(output_dir / "candidates.jsonl", rows)
    disagreements = [row for row in rows if row["checker_disagreement"] is not None]
    summary["checker_disagreements"] = len(disagreements)
    summary.update(disagreement_counts(disagreements))
    extra = [_write_jsonl(output_dir / "checker_disagreements.jsonl", disagreements)] if disagreements else []
    chart_path = bar_chart(summary, output_dir / "selection_vs_baselines.png", title)
    summary_path = output_dir / "summary.json"
    partial = summary_path.with_suffix(".json.partial")
    partial.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, summary_path)
    return [summary_path, candidates_path, config_path, chart_path, *extra]
