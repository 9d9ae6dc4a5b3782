"""Checking a constrained-mode answer against the tool's constraint spec and the state.

What static analysis proves about a tool bounds what a correct answer can look like, so an
answer that leaves those bounds is wrong whatever the model meant:
- every op's path exists in the state (modify, delete) or is creatable (add: the key is new,
  its parent exists or is added by an earlier op, and the collection is in the write set);
- no change lands outside the write set (a modify of a whole record is checked field by field),
  by `ToolSpec.allows_write`, the one write-set check the gate also makes;
- an observation that signals failure (`success: false` / `error`) comes with an empty delta;
- values fit the schema: column kinds for SQL tables (nullable columns take None), and for
  other state (class envs, env_meta) the JSON type of the value being replaced or of a sibling
  record's field.

The projection keeps the ops that pass, in order, so the answer it returns always applies to
the state; each dropped op is one repair.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from catalog.envkit import META_TABLE
from catalog.models import Outcome
from catalog.runtime import outcome_of
from catalog.state.delta import MISSING, DeltaConflict, DeltaOp, apply_delta, diff_at
from constraints.interpreter import META_SCHEMA
from constraints.spec import ConstraintSpec, TableSpec
from verifier.audit.metrics import DeltaFormatError, parse_delta

__all__ = ["Check", "check_answer", "is_failure"]


@dataclass
class Check:
    """The validator's verdict: what is wrong, and the ops that survive projection."""

    violations: list[str] = field(default_factory=list)
    kept: list[DeltaOp] = field(default_factory=list)
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations


def is_failure(observation: Any) -> bool:
    """The runtime's own rule: `success: false`, or an `error` key without `success: true`."""
    return outcome_of(observation) is Outcome.FAILURE


def _at(state: Any, path: tuple[str | int, ...]) -> Any:
    node = state
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return node


def _show(op: DeltaOp) -> str:
    return f"{op.op} {list(op.path)}"


def _kind_fits(kind: str, optional: bool, value: Any) -> bool:
    if value is None:
        return optional
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "decimal"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    parsers = {"datetime": dt.datetime.fromisoformat, "date": dt.date.fromisoformat, "time": dt.time.fromisoformat}
    if kind in parsers:
        if not isinstance(value, str):
            return False
        try:
            parsers[kind](value)
        except ValueError:
            return False
    return True


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _same_json_kind(old: Any, new: Any) -> bool:
    return old is None or new is None or old is MISSING or _json_kind(old) == _json_kind(new)


class _Validator:
    def __init__(self, spec: ConstraintSpec, tool: str) -> None:
        self.tables = {**spec.tables, META_TABLE: META_SCHEMA} if spec.kind == "sql" else {}
        self.tool = spec.tools.get(tool)

    def writable(self, path: tuple[str | int, ...]) -> bool:
        """Inside the tool's write set by `ToolSpec.allows_write`, the gate's check.

        Where the set is not fully known only what the followed effects allow counts: an answer
        is held to what the analysis can vouch for.
        """
        return self.tool is not None and bool(self.tool.allows_write(path))

    def type_problems(self, change: DeltaOp, working: dict[str, Any]) -> list[str]:
        """Type problems of one effective change (add or modify with a value)."""
        path, value = change.path, change.value
        table = self.tables.get(path[0]) if isinstance(path[0], str) else None
        if table is not None and len(path) == 2:
            if not isinstance(value, dict):
                return [f"{_show(change)}: a {path[0]} record is an object, got {_json_kind(value)}"]
            problems = []
            for column, item in value.items():
                problems += self.column_problems(table, str(path[0]), column, item)
            key = next((c for c, info in table.columns.items() if info.primary_key), None)
            if key and key in value and str(value[key]) != path[1]:
                problems.append(f"{_show(change)}: the record's {key} {value[key]!r} differs from its key {path[1]!r}")
            return problems
        if table is not None and len(path) == 3:
            return self.column_problems(table, str(path[0]), str(path[2]), value)
        if table is not None:
            return []
        old = _at(working, path)
        if old is MISSING and len(path) >= 3:  # a new field: compare with the same field of a sibling record
            siblings = _at(working, path[:-2])
            if isinstance(siblings, dict):
                old = next((r[path[-1]] for r in siblings.values() if isinstance(r, dict) and path[-1] in r), MISSING)
        if old is MISSING and len(path) == 2 and isinstance(value, dict):  # a new record: compare with a sibling
            siblings = _at(working, path[:1])
            sample = next((r for r in siblings.values() if isinstance(r, dict)), None) if isinstance(siblings, dict) else None
            bad = [k for k, v in value.items() if sample and k in sample and not _same_json_kind(sample[k], v)]
            return [f"{_show(change)}: field {k} should be a {_json_kind(sample[k])}, got {_json_kind(value[k])}"
                    for k in bad if sample]
        if not _same_json_kind(old, value):
            return [f"{_show(change)}: value should be a {_json_kind(old)}, got {_json_kind(value)}"]
        return []

    @staticmethod
    def column_problems(table: TableSpec, name: str, column: str, value: Any) -> list[str]:
        info = table.column(column)
        if info is None:
            return [f"{name} has no column {column!r}"]
        if not _kind_fits(info.kind, info.optional, value):
            nullable = " or null" if info.optional else ""
            return [f"{name}.{column} takes a {info.kind}{nullable}, got {value!r}"[:200]]
        return []

    def op_problems(self, op: DeltaOp, working: dict[str, Any]) -> list[str]:
        """Existence, write-set and type problems of one op against the state so far."""
        current = _at(working, op.path)
        if op.op in ("modify", "delete") and current is MISSING:
            return [f"{_show(op)}: no such path in the state"]
        if op.op == "add":
            if current is not MISSING:
                return [f"{_show(op)}: the path already exists (use modify)"]
            if len(op.path) > 1 and not isinstance(_at(working, op.path[:-1]), dict):
                return [f"{_show(op)}: the parent {list(op.path[:-1])} does not exist and is not created "
                        "by an earlier op, so the path is not creatable"]
        if op.op == "modify":
            changes = diff_at(op.path, current, op.value)
        else:
            changes = [op]
        outside = [list(c.path) for c in changes if not self.writable(c.path)]
        write_set = self.tool.write_set if self.tool is not None else []
        problems = [f"{_show(op)}: {outside[0] if outside[0] != list(op.path) else 'this path'} is outside "
                    f"the write set {write_set}"] if outside else []
        for change in changes:
            if change.op != "delete":
                problems += self.type_problems(change, working)
        return problems


def check_answer(observation: Any, ops: Any, state: dict[str, Any], spec: ConstraintSpec, tool: str) -> Check:
    """Validate one answer's observation and ops; `kept` is the projection onto the spec."""
    check = Check()
    raw_ops = ops if isinstance(ops, list) else []
    if not isinstance(ops, list):
        check.violations.append(f"the delta must be a list of ops, got {type(ops).__name__}")
    parsed: list[DeltaOp | None] = []
    for index, raw in enumerate(raw_ops):
        try:
            parsed.append(parse_delta([raw])[0])
        except (DeltaFormatError, ValueError) as exc:
            check.violations.append(f"op {index}: malformed: {exc}"[:300])
            parsed.append(None)
    if is_failure(observation) and raw_ops:
        check.violations.append(f"the observation reports a failure, but the delta has {len(raw_ops)} op(s): "
                                "a failed call changes nothing")
        check.dropped = len(raw_ops)
        return check
    validator = _Validator(spec, tool)
    working = state
    for op in parsed:
        if op is None:
            check.dropped += 1
            continue
        problems = validator.op_problems(op, working)
        if not problems:
            try:
                working = apply_delta(working, [op])
            except DeltaConflict as exc:
                problems = [f"{_show(op)}: {exc}"]
        if problems:
            check.violations += problems
            check.dropped += 1
        else:
            check.kept.append(op)
    return check
