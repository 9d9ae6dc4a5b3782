"""The plan: a formal, JSON-serializable statement of an environment's intent (`plan.json`).

It is written in the same normalized expression language as the constraint specs
(constraints.ir), so intent and implementation compare directly and one interpreter runs both:
- entities: each collection with its key and fields (name -> kind);
- rules: each as a predicate over state and arguments (`when` it fails) with its error message
  template, identified by id;
- tools: the rules each tool checks, in order, and its effects (operation, path pattern, value
  expression), plus the intended program (bindings, guards, effects, result) that predicts
  `(observation, delta)` for any call;
- invariants: cross-field value constraints every state of the env satisfies (min <= max,
  totals equal the sum of their lines, counters, balances >= 0, dates vs the env clock), so a
  checker in any layer can test a state without the generator that declared them.
The synthesis pipeline writes a plan before the code; for the hand-written reference envs the
plan was captured from their reviewed code (`python cli.py verify ENV --write-plan`) and is kept
as data beside it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Plan", "PlanRule", "PlanEffect", "PlanTool", "PlanEntity", "Invariant", "InvariantKind"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanEntity(_Strict):
    """A collection: its key and fields."""

    key: list[str] = Field(default_factory=list, description="Key fields (a table's primary key).")
    fields: dict[str, str] = Field(default_factory=dict, description="Field name -> kind (str, int, float, ...).")


class PlanRule(_Strict):
    """A rule: the predicate under which a call fails, and the message it fails with."""

    id: str
    tool: str = Field(description="The tool (or helper) whose code checks this rule.")
    when: dict[str, Any] = Field(description="Normalized predicate under which the call fails.")
    when_source: str
    message: str = Field(description="Error message template; {holes} name the values filled in.")


class PlanEffect(_Strict):
    """An intended write."""

    op: str = Field(description="add | modify | delete | set | append | pop | update | setdefault | ...")
    path: list[str] = Field(description="Path pattern; <expr> marks a key computed from arguments or state.")
    value: str | None = Field(None, description="The value expression, as source.")


class PlanTool(_Strict):
    """A tool's intent: the rules it checks in order and the writes it makes."""

    kind: Literal["read", "write"] | None = None
    params: list[dict[str, Any]] = Field(default_factory=list)
    preconditions: list[str] = Field(default_factory=list, description="Rule ids checked, in order.")
    effects: list[PlanEffect] = Field(default_factory=list)


InvariantKind = Literal["le", "lt", "nonneg", "sum_of_children", "count_of_children", "not_after_clock",
                        "not_before_clock"]


class Invariant(_Strict):
    """A cross-field value constraint that holds in every state (initial, and after any successful call).

    Names are the state's: `collection` is a table (state key), fields are record keys. A record
    whose field (or `other`) is None satisfies the comparison kinds (nullable means "not set").
    - `le` / `lt`: `record[field] <= record[other]` / `<` (numbers, or ISO datetimes compared as
      datetimes), for every record of `collection`;
    - `nonneg`: `record[field] >= 0`;
    - `sum_of_children`: `record[field]` equals the sum, over records of `child` whose `via` field
      is the record's id (and whose status is in `states`, when given), of `child_field`, times
      `times` when given; money is compared to within 0.01;
    - `count_of_children`: `record[field]` equals the number of such children;
    - `not_after_clock` / `not_before_clock`: `record[field] <= clock` / `>= clock`, where the
      clock is `state["env_meta"]["clock"]["value"]` (what `self.now()` returns).
    """

    kind: InvariantKind
    collection: str
    field: str
    other: str | None = Field(None, description="le / lt: the other field of the same record.")
    child: str | None = Field(None, description="sum / count: the child collection.")
    via: str | None = Field(None, description="sum / count: the child's field holding the parent's id.")
    child_field: str | None = Field(None, description="sum: the child field summed.")
    times: str | None = Field(None, description="sum: a child field each term is multiplied by (a quantity).")
    states: list[str] = Field(default_factory=list, description="sum / count: only children in these states.")
    description: str = ""


class Plan(_Strict):
    """The whole plan of one environment."""

    env_id: str
    kind: Literal["sql", "class"]
    entities: dict[str, PlanEntity] = Field(default_factory=dict)
    rules: dict[str, PlanRule] = Field(default_factory=dict)
    tools: dict[str, PlanTool] = Field(default_factory=dict)
    program: dict[str, Any] = Field(default_factory=dict, description=(
        "The intended program in normalized form (tools, helpers, constants, tables), run by the plan "
        "interpreter to predict each call."))
    invariants: list[Invariant] = Field(default_factory=list, description="Value constraints every state satisfies.")
    source: str = Field("", description="How the plan was made: 'synthesis', 'captured from reviewed code', ...")

    @model_validator(mode="after")
    def _rules_exist(self) -> Plan:
        """Every rule a tool checks is one of the plan's (a hand-edited plan may name one that is not)."""
        for name, tool in self.tools.items():
            for rule in tool.preconditions:
                if rule not in self.rules:
                    raise ValueError(f"tool {name} checks rule {rule!r}, which the plan's rules do not have")
        return self
