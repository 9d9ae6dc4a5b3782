"""Initial rows of the system tables that point at the env's own records, written as its tools write them.

An audit entry names a write tool of the env and a record that tool acts on, a status change is
one of the lifecycle's own moves of a real record, a ledger entry moves a balance between two
real accounts: the same shape the compiled tools give the rows they append (synth/procedural/
compiler.py's `_audit`, `_history` and transfer), instead of codes drawn at random ("AL-5026-HS").
Runs after every table of a state exists (synth/procedural/states.py), seeded by the state's RNG.
"""

from __future__ import annotations

import random
from typing import Any

from synth.procedural.blueprint import READS, Blueprint
from synth.procedural.compiler import support_table
from synth.procedural.phrases import reason_provider

__all__ = ["link_support_rows"]


def link_support_rows(bp: Blueprint, tables: dict[str, dict[str, Any]], rng: random.Random, fake: Any) -> None:
    """Rewrite the audit log's, status history's and ledger's reference columns in place (`fake`: the state's Faker)."""
    _audit_rows(bp, tables, rng)
    _status_rows(bp, tables, rng, fake)
    _ledger_rows(bp, tables, rng)


def _audit_rows(bp: Blueprint, tables: dict[str, dict[str, Any]], rng: random.Random) -> None:
    from synth.procedural.compiler import _default_doc

    log = support_table(bp, "audit_log")
    writes = [t for t in bp.tools if t.archetype not in READS and tables.get(bp.entity(t.entity).table)]
    if log is None or not writes:
        return
    for row in tables[log.table].values():
        tool = rng.choice(writes)
        row.update(action=tool.name, record_id=rng.choice(sorted(tables[bp.entity(tool.entity).table])),
                   detail=_default_doc(bp, tool))


def _status_rows(bp: Blueprint, tables: dict[str, dict[str, Any]], rng: random.Random, fake: Any) -> None:
    log = support_table(bp, "status_change")
    moves = [(e, t) for e in bp.entities if not e.support and tables.get(e.table)
             for t in bp.tools if t.entity == e.name and t.archetype == "transition" and t.target]
    if log is None or not moves:
        return
    for row in tables[log.table].values():
        e, move = rng.choice(moves)
        row.update(record_id=rng.choice(sorted(tables[e.table])), record_kind=e.name,
                   from_status=rng.choice(move.sources) if move.sources else e.states[0], to_status=move.target,
                   reason=getattr(fake, reason_provider(f"{move.target}_reason"))() if move.reason else None)


def _ledger_rows(bp: Blueprint, tables: dict[str, dict[str, Any]], rng: random.Random) -> None:
    ledger = support_table(bp, "ledger_entry")
    transfer = next((t for t in bp.tools if t.archetype == "transfer"), None)
    if ledger is None or transfer is None:
        return
    accounts = sorted(tables.get(bp.entity(transfer.entity).table) or {})
    if len(accounts) < 2:
        return
    label = (transfer.field or "balance").replace("_", " ")
    for row in tables[ledger.table].values():
        source, target = rng.sample(accounts, 2)
        row.update(from_account=source, to_account=target, memo=f"{label} from {source} to {target}")
