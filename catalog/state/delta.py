"""State deltas: the list of add/modify/delete ops between two canonical JSON states.

Paths are tuples of keys, never dotted strings, so keys containing dots, slashes or any unicode
are addressed exactly. Counting follows docs/design.md (and EnvSimBench): a new key is one `add` of
the whole value, a removed key one `delete`, a changed leaf one `modify`, and a changed list one
`modify` of the whole list. Ops come out sorted by path, so equal changes give equal deltas.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictStr,
    TypeAdapter,
    field_validator,
    model_serializer,
    model_validator,
)

from catalog.jsonmodel import JsonModel
from catalog.state.codec import TAG
from catalog.state.jsonable import json_equal

__all__ = ["DeltaOp", "Delta", "DeltaConflict", "diff", "diff_at", "apply_delta", "MISSING"]

OpName = Literal["add", "modify", "delete"]
_OPS = ("add", "modify", "delete")


class _Missing:
    """Marks 'no value at this path' (distinct from a JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class DeltaConflict(ValueError):
    """A delta op does not fit the state it is applied to (e.g. modify of a missing key)."""


class DeltaOp(JsonModel):
    """One change: `op` at `path` (a tuple of keys); `value` is the new value (None for delete).

    Its wire form (`model_dump(mode="json")`, read back by `model_validate`) is
    `{op, path: [...], value}`, without `value` for a delete. Strict, because ops also arrive from
    sandbox workers (sandbox/wire.py): keys must be strings, and a path of text is not a list of letters.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    op: OpName
    path: Annotated[tuple[StrictStr, ...], Field(strict=False)]  # a JSON list, read as a tuple
    value: Any = None

    def __init__(self, op: OpName = MISSING, path: tuple[str, ...] = MISSING, value: Any = None, /,
                 **fields: Any) -> None:
        """Positional, as a plain value: `DeltaOp("add", path, value)`; or by field name, as pydantic does.

        `model_validate` comes here too, by field name: what it is not given stays unset (an add
        without a value is an error, not None) and unknown keys reach pydantic's check.
        """
        if op is not MISSING:
            fields.update(op=op, path=path, value=value)
        super().__init__(**fields)

    @field_validator("op", mode="before")
    @classmethod
    def _known_op(cls, op: Any) -> Any:
        if op not in _OPS:
            raise ValueError(f"Unknown delta op {op!r}. Allowed: {', '.join(_OPS)}")
        return op

    @field_validator("path")
    @classmethod
    def _non_empty(cls, path: tuple[str, ...]) -> tuple[str, ...]:
        if not path:
            raise ValueError("A delta path must be a non-empty tuple of string keys")
        return path

    @model_validator(mode="before")
    @classmethod
    def _value_given(cls, data: Any) -> Any:
        if isinstance(data, dict) and "value" not in data and data.get("op") in ("add", "modify"):
            raise ValueError(f"A {data['op']!r} op needs a 'value'")
        return data

    @model_serializer(mode="plain")
    def _wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": list(self.path)}
        if self.op != "delete":
            out["value"] = self.value
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeltaOp):
            return NotImplemented
        return self.op == other.op and self.path == other.path and json_equal(self.value, other.value)

    def __hash__(self) -> int:
        return hash((self.op, self.path))


Delta = TypeAdapter(list[DeltaOp])  # a whole delta's wire form: Delta.dump_python(ops, mode="json"), Delta.validate_python


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[DeltaOp]:
    """Return the ops turning `before` into `after` (both JSON objects), sorted by path.

    >>> Delta.dump_python(diff({"a": {"x": 1}}, {"a": {"x": 2, "y": [1]}}), mode="json")
    [{'op': 'modify', 'path': ['a', 'x'], 'value': 2}, {'op': 'add', 'path': ['a', 'y'], 'value': [1]}]
    """
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise TypeError("diff compares two JSON objects (dicts)")
    ops: list[DeltaOp] = []
    _diff_dicts((), before, after, ops)
    return ops


def diff_at(path: Sequence[str], before: Any, after: Any) -> list[DeltaOp]:
    """Return the ops for one subtree at `path`; either side may be MISSING (added/deleted)."""
    ops: list[DeltaOp] = []
    _diff_value(tuple(path), before, after, ops)
    return ops


def _diff_dicts(prefix: tuple[str, ...], before: dict[str, Any], after: dict[str, Any], ops: list[DeltaOp]) -> None:
    for key in sorted(before.keys() | after.keys()):
        _diff_value((*prefix, key), before.get(key, MISSING), after.get(key, MISSING), ops)


def _same_text(old: Any, new: Any) -> bool:
    """A fast exact check for equal subtrees (C-level `==`, then text, which tells `True` from `1`)."""
    try:
        return bool(old == new) and json.dumps(old) == json.dumps(new)
    except (TypeError, ValueError):
        return False


# Encoded Python scalars (catalog/state/codec.py): a changed Decimal or datetime is one leaf, as in Python.
_SCALAR_KINDS = frozenset({"decimal", "datetime", "date", "time", "timedelta", "float", "bytes", "enum"})


def _is_scalar(value: dict[str, Any]) -> bool:
    tag = value.get(TAG)
    return isinstance(tag, str) and tag in _SCALAR_KINDS  # plain JSON may hold the tag key with any value


def _diff_value(path: tuple[str, ...], old: Any, new: Any, ops: list[DeltaOp]) -> None:
    if old is new:  # one object (MISSING on both sides, or a collection a call left untouched): no ops
        return
    if isinstance(old, (dict, list)) and _same_text(old, new):
        return
    if old is MISSING:
        ops.append(DeltaOp("add", path, copy.deepcopy(new)))
    elif new is MISSING:
        ops.append(DeltaOp("delete", path))
    elif isinstance(old, dict) and isinstance(new, dict) and not (_is_scalar(old) and _is_scalar(new)):
        _diff_dicts(path, old, new, ops)
    elif not json_equal(old, new):
        ops.append(DeltaOp("modify", path, copy.deepcopy(new)))


def apply_delta(state: dict[str, Any], delta: Iterable[DeltaOp]) -> dict[str, Any]:
    """Return a new state with `delta` applied; `state` itself is never changed.

    Only the dicts along each op's path are copied, so the cost follows the delta, not the state.
    Raises DeltaConflict when an op does not fit: add of an existing key, modify or delete of a
    missing one, or a path through a non-object.
    """
    root = dict(state)
    copied: set[int] = {id(root)}
    for op in delta:
        parent = root
        for depth, key in enumerate(op.path[:-1]):
            child = parent.get(key, MISSING)
            if not isinstance(child, dict):
                where = list(op.path[: depth + 1])
                raise DeltaConflict(f"{op.op} {list(op.path)}: no object at {where}")
            if id(child) not in copied:
                child = dict(child)
                copied.add(id(child))
                parent[key] = child
            parent = child
        last = op.path[-1]
        present = last in parent
        if op.op == "add" and present:
            raise DeltaConflict(f"add {list(op.path)}: key already exists")
        if op.op in ("modify", "delete") and not present:
            raise DeltaConflict(f"{op.op} {list(op.path)}: no such key")
        if op.op == "delete":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(op.value)
    return root
