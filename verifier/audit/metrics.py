"""Scoring a simulator's prediction against execution: FM, strict CM, EnvSimBench CM, op P/R/F1.

- Feedback Match: observations equal after parsing each side as JSON, else as a Python literal,
  else comparing the stripped strings.
- Strict Config Match: applying the predicted delta to s gives exactly s'. Paths are key lists;
  a malformed or conflicting delta scores False.
- EnvSimBench-compatible CM, reported beside it for comparability, reproduces their rule
  (reference/envsimbench.md §3, §6): predicted ops are applied with dotted paths (missing dicts
  created), then only the paths the gold diff changed are checked in the predicted state. So an
  extra wrong edit passes, a correct deletion fails, and keys with dots are split. Tests pin
  each of these differences.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from catalog import pyast
from catalog.state.delta import DeltaConflict, DeltaOp, OpName, apply_delta
from catalog.state.jsonable import canonical_json, json_equal, to_jsonable

__all__ = ["parse_observation", "feedback_match", "parse_delta", "DeltaFormatError", "strict_config_match",
           "envsimbench_config_match", "op_scores"]

_OP_ALIASES: dict[str, OpName] = {"add": "add", "added": "add", "modify": "modify", "modified": "modify",
                                  "update": "modify", "delete": "delete", "removed": "delete", "remove": "delete"}


class DeltaFormatError(ValueError):
    """A predicted delta is not a list of well-formed ops."""


def parse_observation(value: Any) -> Any:
    """Parse an observation as JSON, else as a Python literal (a repr), else keep the stripped text."""
    if not isinstance(value, str):
        try:
            return to_jsonable(value)
        except (TypeError, ValueError):
            return repr(value)
    text = value.strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        return to_jsonable(pyast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def feedback_match(predicted: Any, gold: Any) -> bool:
    """Feedback Match: equal after parsing both sides (quote style, spacing, key order don't matter)."""
    return json_equal(parse_observation(predicted), parse_observation(gold))


def parse_delta(ops: Any) -> list[DeltaOp]:
    """Parse predicted ops into DeltaOps.

    Accepts envforge's form (`op`, key-list `path`, `value`) and EnvSimBench's (`type`
    add/modify/delete or added/modified/removed, `value` or `after`). Strict scoring needs
    key-list paths: a dotted string is ambiguous (keys may contain dots) and is refused.
    """
    if not isinstance(ops, list):
        raise DeltaFormatError(f"a delta is a list of ops, got {type(ops).__name__}")
    parsed = []
    for op in ops:
        if isinstance(op, DeltaOp):
            parsed.append(op)
            continue
        if not isinstance(op, dict):
            raise DeltaFormatError(f"an op is an object, got {op!r}")
        name = _OP_ALIASES.get(str(op.get("op", op.get("type", ""))).lower())
        if name is None:
            raise DeltaFormatError(f"unknown op in {op!r}")
        path = op.get("path")
        if not isinstance(path, (list, tuple)) or not path or not all(
                isinstance(k, (str, int)) and not isinstance(k, bool) for k in path):
            raise DeltaFormatError(f"path must be a non-empty list of keys (strings, or ints for int keys), got {path!r}")
        value = op.get("value", op.get("after"))
        steps = tuple(str(k) if isinstance(k, str) else int(k) for k in path)  # str subclasses read as plain keys
        parsed.append(DeltaOp(name, steps, None if name == "delete" else to_jsonable(value)))
    return parsed


def strict_config_match(state: dict[str, Any], predicted_ops: Any, gold_next_state: dict[str, Any]) -> bool:
    """Strict CM: the predicted delta, applied to `state`, must give exactly `gold_next_state`."""
    try:
        predicted_state = apply_delta(state, parse_delta(predicted_ops))
    except (DeltaFormatError, DeltaConflict, ValueError):
        return False
    return json_equal(predicted_state, gold_next_state)


def _dotted(path: Any) -> list[str]:
    if isinstance(path, str):
        return path.split(".")
    if isinstance(path, (list, tuple)):
        return [str(k) for k in path]
    raise DeltaFormatError(f"bad path {path!r}")


def _gold_changes(before: Any, after: Any, prefix: str = "") -> list[tuple[str, str, Any]]:
    """Their recursive diff: (dotted path, added/removed/modified, after value), lists as leaves."""
    changes: list[tuple[str, str, Any]] = []
    for key in sorted(set(before) | set(after)):
        path = f"{prefix}.{key}" if prefix else str(key)
        if key not in before:
            changes.append((path, "added", after[key]))
        elif key not in after:
            changes.append((path, "removed", None))
        elif isinstance(before[key], dict) and isinstance(after[key], dict):
            changes.extend(_gold_changes(before[key], after[key], path))
        elif before[key] != after[key]:
            changes.append((path, "modified", after[key]))
    return changes


def envsimbench_config_match(state: dict[str, Any], predicted_ops: Any, gold_next_state: dict[str, Any]) -> bool:
    """EnvSimBench's CM, flaws included: see the module docstring."""
    predicted = copy.deepcopy(state)
    try:
        for op in predicted_ops if isinstance(predicted_ops, list) else []:
            if isinstance(op, DeltaOp):
                op = op.model_dump(mode="json")
            kind = str(op.get("op", op.get("type", ""))).lower()
            keys = _dotted(op.get("path"))
            node: Any = predicted
            for key in keys[:-1]:
                if not isinstance(node.get(key), dict):
                    node[key] = {}
                node = node[key]
            if kind in ("delete", "removed", "remove"):
                node.pop(keys[-1], None)
            else:
                node[keys[-1]] = op.get("value", op.get("after"))
    except (AttributeError, DeltaFormatError, TypeError):
        return False
    if not isinstance(predicted_ops, list):
        return False
    for path, _kind, value in _gold_changes(state, gold_next_state):
        node = predicted
        for key in path.split("."):
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        if node != value:
            return False
    return True


def op_scores(predicted_ops: Any, gold_ops: Iterable[DeltaOp]) -> dict[str, float]:
    """Op-level precision, recall and F1 (an op matches on kind, path and value)."""
    try:
        predicted = {(o.op, o.path, canonical_json(o.value)) for o in parse_delta(predicted_ops)}
    except DeltaFormatError:
        predicted = set()
    gold = {(o.op, o.path, canonical_json(o.value)) for o in gold_ops}
    hits = len(predicted & gold)
    precision = hits / len(predicted) if predicted else (1.0 if not gold else 0.0)
    recall = hits / len(gold) if gold else (1.0 if not predicted else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}

