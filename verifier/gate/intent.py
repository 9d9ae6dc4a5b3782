"""Intent vs implementation: compare an env's plan with its extracted spec and with execution.

Statically, every planned precondition must match an extracted guard (same condition, same
message, same order, nothing unplanned) and every planned effect an extracted write. Dynamically,
the plan's program predicts `(observation, delta)` for generated calls (guard-violating ones
included); any prediction that disagrees with execution is a counterexample.

A plan is data a user may write: an imported env gets a draft (`draft_plan`: the code's behaviour
and the counters its states agree with) for its user to edit into the intent, and `load_plan`
validates plan.json whole where it enters (one line, `PlanError`, when it is not a plan).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalog.errors import EnvforgeError
from catalog.plan import Plan, PlanEffect, PlanEntity, PlanRule, PlanTool
from catalog.state.codec import readable
from catalog.state.delta import Delta
from catalog.state.jsonable import json_equal
from catalog.store import EnvHandle, read_regular
from constraints.simulate import SpecSimulator
from constraints.spec import ConstraintSpec
from sandbox.pool import DEFAULT_TIMEOUT, Job, SandboxPool
from verifier.gate.invariants import inferred_invariants


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


class PlanError(ValueError, EnvforgeError):
    """An env's plan.json that does not read as a plan (a user's edit is untrusted input)."""


def draft_plan(handle: EnvHandle, spec: ConstraintSpec, *, timeout: float = DEFAULT_TIMEOUT) -> Plan:
    """A plan for an imported env, for its user to edit into the intent.

    It holds the code's guards and effects as they are, plus the counters its initial states agree
    with (verifier/gate/invariants.py `inferred_invariants`). The initial states are read as the runtime loads them, in the sandbox (the env's code is untrusted).
    """
    plan = plan_from_spec(spec, handle.id, "drafted from the imported code: edit it to state the intent")
    states = []
    with SandboxPool(1, timeout=timeout) as pool:
        for name in handle.state_names():
            result = pool.run(Job.for_env(handle, [], state_name=name, snapshot=True))
            if result.event or result.initial_state is None:
                raise PlanError(f"{handle.id}: state {name} does not load in the sandbox: {result.event or 'no state'}")
            states.append(readable(result.initial_state))
    plan.invariants = inferred_invariants(states)
    return plan


def load_plan(folder: Path) -> Plan | None:
    """The env's plan.json, or None if it has none; PlanError (one line) if it is not a valid plan.

    A plan is a file a user may have written (`verify write-plan`, then edited), so it is
    validated whole where it enters: the document, its rule references, and its program as a spec.
    """
    path = folder / "plan.json"
    if not path.is_file() and not path.is_symlink():
        return None
    try:
        text = read_regular(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot read the plan: {exc}") from None
    try:
        plan = Plan.model_validate_json(text)
        ConstraintSpec.model_validate(plan.program)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "the document"
        raise PlanError(f"{path}: invalid plan at {where}: {first.get('msg', 'invalid')}") from None
    return plan


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

    def __init__(self, plan: Plan, *, strict_args: bool = True) -> None:
        """`strict_args` as the env's manifest says (an imported env runs ill-typed calls as Python would)."""
        super().__init__(ConstraintSpec.model_validate(plan.program), strict_args=strict_args)


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
