r"""The synthesis graph: one LangGraph run per candidate environment ("slot").

    mine -> dedup -> plan -> schema -> code -> static_check -> states -> execute -> tasks -> gate -> register
                 \-> END (duplicate)          ^---- retry with feedback ----/          \-> END (rejected)

Initial states come before execution and tasks before the gate because both checks need them
(the gate runs every task's solution). Every node records its attempts, outcome, wall time and
LLM usage under `stages`, which the run report aggregates. The run driver (synth/run.py) runs
`mine` and `dedup` in order in the main process, so dedup decisions do not depend on timing,
then finishes each slot in a worker process from the same SQLite checkpoint.

This module only wires: the nodes are the functions of synth/nodes.py, the state and context
are in synth/slot.py, and the routers below only read the state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from synth.nodes import NODES, reject
from synth.slot import FINAL, MAX_CODE_ATTEMPTS, SKIPPED, STAGES, Context, SlotState

__all__ = ["FINAL", "MAX_CODE_ATTEMPTS", "SKIPPED", "STAGES", "Context", "SlotState", "build_graph",
           "route_after_dedup", "route_after_plan", "route_after_stage", "route_after_check"]


def route_after_dedup(state: SlotState) -> str:
    """A taken topic or id ends the slot; otherwise plan it."""
    return END if state.get("status") in SKIPPED else "plan"


def route_after_plan(state: SlotState) -> str:
    """An inconsistent blueprint ends the slot; otherwise write its schema."""
    return END if state.get("status") == "rejected" else "schema"


def route_after_stage(state: SlotState) -> str:
    """After tasks and gate: a rejection ends the slot."""
    return END if state.get("status") == "rejected" else "next"


def route_after_check(state: SlotState, *, next_node: str, can_correct: bool) -> str:
    """No problems: on to `next_node`; else retry the code (at most MAX_CODE_ATTEMPTS, if feedback can help) or reject."""
    if not state.get("problems"):
        return next_node
    return "code" if can_correct and state.get("attempts", 0) < MAX_CODE_ATTEMPTS else "reject"


def build_graph(ctx: Context, checkpointer: Any = None) -> Any:
    """Compile the graph; every node gets `ctx` (catalog, generator, sandbox pool) besides the state."""
    graph = StateGraph(SlotState)
    for name, node in NODES.items():
        graph.add_node(name, partial(node, ctx=ctx))
    graph.add_node("reject", reject)

    def checked(next_node: str) -> Callable[[SlotState], str]:
        return partial(route_after_check, next_node=next_node, can_correct=ctx.generator.can_correct)

    graph.add_edge(START, "mine")
    graph.add_edge("mine", "dedup")
    graph.add_conditional_edges("dedup", route_after_dedup, ["plan", END])
    graph.add_conditional_edges("plan", route_after_plan, ["schema", END])
    graph.add_edge("schema", "code")
    graph.add_edge("code", "static_check")
    graph.add_conditional_edges("static_check", checked("states"), ["states", "code", "reject"])
    graph.add_edge("states", "execute")
    graph.add_conditional_edges("execute", checked("tasks"), ["tasks", "code", "reject"])
    graph.add_conditional_edges("tasks", route_after_stage, {"next": "gate", END: END})
    graph.add_conditional_edges("gate", route_after_stage, {"next": "register", END: END})
    graph.add_edge("register", END)
    graph.add_edge("reject", END)
    return graph.compile(checkpointer=checkpointer)
