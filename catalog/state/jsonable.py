"""Canonical JSON: one JSON-safe form for every state, observation and delta value.

States and observations are compared by value across processes, runs and simulators, so every
Python value a tool may produce is mapped to one canonical JSON value first.

`to_jsonable` is the form of SQL envs' values (their columns are JSON-typed by construction) and
of data parsed from outside (benchmark files, model replies). It is lossy on purpose (a tuple
becomes a list, an int key a string): class envs, whose values are whatever Python holds, use
the lossless codec (catalog/state/codec.py) for their state and results instead.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["to_jsonable", "json_key", "canonical_json", "pretty_json", "json_equal"]


def to_jsonable(value: Any) -> Any:
    """Return `value` as plain JSON data (dict with str keys, list, str, int, float, bool, None).

    Datetimes, dates and times become ISO strings; Decimals become int when integral, else float;
    tuples and sets become lists (sets sorted); enums their value; bytes base64; pydantic and
    SQLModel objects their field dict. Non-finite floats raise, since JSON cannot carry them.

    >>> to_jsonable({"a": (1, 2), 3: Decimal("2.50")})
    {'a': [1, 2], '3': 2.5}
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"Cannot represent non-finite float {value!r} in JSON")
        return value
    if isinstance(value, dict):
        return {json_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(v) for v in value]
        return sorted(items, key=canonical_json)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"Cannot represent non-finite Decimal {value!r} in JSON")
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_jsonable(dump())
    raise TypeError(f"Value of type {type(value).__name__} is not JSON-representable: {value!r}")


def json_key(key: Any) -> str:
    """JSON object keys are strings; other scalar keys are rendered canonically."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, (int, float, Decimal, enum.Enum, dt.date, dt.time)):
        plain = to_jsonable(key)
        return plain if isinstance(plain, str) else json.dumps(plain)
    raise TypeError(f"Dict key of type {type(key).__name__} is not JSON-representable: {key!r}")


def canonical_json(value: Any) -> str:
    """Serialize JSON data with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def pretty_json(value: Any) -> str:
    """Serialize JSON data for people: indented by 2, sorted keys, non-ASCII kept (what the CLI prints).

    >>> print(pretty_json({"b": 1, "a": ["é"]}))
    {
      "a": [
        "é"
      ],
      "b": 1
    }
    """
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def json_equal(a: Any, b: Any) -> bool:
    """Compare JSON values as JSON does: `True` is not `1`, but `1` equals `1.0`.

    >>> json_equal({"x": [1, True]}, {"x": [1.0, True]}), json_equal(1, True)
    (True, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b
