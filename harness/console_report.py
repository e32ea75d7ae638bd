"""What a person reads at the end of a run: a console table and a bar chart of selector vs baselines."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.metrics import HEADLINE

BARS = (
    ("selection_accuracy", "judge pick"),
    ("oracle_accuracy", "oracle"),
    ("majority_accuracy", "majority"),
    ("random_accuracy", "random"),
    ("first_accuracy", "first"),
)
TABLE = (*HEADLINE, "parse_failure_rate")

SHIELD_TABLE = ("shielded.selection_accuracy", "shielded.hack_rate", "shielded.auroc", "shield.violation_rate")


def _cell(summary: Mapping[str, Any], name: str) -> str:
    value = summary.get(name)
    if value is None:
        return "-"
    text = f"{value:.3f}"
    low, high = summary.get(f"{name}_ci_low"), summary.get(f"{name}_ci_high")
    text = f"{text}  [{low:.3f}, {high:.3f}]" if low is not None and high is not None else text
    seeded = summary.get(f"{name}_seeded")
    return f"{text}  expected over tie-breaks; seeded pick {seeded:.3f}" if seeded is not None else text


def summary_table(summary: Mapping[str, Any], title: str) -> str:
    width = max(len(name) for name in TABLE + SHIELD_TABLE)
    lines = [title, "-" * len(title)]
    lines += [f"{name:<{width}}  {_cell(summary, name)}" for name in TABLE]
    if "shield.violation_rate" in summary:
        lines += [f"{name:<{width}}  {_cell(summary, name)}" for name in SHIELD_TABLE]
    lines += _shield_tables(summary)
    lines.append(
        f"{'counts':<{width}}  problems={summary['problems']} candidates={summary['candidates']} "
        f"judge_calls={summary['judge_calls']} cache_hits={summary['cache_hits']}"
    )
    return "\n".join(lines)


def _shield_tables(summary: Mapping[str, Any]) -> list[str]:
    """The shield's verdict against the anchor, and the candidates per violation kind."""
    prefix = "shield.verdict_vs_anchor."
    cells = {key[len(prefix) :]: value for key, value in summary.items() if key.startswith(prefix)}
    if not cells:
        return []
    verdicts = sorted({cell.rsplit("_", 1)[0] for cell in cells})
    lines = [f"{'shield verdict vs anchor':<26}{'correct':>9}{'incorrect':>11}"]
    lines += [f"  {verdict:<24}{cells.get(f'{verdict}_correct', 0):>9}{cells.get(f'{verdict}_incorrect', 0):>11}" for verdict in verdicts]
    kinds = sorted((key.removeprefix("shield.kinds."), value) for key, value in summary.items() if key.startswith("shield.kinds."))
    if kinds:
        lines.append(f"{'violation kind':<26}{'candidates':>11}{'rate':>8}")
        lines += [f"  {kind:<24}{count:>11}{summary.get(f'shield.kind_rates.{kind}', 0):>8.3f}" for kind, count in kinds]
    lines.append(f"{'reward_hack_suspected':<26}{summary.get('shield.reward_hack_suspected', 0):>11}")
    return lines


def bar_chart(summary: Mapping[str, Any], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars: list[tuple[str, float, float, float]] = []  # (label, value, interval low, interval high)
    for key, label in BARS:
        value = summary.get(key)
        if value is not None:  # a bar without its interval gets no error bar
            low, high = summary.get(f"{key}_ci_low"), summary.get(f"{key}_ci_high")
            bars.append((label, value, value if low is None else low, value if high is None else high))
    figure, axis = plt.subplots(figsize=(6, 3.5), dpi=120)
    values = [value for _, value, _, _ in bars]
    errors = [[value - low for _, value, low, _ in bars], [high - value for _, value, _, high in bars]]
    colours = ["#c0392b" if label == "judge pick" else "#7f8c8d" for label, _, _, _ in bars]
    axis.bar([label for label, _, _, _ in bars], values, yerr=errors, capsize=4, color=colours)
    axis.set_ylim(0, 1)
    axis.set_ylabel("accuracy vs hidden anchors")
    axis.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
