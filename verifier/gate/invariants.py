"""The value-constraint checker: which of a plan's invariants a state breaks, record by record.

Invariants (catalog.plan.Invariant) are cross-field constraints every state of an env must
satisfy: min <= max, start < end, balances >= 0, a total equal to the sum of its lines, a
counter equal to its children, dates on the right side of the env clock. They are data in the
plan, so this checker reads states as JSON and runs no env code: the synthesis pipeline runs it
on initial states and on the states its tasks' reference solutions reach, the gate on every state
the sandbox returns (`invariants_hold`), and the realism report counts what it finds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from catalog.plan import Invariant, Plan

__all__ = ["violations", "plan_violations", "children_of", "children_total", "inferred_invariants", "MONEY_TOLERANCE"]

MONEY_TOLERANCE = 0.01  # a sum of cents, rounded per line, may differ from the stored total by a cent


def _comparable(value: Any) -> Any:
    """Numbers as they are; ISO datetimes as aware datetimes; anything else unchanged."""
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return value


def _clock(state: Mapping[str, Any]) -> Any:
    meta = state.get("env_meta") or {}
    row = meta.get("clock") if isinstance(meta, Mapping) else None
    return _comparable(row.get("value")) if isinstance(row, Mapping) else None


def children_of(state: Mapping[str, Any], inv: Invariant, key: str) -> list[Mapping[str, Any]]:
    """The records a sum / count invariant of record `key` ranges over (its children in `inv.states`)."""
    rows = state.get(inv.child or "") or {}
    return [r for r in rows.values() if str(r.get(inv.via or "")) == key
            and (not inv.states or r.get("status") in inv.states)]


def children_total(inv: Invariant, children: Iterable[Mapping[str, Any]]) -> Any:
    """What a `sum_of_children` invariant says the record's field equals: the children's field (times quantity)."""
    return sum((c.get(inv.child_field or "") or 0) * ((c.get(inv.times) or 0) if inv.times else 1) for c in children)


def _broken(inv: Invariant, key: str, row: Mapping[str, Any], state: Mapping[str, Any]) -> str | None:
    """Why one record breaks one invariant, or None."""
    where = f"{inv.collection}[{key}].{inv.field}"
    value = _comparable(row.get(inv.field))
    try:
        if inv.kind in ("le", "lt"):
            other = _comparable(row.get(inv.other or ""))
            if value is None or other is None:
                return None
            ok = value <= other if inv.kind == "le" else value < other
            return None if ok else f"{where} = {row.get(inv.field)!r} not {'<=' if inv.kind == 'le' else '<'} " \
                                   f"{inv.other} = {row.get(inv.other or '')!r}"
        if inv.kind == "nonneg":
            return None if value is None or value >= 0 else f"{where} = {value!r} < 0"
        if inv.kind in ("not_after_clock", "not_before_clock"):
            clock = _clock(state)
            if value is None or clock is None:
                return None
            ok = value <= clock if inv.kind == "not_after_clock" else value >= clock
            return None if ok else f"{where} = {row.get(inv.field)!r} is {'after' if inv.kind == 'not_after_clock' else 'before'} the clock"
        children = children_of(state, inv, key)
        if inv.kind == "count_of_children":
            return None if value == len(children) else f"{where} = {value!r}, but {len(children)} {inv.child}"
        if inv.kind == "sum_of_children":
            total = children_total(inv, children)
            if value is None or abs(value - total) > MONEY_TOLERANCE + 1e-9:
                return f"{where} = {value!r}, but its {inv.child} sum to {round(total, 2)!r}"
            return None
    except TypeError as exc:  # a value of the wrong type breaks the constraint too
        return f"{where}: cannot compare ({exc})"
    return None


def violations(invariants: Iterable[Invariant], state: Mapping[str, Any]) -> list[str]:
    """Every (record, invariant) pair the state breaks, as one line each; [] when all hold."""
    found: list[str] = []
    for inv in invariants:
        rows = state.get(inv.collection)
        if not isinstance(rows, Mapping):
            continue
        for key, row in rows.items():
            if isinstance(row, Mapping):
                problem = _broken(inv, str(key), row, state)
                if problem:
                    found.append(problem)
    return found


def plan_violations(plan: Plan, states: Sequence[Mapping[str, Any]]) -> list[str]:
    """The violations of the plan's invariants over several states (the entry the reports use)."""
    return [problem for state in states for problem in violations(plan.invariants, state)]


def inferred_invariants(states: Sequence[Mapping[str, Any]]) -> list[Invariant]:
    """Counters every given state agrees with: a record's int field equals the number of records pointing at it.

    A draft for a user to confirm (`verify write-plan` on an imported env writes them into plan.json):
    `flights[f].seats_booked` equals the bookings whose `flight_id` is `f`. Each holds in every state,
    counts at least one child somewhere, and its child field points only at keys of the parent, so
    a tool that adds or removes a child without the counter breaks it. States are plain views
    (catalog.state.codec.readable for class envs).
    """
    def collections(state: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        return {name: rows for name, rows in state.items() if isinstance(rows, Mapping) and rows
                and all(isinstance(r, Mapping) for r in rows.values())}

    per_state = [collections(state) for state in states]
    if not per_state:
        return []
    names = sorted(set.intersection(*(set(c) for c in per_state)))
    found: list[Invariant] = []
    for parent in names:
        counters = sorted(set.intersection(*({f for r in c[parent].values() for f in r} for c in per_state)))
        for field in counters:
            if not all(type(r.get(field)) is int for c in per_state for r in c[parent].values()):
                continue
            for child in names:
                if child == parent:
                    continue
                vias = sorted(set.intersection(*({f for r in c[child].values() for f in r} for c in per_state)))
                for via in vias:
                    inv = Invariant(kind="count_of_children", collection=parent, field=field, child=child, via=via,
                                    description=f"inferred from the initial states: {parent}[x].{field} counts the "
                                                f"{child} whose {via} is x (keep it if that is the intent, else delete it)")
                    if _counts(inv, states, per_state):
                        found.append(inv)
    return found


def _counts(inv: Invariant, states: Sequence[Mapping[str, Any]], per_state: list[dict[str, Mapping[str, Any]]]) -> bool:
    """Whether a count invariant holds in every state, its child field points only at parents, and it counts something."""
    counted = False
    for state, groups in zip(states, per_state, strict=True):
        keys = {str(k) for k in groups[inv.collection]}
        if not all(str(r.get(inv.via or "")) in keys for r in groups[inv.child or ""].values()):
            return False
        if violations([inv], state):
            return False
        counted = counted or bool(groups[inv.child or ""])
    return counted
