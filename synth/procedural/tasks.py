"""Tasks with checks, found by predicting calls with the plan interpreter (nothing is executed here).

A task is a write call (or two) that the plan says succeeds on an initial state and changes it.
Its check asserts the fields the plan says change (timestamps and version counters left out, so
an agent that reaches the goal another way still passes); a check that the initial state would
already satisfy is never produced. The quality gate then executes each task's solution in the
sandbox and confirms the check flips from false to true.
"""

from __future__ import annotations

import random
from typing import Any

from catalog.delta import DeltaOp, apply_delta
from catalog.models import Action, Outcome
from catalog.plan import Plan
from catalog.tasks import Task
from constraints.completeness import candidates
from constraints.spec import Param
from synth.blueprint import Blueprint, ToolRecipe
from verifier.intent import PlanSimulator

__all__ = ["make_tasks", "write_delta_sizes"]

_SKIP_FIELDS = {"version", "updated_at"}


def _check_source(ops: list[dict[str, Any]]) -> str | None:
    lines = []
    for op in ops:
        path = op["path"]
        if path[0] == "env_meta" or (len(path) == 3 and (path[2] in _SKIP_FIELDS or path[2].endswith("_at"))):
            continue
        if op["op"] == "modify" and len(path) == 3:
            lines.append(f"final[{path[0]!r}][{path[1]!r}][{path[2]!r}] == {op['value']!r}")
        elif op["op"] == "add" and len(path) == 2 and isinstance(op["value"], dict):
            wanted = {k: v for k, v in op["value"].items() if k not in _SKIP_FIELDS and not k.endswith("_at")
                      and k != "id"}
            lines.append(f"any(all(row.get(k) == v for k, v in {wanted!r}.items()) "
                         f"for key, row in final[{path[0]!r}].items() if key not in initial[{path[0]!r}])")
        elif op["op"] == "delete" and len(path) == 2:
            lines.append(f"{path[1]!r} not in final[{path[0]!r}]")
    if not lines:
        return None
    body = "\n        and ".join(lines)
    return f"def check(initial, final):\n    return (\n        {body}\n    )\n"


def _instruction(bp: Blueprint, recipe: ToolRecipe, action: Action) -> str:
    e = bp.entity(recipe.entity)
    what = e.name.replace("_", " ")
    args = action.arguments
    key = args.get(f"{e.name}_id")
    details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in args.items() if k != f"{e.name}_id")
    text = {
        "create": f"Create a new {what} with {details}.",
        "update": f"Update {what} {key}: set {details}.",
        "adjust": f"{'Add' if recipe.direction == 'increase' else 'Take'} {args.get('amount')} "
                  f"{'to' if recipe.direction == 'increase' else 'from'} the {(recipe.field or '').replace('_', ' ')} "
                  f"of {what} {key}.",
        "delete": f"Delete {what} {key}; it is no longer needed.",
        "transition": f"Please {recipe.target and recipe.name.removesuffix('_' + e.name).replace('_', ' ')} "
                      f"{what} {key}" + (f" ({details})" if details else "") + ".",
        "cascade": f"{recipe.name.split('_with_')[0].removesuffix('_' + e.name).replace('_', ' ').capitalize()} "
                   f"{what} {key} and everything still pending on it.",
    }.get(recipe.archetype, f"Use {recipe.name} on {what} {key}.")
    return f"As the {bp.actor}: {text}"


def make_tasks(bp: Blueprint, plan: Plan, states: dict[str, dict[str, Any]], *, count: int = 3) -> list[Task]:
    """Up to `count` tasks (each solved by one to two calls), deterministic from the blueprint's seed."""
    rng = random.Random(f"tasks:{bp.env_id}:{bp.seed}")
    simulator = PlanSimulator(plan)
    writes = [t for t in bp.tools if t.archetype not in ("lookup", "list", "summary")]
    rng.shuffle(writes)
    params = {name: tool.params for name, tool in plan.tools.items()}
    tasks: list[Task] = []
    for state_name in ("default", "busy"):
        state = states[state_name]
        for recipe in writes:
            if len(tasks) >= count:
                return tasks
            if any(t.solution and t.solution[0].name == recipe.name for t in tasks):
                continue
            found = _solvable(recipe.name, params[recipe.name], state, simulator, rng)
            if found is None:
                continue
            action, delta = found
            check = _check_source(delta)
            if check is None:
                continue
            task = Task(id=f"{bp.env_id}-{recipe.name}", instruction=_instruction(bp, recipe, action),
                        state=state_name, check=check, solution=[action])
            final = apply_delta(state, [DeltaOp.from_dict(op) for op in delta])
            if task.evaluate(state, state) or not task.evaluate(state, final):
                continue
            tasks.append(task)
    return tasks


def _solvable(tool: str, params: list[dict[str, Any]], state: dict[str, Any], simulator: PlanSimulator,
              rng: random.Random, tries: int = 40) -> tuple[Action, list[dict[str, Any]]] | None:
    """An action the plan says succeeds with a non-empty change, by sampling typed candidates."""
    pools = {p.name: candidates(p, state)[:12] or [None] for p in map(Param.from_dict, params)}
    for _ in range(tries):
        arguments = {name: rng.choice(pool) for name, pool in pools.items()}
        arguments = {k: v for k, v in arguments.items() if v is not None}
        action = Action(name=tool, arguments=arguments)
        prediction = simulator.predict(state, action)
        if prediction.abstained or prediction.outcome != Outcome.SUCCESS or not prediction.delta:
            continue
        delta = [op.to_dict() for op in prediction.delta]
        if any(op["path"][0] != "env_meta" for op in delta):
            return action, delta
    return None


def write_delta_sizes(bp: Blueprint, plan: Plan, state: dict[str, Any]) -> dict[str, int]:
    """|Δ| of the largest successful call found per write tool (plan-predicted; the gate checks the plan)."""
    rng = random.Random(f"sizes:{bp.env_id}:{bp.seed}")
    simulator = PlanSimulator(plan)
    sizes: dict[str, int] = {}
    for recipe in bp.tools:
        if recipe.archetype in ("lookup", "list", "summary"):
            continue
        best = -1
        for _ in range(3):
            found = _solvable(recipe.name, plan.tools[recipe.name].params, state, simulator, rng, tries=15)
            if found is not None:
                best = max(best, len(found[1]))
        if best >= 0:
            sizes[recipe.name] = best
    return sizes
