"""The guard search that reaches deep guards: calls climbed towards a guard in-process, then run once.

Random calls rarely pass the ten guards before a deep one (an unused reference, an available
room, a guest who exists, then "more nights than loyalty points"). Here, for each guard no
executed call has fired yet, a call of its tool is climbed towards it with the run's simulator
(the plan's or the spec's program, in this process, no sandbox round trip): one argument or the
prefix of earlier writes redrawn at a time, kept when the first guard to fire is no earlier than
before. Only a call the simulator says fires the guard is executed, in the sandbox, by the
completeness run, which counts the guard as reached only if execution fails there too.

The search does not depend on the gate's effort, so synthesis and `verify gate` reach the same
guards and `every_guard_reachable` means the same in both.
"""

from __future__ import annotations

import random
import re
from typing import Any

from catalog.models import Action, Outcome
from catalog.state.delta import DeltaConflict, apply_delta
from constraints.completeness import CompletenessRun
from constraints.spec import Param

__all__ = ["CLIMB_STEPS", "reach_guards"]

CLIMB_STEPS = 240  # simulated calls per unreached guard (in-process, ~1 ms each)
RESTART = 60  # steps without progress before a fresh start

Place = tuple[str, int]


def reach_guards(run: CompletenessRun, *, seed: int = 0, steps: int = CLIMB_STEPS) -> int:
    """Execute, through `run`, a call for each guard it has not seen fire that the simulator can reach.

    Returns the number of call sequences executed (one per guard the climb reached).
    """
    rng = random.Random(seed)
    executed = 0
    drawing, run.rng = run.rng, rng  # the run's own draws (its random search) stay as they were
    try:
        for place in sorted(run.guards):
            for tool in sorted(run.guard_tools.get(place, ())):
                if place in run.triggered:
                    break
                found = _climb(run, tool, place, rng, steps)
                if found is not None:
                    run.sequence(*found)
                    executed += 1
    finally:
        run.rng = drawing
    return executed


def _order(run: CompletenessRun, tool: str) -> list[Place]:
    return [p.place(tool) for p in run.spec.tools[tool].preconditions]


def _cost(run: CompletenessRun, order: list[Place], target: int, state_name: str, prefix: list[Action],
          action: Action) -> tuple[float, int] | None:
    """How far the call is from firing guard `target` of its tool (0 fires it), and the guard in the way.

    None: the simulator cannot say (it abstained, or a prefix call did not succeed).
    """
    state: dict[str, Any] = run.states[state_name]
    for earlier in prefix:
        prediction = run.simulator.predict(state, earlier)
        if prediction.abstained or prediction.outcome is not Outcome.SUCCESS:
            return None
        try:
            state = apply_delta(state, prediction.delta)
        except DeltaConflict:
            return None
    prediction = run.simulator.predict(state, action)
    if prediction.abstained:
        return None
    fired = set(prediction.fired)
    if order[target] in fired and prediction.outcome is Outcome.FAILURE:
        return 0.0, target
    depth = next((i for i, place in enumerate(order) if place in fired), len(order))
    if depth < target:
        return float(target - depth), depth  # an earlier guard stops it: change what that one reads
    return 0.5, target  # past it: what the guard reads may still make it hold


def _mentioned(source: str, params: list[Param]) -> list[Param]:
    """The parameters a guard's condition reads: by name, or by the record its `<x>_id` names (`room.status`)."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
    return [p for p in params if p.name in words or re.sub(r"_(id|code|key)$", "", p.name) in words]


def _setters(run: CompletenessRun, source: str) -> list[str]:
    """Tools that write a field a guard's condition reads (`member.status`: the tool writing `members.status`)."""
    fields = set(re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", source))
    return sorted(name for name, tool in run.spec.tools.items() if tool.kind != "read"
                  and any(path.rsplit(".", 1)[-1] in fields for path in tool.write_set if "." in path))


def _prefix(run: CompletenessRun, state_name: str, setters: list[str], rng: random.Random) -> list[Action]:
    """One or two earlier writes: a call that set what the guard reads, else any write that succeeded."""
    if setters and rng.random() < 0.7:
        tool = rng.choice(setters)
        done = [a for a in run.successful_writes[state_name] if a.name == tool]
        if done and rng.random() < 0.5:
            return [rng.choice(done)]
        return [Action(name=tool, arguments=run.arguments(tool, run.states[state_name], False))]
    writes = run.successful_writes[state_name]
    return rng.sample(writes, k=min(len(writes), rng.randint(1, 2))) if writes else []


def _climb(run: CompletenessRun, tool: str, place: Place, rng: random.Random,
           steps: int) -> tuple[str, list[Action]] | None:
    """A (state, calls) the simulator says fires the guard at `place` of `tool`, or None within `steps`.

    Each step redraws one argument, mostly one that the guard in the way reads (or the target
    guard, once the call gets past it), or now and then the prefix of earlier writes.
    """
    order = _order(run, tool)
    if place not in order:
        return None
    target = order.index(place)
    guards = run.spec.tools[tool].preconditions
    params = run.spec.tools[tool].params
    reads = [_mentioned(g.condition.source, params) for g in guards]
    setters = [_setters(run, g.condition.source) for g in guards]
    names = sorted(run.states)
    best: tuple[float, int, str, list[Action], dict[str, Any]] | None = None
    stale = 0
    for _ in range(steps):
        if best is None:
            state_name = rng.choice(names)
            prefix: list[Action] = []
            arguments = run.arguments(tool, run.states[state_name], rng.random() < 0.3)
        else:
            _, blocking, state_name, prefix, arguments = best
            if rng.random() < 0.2:
                prefix = _prefix(run, state_name, setters[blocking], rng)
            elif params:
                arguments = dict(arguments)
                param = rng.choice(reads[blocking] if reads[blocking] and rng.random() < 0.8 else params)
                if not param.required and rng.random() < 0.3:
                    arguments.pop(param.name, None)
                else:
                    options, realistic = run.candidates.get(param, run.states[state_name])
                    arguments[param.name] = rng.choice(options if rng.random() < 0.3 else realistic)
        action = Action(name=tool, arguments=arguments)
        cost = _cost(run, order, target, state_name, prefix, action)
        if cost is not None and cost[0] == 0.0:
            return state_name, [*prefix, action]
        if cost is not None and (best is None or cost[0] <= best[0]):
            stale = 0 if best is None or cost[0] < best[0] else stale + 1
            best = (cost[0], cost[1], state_name, prefix, arguments)
        else:
            stale += 1
        if stale >= RESTART:
            best, stale = None, 0
    return None
