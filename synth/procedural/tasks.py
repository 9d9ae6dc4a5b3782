"""Multi-step tasks with checks, found by predicting calls with the plan interpreter (nothing is executed here).

A task reads like a user's request: the record is named by what the user knows (an email, an
order number, a name), so the reference solution first finds it with a read tool, reads it
before writing, then makes one or more writes. Three families:
- goal: find, read, one to three writes on the same record;
- branch: the instruction states a conditional policy ("if its deposit is above 200, confirm
  it; otherwise cancel it"); the solution is the branch that applies in the task's state, and
  the check also requires that the other branch's changes did not happen;
- refusal: the instruction states a policy that forbids what the user asks (the tool itself
  would allow it); the solution only reads (or does just the allowed part of a two-part
  request), and the check requires the forbidden change to be absent.
Every task carries `forbidden`, calls that reach a wrong final state from the initial one (the
forbidden write, the other branch), so the gate confirms the check can tell: false there, true
after the solution. Checks assert the fields the plan says change (timestamps and version
counters left out, so an agent that reaches the goal another way still passes); argument values
come from Faker like the states, and a task whose final state would break one of the blueprint's
invariants is never produced.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from catalog.models import Action, Outcome
from catalog.plan import Invariant, Plan
from catalog.state.delta import MISSING, Delta, apply_delta, diff_at, path_key
from catalog.tasks import Task
from constraints.completeness import TEXT, candidates
from constraints.spec import Param
from synth.procedural.blueprint import READS, Blueprint, EntitySpec, ToolRecipe
from synth.procedural.values import ValueMaker
from synth.procedural.wording import reason_for, say_change, say_record, say_value, verb_phrase, words
from verifier.gate.intent import PlanSimulator
from verifier.gate.invariants import violations

__all__ = ["make_tasks", "write_delta_sizes"]

_SKIP_FIELDS = {"version", "updated_at"}
_NATURAL_KINDS = ("email", "code", "phone", "name", "text")
_NEW = ("create", "place")  # writes that add a record: no existing record is "the" record they act on
_MULTI_STEP = 3  # calls a request of several steps takes: identify or find, read, write
_ENDING = ("transition", "cascade", "delete")  # lifecycle moves: after them, other edits may be refused


def _skipped(path: list[str]) -> bool:
    return path[0] == "env_meta" or (len(path) == 3 and (path[2] in _SKIP_FIELDS or path[2].endswith("_at")))


def _goal_lines(ops: list[dict[str, Any]]) -> list[str]:
    """Assertions that the changes `ops` describe were made."""
    lines = []
    for op in ops:
        path = op["path"]
        if _skipped(path):
            continue
        if op["op"] == "modify" and len(path) == 3:
            lines.append(f"final[{path[0]!r}].get({path[1]!r}, {{}}).get({path[2]!r}) == {op['value']!r}")
        elif op["op"] == "add" and len(path) == 2 and isinstance(op["value"], dict):
            wanted = {k: v for k, v in op["value"].items() if k not in _SKIP_FIELDS and not k.endswith("_at")
                      and k != "id"}
            lines.append(f"any(all(row.get(k) == v for k, v in {wanted!r}.items()) "
                         f"for key, row in final[{path[0]!r}].items() if key not in initial[{path[0]!r}])")
        elif op["op"] == "delete" and len(path) == 2:
            lines.append(f"{path[1]!r} not in final[{path[0]!r}]")
    return lines


def _absent_lines(ops: list[dict[str, Any]]) -> list[str]:
    """Assertions that the changes `ops` describe were NOT made (a forbidden write, the other branch)."""
    lines = []
    for op in ops:
        path = op["path"]
        if _skipped(path):
            continue
        if op["op"] == "modify" and len(path) == 3:
            lines.append(f"final[{path[0]!r}].get({path[1]!r}, {{}}).get({path[2]!r}) == "
                         f"initial[{path[0]!r}][{path[1]!r}].get({path[2]!r})")
        elif op["op"] == "add" and len(path) == 2:
            lines.append(f"len(final[{path[0]!r}]) <= len(initial[{path[0]!r}])")
        elif op["op"] == "delete" and len(path) == 2:
            lines.append(f"{path[1]!r} in final[{path[0]!r}]")
    return list(dict.fromkeys(lines))


def _check_source(lines: list[str]) -> str | None:
    if not lines:
        return None
    body = "\n        and ".join(lines)
    return f"def check(initial, final):\n    return (\n        {body}\n    )\n"


@dataclass
class _Found:
    """A planned sequence of calls from one state: its actions, final state and net change."""

    actions: list[Action]
    final: dict[str, Any]
    ops: list[dict[str, Any]]


class _Planner:
    """Predicts call sequences with the plan and draws realistic arguments (one per blueprint and state)."""

    def __init__(self, bp: Blueprint, plan: Plan, rng: random.Random, invariants: list[Invariant]) -> None:
        self.bp, self.plan, self.rng = bp, plan, rng
        self.simulator = PlanSimulator(plan)
        self.invariants = invariants
        self.params = {name: [Param.model_validate(p) for p in tool.params] for name, tool in plan.tools.items()}
        self.values = ValueMaker(f"task-values:{bp.env_id}:{bp.seed}", _clock_placeholder())
        self.used: set[str] = set()  # write tools earlier tasks used: the next tasks prefer others

    def run(self, state: dict[str, Any], actions: list[Action]) -> _Found | None:
        """The final state of `actions` from `state`, if the plan says every call succeeds."""
        current = state
        touched: set[tuple[str | int, ...]] = set()
        for action in actions:
            prediction = self.simulator.predict(current, action)
            if prediction.abstained or prediction.outcome != Outcome.SUCCESS:
                return None
            current = apply_delta(current, prediction.delta)
            touched.update(tuple(op.path[:2]) for op in prediction.delta)
        ops = []  # the net change, diffed only where calls wrote (a whole-state diff costs more than the calls)
        for path in sorted(touched, key=path_key):
            before: Any = state
            after: Any = current
            for part in path:
                before = before.get(part, MISSING) if isinstance(before, dict) else MISSING
                after = after.get(part, MISSING) if isinstance(after, dict) else MISSING
            ops += Delta.dump_python(diff_at(path, before, after), mode="json")
        return _Found(actions, current, ops)

    def observes(self, state: dict[str, Any], action: Action, needle: str) -> bool:
        """Whether a read call succeeds and its observation names `needle` (the record sought)."""
        prediction = self.simulator.predict(state, action)
        if prediction.abstained or prediction.outcome != Outcome.SUCCESS:
            return False
        return f'"{needle}"' in _dumps(prediction.observation)

    def clean(self, found: _Found) -> bool:
        """A real change that keeps every invariant."""
        changed = [op for op in found.ops if not _skipped(op["path"])]
        return bool(changed) and not violations(self.invariants, found.final)

    # --- arguments -----------------------------------------------------------------------------
    def arguments(self, recipe: ToolRecipe, state: dict[str, Any], target: str | None) -> dict[str, Any] | None:
        """Realistic arguments for one write on `target` (a record of the recipe's entity), or None."""
        e = self.bp.entity(recipe.entity)
        out: dict[str, Any] = {}
        optional = [p for p in self.params[recipe.name] if not p.required]
        chosen_optional = {p.name for p in self.rng.sample(optional, min(len(optional), self.rng.randint(1, 2)))}
        for p in self.params[recipe.name]:
            if not p.required and p.name not in chosen_optional:
                continue
            value = self._argument(recipe, e, p, state, target)
            if value is _NONE:
                if p.required:
                    return None
                continue
            out[p.name] = value
        return out

    def _argument(self, recipe: ToolRecipe, e: EntitySpec, p: Param, state: dict[str, Any], target: str | None) -> Any:
        rng = self.rng
        if p.name in (f"{e.name}_id", f"from_{e.name}_id") and target is not None:
            return target
        if p.name == "reason":
            return reason_for(recipe, e, rng.randrange(60))
        if p.name == "payment_method" and "balance" in (p.enum or ["balance"]):
            return rng.choice(("card", "balance", "bank_transfer"))
        if p.enum:
            return rng.choice(p.enum)
        if p.name.endswith("_id"):
            table = e.table if p.name == f"to_{e.name}_id" else self._table_of(p.name)
            keys = sorted(state.get(table, {})) if table else []
            if target is not None and table == e.table:
                keys = [k for k in keys if k != target] or keys
            return rng.choice(keys) if keys else _NONE
        if p.name == "amount" and recipe.field and target is not None:
            current = state[e.table][target].get(recipe.field) or 0
            f = e.field(recipe.field)
            if recipe.direction == "decrease":
                if current <= 0:
                    return _NONE
                amount: Any = current * rng.uniform(0.2, 0.8)
            else:
                room = (f.hi if f.hi is not None else current + 100) - current
                if room <= 0:
                    return _NONE
                amount = room * rng.uniform(0.1, 0.5)
            return max(1, int(amount)) if f.kind == "int" else max(0.01, round(amount, 2))
        if e.has(p.name):
            f = e.field(p.name)
            if f.kind not in ("fk", "status", "stamp", "version"):
                return self.values.value(f, e, rng.randint(50, 500))
        pool = [v for v in candidates(p, state) if _realistic(v)]
        if pool:
            return rng.choice(pool[:12])
        return {"integer": rng.randint(1, 5), "number": round(rng.uniform(1, 100), 2), "boolean": True}.get(
            p.json_type or "", _NONE)

    def _table_of(self, param: str) -> str | None:
        stem = param.removesuffix("_id")
        entity = next((e for e in self.bp.entities if e.name == stem), None)
        if entity is None:
            entity = next((e for e in self.bp.entities if stem.endswith(e.name)), None)
        return entity.table if entity else None


_NONE = object()


def _realistic(value: Any) -> bool:
    """A candidate value a user would give (no empty, padded or odd boundary strings, no negatives)."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip()) and value == value.strip() and value.isprintable() and len(value) < 80 \
            and value not in TEXT
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 0 <= value < 10**6
    return True


def _dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def _clock_placeholder() -> Any:
    from synth.procedural.states import CLOCK

    return CLOCK


# --- finding a record by what a user knows ------------------------------------------------------------

def _natural_keys(e: EntitySpec, rows: dict[str, Any], key: str) -> list[tuple[str, Any]]:
    """(field, value) pairs that single the record out among its table, best first (email, number, name)."""
    order = {kind: i for i, kind in enumerate(_NATURAL_KINDS)}
    fields = sorted((f for f in e.fields if f.kind in order), key=lambda f: (not f.unique, order[f.kind]))
    if e.has(e.label) and e.field(e.label) not in fields:
        fields.append(e.field(e.label))
    found = []
    for f in fields:
        value = rows[key].get(f.name)
        if value is None or not _realistic(value):
            continue
        if sum(1 for r in rows.values() if r.get(f.name) == value) == 1:
            found.append((f.name, value))
    return found


def _reads_of(bp: Blueprint, e: EntitySpec) -> list[ToolRecipe]:
    return [t for t in bp.tools if t.archetype in READS and t.entity == e.name]


def _find(planner: _Planner, e: EntitySpec, key: str, state: dict[str, Any],
          deep: bool = True) -> tuple[list[Action], str]:
    """Read calls that lead from what the user knows to the record, and how the user names it."""
    rows = state[e.table]
    keys = _natural_keys(e, rows, key)
    reads = _reads_of(planner.bp, e)
    for field, value in keys:  # a lookup by the natural key itself (find_<entity>_by_<key>)
        for t in reads:
            params = planner.params[t.name]
            if any(p.name == field for p in params) and all(p.name == field or not p.required for p in params):
                action = Action(name=t.name, arguments={field: value})
                if planner.observes(state, action, key):
                    return [action], say_record(e, field, value, key)
    if keys:  # a list the record shows up in, with the name the user gives
        field, value = keys[0]
        for t in reads:
            params = planner.params[t.name]
            if t.archetype == "list" and not any(p.required for p in params):
                action = Action(name=t.name, arguments={})
                if planner.observes(state, action, key) and planner.observes(state, action, str(value)):
                    return [action], say_record(e, field, value, key)
        for t in reads:  # a list by status the user can tell ("my pending booking")
            params = planner.params[t.name]
            if t.archetype == "list" and [p.name for p in params if p.required] == ["status"] and e.states:
                status = rows[key].get("status")
                action = Action(name=t.name, arguments={"status": status})
                if planner.observes(state, action, key) and planner.observes(state, action, str(value)):
                    return [action], say_record(e, field, value, key).replace("the ", f"the {words(str(status))} ", 1)
    parent = _through_parent(planner, e, key, state, keys) if deep else None
    if parent is not None:
        return parent
    return [], say_record(e, None, None, key)  # the user has the reference (a booking number, say)


def _through_parent(planner: _Planner, e: EntitySpec, key: str, state: dict[str, Any],
                    keys: list[tuple[str, Any]]) -> tuple[list[Action], str] | None:
    """Find the parent by what the user knows, then list its children: 'the booking "X" of the guest with email Y'."""
    fk = next((f for f in e.fks if f.fk == e.parent), None)
    if fk is None or not keys or e.parent == e.name:
        return None
    parent = planner.bp.entity(e.parent or "")
    parent_key = state[e.table][key].get(fk.name)
    if parent_key is None or parent_key not in state.get(parent.table, {}):
        return None
    for t in _reads_of(planner.bp, e):
        required = [p.name for p in planner.params[t.name] if p.required]
        if t.archetype != "list" or required != [f"{parent.name}_id"]:
            continue
        action = Action(name=t.name, arguments={f"{parent.name}_id": parent_key})
        if not planner.observes(state, action, key):
            continue
        lead, named = _find(planner, parent, str(parent_key), state, deep=False)
        if not lead:
            return None
        field, value = keys[0]
        return lead + [action], f"{say_record(e, field, value, key)} of {named}"
    return None


def _read(planner: _Planner, e: EntitySpec, key: str, state: dict[str, Any]) -> list[Action]:
    """A read of the record by id before writing (what a careful agent does), if a lookup exists."""
    for t in _reads_of(planner.bp, e):
        params = planner.params[t.name]
        if t.archetype == "lookup" and [p.name for p in params if p.required] == [f"{e.name}_id"]:
            action = Action(name=t.name, arguments={f"{e.name}_id": key})
            if planner.observes(state, action, key):
                return [action]
    return []


# --- families -------------------------------------------------------------------------------------------

@dataclass
class _Target:
    """A record, how to find it, and how the user names it."""

    entity: EntitySpec
    key: str
    lead: list[Action]
    named: str
    who: str = ""  # the person or account asking, as the user introduces themselves ("" if nobody owns it)


def _targets(planner: _Planner, e: EntitySpec, state: dict[str, Any], count: int = 6) -> list[_Target]:
    keys = sorted(state.get(e.table, {}))
    planner.rng.shuffle(keys)
    out = []
    for key in keys[:count]:
        finder, named = _find(planner, e, key, state)
        reader = _read(planner, e, key, state)
        asker, who = _requester(planner, e, key, state)
        lead = asker + [a for a in finder if a not in asker]
        lead += [a for a in reader if a not in lead]
        out.append(_Target(e, key, lead, named, who))
    return out


def _requester(planner: _Planner, e: EntitySpec, key: str, state: dict[str, Any]) -> tuple[list[Action], str]:
    """Who asks about the record: the record it belongs to (a customer, an account).

    They are found by what they say about themselves, so the agent confirms who is asking before
    acting ([] and "" if the record belongs to nobody a find tool can find).
    """
    record = state[e.table][key]
    for f in e.fks:
        owner = planner.bp.entity(f.fk or "")
        owner_key = record.get(f.name)
        if owner.name == e.name or owner.support or owner_key is None or owner_key not in state.get(owner.table, {}):
            continue
        if not any(g.kind in ("name", "email", "phone") for g in owner.fields):
            continue  # a vehicle or a warehouse does not call in: only people and accounts do
        finder, named = _find(planner, owner, str(owner_key), state, deep=False)
        finds = {t.name for t in planner.bp.tools if t.archetype == "find"}
        if finder and finder[0].name in finds:
            return finder, named
    return [], ""


def _write(planner: _Planner, recipe: ToolRecipe, state: dict[str, Any], target: str,
           tries: int = 8) -> tuple[Action, _Found] | None:
    """A realistic write on `target` the plan says succeeds, keeps the invariants and changes something."""
    for _ in range(tries):
        arguments = planner.arguments(recipe, state, target)
        if arguments is None:
            return None
        action = Action(name=recipe.name, arguments=arguments)
        found = planner.run(state, [action])
        if found is not None and planner.clean(found):
            return action, found
    return None


def _changed_fields(found: _Found) -> set[tuple[str, ...]]:
    return {tuple(op["path"]) for op in found.ops if not _skipped(op["path"])}


def _goal(planner: _Planner, bp: Blueprint, writes: list[ToolRecipe], target: _Target,
          state: dict[str, Any]) -> tuple[str, list[Action], list[str]] | None:
    """Find, read, then one to three writes on the record."""
    e = target.entity
    mine = [w for w in writes if w.entity == e.name and w.archetype not in _NEW]
    planner.rng.shuffle(mine)
    mine.sort(key=lambda w: (w.name in planner.used, w.archetype in _ENDING))  # edits first, moves last
    done: list[tuple[ToolRecipe, Action]] = []
    current, limit = state, planner.rng.randint(2, 3)
    for recipe in mine:
        if len(done) >= limit:
            break
        if recipe.archetype in _ENDING and any(r.archetype in _ENDING for r, _ in done):
            continue  # one lifecycle move per request: "cancel, then suspend, then close" is no request
        found = _write(planner, recipe, current, target.key)
        if found is None:
            continue
        done.append((recipe, found[0]))
        current = found[1].final
        if target.key not in current.get(e.table, {}):
            break  # deleted: nothing more to do on it
    if not done:
        return None
    actions, asks = list(target.lead), []
    for i, (r, a) in enumerate(done):
        reads, text = _say(planner, r, a, target.named if i == 0 else "it", state, target.key)
        actions += [x for x in reads if x not in actions] + [a]
        asks.append(text)
    if len(done) < limit and target.key in current.get(e.table, {}):
        related = _related_write(planner, bp, writes, e, current[e.table][target.key], current)
        if related is not None:
            reads, recipe, action, named = related
            actions += reads + [action]
            asks.append(say_change(bp, recipe, action.arguments, named))
            done.append((recipe, action))
    whole = planner.run(state, actions)
    if whole is None or not planner.clean(whole):
        return None
    planner.used.update(r.name for r, _ in done)
    request = _sentence(" and then ".join(asks))
    return request, whole.actions, _goal_lines(whole.ops)


def _related_write(planner: _Planner, bp: Blueprint, writes: list[ToolRecipe], e: EntitySpec, record: dict[str, Any],
                   state: dict[str, Any]) -> tuple[list[Action], ToolRecipe, Action, str] | None:
    """A write on the record's parent (or another record it refers to): 'and then close its account'."""
    for f in e.fks:
        other = bp.entity(f.fk or "")
        key = record.get(f.name)
        if other.name == e.name or key is None or key not in state.get(other.table, {}):
            continue
        for recipe in [w for w in writes if w.entity == other.name and w.archetype not in (*_NEW, "delete")]:
            found = _write(planner, recipe, state, str(key), tries=4)
            if found is not None:
                return _read(planner, other, str(key), state), recipe, found[0], f"its {words(other.name)}"
    return None


def _say(planner: _Planner, recipe: ToolRecipe, action: Action, record: str, state: dict[str, Any],
         target: str | None) -> tuple[list[Action], str]:
    """How the user asks for one write, and the finds that lead to the other records it involves.

    Every other record (the receiver of a transfer, the acting customer) is named by what the
    user knows about it, never by its id.
    """
    e = planner.bp.entity(recipe.entity)
    reads: list[Action] = []
    names: dict[str, str] = {}
    for name, value in action.arguments.items():
        if not name.endswith("_id") or value == target or name in (f"{e.name}_id", f"from_{e.name}_id"):
            continue
        table = e.table if name == f"to_{e.name}_id" else planner._table_of(name)
        if table is None or value not in state.get(table, {}):
            continue
        finder, named = _find(planner, planner.bp.by_table(table), str(value), state, deep=False)
        reads += [a for a in finder if a not in reads]
        names[name] = named
    return reads, say_change(planner.bp, recipe, action.arguments, record, names)


def _condition(planner: _Planner, e: EntitySpec, record: dict[str, Any], written: set[str],
               holds: bool) -> tuple[str, str] | None:
    """A condition on one field of the record that is true (or false) for it: (text, field)."""
    rng = planner.rng
    fields = [f for f in e.fields if f.name not in written and f.kind in ("int", "float", "money", "choice", "bool")
              and record.get(f.name) is not None and "balance" not in f.roles
              and not (f.kind in ("int", "float", "money") and record[f.name] < (3 if f.kind == "int" else 1))]
    if not fields:
        return None
    f = rng.choice(fields)
    value = record[f.name]
    what = words(f.name)
    if f.kind == "choice":
        other = [c for c in f.choices if c != value]
        shown = value if holds else rng.choice(other)
        return f"its {what} is {shown}", f.name
    if f.kind == "bool":
        return (f"its {what} is {say_value(value if holds else not value)}"), f.name
    threshold = _round_threshold(value, below=holds, integer=f.kind == "int")
    return f"its {what} is above {say_value(threshold, f.kind)}", f.name


def _policy_condition(planner: _Planner, target: _Target, state: dict[str, Any], changed: set[tuple[str, ...]],
                      holds: bool) -> tuple[str, list[Action]] | None:
    """A policy's condition, on the record itself or on a record it refers to (the customer's tier).

    Returns the condition's text and the calls that show it: the target's lead, plus a read of
    the record referred to when the condition is on that one.
    """
    e = target.entity
    record = state[e.table][target.key]
    related = []
    for f in e.fks:
        owner = planner.bp.entity(f.fk or "")
        key = record.get(f.name)
        if owner.name != e.name and not owner.support and key in state.get(owner.table, {}):
            reads = _read(planner, owner, str(key), state) or _find(planner, owner, str(key), state, deep=False)[0]
            if reads:
                related.append((owner, str(key), reads))
    if related and planner.rng.random() < 0.6:
        owner, key, reads = planner.rng.choice(related)
        written = {p[2] for p in changed if len(p) == 3 and p[0] == owner.table and p[1] == key}
        found = _condition(planner, owner, state[owner.table][key], written, holds)
        if found is not None:
            text = found[0].replace("its ", f"its {words(owner.name)}'s ", 1)
            return text, target.lead + [a for a in reads if a not in target.lead]
    written = {p[2] for p in changed if len(p) == 3 and p[0] == e.table and p[1] == target.key}
    found = _condition(planner, e, record, written, holds)
    return (found[0], target.lead) if found is not None else None


def _round_threshold(value: float, *, below: bool, integer: bool) -> float:
    """A round figure just below (or just above) a value, as a policy would state it.

    >>> _round_threshold(2019, below=True, integer=True), _round_threshold(212, below=False, integer=True)
    (2000, 220)
    >>> _round_threshold(7.35, below=True, integer=False), _round_threshold(0.42, below=False, integer=False)
    (7.3, 0.43)
    """
    import math

    step = 10 ** (math.floor(math.log10(abs(value))) - 1) if value else 1
    step = max(1, int(step)) if integer else step
    threshold = (math.floor(value / step) * step) if below else (math.floor(value / step) + 1) * step
    if below and threshold >= value:
        threshold -= step
    return int(threshold) if integer else round(threshold, 2)


def _branch(planner: _Planner, bp: Blueprint, writes: list[ToolRecipe], target: _Target,
            state: dict[str, Any]) -> tuple[str, list[Action], list[str], list[Action]] | None:
    """'If <condition>, do A; otherwise do B': the solution does the branch that applies."""
    e = target.entity
    mine = [w for w in writes if w.entity == e.name and w.archetype not in (*_NEW, "delete")]
    planner.rng.shuffle(mine)
    options = []
    for recipe in mine:
        found = _write(planner, recipe, state, target.key)
        if found is not None:
            options.append((recipe, *found))
        if len(options) == 2:
            break
    if len(options) < 2:
        return None
    (ra, aa, fa), (rb, ab, fb) = options
    if _changed_fields(fa) == _changed_fields(fb):
        return None
    holds = planner.rng.random() < 0.5
    condition = _policy_condition(planner, target, state, _changed_fields(fa) | _changed_fields(fb), holds)
    if condition is None:
        return None
    text, lead = condition
    reads_a, says_a = _say(planner, ra, aa, "it", state, target.key)
    reads_b, says_b = _say(planner, rb, ab, "it", state, target.key)
    applied, other = ((reads_a, aa), (reads_b, ab)) if holds else ((reads_b, ab), (reads_a, aa))
    solution = planner.run(state, lead + [x for x in applied[0] if x not in lead] + [applied[1]])
    wrong = planner.run(state, lead + [x for x in other[0] if x not in lead] + [other[1]])
    if solution is None or wrong is None or not planner.clean(solution):
        return None
    touched = {tuple(op["path"]) for op in solution.ops}
    lines = _goal_lines(solution.ops) + _absent_lines([op for op in wrong.ops if tuple(op["path"]) not in touched])
    request = _sentence(f"please look at {target.named}: if {text}, {says_a}; otherwise {says_b}")
    return request, solution.actions, lines, wrong.actions


def _refusal(planner: _Planner, bp: Blueprint, writes: list[ToolRecipe], target: _Target,
             state: dict[str, Any]) -> tuple[str, str, list[Action], list[str], list[Action]] | None:
    """A request the stated policy forbids (the tool would allow it): read, refuse, maybe do the allowed part."""
    e = target.entity
    mine = [w for w in writes if w.entity == e.name and w.archetype not in _NEW]
    planner.rng.shuffle(mine)
    for recipe in mine:
        found = _write(planner, recipe, state, target.key)
        if found is None:
            continue
        action, result = found
        condition = _policy_condition(planner, target, state, _changed_fields(result), holds=True)
        if condition is None:
            continue
        text, lead = condition
        verb = verb_phrase(recipe, e) if recipe.archetype in ("transition", "cascade", "delete") else "change"
        policy = (f"Policy: never {verb} a {words(e.name)} when {text}; decline such a request and change "
                  f"nothing it asks for.")
        allowed: list[Action] = []
        allowed_text = ""
        for other in mine:
            if other is recipe:
                continue
            extra = _write(planner, other, state, target.key)
            if extra is None or _changed_fields(extra[1]) & _changed_fields(result):
                continue
            if other.archetype == "delete" or planner.rng.random() < 0.25:
                continue
            reads, allowed_text = _say(planner, other, extra[0], "it", state, target.key)
            allowed = [x for x in reads if x not in lead] + [extra[0]]
            break
        reads, ask = _say(planner, recipe, action, target.named, state, target.key)
        solution = planner.run(state, lead + allowed)
        wrong = planner.run(state, lead + allowed + [x for x in reads if x not in lead + allowed] + [action])
        if solution is None or wrong is None:
            continue
        forbidden_ops = [op for op in result.ops if not _skipped(op["path"])]
        lines = _goal_lines(solution.ops) + _absent_lines(forbidden_ops)
        request = _sentence(ask + (f", and also {allowed_text}" if allowed_text else ""))
        return policy, request, solution.actions, lines, wrong.actions
    return None


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _instruction(bp: Blueprint, request: str, policy: str = "", who: str = "") -> str:
    """The request in quotes, who makes it, and the policy that applies (if any)."""
    asker = _sentence(who).rstrip(".") if who else "A caller"
    confirm = " Confirm who is asking before changing anything of theirs." if who else ""
    return f"As the {bp.actor}: {asker} asks: \"{request}\"" + confirm + (f" {policy}" if policy else "")


def make_tasks(bp: Blueprint, plan: Plan, states: dict[str, dict[str, Any]], *, count: int = 4) -> list[Task]:
    """Up to `count` tasks (goal, branch and refusal families), deterministic from the blueprint's seed."""
    rng = random.Random(f"tasks:{bp.env_id}:{bp.seed}")
    planner = _Planner(bp, plan, rng, bp.invariants)
    writes = [t for t in bp.tools if t.archetype not in READS and t.name in plan.tools]
    tasks: list[Task] = []
    wanted = ["refusal", "create", "goal", "branch", "goal"]
    entities = [e for e in bp.entities if not e.support
                and any(w.entity == e.name and w.archetype not in _NEW for w in writes)]
    rng.shuffle(entities)
    entities.sort(key=lambda e: -sum(w.entity == e.name for w in writes))  # the busiest records first
    for family in wanted:
        if len(tasks) >= count:
            break
        if family == "create":
            task = _create_task(planner, bp, writes, states, tasks)
        else:
            task = _one(planner, bp, family, entities, writes, states, tasks)
        if task is not None:
            tasks.append(task)
    return tasks


def _new(task: Task, tasks: list[Task]) -> bool:
    """Not a repeat: no earlier task has the same id or calls the same tools in the same order."""
    shape = [a.name for a in task.solution or []]
    return all(t.id != task.id and [a.name for a in t.solution or []] != shape for t in tasks)


def _one(planner: _Planner, bp: Blueprint, family: str, entities: list[EntitySpec], writes: list[ToolRecipe],
         states: dict[str, dict[str, Any]], tasks: list[Task]) -> Task | None:
    """A new task of `family`: the first of three or more calls found, else the longest of a few."""
    best: Task | None = None
    tried = 0
    for state_name in ("default", "busy"):
        state = states[state_name]
        for e in entities:
            for target in _targets(planner, e, state, count=3):
                task = _task_of(planner, bp, family, writes, target, state, state_name, len(tasks))
                if task is None or not _new(task, tasks):
                    continue
                if len(task.solution or []) >= _MULTI_STEP:
                    return task
                if best is None or len(task.solution or []) > len(best.solution or []):
                    best = task
                tried += 1
                if tried >= 4:
                    return best
    return best


def _task_of(planner: _Planner, bp: Blueprint, family: str, writes: list[ToolRecipe], target: _Target,
             state: dict[str, Any], state_name: str, index: int) -> Task | None:
    forbidden: list[Action] | None = None
    refusal = False
    if family == "goal":
        made = _goal(planner, bp, writes, target, state)
        if made is None:
            return None
        request, solution, lines = made
        instruction = _instruction(bp, request, who=target.who)
    elif family == "branch":
        branched = _branch(planner, bp, writes, target, state)
        if branched is None:
            return None
        request, solution, lines, forbidden = branched
        instruction = _instruction(bp, request, who=target.who)
    else:
        refused = _refusal(planner, bp, writes, target, state)
        if refused is None:
            return None
        policy, request, solution, lines, forbidden = refused
        instruction = _instruction(bp, request, policy, target.who)
        refusal = True
    check = _check_source(lines)
    if check is None:
        return None
    writes_used = [a.name for a in solution if a.name in {w.name for w in writes}]
    task = Task(id=f"{bp.env_id}-{family}-{index + 1}-{(writes_used or ['read'])[0]}", instruction=instruction,
                state=state_name, check=check, solution=solution, forbidden=forbidden, refusal=refusal)
    if not _confirmed(planner, task, state):
        return None
    return task


def _confirmed(planner: _Planner, task: Task, state: dict[str, Any]) -> bool:
    """What the gate confirms, predicted: unsolved initially (unless a refusal), solved, and wrong after `forbidden`."""
    solved = planner.run(state, task.solution or [])
    if solved is None or not task.evaluate(state, solved.final):
        return False
    if not task.refusal and task.evaluate(state, state):
        return False
    if task.forbidden is not None:
        wrong = planner.run(state, task.forbidden)
        if wrong is None or task.evaluate(state, wrong.final):
            return False
    return True


def _placement(planner: _Planner, bp: Blueprint, recipe: ToolRecipe,
               state: dict[str, Any]) -> tuple[str, list[Action], list[str], list[Action] | None] | None:
    """A new record under records the user names (found first).

    A placement pays from the payer's balance when it covers the total, otherwise by card (the
    branch that applies is the solution; the other one is `forbidden`).
    """
    for _ in range(4):
        arguments = planner.arguments(recipe, state, None)
        if arguments is None:
            return None
        lead: list[Action] = []
        names: dict[str, str] = {}
        for name, value in arguments.items():
            table = planner._table_of(name) if name.endswith("_id") else None
            if table is None or value not in state.get(table, {}):
                continue
            finder, named = _find(planner, planner.bp.by_table(table), str(value), state)
            lead += [a for a in finder if a not in lead]
            names[name] = named
        if not lead:
            continue  # nothing to look up first: a bare create is no multi-step request
        action = Action(name=recipe.name, arguments=arguments)
        pays = recipe.archetype == "place" and "payment_method" in arguments and recipe.payer in arguments
        if not pays:
            found = planner.run(state, lead + [action])
            if found is None or not planner.clean(found):
                continue
            return _sentence(say_change(bp, recipe, arguments, "", names)), found.actions, _goal_lines(found.ops), None
        payer = planner.bp.entity(planner.bp.entity(recipe.entity).field(recipe.payer or "").fk or "")
        lead += [a for a in _read(planner, payer, str(arguments[recipe.payer or ""]), state) if a not in lead]
        by_balance = planner.run(state, lead + [action.model_copy(update={"arguments": {**arguments, "payment_method": "balance"}})])
        by_card = planner.run(state, lead + [action.model_copy(update={"arguments": {**arguments, "payment_method": "card"}})])
        if by_card is None or not planner.clean(by_card):
            continue
        applied, wrong = (by_balance, by_card) if by_balance is not None and planner.clean(by_balance) else (by_card, None)
        touched = {tuple(op["path"]) for op in applied.ops}
        lines = _goal_lines(applied.ops)
        if wrong is not None:  # paying by card instead would leave the balance untouched: the check must see it
            lines += [f"not any(row.get('method') == 'card' for key, row in final[{t!r}].items() "
                      f"if key not in initial[{t!r}])" for t in {op["path"][0] for op in wrong.ops
                                                                  if op["op"] == "add" and len(op["path"]) == 2
                                                                  and isinstance(op["value"], dict)
                                                                  and "method" in op["value"]}]
            lines += _absent_lines([op for op in wrong.ops if tuple(op["path"]) not in touched])
        shown = {k: v for k, v in arguments.items() if k != "payment_method"}
        request = _sentence(f"{say_change(bp, recipe, shown, '', names)}; pay from {names.get(recipe.payer or '', 'the')} "
                            f"balance if it covers the total, otherwise by card")
        return request, applied.actions, lines, (wrong.actions if wrong is not None else None)
    return None


def _create_task(planner: _Planner, bp: Blueprint, writes: list[ToolRecipe], states: dict[str, dict[str, Any]],
                 tasks: list[Task]) -> Task | None:
    """A create or place task on the default state (placements first: they involve the most records)."""
    state = states["default"]
    recipes = [w for w in writes if w.archetype in ("create", "place") and not bp.entity(w.entity).support]
    planner.rng.shuffle(recipes)
    recipes.sort(key=lambda w: w.archetype != "place")
    for recipe in recipes:
        made = _placement(planner, bp, recipe, state)
        if made is None:
            continue
        request, solution, lines, forbidden = made
        check = _check_source(lines)
        if check is None:
            continue
        task = Task(id=f"{bp.env_id}-{'branch' if forbidden else 'goal'}-{len(tasks) + 1}-{recipe.name}",
                    instruction=_instruction(bp, request), state="default", check=check, solution=solution,
                    forbidden=forbidden)
        if _new(task, tasks) and _confirmed(planner, task, state):
            return task
    return None


def _solvable(tool: str, params: list[dict[str, Any]], state: dict[str, Any], simulator: PlanSimulator,
              rng: random.Random, tries: int = 40) -> tuple[Action, list[dict[str, Any]]] | None:
    """An action the plan says succeeds with a non-empty change, by sampling typed candidates."""
    pools = {p.name: candidates(p, state)[:12] or [None] for p in map(Param.model_validate, params)}
    for _ in range(tries):
        arguments = {name: rng.choice(pool) for name, pool in pools.items()}
        arguments = {k: v for k, v in arguments.items() if v is not None}
        action = Action(name=tool, arguments=arguments)
        prediction = simulator.predict(state, action)
        if prediction.abstained or prediction.outcome != Outcome.SUCCESS or not prediction.delta:
            continue
        delta = Delta.dump_python(prediction.delta, mode="json")
        if any(op["path"][0] != "env_meta" for op in delta):
            return action, delta
    return None


def write_delta_sizes(bp: Blueprint, plan: Plan, state: dict[str, Any]) -> dict[str, int]:
    """|Δ| of the largest successful call found per write tool (plan-predicted; the gate checks the plan)."""
    rng = random.Random(f"sizes:{bp.env_id}:{bp.seed}")
    simulator = PlanSimulator(plan)
    sizes: dict[str, int] = {}
    for recipe in bp.tools:
        if recipe.archetype in READS:
            continue
        best = -1
        for _ in range(3):
            found = _solvable(recipe.name, plan.tools[recipe.name].params, state, simulator, rng, tries=15)
            if found is not None:
                best = max(best, len(found[1]))
        if best >= 0:
            sizes[recipe.name] = best
    return sizes

