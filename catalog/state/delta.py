"""State deltas: the list of add/modify/delete ops between two canonical JSON states.

Paths are tuples of keys, never dotted strings, so keys containing dots, slashes or any unicode
are addressed exactly. Counting follows docs/design.md (and EnvSimBench): a new key is one `add` of
the whole value, a removed key one `delete`, a changed leaf one `modify`, and a changed list one
`modify` of the whole list. Ops come out in path order, so equal changes give equal deltas.

Class env states are codec encodings (catalog/state/codec.py), and their deltas are written over
*value paths* (catalog/state/_valuepaths.py): a step is a dict key (an int key a JSON int, a str
key a JSON string), or an object attribute name; never a codec tag, an `items` / `attrs` level or
a reference id. So one new record in an int-keyed dict is one `add` at `["orders", 7]`, whatever
form the dict's encoding takes, and an object's field is `["root", "contents", "x"]`. Values are
encoded values; inside one, `{"__py__": "ref", "path": [...]}` names by value path an object the
state shares (see `diff`). On plain JSON (SQL states) all of this reduces to dict keys.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    field_validator,
    model_serializer,
    model_validator,
)

from catalog.jsonmodel import JsonModel
from catalog.state import _valuepaths as vp
from catalog.state.jsonable import json_equal

__all__ = ["DeltaOp", "Delta", "DeltaConflict", "diff", "diff_at", "apply_delta", "MISSING", "path_key"]

OpName = Literal["add", "modify", "delete"]
_OPS = ("add", "modify", "delete")


MISSING: Any = vp.MISSING  # 'no value at this path' (distinct from a JSON null)


class DeltaConflict(ValueError):
    """A delta op does not fit the state it is applied to (e.g. modify of a missing key)."""


class DeltaOp(JsonModel):
    """One change: `op` at `path` (a tuple of keys); `value` is the new value (None for delete).

    Its wire form (`model_dump(mode="json")`, read back by `model_validate`) is
    `{op, path: [...], value}`, without `value` for a delete. A path step is a string (a str key,
    an attribute) or an int (an int key; never a bool). Strict, because ops also arrive from
    sandbox workers (sandbox/wire.py): a path of text is not a list of letters, and `"7"` is not `7`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    op: OpName
    path: Annotated[tuple[StrictStr | StrictInt, ...], Field(strict=False)]  # a JSON list, read as a tuple
    value: Any = None

    def __init__(self, op: OpName = MISSING, path: tuple[str | int, ...] = MISSING, value: Any = None, /,
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
    def _non_empty(cls, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        if not path:
            raise ValueError("A delta path must be a non-empty tuple of keys (strings or ints)")
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


def path_key(path: Sequence[str | int]) -> tuple[tuple[int, Any], ...]:
    """The order of paths: step by step, int keys before str keys (a mixed dict's keys do not compare)."""
    return tuple((0, step) if type(step) is int else (1, str(step)) for step in path)


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[DeltaOp]:
    """Return the ops turning `before` into `after` (two states: JSON objects), in path order.

    A plain dict's keys are visited sorted; the entries of the codec's other maps (int-keyed and
    mixed dicts, defaultdicts, objects) in the after state's order, then the ones removed, so
    that applying the ops gives back their order too.

    Shared structure (a record reachable from two places): the delta is the diff of the two
    states as trees in which each shared object is in full at one *canonical place* and a
    reference (`{"__py__": "ref", "path": <value path>}`) at its others. Before the call, the
    canonical place is the object's first place in encoding order (public attributes first),
    where the snapshot writes it in full; after it, the same place when the object is still
    there, else its first place in encoding order. So a call that makes a product reachable from a
    new order is one `add` of the order (whose product is a reference to `["products", 5]`) and
    no op on the product; a call that changes the shared product reports the change once, at
    its canonical place, not at every path it is reachable by (which would count one change
    several times and need the ops to agree with each other to apply). Only a call that removes
    an object's canonical place moves it (one `modify` at the new place).

    >>> Delta.dump_python(diff({"a": {"x": 1}}, {"a": {"x": 2, "y": [1]}}), mode="json")
    [{'op': 'modify', 'path': ['a', 'x'], 'value': 2}, {'op': 'add', 'path': ['a', 'y'], 'value': [1]}]
    """
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise TypeError("diff compares two JSON objects (dicts)")
    ops: list[DeltaOp] = []
    if vp.has_refs(before) or vp.has_refs(after):
        _SharedDiff(before, after, ops).run()
    else:
        _diff_dicts((), before, after, ops)
    return ops


def diff_at(path: Sequence[str | int], before: Any, after: Any) -> list[DeltaOp]:
    """Return the ops for one subtree at `path`; either side may be MISSING (added/deleted).

    The subtree is taken as it is: a reference in it is a leaf (use `diff` on the whole state
    when the state shares structure).
    """
    ops: list[DeltaOp] = []
    _diff_value(tuple(path), before, after, ops)
    return ops


def _diff_dicts(prefix: tuple[Any, ...], before: dict[str, Any], after: dict[str, Any], ops: list[DeltaOp]) -> None:
    for key in sorted(before.keys() | after.keys()):
        _diff_value((*prefix, key), before.get(key, MISSING), after.get(key, MISSING), ops)


def _steps(old: Any, new: Any) -> tuple[list[Any], dict[Any, Any], dict[Any, Any]]:
    """The entry steps two maps are compared by, in the order `diff` documents."""
    if vp.kind(old) is None and vp.kind(new) is None:
        return sorted(old.keys() | new.keys()), old, new
    before, after = vp.entries(old), vp.entries(new)
    return [*after, *(step for step in before if step not in after)], before, after


def _same_text(old: Any, new: Any) -> bool:
    """A fast exact check for equal subtrees (C-level `==`, then text, which tells `True` from `1`)."""
    try:
        return bool(old == new) and json.dumps(old) == json.dumps(new)
    except (TypeError, ValueError):
        return False


def _diff_value(path: tuple[Any, ...], old: Any, new: Any, ops: list[DeltaOp]) -> None:
    if old is new:  # one object (MISSING on both sides, or a collection a call left untouched): no ops
        return
    if isinstance(old, (dict, list)) and _same_text(old, new):
        return
    if old is MISSING:
        ops.append(DeltaOp("add", path, copy.deepcopy(new)))
    elif new is MISSING:
        ops.append(DeltaOp("delete", path))
    elif (kind := vp.shell(old)) is not None and kind == vp.shell(new):
        steps, before, after = _steps(old, new)
        for step in steps:
            _diff_value((*path, step), before.get(step, MISSING), after.get(step, MISSING), ops)
    elif not json_equal(old, new):
        ops.append(DeltaOp("modify", path, copy.deepcopy(new)))


class _SharedDiff:
    """`diff` of two states that share structure: both linked, compared as trees of canonical places."""

    def __init__(self, before: dict[str, Any], after: dict[str, Any], ops: list[DeltaOp]) -> None:
        self.before, self.after = vp.link(before), vp.link(after)
        self.canon_before = vp.canonical_places(self.before)
        self.canon_after = vp.canonical_places(self.after, dict.fromkeys(self.canon_before.values()))
        self.ops = ops

    def run(self) -> None:
        for name in sorted(self.before.keys() | self.after.keys()):
            self.value((name,), self.before.get(name, MISSING), self.after.get(name, MISSING))

    def _alias(self, value: Any, path: tuple[Any, ...], canon: dict[int, tuple[Any, ...]]) -> tuple[Any, ...] | None:
        place = canon.get(id(value)) if isinstance(value, (dict, list)) else None
        return place if place is not None and place != path else None

    def value(self, path: tuple[Any, ...], old: Any, new: Any) -> None:
        if old is MISSING and new is MISSING:
            return
        if new is MISSING:
            self.ops.append(DeltaOp("delete", path))
            return
        if old is MISSING:
            self.ops.append(DeltaOp("add", path, vp.fragment(new, path, self.canon_after)))
            return
        old_alias, new_alias = self._alias(old, path, self.canon_before), self._alias(new, path, self.canon_after)
        kind = vp.shell(old)
        if old_alias is None and new_alias is None and kind is not None and kind == vp.shell(new):
            steps, before, after = _steps(old, new)
            for step in steps:
                self.value((*path, step), before.get(step, MISSING), after.get(step, MISSING))
            return
        written = vp.fragment(new, path, self.canon_after)
        if not json_equal(vp.fragment(old, path, self.canon_before), written):
            self.ops.append(DeltaOp("modify", path, written))


def apply_delta(state: dict[str, Any], delta: Iterable[DeltaOp]) -> dict[str, Any]:
    """Return a new state with `delta` applied; `state` itself is never changed.

    Steps address values (see the module's docstring): a dict entry whichever form its
    encoding takes (a dict whose keys change kind is rewritten in the codec's form for its new
    keys), an object's attribute. Without shared structure only the containers along each op's
    path are copied, so the cost follows the delta, not the state; a state or op value with
    references is linked, changed and written back in the codec's canonical form (an object in
    full at its first place, references after), which is what the runtime encodes.
    Raises DeltaConflict when an op does not fit: add of an existing key, modify or delete of a
    missing one, a path through a non-map, or a reference that names no value.
    """
    ops = list(delta)
    shared = vp.has_refs(state) or any(op.value is not None and vp.has_refs(op.value) for op in ops)
    try:
        root = vp.link(state) if shared else dict(state)
    except ValueError as exc:
        raise DeltaConflict(f"the state does not link: {exc}") from None
    copied: set[int] = {id(root)}
    for op in ops:
        parent: Any = root
        for depth, key in enumerate(op.path[:-1]):
            found = vp.child(parent, key)
            if vp.shell(found) is None:
                raise DeltaConflict(f"{op.op} {list(op.path)}: no object at {list(op.path[: depth + 1])}")
            if not shared and id(found) not in copied:
                found = vp.copy_node(found)
                copied.add(id(found))
                vp.put(parent, key, found)
            parent = found
        last = op.path[-1]
        present = vp.child(parent, last) is not MISSING
        if op.op == "add" and present:
            raise DeltaConflict(f"add {list(op.path)}: key already exists")
        if op.op in ("modify", "delete") and not present:
            raise DeltaConflict(f"{op.op} {list(op.path)}: no such key")
        if op.op == "delete":
            vp.put(parent, last, MISSING)
            continue
        try:
            vp.put(parent, last, vp.with_pending(op.value) if shared else copy.deepcopy(op.value))
        except (ValueError, RecursionError) as exc:
            raise DeltaConflict(f"{op.op} {list(op.path)}: {exc}") from None
    if not shared:
        return root
    try:
        vp.resolve_pending(root)
        return vp.unlink(root)
    except ValueError as exc:
        raise DeltaConflict(str(exc)) from None
