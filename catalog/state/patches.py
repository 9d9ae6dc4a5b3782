"""The state after a tracked call as the subtrees it rewrote, for a worker to send instead of the whole state.

A class env's call that `tracked_encode` (catalog/state/_tracking.py) handled changed the
encoding only at a few subtrees, so the state after it is the state before with those subtrees
replaced. `subtrees` finds them (where `tracked_encode` stops walking each write path: the
parent of the last key exists before and after), `patch` reads their new values from the
encoding, and `apply_patch` builds the state after from the state before, copying only the
containers on the way to each subtree (the rest is shared: states handed out this way are
read-only). Each op carries its parent's keys, so a key order the call changed (a key removed and
added again) comes out as the env has it. Exact by construction: the same values the worker's
snapshot would hold, at a fraction of a large state's encoding and transfer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from catalog.state import codec
from catalog.state.delta import MISSING

__all__ = ["PatchError", "subtrees", "patch", "apply_patch"]


class PatchError(ValueError):
    """A patch that does not fit the state it is applied to."""


def subtrees(paths: Sequence[Sequence[Any]], old: dict[str, Any], live: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Where each write path's subtree starts: `tracked_encode`'s walk, on the encoding before and the live values.

    Outermost first, with subtrees inside another left out.
    """
    found: list[tuple[Any, ...]] = []
    for path in paths:
        if not path or path[0] not in old or path[0] not in live:
            continue
        before, after = old[path[0]], live[path[0]]
        depth = 1
        while depth < len(path):
            key = path[depth]
            if type(after) is not dict or type(before) is not dict or codec.TAG in before or type(key) is not str \
                    or key == codec.TAG:
                break
            if depth < len(path) - 1 and (key not in after or key not in before):
                break
            before, after = before.get(key, MISSING), after.get(key, MISSING)
            depth += 1
        found.append(tuple(path[:depth]))
    found.sort(key=len)
    kept: list[tuple[Any, ...]] = []
    for item in found:
        if not any(item[:len(k)] == k for k in kept):
            kept.append(item)
    return kept


def patch(encoded: dict[str, Any], paths: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The ops that turn the state before into `encoded` (the public encoding after), one per subtree.

    Each is `{"path", "value"}` (or `"gone": true`) with `"keys"`, the parent's keys after the call.
    """
    ops: list[dict[str, Any]] = []
    for path in paths:
        parent: Any = encoded
        for key in path[:-1]:
            parent = parent[key]
        op: dict[str, Any] = {"path": list(path), "keys": list(parent) if len(path) > 1 else None}
        if path[-1] in parent:
            op["value"] = parent[path[-1]]
        else:
            op["gone"] = True
        ops.append(op)
    return ops


def apply_patch(state: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The state after: `state` (left as it is) with each op's subtree replaced; PatchError if an op does not fit."""
    result = dict(state)
    fresh = {id(result)}  # containers copied for this result: written in place from then on
    orders: list[tuple[dict[str, Any], list[str], list[str]]] = []  # parents and their keys after every op
    for op in ops:
        path, keys = op.get("path"), op.get("keys")
        if not isinstance(path, list) or not path or not all(isinstance(k, str) for k in path) or \
                (keys is not None and not (isinstance(keys, list) and all(isinstance(k, str) for k in keys))):
            raise PatchError("a patch op without a path of keys")
        parent = result
        for key in path[:-1]:
            child = parent.get(key)
            if type(child) is not dict:
                raise PatchError(f"patch path {path} leaves the state")
            if id(child) not in fresh:
                child = dict(child)
                fresh.add(id(child))
                parent[key] = child
            parent = child
        if op.get("gone") is True:
            parent.pop(path[-1], None)
        elif "value" in op:
            parent[path[-1]] = op["value"]
        else:
            raise PatchError("a patch op with neither a value nor gone")
        if keys is not None:
            orders.append((parent, keys, path))
    for parent, keys, path in orders:
        if list(parent) != keys:
            if len(keys) != len(parent) or set(keys) != set(parent):
                raise PatchError(f"patch keys of {path[:-1]} are not the state's")
            reordered = {key: parent[key] for key in keys}
            parent.clear()
            parent.update(reordered)
    return result
