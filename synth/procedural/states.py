"""Initial states for a blueprint, deterministic from a seed.

Records are made so that every rule can bite from the start: every lifecycle state occurs,
some deadlines have passed and some have not, one parent is filled to its capacity, one balance
is empty, and foreign keys, unique fields and non-null fields hold.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from synth.blueprint import Blueprint, EntitySpec, FieldSpec
from synth.compiler import open_states

__all__ = ["initial_states", "CLOCK"]

CLOCK = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
_FIRST = ("Ada", "Bao", "Chiara", "Dmitri", "Efua", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemi", "Lars",
          "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tariq", "Uma", "Viktor", "Wen", "Yara")
_LAST = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad", "Kowalski", "Mensah", "Ibarra",
         "Keller", "Rossi", "Nakamura", "Petrov", "Adeyemi", "Larsen")


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


def _value(f: FieldSpec, e: EntitySpec, i: int, rng: random.Random) -> Any:
    kind = f.kind
    if kind in ("int", "version"):
        lo, hi = int(f.lo if f.lo is not None else 1), int(f.hi if f.hi is not None else 3)
        return rng.randint(lo, hi)
    if kind in ("float", "money"):
        lo, hi = f.lo or 0.0, f.hi if f.hi is not None else 100.0
        return round(rng.uniform(lo, hi), 2)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "choice":
        return rng.choice(f.choices)
    if kind == "email":
        return f"{_FIRST[i % len(_FIRST)].lower()}.{_LAST[(i * 7) % len(_LAST)].lower()}{i + 1}@example.org"
    if kind == "phone":
        return f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
    if kind == "name":
        return f"{_FIRST[(i * 5 + len(e.name)) % len(_FIRST)]} {_LAST[(i * 3) % len(_LAST)]}"
    if kind == "code":
        return f"{e.prefix}-{1000 + i * 37 + rng.randint(0, 9)}"
    if kind == "datetime":
        offset = rng.randint(-40, 40) if "deadline" in f.roles else rng.randint(-400, -1)
        return _iso(CLOCK + dt.timedelta(days=offset, hours=rng.randint(0, 8)))
    return f"{f.name.replace('_', ' ').capitalize()} {i + 1}"


def _records(bp: Blueprint, rng: random.Random, scale: int) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    ids: dict[str, list[str]] = {}
    for e in _order(bp):
        count = min(16, e.rows * scale)
        rows: dict[str, Any] = {}
        seen: dict[str, set[Any]] = {f.name: set() for f in e.fields if f.unique or f.name == e.label}
        for i in range(count):
            key = f"{e.prefix}{i + 1:03d}"
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
                elif f.name == e.label and e.words:
                    word = e.words[i % len(e.words)]
                    record[f.name] = word if i < len(e.words) else f"{word} {i // len(e.words) + 1}"
                else:
                    record[f.name] = _value(f, e, i, rng)
                    if "deadline" in f.roles and i % 5 == 4:
                        record[f.name] = None
                if f.name in seen:
                    while record[f.name] in seen[f.name]:
                        record[f.name] = f"{record[f.name]}-{i}" if isinstance(record[f.name], str) else rng.randint(
                            int(f.lo or 0), int(f.hi or 10**6))
                    seen[f.name].add(record[f.name])
            for f in e.fields:  # stamps of states already reached, and a recent change time
                if f.kind == "stamp" and f.name.endswith("_at"):
                    reached = f.name.removesuffix("_at")
                    if record.get("status") == reached or (f.name == "updated_at" and i % 2 == 0):
                        record[f.name] = _iso(CLOCK - dt.timedelta(days=rng.randint(1, 30), hours=i))
            balance = e.role("balance")
            if balance is not None and i == 1:
                record[balance.name] = 0 if balance.kind == "int" else 0.0
            rows[key] = record
        tables[e.table] = rows
        ids[e.name] = list(rows)
    _fill_one_parent(bp, tables)
    return tables


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
    """Two named states: `default` and a larger `busy` one, from the blueprint's seed."""
    states = {}
    for name, scale, salt in (("default", 1, 0), ("busy", 2, 1)):
        rng = random.Random(f"{bp.env_id}:{bp.seed}:{salt}")
        tables = _records(bp, rng, scale)
        clock = CLOCK + dt.timedelta(days=7 * salt)
        tables["env_meta"] = {"clock": {"key": "clock", "value": _iso(clock)}}
        states[name] = tables
    return states
