"""`python -m harness.shield mine`: draft a graph from traces, write it, print what was inferred.

    mine --traces DIR|T.jsonl [--accept 'reward >= 1'] --out draft.json [--min-support N] [--max-enum N]
         [--format json|text] [--policy policy.md --llm MODEL --llm-url URL]

Exit 0 when the draft was written (its check findings and coverage are in the report), 2 on bad
input: an unreadable trace, a bad filter, no accepted trace, or an `--out` that already exists (a
draft never replaces a graph; a person moves it into place).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TypeVar

from harness.core import HarnessError
from harness.shield.accept import accept_filter
from harness.shield.domains import DomainOptions
from harness.shield.graph import parse_graph
from harness.shield.json_input import decode, read_bytes
from harness.shield.mine import MineOptions, MiningReport, mine
from harness.shield.propose import Generate, ProposalReport, propose, with_accepted
from harness.shield.trace import Trace, iter_traces

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)


def add_parser(commands: argparse._SubParsersAction[ParserT]) -> None:
    parser = commands.add_parser("mine", help="draft a state graph from traces taken as honest")
    parser.add_argument("--traces", required=True, help="a directory of traces, a .jsonl or a .json")
    parser.add_argument("--accept", default="true", help="CEL filter over reward, clean_reward, task_id, trace_id, meta, event_count")
    parser.add_argument("--out", required=True, help="the draft graph to write (must not exist)")
    parser.add_argument("--min-support", type=int, default=1, help="fewest accepted traces an ordering or enum value needs")
    parser.add_argument("--max-enum", type=int, default=5, help="most distinct values a parameter may have to become an enum")
    parser.add_argument("--format", choices=("json", "text"), default="text")
    parser.add_argument("--policy", metavar="FILE", help="a written policy: with --llm, a model proposes invariants from it")
    parser.add_argument("--llm", metavar="MODEL", help="the served model that proposes invariants (an OpenAI-compatible endpoint)")
    parser.add_argument("--llm-url", metavar="URL", help="the endpoint of --llm, ending in /v1 (e.g. http://127.0.0.1:8000/v1)")


def _text(report: MiningReport, out: str) -> str:
    data = report.as_json()
    kinds: dict[str, int] = {}
    for constraint in data["constraints"]:
        kinds[constraint["kind"]] = kinds.get(constraint["kind"], 0) + 1
    lines = [
        f"{out}: drafted from {data['accepted']} of {data['traces']} traces "
        f"({', '.join(f'{count} {kind}' for kind, count in kinds.items())})",
        f"coverage: {data['coverage']:.3f} of accepted traces pass the draft",
    ]
    lines += [f"  fails: {item['trace']}: {', '.join(item['kinds'])}" for item in data["failing"]]
    lines += [f"  not accepted (filter unreadable): {item['trace']}: {item['error']}" for item in data["unevaluable"]]
    lines += [f"check: {finding['kind']}: {finding['message']}" for finding in data["check"]] or ["check: clean"]
    lines += [f"not inferred: {line}" for line in data["not_inferred"]]
    return "\n".join(lines)


def _policy(path: str) -> str:
    data = read_bytes(path, "policy")
    return decode(data, path, "policy")


def _proposals(args: argparse.Namespace, report: MiningReport, named: list[tuple[str, Trace]], generate: Generate | None) -> ProposalReport | None:
    if not args.policy:
        return None
    if generate is None:
        raise HarnessError("--policy needs --llm MODEL and --llm-url URL: the model that proposes the invariants")
    accepted = set(report.accepted)
    graph = parse_graph(report.draft.graph, "mined draft")
    return propose(
        graph,
        _policy(args.policy),
        generate,
        [(name, trace) for name, trace in named if name in accepted],
        [(name, trace) for name, trace in named if name not in accepted],
    )


def run(args: argparse.Namespace, generate: Generate | None = None) -> int:
    """`generate` is the --llm model (built by the command line, the one place the shield meets the
    judge layer); None without --llm."""
    if args.min_support < 1 or args.max_enum < 0:
        raise HarnessError("--min-support must be at least 1 and --max-enum at least 0")
    if os.path.lexists(args.out):
        raise HarnessError(f"{args.out}: exists; mine writes a new draft and never replaces a graph (choose another --out)")
    options = MineOptions(domains=DomainOptions(max_enum=args.max_enum, min_support=max(args.min_support, 2)), min_support=args.min_support)
    named = list(iter_traces(args.traces))
    report = mine(named, accept_filter(args.accept), options)
    proposals = _proposals(args, report, named, generate)
    graph = report.draft.graph if proposals is None else with_accepted(report.draft.graph, proposals)
    try:
        with open(args.out, "x", encoding="utf-8") as handle:
            json.dump(graph, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
    except OSError as error:
        raise HarnessError(f"{args.out}: cannot write the draft: {error.strerror or error}") from None
    if args.format == "json":
        extra = {} if proposals is None else {"proposals": proposals.as_json()}
        print(json.dumps({"draft": args.out, **report.as_json(), **extra}, allow_nan=False))
    else:
        print(_text(report, args.out))
        if proposals is not None:
            rate = proposals.acceptance_rate
            print(f"proposals: {len(proposals.accepted)} of {len(proposals.proposals)} accepted"
                  + ("" if rate is None else f" (acceptance rate {rate:.2f})"))
            for proposal in proposals.proposals:
                print(f"  {proposal.status}: {proposal.expression}" + (f" ({proposal.reason})" if proposal.reason else ""))
    return 0
