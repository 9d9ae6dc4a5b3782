"""Intent vs implementation: compare an env's plan with its extracted spec and with execution.

Statically, every planned precondition must match an extracted guard (same condition, same
message, same order, nothing unplanned) and every planned effect an extracted write. Dynamically,
the plan's program predicts `(observation, delta)` for generated calls (guard-violating ones
included); any prediction that disagrees with execution is a counterexample.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from catalog.plan import Plan, PlanEffect, PlanEntity, PlanRule, PlanTool
from catalog.state.delta import Delta
from catalog.state.jsonable import json_equal
from constraints.simulate import SpecSimulator
from constraints.spec import ConstraintSpec


def plan_from_spec(spec: ConstraintSpec, env_id: str, source: str) -> Plan:
    """Capture a plan from the spec of reviewed code (how the reference envs got theirs)."""
    entities = {name: PlanEntity(key=table.pk, fields={c: info.kind for c, info in table.columns.items()})
                for name, table in spec.tables.items()}
    rules: dict[str, PlanRule] = {}
    tools: dict[str, PlanTool] = {}
    for name, tool in spec.tools.items():
        ids = []
        for guard in tool.preconditions:
            owner, line = guard.place(name)
            rule_id = f"{owner}:{line}"
            rules[rule_id] = PlanRule(id=rule_id, tool=owner, when=guard.condition.normalized,
                                      when_source=guard.condition.source, message=guard.message.template)
            ids.append(rule_id)
        effects = [PlanEffect(op=e.op, path=e.path, value=e.value.source if e.value else None) for e in tool.effects]
        tools[name] = PlanTool(kind=tool.kind, params=[p.model_dump(mode="json") for p in tool.params], preconditions=ids,
                               effects=effects)
    return Plan(env_id=env_id, kind=spec.kind, entities=entities, rules=rules, tools=tools, program=spec.program(),
                source=source)


def load_plan(folder: Path) -> Plan | None:
    """The env's plan.json, or None if it has none."""
    path = folder / "plan.json"
    if not path.is_file():
        return None
    return Plan.model_validate_json(path.read_text(encoding="utf-8"))


def write_plan(folder: Path, plan: Plan) -> None:
    """Write plan.json (sorted keys, so plans diff well)."""
    text = json.dumps(plan.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (folder / "plan.json").write_text(text, encoding="utf-8")


def static_mismatches(plan: Plan, spec: ConstraintSpec) -> list[str]:
    """Where the code's guards and writes differ from the plan's, as readable findings."""
    findings: list[str] = []
    for name, planned in plan.tools.items():
        tool = spec.tools.get(name)
        if tool is None:
            findings.append(f"{name}: planned tool is missing from the code")
            continue
        expected = [(plan.rules[r].when_source, plan.rules[r].message) for r in planned.preconditions]
        actual = [(g.condition.source, g.message.template) for g in tool.preconditions]
        if expected != actual:
            for index, (want, got) in enumerate(zip(expected + [None] * len(actual), actual + [None] * len(expected),
                                                    strict=False)):
                if want != got:
                    findings.append(f"{name}: guard #{index + 1} planned {_guard(want)} but the code has {_guard(got)}")
                    break
        planned_effects = Counter((e.op, tuple(e.path), e.value) for e in planned.effects)
        actual_effects = Counter((e.op, tuple(e.path), e.value.source if e.value else None) for e in tool.effects)
        for missing in planned_effects - actual_effects:
            findings.append(f"{name}: planned effect {missing[0]} {'/'.join(missing[1])} = {missing[2]} is not in the code")
        for extra in actual_effects - planned_effects:
            findings.append(f"{name}: unplanned effect {extra[0]} {'/'.join(extra[1])} = {extra[2]}")
        if planned.kind and tool.kind != planned.kind:
            findings.append(f"{name}: planned as a {planned.kind} tool")
    for name in spec.tools:
        if name not in plan.tools:
            findings.append(f"{name}: tool is not in the plan")
    return findings


def _guard(item: tuple[str, str] | None) -> str:
    return "nothing" if item is None else f"`if {item[0]}` -> {item[1]!r}"


class PlanSimulator(SpecSimulator):
    """Predicts calls from the plan's program (the plan interpreter)."""

    name = "plan"

    def __init__(self, plan: Plan) -> None:
        super().__init__(ConstraintSpec.model_validate(plan.program))


def disagreement(prediction: Any, call: Any) -> str | None:
    """Why a non-abstained plan prediction differs from an executed call, if it does."""
    if prediction.abstained:
        return None
    if not json_equal(prediction.observation, call.observation):
        return f"observation: plan says {prediction.observation!r}, code returned {call.observation!r}"
    delta, done = Delta.dump_python(prediction.delta, mode="json"), Delta.dump_python(call.delta, mode="json")
    if not json_equal(delta, done):
        return f"delta: plan says {delta}, code did {done}"
    return None
