"""Argument values that are well-typed by a tool's own annotations, as hypothesis strategies.

A crash is a finding only when the call that shows it is one the code promises to handle: its
arguments fit the parameters' annotations (`stocks=["AAPL"]` for `List[str]`, never `stocks=0`).
So boundary values are drawn per compiled hint (catalog/tools/argcheck.py): empty and unicode strings,
zero, negatives and huge numbers for the simple types; short lists of well-typed items; `None`
only where the hint allows it; the members of a `Literal`. Values taken from the states are kept
only when they fit the hint too. A parameter without a usable hint gets the untyped boundary
values: nothing the code promises rules them out.

JSON arguments cannot carry non-str dict keys, tuples or sets: lists stand for tuples and sets,
and a dict with non-str keys is only ever drawn empty.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from catalog.tools.argcheck import ANY, Form, compile_annotation, form_problem
from constraints.spec import Param

__all__ = ["param_form", "well_typed", "fitting", "state_keys", "from_state", "boundary", "ill_typed_value"]

_TEXT = st.one_of(st.sampled_from(["", " ", "unknown-id", "x" * 300]), st.text(max_size=6))
_INTS = st.one_of(st.sampled_from([0, -1, 2**31, -(2**31)]), st.integers(-(10**12), 10**12))
_FLOATS = st.one_of(st.sampled_from([0.0, -1.0, 1e-9, 1e12]), st.floats(allow_nan=False, allow_infinity=False, width=64))


def param_form(param: Param) -> Form:
    """The compiled hint of a spec parameter (its annotation text; no module globals on the host)."""
    annotation = param.annotation
    return compile_annotation(annotation) if isinstance(annotation, str) and annotation else ANY


def well_typed(form: Form, value: Any) -> bool:
    """True if `value` fits `form` (always, for an unknown hint)."""
    return form_problem("value", form, value) is None


def _untyped(param: Param) -> st.SearchStrategy[Any]:
    """Today's boundary values by JSON type, for a parameter whose hint says nothing usable."""
    kind = param.json_type
    if kind == "string":
        return _TEXT
    if kind == "integer":
        return _INTS
    if kind == "number":
        return _FLOATS
    if kind == "boolean":
        return st.booleans()
    return st.one_of(st.none(), st.text(max_size=4), st.integers(-5, 5))


def strategy(form: Form, depth: int = 0) -> st.SearchStrategy[Any]:
    """Well-typed boundary values of a compiled hint."""
    kind = form.kind
    if kind == "int":
        return _INTS
    if kind == "float":
        return st.one_of(_FLOATS, st.integers(-5, 5))
    if kind == "str":
        return _TEXT
    if kind == "bool":
        return st.booleans()
    if kind == "none":
        return st.none()
    if kind == "literal":
        return st.sampled_from(list(form.args))
    if kind == "union":
        return st.one_of(*(strategy(member, depth + 1) for member in form.args))
    if depth > 3:
        return st.nothing()
    if kind in ("list", "set") or (kind == "tuple" and form.variadic):
        return st.lists(strategy(form.args[0], depth + 1), max_size=3)
    if kind == "tuple":
        return st.tuples(*(strategy(item, depth + 1) for item in form.args)).map(list)
    if kind == "dict":
        if form.args[0].kind not in ("str", "any"):
            return st.just({})
        return st.dictionaries(st.text(max_size=4), strategy(form.args[1], depth + 1), max_size=2)
    return st.one_of(st.none(), st.text(max_size=4), st.integers(-5, 5))


def boundary(param: Param, form: Form) -> st.SearchStrategy[Any]:
    """Boundary values for a parameter: typed by its hint when it has one."""
    return _untyped(param) if form.kind == "any" else strategy(form)


def _as_hinted(form: Form, value: Any) -> Any:
    """A state value as the code holds it.

    JSON object keys are strings, so the ids of a dict keyed by `int` come from the state as "7";
    for an `int` hint they are offered as 7.
    """
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value) and \
            (form.kind == "int" or (form.kind == "union" and any(m.kind == "int" for m in form.args))):
        return int(value)
    return value


def _singular(plural: str) -> str:
    if plural.endswith("ies"):
        return plural[:-3] + "y"
    return plural[:-1] if plural.endswith("s") else plural


def state_keys(name: str, state: dict[str, Any]) -> list[Any]:
    """Keys of the collections a parameter names (`product_id` -> `products`), as the state holds them.

    JSON object keys are strings, and a codec-encoded dict keyed by `int` keeps them under
    "items": both give "7" for the id 7, which `fitting` turns back into 7 for an `int` hint.
    """
    full = re.sub(r"_(id|ids|code|key)$", "", name)
    stem = full.split("_")[-1]
    keys: list[Any] = []
    for collection_name, collection in state.items():
        if not isinstance(collection, dict) or not stem:
            continue
        if not (collection_name.startswith((stem, full)) or _singular(collection_name) in (full, stem)):
            continue
        inner = collection.get("items") if collection.get("__py__") == "dict" else collection
        if isinstance(inner, dict):
            keys.extend(inner)
    return keys


def fitting(form: Form, values: list[Any]) -> list[Any]:
    """The values (ids of int-keyed dicts made ints) that fit the hint, in order, without repeats."""
    out: list[Any] = []
    for value in values:
        value = _as_hinted(form, value)
        if well_typed(form, value) and not any(type(value) is type(o) and value == o for o in out):
            out.append(value)
    return out


def from_state(form: Form, values: list[Any]) -> st.SearchStrategy[Any] | None:
    """Values from the states that fit the hint; for a list hint, lists of fitting items too."""
    fitting_values = fitting(form, values)
    options: list[st.SearchStrategy[Any]] = [st.sampled_from(fitting_values)] if fitting_values else []
    if form.kind in ("list", "set") or (form.kind == "tuple" and form.variadic):
        items = fitting(form.args[0], values)
        if items:
            options.append(st.lists(st.sampled_from(items), min_size=1, max_size=3))
    return st.one_of(*options) if options else None


def ill_typed_value(form: Form, example: Any) -> Any:
    """A value that does not fit `form`, shaped like what callers send by mistake (a string id).

    Returns `form` itself when no such value is known (an unknown hint fits everything).
    """
    if form.kind == "int":
        return str(example) if isinstance(example, int) and not isinstance(example, bool) else "1"
    if form.kind == "float":
        return str(example) if isinstance(example, (int, float)) and not isinstance(example, bool) else "1.5"
    if form.kind == "str":
        return 0
    if form.kind == "bool":
        return "true"
    if form.kind in ("list", "set", "tuple"):
        return 0
    if form.kind == "dict":
        return "{}"
    if form.kind == "literal":
        return "not-one-of-them"
    return form
