"""Class env deltas are over value paths, not the codec's structure, and stay lossless (issue 28, item 1).

For any two states: every op's path is a real key / attribute path of the Python values (no codec
tag, `items` / `attrs` / `pairs` level or reference id), applying the delta to the first gives the
second, and |Δ| is the count of a plain recursive diff of the values. A record shared by two
places is one object: a call that does not change it gives no op on it, a call that changes it
once reports it once, at its canonical place.
"""

from __future__ import annotations

import copy
import enum
import math
import random
from collections import defaultdict
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from catalog.runtime.classes import ClassRuntime
from catalog.state.codec import TAG, Encoder, decode, encode
from catalog.state.delta import Delta, DeltaOp, apply_delta, diff
from catalog.state.jsonable import json_equal
from tests.catalog.state.test_codec import NAMES, Node, Slotted, graphs, values

MISSING: Any = object()
_MUTABLE = (dict, list, set, random.Random)


def alike(a: Any, b: Any, pairs: dict[int, int] | None = None) -> bool:
    """Equal as state (JSON's numbers: 1 is 1.0, True is not 1; dict order aside) with the same sharing."""
    pairs = {} if pairs is None else pairs
    if isinstance(a, (int, float)) and not isinstance(a, bool) and type(a) in (int, float) \
            and type(b) in (int, float):
        return (a != a and b != b) or a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, _MUTABLE) or (hasattr(a, "__dict__") and not isinstance(a, enum.Enum)):
        if id(a) in pairs:
            return pairs[id(a)] == id(b)
        if id(b) in pairs.values():
            return False
        pairs[id(a)] = id(b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(alike(a[k], b[k], pairs) for k in a) and \
            (not hasattr(a, "__dict__") or alike(vars(a), vars(b), pairs))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(alike(x, y, pairs) for x, y in zip(a, b, strict=True))
    if isinstance(a, random.Random):
        return a.getstate() == b.getstate()
    if isinstance(a, Decimal):
        return str(a) == str(b)
    if isinstance(a, BaseModel):
        return alike(a.__dict__, b.__dict__, pairs)
    if hasattr(a, "__dict__") and not isinstance(a, enum.Enum):
        return alike(vars(a), vars(b), pairs)
    if type(a) is Slotted:
        return alike(a.x, b.x, pairs) and alike(a.y, b.y, pairs)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# --- the plain recursive diff of the values, written from the Python side -------------------------

def _keyed(d: dict[Any, Any]) -> bool:
    return all(type(k) in (str, int) for k in d)


def _fields(value: Any) -> dict[str, Any] | None:
    """The entries a plain recursive diff walks into: a dict's (str/int keys), an object's attributes."""
    if type(value) is dict or type(value) is defaultdict:
        return dict(value) if _keyed(value) else None
    if type(value) is Slotted:
        return {s: getattr(value, s) for s in Slotted.__slots__ if hasattr(value, s)}
    if type(value) is Node:
        return dict(vars(value))
    return None


def _shape(value: Any) -> Any:
    if type(value) is defaultdict:
        return ("defaultdict", value.default_factory)
    return type(value)


def plain_count(old: Any, new: Any) -> int:
    """|Δ| of a recursive diff: one op per added, removed or changed entry; lists, sets, tuples are leaves."""
    if old is MISSING or new is MISSING:
        return 0 if old is new else 1
    a, b = _fields(old), _fields(new)
    if a is not None and b is not None and _shape(old) == _shape(new):
        return sum(plain_count(a.get(k, MISSING), b.get(k, MISSING)) for k in a.keys() | b.keys())
    return 0 if json_equal(encode(old, NAMES), encode(new, NAMES)) else 1  # JSON's equality, as json_equal


def resolves(value: Any, path: tuple[Any, ...]) -> bool:
    """`path` names a place in the Python value by keys and attribute names only."""
    for step in path:
        if isinstance(value, dict):
            match = [k for k in value if type(k) is type(step) and k == step]
            if not match:
                return False
            value = value[match[0]]
        elif type(value) in (Node, Slotted) and type(step) is str and hasattr(value, step):
            value = getattr(value, step)
        else:
            return False
    return True


def encode_state(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes encoded as the runtime does (catalog/state/_tracking.py): one pass, public ones first."""
    encoder = Encoder(NAMES)
    names = sorted(attributes, key=lambda name: name.startswith("_"))
    return {name: encoder.encode(attributes[name], (name,)) for name in names}


def check(before_value: dict[str, Any], after_value: dict[str, Any]) -> list[DeltaOp]:
    before, after = encode_state(before_value), encode_state(after_value)
    ops = diff(before, after)
    for op in ops:
        assert all(type(step) in (str, int) for step in op.path), op
        parents = [before_value] if op.op == "delete" else [after_value] if op.op == "add" else [before_value,
                                                                                                   after_value]
        assert all(resolves(parent, op.path) for parent in parents), (op, before, after)
    applied = apply_delta(before, ops)
    assert alike(decode(applied, NAMES), after_value), (before, after, Delta.dump_python(ops, mode="json"), applied)
    wire = Delta.dump_python(ops, mode="json")
    assert Delta.validate_python(wire) == ops  # the wire form round-trips, int keys included
    return ops


states = st.dictionaries(st.sampled_from(["a", "b", "items", "attrs", "pairs", "_hidden"]), values, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states, states)
def test_any_two_states_give_a_value_path_delta_that_applies(before: dict[str, Any], after: dict[str, Any]) -> None:
    ops = check(before, after)
    assert len(ops) == sum(plain_count(before.get(k, MISSING), after.get(k, MISSING)) for k in before.keys() | after.keys())


@st.composite
def calls(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A state with shared objects and cycles, and the state after a call's in-place writes on it."""
    before = draw(graphs())
    after = copy.deepcopy(before)
    containers: list[Any] = []
    stack: list[Any] = list(after.values())  # the attributes' values (the instance itself gets no int keys)
    while stack:
        value = stack.pop()
        if any(value is c for c in containers):
            continue
        if type(value) is dict or type(value) is Node:
            containers.append(value)
            stack.extend((value if type(value) is dict else vars(value)).values())
        elif isinstance(value, list):
            stack.extend(value)
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(containers))
        entries = target if type(target) is dict else vars(target)
        kind = draw(st.sampled_from(["set", "delete", "alias"]))
        key = draw(st.one_of(st.integers(0, 5), st.text(max_size=2))) if type(target) is dict else \
            draw(st.sampled_from(["name", "extra", "children"]))
        if kind == "delete" and key in entries and key != "children":
            del entries[key]
        elif kind == "alias":
            entries[key] = draw(st.sampled_from(containers))
        elif type(target) is dict or key != "children":
            entries[key] = draw(values)
    return before, after


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_calls_on_shared_graphs_apply_exactly(call: tuple[dict[str, Any], dict[str, Any]]) -> None:
    before, after = call
    ops = check(before, after)
    # Python's own order: a call's writes come back in the order it made them, references included.
    assert json_equal(apply_delta(encode_state(before), ops), encode_state(after))


@st.composite
def shared_records(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """A state whose record sits in `products` (and maybe in an index), and a call that does not change it."""
    record = draw(st.one_of(st.builds(lambda d: Node("pen", None) if d else {"name": "pen"}, st.booleans())))
    others = draw(st.dictionaries(st.integers(6, 9), st.builds(dict, name=st.text(max_size=3)), max_size=2))
    before = {"a_orders": draw(st.dictionaries(st.integers(0, 3), st.builds(dict, n=st.integers()), max_size=2)),
              "products": {5: record, **others}, "z_index": {"pen": record} if draw(st.booleans()) else {}}
    after = copy.deepcopy(before)
    new = draw(st.integers(10, 12))
    where = draw(st.sampled_from(["a_orders", "z_index", "nowhere"]))
    if where == "a_orders":  # an order earlier in encoding order than the product now points at it
        after["a_orders"][new] = {"product": after["products"][5], "qty": draw(st.integers(1, 3))}
    elif where == "z_index":
        after["z_index"][str(new)] = after["products"][5]
    else:
        after["a_orders"][new] = {"qty": 1}
    return before, after, record


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_records())
def test_aliasing_a_record_does_not_change_the_delta_of_a_call_that_does_not_change_it(
        case: tuple[dict[str, Any], dict[str, Any], Any]) -> None:
    before, after, _record = case
    ops = check(before, after)
    assert len(ops) == 1 and ops[0].op == "add", Delta.dump_python(ops, mode="json")
    assert not any(op.path[:2] == ("products", 5) for op in ops)
    if "product" in (ops[0].value or {}):
        assert ops[0].value["product"] == {TAG: "ref", "path": ["products", 5]}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_records(), st.integers())
def test_a_change_to_a_shared_record_is_reported_once_at_its_canonical_place(
        case: tuple[dict[str, Any], dict[str, Any], Any], price: int) -> None:
    before, after, _record = case
    record = after["products"][5]
    if isinstance(record, dict):
        record["price"] = price
    else:
        record.price = price
    ops = check(before, after)
    changed = [op for op in ops if op.path[-1] == "price"]
    assert [op.path for op in changed] == [("products", 5, "price")]  # its place before the call


# --- the four cases of the issue -------------------------------------------------------------------

def _delta(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    return Delta.dump_python(check(before, after), mode="json")


def test_a_record_in_an_empty_dict_is_one_add_at_its_int_key() -> None:
    assert _delta({"orders": {}, "count": 0}, {"orders": {7: {"item": "pen"}}, "count": 1}) == [
        {"op": "modify", "path": ["count"], "value": 1}, {"op": "add", "path": ["orders", 7], "value": {"item": "pen"}}]


def test_a_new_entry_in_a_mixed_dict_is_one_add_and_no_delete() -> None:
    assert _delta({"x": {"b": 2}}, {"x": {"b": 2, 3: "c"}}) == [{"op": "add", "path": ["x", 3], "value": "c"}]
    assert _delta({"x": {1: "a", "b": 2}}, {"x": {1: "a", "b": 2, "7": 3}}) == [
        {"op": "add", "path": ["x", "7"], "value": 3}]  # the str key "7", apart from an int 7
    assert _delta({"x": {1: "a", "b": 2}}, {"x": {"b": 2}}) == [{"op": "delete", "path": ["x", 1]}]


def test_an_object_graph_path_has_no_attrs_level() -> None:
    root, after = Node("root"), Node("root")
    after.children["x"] = 1
    assert _delta({"root": root}, {"root": after}) == [{"op": "add", "path": ["root", "children", "x"], "value": 1}]


class Shop:
    """An env whose orders point at the product records (one object, two places)."""

    def __init__(self) -> None:
        self.products: dict[int, dict[str, Any]] = {5: {"name": "pen", "stock": 3}}
        self.orders: dict[int, dict[str, Any]] = {}

    def order(self, product: int) -> int:
        number = len(self.orders) + 1
        self.orders[number] = {"product": self.products[product], "qty": 1}
        return number

    def restock(self, product: int) -> None:
        self.products[product]["stock"] += 1

    def note(self, text: str) -> None:
        self.orders[1]["note"] = text


def test_an_alias_is_not_rewritten_by_the_runtime() -> None:
    runtime = ClassRuntime(Shop)
    runtime.reset({})
    state = runtime.snapshot()
    first = runtime.call({"name": "order", "arguments": {"product": 5}}, snapshot=True)
    assert Delta.dump_python(first.delta, mode="json") == [
        {"op": "add", "path": ["orders", 1], "value": {"product": {TAG: "ref", "path": ["products", 5]}, "qty": 1}}]
    assert first.state is not None and first.state["orders"][TAG] == "dict"  # the snapshot keeps the codec's form
    note = runtime.call({"name": "note", "arguments": {"text": "gift"}})
    assert Delta.dump_python(note.delta, mode="json") == [
        {"op": "add", "path": ["orders", 1, "note"], "value": "gift"}]  # the order changes, the product does not
    restock = runtime.call({"name": "restock", "arguments": {"product": 5}})
    assert Delta.dump_python(restock.delta, mode="json") == [
        {"op": "modify", "path": ["products", 5, "stock"], "value": 4}]  # once, at its first place in encoding order
    for step in (first, note, restock):
        state = apply_delta(state, step.delta)
    assert json_equal(state, runtime.snapshot())


def test_hostile_deltas_are_refused_in_one_line() -> None:
    """Ops come from files, models and workers: a bool step, a dangling or circular reference is a clear error."""
    import pytest
    from pydantic import ValidationError

    from catalog.state.delta import DeltaConflict

    with pytest.raises(ValidationError):
        DeltaOp.model_validate({"op": "add", "path": ["x", True], "value": 1})  # True is not the int key 1
    assert DeltaOp.model_validate({"op": "add", "path": ["x", 7], "value": 1}).path == ("x", 7)
    state = encode_state({"x": {}, "y": [1]})
    for value in ({TAG: "ref", "path": ["nowhere"]}, {TAG: "ref", "path": ["x", 1]}, {TAG: "ref", "path": []},
                  {TAG: "ref", "path": ["y", ["items", "9"]]}):
        with pytest.raises(DeltaConflict):
            apply_delta(state, [DeltaOp("add", ("x", 1), value)])
    with pytest.raises(DeltaConflict):
        apply_delta(state, [DeltaOp("add", ("y", 0, "z"), 1)])  # a list is a leaf: no path goes through it
    with pytest.raises(DeltaConflict):
        apply_delta({"x": {TAG: "ref", "path": ["x"]}}, [DeltaOp("add", ("z",), 1)])  # a reference before its value
