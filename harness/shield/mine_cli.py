"""`python -m harness.shield mine`: draft a graph from traces, write it, print what was inferred.

    mine --traces DIR|T.jsonl [--accept 'reward >= 1'] --out draft.json [--min-support N] [--max-enum N]
         [--format json|text]

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
from harness.shield.mine import MineOptions, MiningReport, mine
from harness.shield.trace import iter_traces

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)


def add_parser(commands: argparse._SubParsersAction[ParserT]) -> None:
    parser = commands.add_parser("mine", help="draft a state graph from traces taken as honest")
    parser.add_argument("--traces", required=True, help="a directory of traces, a .jsonl or a .json")
    parser.add_argument("--accept", default="true", help="CEL filter over reward, clean_reward, task_id, trace_id, meta, event_count")
    parser.add_argument("--out", required=True, help="the draft graph to write (must not exist)")
    parser.add_argument("--min-support", type=int, default=1, help="fewest accepted traces an ordering or enum value needs")
    parser.add_argument("--max-enum", type=int, default=5, help="most distinct values a parameter may have to become an enum")
    parser.add_argument("--format", choices=("json", "text"), default="text")


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


def run(args: argparse.Namespace) -> int:
    if args.min_support < 1 or args.max_enum < 0:
        raise HarnessError("--min-support must be at least 1 and --max-enum at least 0")
    if os.path.lexists(args.out):
        raise HarnessError(f"{args.out}: exists; mine writes a new draft and never replaces a graph (choose another --out)")
    options = MineOptions(domains=DomainOptions(max_enum=args.max_enum, min_support=max(args.min_support, 2)), min_support=args.min_support)
    report = mine(iter_traces(args.traces), accept_filter(args.accept), options)
    try:
        with open(args.out, "x", encoding="utf-8") as handle:
            json.dump(report.draft.graph, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
    except OSError as error:
        raise HarnessError(f"{args.out}: cannot write the draft: {error.strerror or error}") from None
    if args.format == "json":
        print(json.dumps({"draft": args.out, **report.as_json()}, allow_nan=False))
    else:
        print(_text(report, args.out))
    return 0
