"""The state graph a task declares: nodes, transitions, goals, tools and where facts come from.

The format follows the BenchShield method (nodes with `invariant`, `actions`, `next_allowed`) plus the
extensions this project adds: `required_states`, `global_invariants`, per-tool `input_schema`,
`action_map` (tool name -> graph action, used to derive states the trace does not record), and
`facts` (variables a JSON facts file supplies, or named SQLite queries). `provides` on a tool binds a
variable to a field of that tool's recorded output; `context_variables` lists what only the agent can
report. A node's expressions may be one string or a list.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from harness.core import HarnessError
from harness.shield.json_input import read_json
from harness.shield.json_schema import validate


def _as_tuple(value: Any) -> Any:
    return (value,) if isinstance(value, str) else value


class Node(BaseModel):
    """One state. `invariant` holds while in the node, `precondition` on entry, `postcondition` on exit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    node_id: str
    description: str = ""
    is_goal: bool = False
    invariant: tuple[str, ...] = ()
    precondition: tuple[str, ...] = ()
    postcondition: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    next_allowed: tuple[str, ...] = ()

    _normalise = field_validator("invariant", "precondition", "postcondition", mode="before")(_as_tuple)


class ToolSpec(BaseModel):
    """A tool the agent may call: its parameter domain and the variables its output provides."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = ""
    input_schema: dict[str, Any] | None = None
    provides: dict[str, str] = Field(default_factory=dict)  # variable -> dotted path in tool_output


class FactQuery(BaseModel):
    """A named SQLite query; `shape` says how rows become a CEL value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sql: str
    shape: Literal["scalar", "bool", "json", "row", "rows", "column"] = "rows"


FactType = Literal["bool", "int", "number", "string", "list", "map"]


class FactsSpec(BaseModel):
    """Where facts come from. `types` gives a fact its JSON type (`int` is an integer, `number` any
    number, never a boolean); a facts source whose value has another type is bad input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    variables: tuple[str, ...] = ()
    types: dict[str, FactType] = Field(default_factory=dict)
    queries: dict[str, FactQuery] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _types_name_facts(self) -> FactsSpec:
        unknown = sorted(set(self.types) - self.provided())
        if unknown:
            raise ValueError(f"facts.types names {unknown[0]!r}, which is not a declared fact")
        return self

    @model_validator(mode="after")
    def _names_do_not_nest(self) -> FactsSpec:
        """`a` and `a.b` cannot both be queries: `a` would be a value and a map at once."""
        names = set(self.queries)
        for name in sorted(names):
            parts = name.split(".")
            for cut in range(1, len(parts)):
                prefix = ".".join(parts[:cut])
                if prefix in names:
                    raise ValueError(f"facts query {name!r} nests under query {prefix!r}; rename one of them")
        return self

    def provided(self) -> frozenset[str]:
        """Top-level variable names the facts source supplies (`a.b` queries provide `a`)."""
        return frozenset(self.variables) | {name.split(".", 1)[0] for name in self.queries}


# Every expression is compiled (about 70 µs each: 1.6 million one-line invariants fill 64 MiB and took
# `check` 112 s); the shipped graphs have at most 25, the static-check benchmark a guard per node of
# 10,000. With `expressions.MAX_EXPRESSION_CHARS` and the text cap it bounds compiling a graph to
# seconds (bench/shield_input_size.py); evaluating them is bounded by the walk's time budget.
MAX_EXPRESSIONS = 20_000
MAX_EXPRESSION_TEXT = 256 * 1024  # characters of all of them together: compiling ~128 of the longest takes ~2 s
# Static analysis and compiling cost about 70 µs per node (a 1.1 million-node chain: 80 s); the shipped
# graphs have at most 5 nodes, the static-check benchmark 10,000.
MAX_NODES = 20_000


class StateGraph(BaseModel):
    """A task's formal model. References between nodes are checked when the graph is built."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: Literal[1] = 1
    task_id: str
    description: str = ""
    initial_state: str
    goal_states: tuple[str, ...]
    required_states: tuple[str, ...] = ()
    global_invariants: tuple[str, ...] = ()
    # Extension: a name for what an invariant forbids (expression -> kind, e.g. "process_exit"), used
    # as the violation's kind instead of the generic invariant_failed / global_invariant_failed.
    invariant_kinds: dict[str, str] = Field(default_factory=dict)
    # Kinds that cost nothing (an environment fault, say): reported as findings, never as violations.
    finding_kinds: tuple[str, ...] = ()
    context_variables: tuple[str, ...] = ()
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    action_map: dict[str, str] = Field(default_factory=dict)
    facts: FactsSpec = Field(default_factory=FactsSpec)
    nodes: tuple[Node, ...]

    # The compiled form (CEL programs, schema validators), filled on first verification.
    _compiled: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _references_exist(self) -> StateGraph:
        ids = [node.node_id for node in self.nodes]
        duplicates = sorted(node_id for node_id, count in Counter(ids).items() if count > 1)
        if duplicates:
            raise ValueError(f"duplicate node_id {duplicates[0]!r}")
        known = set(ids)
        named = [("initial_state", self.initial_state)]
        named += [("goal_states", state) for state in self.goal_states]
        named += [("required_states", state) for state in self.required_states]
        named += [(f"nodes.{node.node_id}.next_allowed", nxt) for node in self.nodes for nxt in node.next_allowed]
        for where, state in named:
            if state not in known:
                raise ValueError(f"{where} names unknown node {state!r}")
        for tool in self.action_map:
            if self.tools and tool not in self.tools:
                raise ValueError(f"action_map names tool {tool!r} that is not declared in tools")
        return self

    def goals(self) -> frozenset[str]:
        """Goal states: those listed in `goal_states` and nodes marked `is_goal`."""
        return frozenset(self.goal_states) | {node.node_id for node in self.nodes if node.is_goal}

    def provided_variables(self) -> frozenset[str]:
        """Every top-level variable some source binds: facts, tool outputs, or declared agent context."""
        from_tools = {name for tool in self.tools.values() for name in tool.provides}
        return self.facts.provided() | from_tools | set(self.context_variables)


def _within_caps(data: Any, source: str) -> None:
    """`MAX_NODES` and `MAX_EXPRESSIONS`, counted on the parsed JSON before the schema and the model
    walk it (building a million nodes costs half a minute on its own)."""
    if not isinstance(data, dict):
        return
    listed = data.get("nodes")
    nodes: list[Any] = listed if isinstance(listed, list) else []
    if len(nodes) > MAX_NODES:
        raise HarnessError(f"{source}: invalid graph: {len(nodes):,} nodes, more than the {MAX_NODES:,} a graph may have")

    def sources(value: Any) -> list[str]:
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return [item for item in items if isinstance(item, str)]

    expressions = sources(data.get("global_invariants")) + [
        text for node in nodes if isinstance(node, dict) for key in ("invariant", "precondition", "postcondition") for text in sources(node.get(key))]
    if len(expressions) > MAX_EXPRESSIONS:
        raise HarnessError(f"{source}: invalid graph: {len(expressions):,} CEL expressions, more than the {MAX_EXPRESSIONS:,} a graph may have")
    text = sum(map(len, expressions))
    if text > MAX_EXPRESSION_TEXT:
        raise HarnessError(f"{source}: invalid graph: its CEL expressions have {text:,} characters, more than the {MAX_EXPRESSION_TEXT:,} a graph may have")


def parse_graph(data: Any, source: str) -> StateGraph:
    """Validate `data` against the shipped schema and the cross-references; errors name `source`."""
    _within_caps(data, source)
    validate("graph", data, source)
    try:
        return StateGraph.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise HarnessError(f"{source}: invalid graph: {where + ': ' if where else ''}{first['msg']}") from None


def load_graph(path: str) -> StateGraph:
    """Read and validate a state graph JSON file."""
    return parse_graph(read_json(str(path), "graph"), str(path))
