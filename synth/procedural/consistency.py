"""Making generated records satisfy a blueprint's cross-field invariants.

The designer declares the invariants (min <= max, start < end, totals = sum of lines, counters,
balances >= 0, dates vs the env clock; synth/procedural/design.py) and the plan carries them
(catalog.plan.Invariant). `make_hold` repairs freshly generated records so every one holds, and
verifier.gate.invariants checks the result independently (and, in the gate, every executed state).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from catalog.plan import Invariant
from synth.procedural.blueprint import Blueprint, EntitySpec
from verifier.gate.invariants import children_of, children_total

__all__ = ["make_hold"]


def _clock(tables: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(tables["env_meta"]["clock"]["value"])


def _bump(value: Any, by: int, kind: str, rng: random.Random) -> Any:
    """A value `by` steps above (by > 0) or below a given one, in the field's kind."""
    if isinstance(value, str):
        moment = dt.datetime.fromisoformat(value)
        return (moment + dt.timedelta(hours=by * rng.randint(2, 72))).isoformat()
    if kind == "int":
        return value + by
    return round(value + by * max(0.01, round(abs(value) * 0.1, 2)), 2)


def make_hold(invariants: list[Invariant], tables: dict[str, Any], bp: Blueprint, rng: random.Random) -> None:
    """Repair generated records in place so every invariant holds (children before their parents' totals)."""
    order = sorted(invariants, key=lambda inv: inv.kind in ("sum_of_children", "count_of_children"))
    for inv in order * 2:  # a field in two pairs: the second pass settles what the first moved
        rows = tables.get(inv.collection)
        if not rows:
            continue
        entity = bp.by_table(inv.collection)
        for key, row in rows.items():
            if row.get(inv.field) is None and inv.kind not in ("sum_of_children", "count_of_children"):
                continue
            _repair(inv, str(key), row, tables, entity, rng)


def _kind(entity: EntitySpec, field: str) -> str:
    if not entity.has(field):
        return "float"
    return entity.field(field).kind


def _fits(entity: EntitySpec, field: str, value: Any) -> bool:
    """Whether a number lies in the field's declared range (datetimes always fit)."""
    if not entity.has(field) or isinstance(value, str):
        return True
    spec = entity.field(field)
    return (spec.lo is None or value >= spec.lo) and (spec.hi is None or value <= spec.hi)


def _repair(inv: Invariant, key: str, row: dict[str, Any], tables: dict[str, Any], entity: EntitySpec,
            rng: random.Random) -> None:
    value: Any = row.get(inv.field)
    if inv.kind in ("le", "lt"):
        other: Any = row.get(inv.other or "")
        a: Any
        b: Any
        if other is None:
            return
        a, b = (dt.datetime.fromisoformat(value), dt.datetime.fromisoformat(other)) if isinstance(value, str) \
            else (value, other)
        if a > b:
            if _fits(entity, inv.field, other) and _fits(entity, inv.other or "", value):
                row[inv.field], row[inv.other or ""] = other, value
            elif _fits(entity, inv.other or "", value):
                row[inv.other or ""] = value
            else:
                row[inv.field] = other
            a, b = row[inv.field], row[inv.other or ""]
        if inv.kind == "lt" and a == b:
            row[inv.other or ""] = _bump(row[inv.other or ""], 1, _kind(entity, inv.other or ""), rng)
    elif inv.kind == "nonneg":
        if value < 0:
            row[inv.field] = -value
    elif inv.kind in ("not_after_clock", "not_before_clock"):
        clock = _clock(tables)
        moment = dt.datetime.fromisoformat(value)
        if inv.kind == "not_after_clock" and moment > clock:
            row[inv.field] = (clock - (moment - clock) - dt.timedelta(hours=1)).isoformat()
        elif inv.kind == "not_before_clock" and moment < clock:
            row[inv.field] = (clock + (clock - moment) + dt.timedelta(hours=1)).isoformat()
    else:
        children = children_of(tables, inv, key)
        if inv.kind == "count_of_children":
            row[inv.field] = len(children)
        else:
            total = children_total(inv, children)
            row[inv.field] = total if _kind(entity, inv.field) == "int" else round(total, 2)
