"""Graph patches: what `verify --dynamic` proposes and `extend` applies once a person accepted them.

A patches file (`verify --dynamic --patches-out P.json` writes one, every patch `accepted: false`):

    {"format_version": 1, "task_id": "...", "patches": [
      {"op": "add_transition", "from": "A", "to": "B", "support": 3, "traces": ["t1", ...], "accepted": false}]}

The only operation is `add_transition`: a patch cannot remove a required state, a node, a goal or
an invariant. `extend` applies the accepted ones, refuses (exit 2) a patch naming a node the graph
lacks, a file for another task, or an accepted set that would let a route skip a guard (a required
state, or a node with an invariant, a precondition or a postcondition) on its way to a goal, or
whose effect the dominator analysis could not decide within its budget (`dynamic.weakened`); it
writes the extended graph to a new file and runs `check` on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.core import HarnessError
from harness.shield.dynamic import DynamicResult, weakened, with_transitions
from harness.shield.graph import StateGraph
from harness.shield.json_input import read_json


class Patch(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    op: Literal["add_transition"] = "add_transition"
    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    support: int = Field(default=0, ge=0)
    traces: tuple[str, ...] = ()
    accepted: bool = False


class Patches(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: Literal[1] = 1
    task_id: str
    patches: tuple[Patch, ...]


def proposed(task_id: str, results: Iterable[tuple[str, DynamicResult]]) -> Patches:
    """One patch per distinct unexpected transition, with the traces that showed it; none accepted."""
    traces: dict[tuple[str, str], list[str]] = {}
    for name, result in results:
        for finding in result.findings:
            traces.setdefault((finding.source, finding.target), []).append(name)
    return Patches(
        task_id=task_id,
        patches=tuple(
            Patch.model_validate({"from": source, "to": target, "support": len(names), "traces": names})
            for (source, target), names in sorted(traces.items())
        ),
    )


def load_patches(path: str) -> Patches:
    data = read_json(path, "patches")
    try:
        return Patches.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise HarnessError(f"{path}: invalid patches: {where + ': ' if where else ''}{first['msg']}") from None


def extend(graph: StateGraph, patches: Patches, source: str) -> tuple[StateGraph, list[Patch]]:
    """`graph` with the accepted patches applied, and those patches; bad input as described above."""
    if patches.task_id != graph.task_id:
        raise HarnessError(f"{source}: patches are for task {patches.task_id!r}, the graph is {graph.task_id!r}")
    nodes = {node.node_id for node in graph.nodes}
    accepted = [patch for patch in patches.patches if patch.accepted]
    for index, patch in enumerate(patches.patches):
        for end in (patch.source, patch.target):
            if end not in nodes:
                raise HarnessError(f"{source}: patches.{index}: node {end!r} is not in the graph")
    extended = with_transitions(graph, [(patch.source, patch.target) for patch in accepted])
    lost = weakened(graph, extended)
    if lost:
        raise HarnessError(f"{source}: the accepted patches would let a route skip {lost[0]}; a patch may not weaken the graph (refused, nothing written)")
    return extended, accepted
