"""`python -m harness.review RUN list|show|label|decline|stats`: review a run's flagged items without a browser.

    python -m harness.review RUN list                         # every item: status, flags, scores, verdict, label
    python -m harness.review RUN show 3                       # item 3: problem, candidate, judges, violations, audit
    python -m harness.review RUN label 3 --hack yes --kind process_exit --note "exits before the tests"
    python -m harness.review RUN decline 3                    # will not be reviewed: counts in no statistic
    python -m harness.review RUN stats                        # shield precision and recall, each judge's kappa

RUN is the run's output directory (it holds `review.json`); `stats RUN` works too. An answer is the
same `Feedback` the MLflow UI writes (source `HUMAN`, the reviewer's name as its source id, default
$USER), on the item's trace, and marks the item complete in the run's review queue. `stats` logs its
`review.*` metrics on the run, where `python -m harness.compare --metrics review.shield_precision,...`
shows them beside the others. `--tracking-uri` replaces the URI the run used (review.json holds it
with a relative `sqlite:` path made absolute). Bad input is one `error:` line and exit 2.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.core import HarnessError
from harness.review import queue as review_queue
from harness.review import record as review_record
from harness.review.items import ItemView, load_items
from harness.review.stats import LabelledItem, review_stats

VERBS = ("list", "show", "label", "decline", "stats")
ANSWERS = {"yes": True, "no": False}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.review", description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the run's output directory (holds review.json)")
    parser.add_argument("--tracking-uri", default=None, help="the tracking URI to read (default: the one the run used)")
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("list", help="every item of the run's review queue, one line each")
    show = verbs.add_parser("show", help="one item in full")
    show.add_argument("item", type=int, help="the item's number in `list`")
    label = verbs.add_parser("label", help="answer an item's questions (a HUMAN assessment) and mark it complete")
    label.add_argument("item", type=int)
    label.add_argument("--hack", required=True, choices=sorted(ANSWERS), help="is this pick a reward hack?")
    label.add_argument("--kind", default=None, help="which kind (one of the options `show` lists)")
    label.add_argument("--note", default=None, help="a free-text note")
    label.add_argument("--reviewer", default=None, help="who answers (default: $USER)")
    decline = verbs.add_parser("decline", help="mark an item as not to be reviewed")
    decline.add_argument("item", type=int)
    decline.add_argument("--reviewer", default=None)
    stats = verbs.add_parser("stats", help="the shield's precision and recall and each judge's kappa against the labels")
    stats.add_argument("--bootstrap-samples", type=int, default=1000)
    stats.add_argument("--json", action="store_true", help="print the metrics as JSON")
    return parser


def _arguments(argv: Sequence[str]) -> list[str]:
    """`stats RUN` as well as `RUN stats`: a verb first is moved behind the run directory."""
    items = list(argv)
    if len(items) >= 2 and items[0] in VERBS and items[1] not in VERBS:
        items[0], items[1] = items[1], items[0]
    return items


def _load(args: argparse.Namespace) -> review_record.ReviewRecord:
    import mlflow

    record = review_record.read(args.run)
    if args.tracking_uri:
        record = record.model_copy(update={"tracking_uri": args.tracking_uri})
    mlflow.set_tracking_uri(record.tracking_uri)
    return record


def _statuses(record: review_record.ReviewRecord) -> dict[str, str]:
    return review_queue.item_statuses(record.queue_id) if record.queue_id else {}


def _number(record: review_record.ReviewRecord, number: int) -> int:
    if not 1 <= number <= len(record.items):
        raise HarnessError(f"item {number}: the run has items 1 to {len(record.items)}" if record.items else "the run has no review items")
    return number


def _score(value: object) -> str:
    return "-" if value is None else f"{float(value):.2f}"  # type: ignore[arg-type]


def _line(view: ItemView) -> str:
    judges = " ".join(f"{name}={_score(found['score'])}" for name, found in view.judges.items()) or "no judge"
    verdict = view.shield["verdict"] if view.shield else "-"
    label = "-" if view.label is None or view.label.hack is None else ("hack" if view.label.hack else "not a hack")
    return (
        f"{view.number:>3}  {view.status:<8}  {view.recorded.problem_id} / {view.recorded.candidate_id}  "
        f"shield={verdict}  {judges}  human={label}  [{', '.join(view.recorded.flags)}]"
    )


def _show(view: ItemView, kinds: Sequence[str]) -> str:
    lines = [
        f"item {view.number}: {view.recorded.problem_id} / {view.recorded.candidate_id}  (trace {view.recorded.trace_id}, {view.status})",
        f"flagged: {', '.join(view.recorded.flags)}",
        "",
        "problem:",
        view.problem,
        "",
        "candidate:",
        view.candidate,
        "",
        "judges:",
    ]
    for name, found in view.judges.items():
        output = (found.get("output") or "").strip().replace("\n", " ")
        lines.append(f"  {name}: score {_score(found['score'])} ({found.get('status')}, {found.get('protocol')}) output: {output[:300]}")
    if not view.judges:
        lines.append("  (no judge)")
    if view.shield:
        lines += ["", f"shield: {view.shield['verdict']}, compliance {view.shield['compliance']}, {view.shield['hack_class']}"]
        for violation in view.violations:
            where = f"event {violation.get('event_index')}" if violation.get("event_index", -1) != -1 else "the whole trace"
            lines.append(f"  {violation['stage']}: {violation['kind']} at {where}, node {violation.get('node') or '-'}: {violation.get('message')}")
            if violation.get("expression"):
                lines.append(f"      {violation['expression']}  with {json.dumps(violation['values'], default=str)[:300]}")
    audit = ", ".join(f"{key}={value}" for key, value in view.audit.items() if value is not None)
    lines += ["", f"audit: {audit}"]
    if view.label is not None:
        lines.append(f"human: hack={view.label.hack} kind={view.label.kind} note={view.label.note!r} by {view.label.reviewer}")
    lines += ["", f"kinds: {', '.join(kinds)}"]
    return "\n".join(lines)


def _label(args: argparse.Namespace, record: review_record.ReviewRecord) -> str:
    import mlflow
    from mlflow.entities import AssessmentSource, AssessmentSourceType

    item = record.items[_number(record, args.item) - 1]
    if args.kind is not None and args.kind not in record.kinds:
        raise HarnessError(f"--kind {args.kind!r} is not an option; the options are: {', '.join(record.kinds)}")
    reviewer = args.reviewer or getpass.getuser()
    source = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id=reviewer)
    answers = [(review_queue.HACK, ANSWERS[args.hack]), (record.kind_schema, args.kind), (review_queue.NOTE, args.note)]
    for name, value in answers:
        if value is not None:
            mlflow.log_feedback(trace_id=item.trace_id, name=name, value=value, source=source)
    if record.queue_id:
        review_queue.set_status(record.queue_id, item.trace_id, "complete", reviewer)
    return f"item {args.item}: {'a reward hack' if ANSWERS[args.hack] else 'not a hack'}, recorded as {reviewer} (HUMAN) on trace {item.trace_id}"


def _decline(args: argparse.Namespace, record: review_record.ReviewRecord) -> str:
    item = record.items[_number(record, args.item) - 1]
    if not record.queue_id:
        raise HarnessError("this run has no review queue (its tracking store has none), so nothing can be declined")
    review_queue.set_status(record.queue_id, item.trace_id, "declined", args.reviewer or getpass.getuser())
    return f"item {args.item}: declined"


def labelled_items(views: Sequence[ItemView]) -> list[LabelledItem]:
    return [
        LabelledItem(
            shield_verdict=view.shield["verdict"] if view.shield else None,
            judge_scores={name: found["score"] for name, found in view.judges.items()},
            status=view.status,
            human_hack=None if view.label is None else view.label.hack,
        )
        for view in views
    ]


def _stats(args: argparse.Namespace, record: review_record.ReviewRecord) -> str:
    from mlflow.tracking import MlflowClient

    from harness.tracking import log_values, numeric_metrics

    views = load_items(record, _statuses(record))
    stats = review_stats(labelled_items(views), threshold=record.threshold, bootstrap_samples=args.bootstrap_samples, seed=record.seed)
    log_values(MlflowClient(tracking_uri=record.tracking_uri), record.run_id, {}, {}, numeric_metrics(stats))
    if args.json:
        return json.dumps(stats, indent=2, sort_keys=True)
    width = max(len(key) for key in stats)
    return "\n".join(f"{key:<{width}}  {'-' if value is None else round(value, 3)}" for key, value in stats.items() if not key.endswith(("_ci_low", "_ci_high"))) + (
        "\n" + "\n".join(
            f"{key.removesuffix('_ci_low'):<{width}}  95% [{round(value, 3)}, {round(stats[key.removesuffix('_ci_low') + '_ci_high'], 3)}]"
            for key, value in stats.items()
            if key.endswith("_ci_low") and value is not None
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    from mlflow.exceptions import MlflowException

    args = _parser().parse_args(_arguments(sys.argv[1:] if argv is None else argv))
    try:
        record = _load(args)
        if args.verb == "list":
            views = load_items(record, _statuses(record))
            where = f"review queue {record.queue_name!r}" if record.queue_id else "review.json (the store has no review queues)"
            print(f"{len(views)} items in {where}, experiment {record.experiment_id}, run {record.run_id}")
            print("\n".join(_line(view) for view in views))
        elif args.verb == "show":
            [view] = load_items(record, _statuses(record), [_number(record, args.item)])
            print(_show(view, record.kinds))
        elif args.verb == "label":
            print(_label(args, record))
        elif args.verb == "decline":
            print(_decline(args, record))
        else:
            print(_stats(args, record))
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except MlflowException as error:
        print(f"error: MLflow: {(str(error).splitlines() or [type(error).__name__])[0]}", file=sys.stderr)
        return 2
    return 0
