"""A graph prepared for verification: CEL compiled once, tool schemas compiled once, indexes built.

`compile_graph` caches the result on the graph object, so verifying many traces against one graph
compiles each expression exactly once. Building it also refuses a graph that gives a source for a
built-in variable (`history`, `event`): those are the verifier's own record and no fact, tool output
or agent report may stand in for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core import HarnessError
from harness.shield.expressions import Expression, ExpressionError, compile_expression, shown
from harness.shield.graph import Node, StateGraph
from harness.shield.json_schema import Validator, compile_tool_schema

# Variables the verifier binds itself; no source in a graph, facts or context may provide them.
RESERVED_VARIABLES: frozenset[str] = frozenset({"history", "event"})


@dataclass(frozen=True)
class CompiledNode:
    node: Node
    invariant: tuple[Expression, ...]
    precondition: tuple[Expression, ...]
    postcondition: tuple[Expression, ...]
    next_allowed: frozenset[str]


@dataclass(frozen=True)
class CompiledGraph:
    graph: StateGraph
    nodes: dict[str, CompiledNode]
    goals: frozenset[str]
    global_invariants: tuple[Expression, ...]
    action_nodes: dict[str, tuple[str, ...]]  # action -> nodes that perform it, in graph order
    tool_validators: dict[str, Validator | None]
    fact_variables: frozenset[str]  # top-level variables the facts source must supply
    context_variables: frozenset[str]  # the only variables an agent's reported context may bind
    tool_actions: dict[str, frozenset[str]]  # action -> tools (action_map) whose calls perform it
    tool_only_nodes: frozenset[str]  # nodes whose every action is a tool's: entered only by those calls
    declared_tools: frozenset[str]  # tools named in `tools` or `action_map`
    referenced: frozenset[str]  # every variable any expression reads
    history_fields: frozenset[str]  # fields of the built-in `history` that some expression names
    finding_kinds: frozenset[str]  # kinds this graph reports as findings, never as violations


def _compile_all(sources: tuple[str, ...], where: str) -> tuple[Expression, ...]:
    compiled = []
    for source in sources:
        try:
            compiled.append(compile_expression(source))
        except ExpressionError as error:
            raise HarnessError(f"{where}: CEL syntax error in {shown(source)!r}: {error}") from None
    return tuple(compiled)


def _reserved_names_unused(graph: StateGraph) -> None:
    sources = [
        ("facts", sorted(graph.facts.provided())),
        ("context_variables", list(graph.context_variables)),
        *((f"tools.{name}.provides", sorted(spec.provides)) for name, spec in graph.tools.items()),
    ]
    for where, names in sources:
        clash = [name for name in names if name in RESERVED_VARIABLES]
        if clash:
            raise HarnessError(f"graph {graph.task_id}: {where} names {clash[0]!r}, a built-in variable of the verifier")


def _build(graph: StateGraph) -> CompiledGraph:
    _reserved_names_unused(graph)
    nodes: dict[str, CompiledNode] = {}
    action_nodes: dict[str, list[str]] = {}
    for node in graph.nodes:
        where = f"graph {graph.task_id}: node {node.node_id}"
        nodes[node.node_id] = CompiledNode(
            node=node,
            invariant=_compile_all(node.invariant, where),
            precondition=_compile_all(node.precondition, where),
            postcondition=_compile_all(node.postcondition, where),
            next_allowed=frozenset(node.next_allowed),
        )
        for action in node.actions:
            action_nodes.setdefault(action, []).append(node.node_id)
    global_invariants = _compile_all(graph.global_invariants, f"graph {graph.task_id}: global_invariants")
    validators = {
        name: None if spec.input_schema is None else compile_tool_schema(spec.input_schema, f"tool {name}")
        for name, spec in graph.tools.items()
    }
    tool_actions: dict[str, set[str]] = {}
    for tool, action in graph.action_map.items():
        tool_actions.setdefault(action, set()).add(tool)
    tool_only = frozenset(
        node.node_id for node in graph.nodes if node.actions and all(action in tool_actions for action in node.actions)
    )
    expressions = [*global_invariants]
    for compiled in nodes.values():
        expressions += [*compiled.invariant, *compiled.precondition, *compiled.postcondition]
    return CompiledGraph(
        graph=graph,
        nodes=nodes,
        goals=graph.goals(),
        global_invariants=global_invariants,
        action_nodes={action: tuple(ids) for action, ids in action_nodes.items()},
        tool_validators=validators,
        fact_variables=graph.facts.provided(),
        context_variables=frozenset(graph.context_variables),
        tool_actions={action: frozenset(tools) for action, tools in tool_actions.items()},
        tool_only_nodes=tool_only,
        declared_tools=frozenset(graph.tools) | frozenset(graph.action_map),
        referenced=frozenset(name for expression in expressions for name in expression.variables),
        history_fields=frozenset(
            name
            for name in ("calls", "distinct_calls", "max_repeat", "tool_counts")
            if any("history" in expression.variables and name in expression.source for expression in expressions)
        ),
        finding_kinds=frozenset(graph.finding_kinds),
    )


def compile_graph(graph: StateGraph) -> CompiledGraph:
    """The compiled form of `graph`, built on first use and cached on the graph object."""
    if graph._compiled is None:
        graph._compiled = _build(graph)
    compiled: CompiledGraph = graph._compiled
    return compiled
