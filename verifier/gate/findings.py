"""What a finding says about real envs: where two runs differ and why, and error-looking results.

Kept apart from the property searches (verifier/gate/properties.py) so each rule is small and can be
read on its own: a cause is named only from evidence in the results (a differing value that is
a timestamp, a random generator in the hidden state or the `random` module's state changed by
the call) or, failing that, from the env's own source importing a clock or `random`.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["READ_PREFIXES", "first_difference", "determinism_cause", "looks_like_error", "leaf_differences"]

READ_PREFIXES = ("get_", "list_", "search_", "find_", "check_", "lookup_", "view_", "show_", "read_", "count_")
_ERROR_TEXT = re.compile(r"^\s*(error|errors|failed|failure|invalid|cannot|can't|unable|not found|denied|"
                         r"forbidden|refused)\b", re.IGNORECASE)
_TIME_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\b\d{1,2}:\d{2}:\d{2}\b")
_CLOCK_CALLS = {"now", "utcnow", "today", "time", "time_ns", "monotonic", "perf_counter", "localtime", "gmtime",
                "ctime", "strftime"}


def leaf_differences(one: Any, two: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """Every (path, left, right) where two JSON values differ, down to their leaves."""
    if isinstance(one, dict) and isinstance(two, dict):
        for key in sorted(one.keys() | two.keys(), key=str):
            yield from leaf_differences(one.get(key), two.get(key), (*path, key))
    elif isinstance(one, list) and isinstance(two, list) and len(one) == len(two):
        for index, (left, right) in enumerate(zip(one, two, strict=True)):
            yield from leaf_differences(left, right, (*path, index))
    elif one != two:
        yield path, one, two


def first_difference(first: Sequence[Any], second: Sequence[Any]) -> tuple[int, str]:
    """The index of the first call whose results differ, and what differs in it."""
    for index, (one, two) in enumerate(zip(first, second, strict=False)):
        parts = [name for name in ("observation", "delta", "outcome", "state")
                 if getattr(one, name) != getattr(two, name)]
        if parts:
            return index, " and ".join(parts) + " differ"
    return min(len(first), len(second)), "the number of calls differs"


def _timestamp(value: Any) -> bool:
    if isinstance(value, str):
        if _TIME_TEXT.search(value):
            return True
        try:
            dt.datetime.fromisoformat(value)
            return len(value) > 10
        except ValueError:
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 1e9 < value < 1e10 or 1e12 < value < 1e13  # seconds or milliseconds since the epoch
    if isinstance(value, dict) and value.get("__py__") in ("datetime", "time"):
        return True
    return False


def _clock_or_rng_in_source(source: str) -> str | None:
    """'clock' or 'rng' if the env's code calls one (from its syntax tree, not its text)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    uses_random = any(isinstance(node, (ast.Import, ast.ImportFrom)) and
                      any(alias.name.split(".")[0] in ("random", "secrets", "uuid") for alias in node.names) or
                      isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("random", "secrets", "uuid")
                      for node in ast.walk(tree))
    uses_clock = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CLOCK_CALLS
                     for node in ast.walk(tree))
    if uses_clock and not uses_random:
        return "clock"
    if uses_random and not uses_clock:
        return "rng"
    return "clock or rng" if uses_clock else None


def _rng_evidence(call: Any) -> bool:
    if "random module state" in (call.info.get("global_change") or []):
        return True
    for op in call.info.get("hidden_delta") or []:
        if any("rand" in str(part).lower() for part in op.get("path", [])) or "random" in str(op.get("value"))[:200]:
            return True
    return False


def determinism_cause(first: Sequence[Any], second: Sequence[Any], index: int, source: str) -> str:
    """Why two runs of the same calls differ, as far as the results (or the code) show it."""
    if index < len(first) and index < len(second):
        one, two = first[index], second[index]
        pairs = [*leaf_differences(one.observation, two.observation), *leaf_differences(one.state, two.state)]
        if any(_timestamp(left) and _timestamp(right) for _, left, right in pairs):
            return "clock (wall-clock time in the result or state)"
        if _rng_evidence(one) or _rng_evidence(two):
            return "rng (a random draw changed the generator's state)"
    guess = _clock_or_rng_in_source(source)
    if guess == "rng":
        return "rng (the env's code draws random values)"
    if guess == "clock":
        return "clock (the env's code reads the time)"
    if guess:
        return "clock or rng (the env's code uses both)"
    return "not visible in the results"


def looks_like_error(observation: Any) -> bool:
    """A string result that reads as an error ("Error: no such product")."""
    return isinstance(observation, str) and bool(_ERROR_TEXT.match(observation))
