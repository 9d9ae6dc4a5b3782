"""Argument type checks shared by the runtimes and the spec interpreter.

A call whose argument does not fit the tool's type hint (10.5 for an `int`, "3" for a `float`)
is an invalid action, not something the tool should coerce: otherwise an `int` column silently
stores a float and simulators are scored against a state the schema forbids. The runtimes and
the interpreter call the same function, so their verdicts and messages agree. Only simple hints
are checked (str, int, float, bool, optionally `| None`); anything else is accepted as before.

>>> type_problem("amount", "int", 10.5)
'amount must be an integer, got 10.5'
>>> type_problem("amount", "float", 3) is None
True
>>> type_problem("note", "str | None", None) is None
True
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["type_problem"]

_OPTIONAL = re.compile(r"^(?:Optional\[(?P<inner>\w+)\]|(?P<a>\w+)\s*\|\s*None|None\s*\|\s*(?P<b>\w+))$")
_NAMES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}


def _simple(annotation: Any) -> tuple[str | None, bool]:
    """('int', nullable) for a simple hint given as a type or a string; (None, _) otherwise."""
    if isinstance(annotation, type):
        return (annotation.__name__, False) if annotation.__name__ in _NAMES else (None, False)
    if not isinstance(annotation, str):
        return None, False
    text = annotation.strip().replace("typing.", "")
    if text in _NAMES:
        return text, False
    match = _OPTIONAL.match(text)
    if match:
        inner = match.group("inner") or match.group("a") or match.group("b")
        return (inner, True) if inner in _NAMES else (None, True)
    return None, False


def type_problem(name: str, annotation: Any, value: Any) -> str | None:
    """Why `value` does not fit parameter `name` annotated `annotation`, or None if it does."""
    kind, nullable = _simple(annotation)
    if kind is None or (value is None and nullable):
        return None
    fits = {"int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "str": isinstance(value, str), "bool": isinstance(value, bool)}[kind]
    return None if fits else f"{name} must be {_NAMES[kind]}, got {value!r}"
