"""Initial states for a blueprint, deterministic from a seed.

Records are made so that every rule can bite from the start: every lifecycle state occurs,
some deadlines have passed and some have not, one parent is filled to its capacity, one balance
is empty, and foreign keys, unique fields and non-null fields hold. Values are realistic (Faker,
seeded; synth/procedural/values.py) and the blueprint's cross-field invariants hold in every
state (synth/procedural/consistency.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from synth.procedural.blueprint import Blueprint, EntitySpec, FieldSpec
from synth.procedural.compiler import open_states
from synth.procedural.consistency import make_hold
from synth.procedural.support_rows import link_support_rows
from synth.procedural.values import ValueMaker

__all__ = ["initial_states", "CLOCK", "MAX_ROWS"]

CLOCK = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
MAX_ROWS = 200  # records per entity and state at most (the blueprint's `rows` times the state's scale)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat()


def _order(bp: Blueprint) -> list[EntitySpec]:
    """Entities with the ones they refer to first."""
    done: list[EntitySpec] = []
    pending = list(bp.entities)
    while pending:
        for e in pending:
            targets = {f.fk for f in e.fks if f.fk != e.name}
            if targets <= {d.name for d in done}:
                done.append(e)
                pending.remove(e)
                break
        else:
            raise ValueError(f"foreign keys of {[e.name for e in pending]} form a cycle")
    return done


def _records(bp: Blueprint, values: ValueMaker, scale: int) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    ids: dict[str, list[str]] = {}
    rng = values.rng
    for e in _order(bp):
        count = min(MAX_ROWS, e.rows * scale)
        rows: dict[str, Any] = {}
        seen: dict[str, set[Any]] = {f.name: set() for f in e.fields if f.unique or f.name == e.label}
        for i in range(count):
            key = f"{e.prefix}{i + 1:03d}"
            label = _listed_label(e, i)
            plain = values.record(e, i, label)
            record: dict[str, Any] = {"id": key}
            for f in e.fields:
                if f.kind == "fk":
                    targets = ids.get(f.fk or "", [])
                    if i < len(targets):
                        record[f.name] = targets[i]
                    else:  # the first parent gathers many children: bulk moves (cascades) get wide
                        record[f.name] = targets[0] if f.fk == e.parent and rng.random() < 0.6 else rng.choice(targets)
                elif f.kind == "status":
                    record[f.name] = e.states[i % len(e.states)]
                elif f.kind == "stamp":
                    record[f.name] = None
                elif f.kind == "version":
                    record[f.name] = rng.randint(1, 3)
                elif f.name == e.label and label is not None:
                    record[f.name] = label
                else:
                    record[f.name] = plain[f.name]
                    if "deadline" in f.roles and i % 5 == 4:
                        record[f.name] = None
                if f.name in seen:
                    while record[f.name] in seen[f.name]:
                        record[f.name] = _another(f, record[f.name], i, values)
                    seen[f.name].add(record[f.name])
            for f in e.fields:  # a reason is kept only for the state the record is in (why it was cancelled)
                if "reason" in f.roles and f.name.endswith("_reason") and f.name.removesuffix("_reason") in e.states \
                        and record.get("status") != f.name.removesuffix("_reason") and f.nullable:
                    record[f.name] = None
            for f in e.fields:  # stamps of states already reached, and a recent change time
                if f.kind == "stamp" and f.name.endswith("_at"):
                    reached = f.name.removesuffix("_at")
                    if record.get("status") == reached or (f.name == "updated_at" and i % 2 == 0):
                        record[f.name] = _iso(values.clock - dt.timedelta(days=rng.randint(1, 30), hours=i % 24))
            balance = e.role("balance")
            if balance is not None and i == 1:
                record[balance.name] = 0 if balance.kind == "int" else 0.0
            rows[key] = record
        tables[e.table] = rows
        ids[e.name] = list(rows)
    _fill_one_parent(bp, tables)
    return tables


def _listed_label(e: EntitySpec, i: int) -> str | None:
    """Record `i`'s label from the entity's listed words (numbered past the list; a person's name is not)."""
    if not e.words:
        return None
    word = e.words[i % len(e.words)]
    if i < len(e.words):
        return word
    label = next((f for f in e.fields if f.name == e.label), None)
    return None if label is not None and label.kind == "name" else f"{word} {i // len(e.words) + 1}"


def _another(f: FieldSpec, value: Any, i: int, values: ValueMaker) -> Any:
    """A replacement for a value a unique field already holds."""
    if isinstance(value, str):
        if f.kind == "email":
            local, _, domain = value.partition("@")
            return f"{local}{i + 2}@{domain}"
        return f"{value} {i + 1}" if f.kind in ("text", "name") else f"{value}-{i}"
    return values.rng.randint(int(f.lo or 0), int(f.hi or 10**6))


def _fill_one_parent(bp: Blueprint, tables: dict[str, dict[str, Any]]) -> None:
    """Set capacities so each parent fits its live children, and the first parent is exactly full."""
    for parent in bp.entities:
        capacity = parent.role("capacity")
        if capacity is None:
            continue
        lo, hi = int(capacity.lo or 1), int(capacity.hi or 10)
        for child in bp.children(parent.name):
            if child.parent != parent.name:
                continue
            fk = next(f for f in child.fks if f.fk == parent.name)
            live = set(open_states(child, bp)) if child.states else None
            counts: dict[str, int] = {}
            for row in tables[child.table].values():
                if live is None or row.get("status") in live:
                    counts[row[fk.name]] = counts.get(row[fk.name], 0) + 1
            for n, (key, row) in enumerate(sorted(tables[parent.table].items())):
                held = counts.get(key, 0)
                row[capacity.name] = max(lo, min(hi, held if n == 0 else max(held + 1, row[capacity.name])))


def initial_states(bp: Blueprint) -> dict[str, dict[str, Any]]:
    """Two named states: `default` and a larger `busy` one, from the blueprint's seed.

    Values come from a Faker instance seeded per state (synth/procedural/values.py), then the
    blueprint's invariants are made to hold (synth/procedural/consistency.py): the same blueprint
    always gives the same bytes.
    """
    states = {}
    invariants = bp.invariants
    for name, scale, salt in (("default", 1, 0), ("busy", 2, 1)):
        clock = CLOCK + dt.timedelta(days=7 * salt)
        values = ValueMaker(f"{bp.env_id}:{bp.seed}:{salt}", clock)
        tables = _records(bp, values, scale)
        link_support_rows(bp, tables, values.rng, values.fake)
        tables["env_meta"] = {"clock": {"key": "clock", "value": _iso(clock)}}
        make_hold(invariants, tables, bp, values.rng)
        states[name] = tables
    return states
