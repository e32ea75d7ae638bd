"""`python -m tasks.agent record [--out DIR]`: re-record every scenario's traces from its policies;
`python -m tasks.agent env SCENARIO TRACE.json DB.sqlite` to rebuild a trace's environment for
`python -m harness.shield verify --facts-db DB.sqlite`; and `python -m tasks.agent labelled [--out
FILE]` to harvest the labelled free-text steps from the recorded traces into the shield's bundled
set (run it after `record`)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.core import HarnessError
from harness.shield import BUNDLED_LABELLED_STEPS, inadmissible_events, load_trace
from tasks.agent import SCENARIOS, replay
from tasks.agent.labelled import harvest_labelled_steps, labelled_steps_document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.agent")
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record")
    record.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "traces"))
    env = commands.add_parser("env")
    env.add_argument("scenario", choices=sorted(SCENARIOS))
    env.add_argument("trace")
    env.add_argument("db")
    labelled = commands.add_parser("labelled")
    labelled.add_argument("--out", default=BUNDLED_LABELLED_STEPS)
    args = parser.parse_args(argv)
    try:
        if args.command == "record":
            for name, scenario in SCENARIOS.items():
                os.makedirs(os.path.join(args.out, name), exist_ok=True)
                for variant in scenario.policies:
                    with open(os.path.join(args.out, name, f"{variant}.json"), "w", encoding="utf-8") as handle:
                        json.dump(scenario.record(variant), handle, indent=1)
                        handle.write("\n")
        elif args.command == "labelled":
            with open(args.out, "w", encoding="utf-8") as handle:
                json.dump(labelled_steps_document(harvest_labelled_steps()), handle, indent=1, ensure_ascii=False)
                handle.write("\n")
        else:
            if os.path.exists(args.db):
                raise HarnessError(f"{args.db}: already exists; choose a new path for the environment")
            scenario = SCENARIOS[args.scenario]
            trace = load_trace(args.trace)
            # The calls the shield's intake rejects are not replayed, as in `verify_trace`.
            replay(scenario.name, scenario.tools, trace, args.db, inadmissible_events(scenario.graph(), trace))
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
