"""Change tracking for class-based envs: containers that journal their own mutations.

State lives in instance attributes (dicts of dicts, lists). After loading, each container is
replaced by a dict/list subclass that, before any mutation, records the old value of exactly
what it is about to change (one key of a dict; a list as a whole, since a changed list is one
`modify`). The journal is an undo log: replaying it backwards rebuilds each touched subtree as
it was before the call (for the delta) or restores the live state (rollback after an
exception). The work follows the size of what changed, not the size of the state.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from catalog.delta import MISSING, DeltaOp, diff_at
from catalog.jsonable import json_key, to_jsonable

Path = tuple[str, ...]


class Journal:
    """The undo log of one call: `(path, old value or MISSING)` in the order first touched."""

    def __init__(self) -> None:
        self.active = False
        self.records: list[tuple[Path, Any]] = []
        self._noted: set[Path] = set()

    def note(self, path: Path, old: Any) -> None:
        """Record `old` as the value at `path` unless this call already covers the path."""
        if not self.active:
            return
        for depth in range(1, len(path) + 1):
            if path[:depth] in self._noted:
                return
        self._noted.add(path)
        self.records.append((path, plain(old)))

    def roots(self) -> list[Path]:
        """The touched paths that have no touched ancestor, sorted."""
        noted = sorted(self._noted)
        roots: list[Path] = []
        for path in noted:
            if not roots or path[: len(roots[-1])] != roots[-1]:
                roots.append(path)
        return roots

    def clear(self) -> None:
        self.records.clear()
        self._noted.clear()


def plain(value: Any) -> Any:
    """Return an untracked deep copy (TrackedDict/TrackedList become dict/list)."""
    if value is MISSING:
        return MISSING
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return copy.deepcopy(value)


class TrackedDict(dict):  # type: ignore[type-arg]
    """A dict that journals each key's old value before changing it."""

    __slots__ = ("_journal", "_path", "_list_owner")

    def _note_key(self, key: Any) -> None:
        journal = self._journal
        if not journal.active:
            return
        if self._list_owner is not None:
            journal.note(self._list_owner.path_for_note(), self._list_owner)
        else:
            journal.note((*self._path, json_key(key)), self[key] if key in self else MISSING)

    def _note_all(self) -> None:
        if not self._journal.active:
            return
        if self._list_owner is not None:
            self._journal.note(self._list_owner.path_for_note(), self._list_owner)
        else:
            self._journal.note(self._path, self)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._note_key(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        if key in self:
            self._note_key(key)
        super().__delitem__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self._note_key(key)
        return super().pop(key, *default)

    def popitem(self) -> tuple[Any, Any]:
        self._note_all()
        return super().popitem()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self._note_key(key)
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        items = dict(*args, **kwargs)
        for key in items:
            self._note_key(key)
        super().update(items)

    def clear(self) -> None:
        self._note_all()
        super().clear()

    def __ior__(self, other: Any) -> TrackedDict:
        self.update(other)
        return self

    def copy(self) -> dict[Any, Any]:
        return dict(self)

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return copy.deepcopy(dict(self), memo)

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class TrackedList(list):  # type: ignore[type-arg]
    """A list that journals its whole old value before its first change (lists are leaves)."""

    __slots__ = ("_journal", "_path", "_list_owner")

    def path_for_note(self) -> Path:
        return self._list_owner.path_for_note() if self._list_owner is not None else self._path

    def _note(self) -> None:
        if self._journal.active:
            owner = self._list_owner if self._list_owner is not None else self
            self._journal.note(owner.path_for_note(), owner)

    def copy(self) -> list[Any]:
        return list(self)

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(list(self), memo)

    def __reduce__(self) -> Any:
        return (list, (list(self),))


def _journaled(name: str) -> Any:
    original = getattr(list, name)

    def method(self: TrackedList, *args: Any, **kwargs: Any) -> Any:
        self._note()
        return original(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
              "remove", "clear", "sort", "reverse"):
    setattr(TrackedList, _name, _journaled(_name))


def adopt(value: Any, path: Path, journal: Journal, list_owner: TrackedList | None = None) -> Any:
    """Return `value` with every nested dict/list tracked at `path` (reusing tracked ones)."""
    if isinstance(value, dict):
        tracked = value if isinstance(value, TrackedDict) else TrackedDict(value)
        tracked._journal, tracked._path, tracked._list_owner = journal, path, list_owner
        for key, child in dict.items(tracked):
            adopted = adopt(child, (*path, json_key(key)), journal, list_owner)
            if adopted is not child:
                dict.__setitem__(tracked, key, adopted)
        return tracked
    if isinstance(value, list):
        tracked_list = value if isinstance(value, TrackedList) else TrackedList(value)
        tracked_list._journal, tracked_list._path, tracked_list._list_owner = journal, path, list_owner
        owner = list_owner if list_owner is not None else tracked_list
        for index, child in enumerate(list.__iter__(tracked_list)):
            adopted = adopt(child, path, journal, owner)
            if adopted is not child:
                list.__setitem__(tracked_list, index, adopted)
        return tracked_list
    return value


class StateView:
    """Reads and writes a class env's public attributes by path, bypassing the journal."""

    def __init__(self, instance: Any) -> None:
        self.instance = instance

    def attributes(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self.instance).items() if not k.startswith("_") and not callable(v)}

    def get(self, path: Path) -> Any:
        node: Any = self.attributes()
        for key in path:
            if not isinstance(node, dict):
                return MISSING
            node = _lookup(node, key)
            if node is MISSING:
                return MISSING
        return node

    def put(self, path: Path, value: Any) -> None:
        """Set (or, for MISSING, delete) the value at `path` without journaling."""
        if len(path) == 1:
            if value is MISSING:
                self.instance.__dict__.pop(path[0], None)
            else:
                self.instance.__dict__[path[0]] = value
            return
        parent = self.get(path[:-1])
        if not isinstance(parent, dict):
            return
        key = _real_key(parent, path[-1])
        if value is MISSING:
            dict.pop(parent, key, None)
        else:
            dict.__setitem__(parent, key, value)


def _lookup(node: dict[Any, Any], key: str) -> Any:
    real = _real_key(node, key)
    return dict.get(node, real, MISSING) if real is not MISSING else MISSING


def _real_key(node: dict[Any, Any], key: str) -> Any:
    """Find the original key whose JSON form is `key` (state dicts may use int keys)."""
    if key in node:
        return key
    for candidate in node:
        if json_key(candidate) == key:
            return candidate
    return key


def delta_of(view: StateView, journal: Journal) -> list[DeltaOp]:
    """Rebuild each touched subtree's pre-call value from the undo log and diff it."""
    ops: list[DeltaOp] = []
    for root in journal.roots():
        current = view.get(root)
        before = _rewind(root, plain(current), journal.records)
        ops.extend(diff_at(root, _json_or_missing(before), _json_or_missing(current)))
    ops.sort(key=lambda op: op.path)
    return ops


def _json_or_missing(value: Any) -> Any:
    return MISSING if value is MISSING else to_jsonable(value)


def _rewind(root: Path, value: Any, records: Iterable[tuple[Path, Any]]) -> Any:
    for path, old in reversed(list(records)):
        if path[: len(root)] != root:
            continue
        relative = path[len(root):]
        if not relative:
            value = plain(old)
            continue
        parent = value
        for key in relative[:-1]:
            parent = _lookup(parent, key) if isinstance(parent, dict) else MISSING
        if not isinstance(parent, dict):
            continue
        key = _real_key(parent, relative[-1])
        if old is MISSING:
            parent.pop(key, None)
        else:
            parent[key] = plain(old)
    return value


def rollback(view: StateView, journal: Journal) -> None:
    """Restore the live state to its pre-call values and re-track what was restored."""
    for path, old in reversed(journal.records):
        view.put(path, plain(old))
    retrack(view, journal)


JOURNAL_ATTR = "_envforge_journal"
_TRACKED_CLASSES: dict[type, type] = {}


def tracked_class(cls: type) -> type:
    """Return a subclass of `cls` whose public attribute assignments are journaled."""
    if cls in _TRACKED_CLASSES:
        return _TRACKED_CLASSES[cls]

    def __setattr__(self: Any, name: str, value: Any) -> None:
        journal = self.__dict__.get(JOURNAL_ATTR)
        if journal is not None and not name.startswith("_"):
            journal.note((name,), self.__dict__.get(name, MISSING))
        cls.__setattr__(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        journal = self.__dict__.get(JOURNAL_ATTR)
        if journal is not None and not name.startswith("_"):
            journal.note((name,), self.__dict__.get(name, MISSING))
        cls.__delattr__(self, name)

    subclass = type(cls.__name__, (cls,), {"__setattr__": __setattr__, "__delattr__": __delattr__,
                                           "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    _TRACKED_CLASSES[cls] = subclass
    return subclass


def retrack(view: StateView, journal: Journal) -> None:
    """After a call, track what it inserted and fix the paths of containers it moved."""
    for root in journal.roots():
        current = view.get(root)
        if current is not MISSING:
            view.put(root, adopt(current, root, journal, None))
