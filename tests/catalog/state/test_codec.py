"""The codec is lossless: decode(encode(x)) cannot be told from x, and encodings are stable."""

from __future__ import annotations

import datetime as dt
import enum
import random
from collections import Counter, OrderedDict, defaultdict, namedtuple
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from catalog.state.codec import TAG, TypeNames, UnencodableValue, decode, encode, is_plain, readable


class Node:
    def __init__(self, name: str, parent: Node | None = None) -> None:
        self.name, self.parent = name, parent
        self.children: dict[Any, Any] = {}


class Slotted:
    __slots__ = ("x", "y")

    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y


class Colour(enum.Enum):
    RED = "red"
    BLUE = 2


class Level(enum.IntEnum):
    LOW = 1


class Money(Decimal):
    pass


class Tag(str):
    pass


class Item(BaseModel):
    id: int
    tags: list[str] = []


Point = namedtuple("Point", "x y")
# This module plays the env: its classes are registered, as a runtime registers an env's own.
NAMES = TypeNames(classes=[Node, Slotted, Colour, Level, Money, Tag, Item, Point])


def same(a: Any, b: Any, pairs: dict[int, int] | None = None) -> bool:
    """Equal values of identical types with the same sharing (an isomorphism of identities)."""
    pairs = {} if pairs is None else pairs
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, list, set, random.Random)) or hasattr(a, "__dict__") and not isinstance(a, enum.Enum):
        if id(a) in pairs:
            return pairs[id(a)] == id(b)
        if id(b) in pairs.values():
            return False
        pairs[id(a)] = id(b)
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, dict):
        extra = type(a) is not dict and hasattr(a, "__dict__")
        return list(a) == list(b) and all(same(a[k], b[k], pairs) for k in a) and (
            not extra or same(vars(a), vars(b), pairs))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, pairs) for x, y in zip(a, b, strict=True))
    if isinstance(a, (set, frozenset)):
        return a == b
    if isinstance(a, random.Random):
        return a.getstate() == b.getstate()
    if isinstance(a, Decimal):
        return str(a) == str(b)
    if isinstance(a, BaseModel):
        return same(a.__dict__, b.__dict__, pairs) and a.model_fields_set == b.model_fields_set
    if hasattr(a, "__dict__") and not isinstance(a, enum.Enum):
        return same(vars(a), vars(b), pairs)
    if hasattr(type(a), "__slots__") and not isinstance(a, (str, int, float)):
        return all(same(getattr(a, s), getattr(b, s), pairs) for s in type(a).__slots__)
    return a == b


def roundtrip(value: Any) -> None:
    encoded = encode(value, NAMES)
    decoded = decode(encoded, NAMES)
    assert same(value, decoded), (value, encoded, decoded)
    assert encode(decoded, NAMES) == encoded
    if isinstance(value, (dict, list, set)):
        assert decoded is not value


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
                    st.decimals(allow_nan=False, places=None).filter(lambda d: d.is_finite()),
                    st.datetimes(timezones=st.none() | st.just(dt.UTC)), st.dates(), st.binary(max_size=4),
                    st.sampled_from([Colour.RED, Colour.BLUE, Level.LOW]))
hashables = st.recursive(st.one_of(st.integers(), st.text(max_size=3), st.booleans()),
                         lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=5)
keys = st.one_of(st.integers(-5, 50), st.text(max_size=4), st.just(TAG), hashables)


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner), st.sets(hashables, max_size=4),
        st.dictionaries(st.integers(-3, 99), inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.dictionaries(keys, inner, max_size=4), st.builds(Slotted, inner, inner),
        st.builds(lambda d: defaultdict(list, d), st.dictionaries(st.text(max_size=3), inner, max_size=3)))


values = st.recursive(scalars, containers, max_leaves=20)


@st.composite
def graphs(draw: st.DrawFn) -> Any:
    """Nodes with parent links (cycles), shared children and shared containers between indexes."""
    root = Node("root")
    nodes = [root]
    for i in range(draw(st.integers(0, 8))):
        parent = draw(st.sampled_from(nodes))
        node = Node(f"n{i}", parent)
        node.children["data"] = draw(values)
        parent.children[draw(st.one_of(st.integers(0, 5), st.text(max_size=2)))] = node
        nodes.append(node)
    shared = draw(st.lists(st.sampled_from(nodes), max_size=3))
    index = {n.name: n for n in shared}
    return {"root": root, "by_name": index, "also": [index, shared], "rng": random.Random(draw(st.integers(0, 9)))}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_values_roundtrip(value: Any) -> None:
    roundtrip(value)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_object_graphs_roundtrip_with_shared_references_and_cycles(graph: Any) -> None:
    roundtrip(graph)
    back = decode(encode(graph, NAMES), NAMES)
    for node in _walk(back["root"]):
        for child in node.children.values():
            if isinstance(child, Node):
                assert child.parent is node


def _walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.children.values():
        if isinstance(child, Node):
            out.extend(_walk(child))
    return out


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=15))
def test_plain_json_encodes_as_itself(value: Any) -> None:
    assert is_plain(value) == (TAG not in str(value) or not _has_tag_key(value))
    if is_plain(value):
        assert encode(value) == value and decode(value) == value


def _has_tag_key(value: Any) -> bool:
    if isinstance(value, dict):
        return TAG in value or any(_has_tag_key(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_tag_key(v) for v in value)
    return False


def test_subclasses_of_builtins_keep_type_and_value() -> None:
    counter = Counter("abca")
    ordered = OrderedDict([(2, "b"), (1, "a")])
    value = [counter, ordered, Point(1, Decimal("2.50")), Money("1.10"), Tag("x"), Item(id=3, tags=["a"]),
             {Colour.RED: (1, 2)}, dt.timedelta(days=1, seconds=3), float("inf"), b"\x00\xff"]
    roundtrip(value)
    assert decode(encode(value, NAMES), NAMES)[2].x == 1


def test_int_keys_are_addressed_through_items() -> None:
    assert encode({"orders": {7: {"status": "new"}}}) == {
        "orders": {TAG: "dict", "keys": "int", "items": {"7": {"status": "new"}}}}
    assert readable(encode({"s": {3, 1}, "d": Decimal("1.50")})) == {"s": [1, 3], "d": "1.50"}


def test_shared_references_point_at_the_first_place() -> None:
    record = {"id": 1}
    encoded = encode({"by_id": {1: record}, "by_name": {"a": record}})
    assert encoded["by_name"]["a"] == {TAG: "ref", "path": ["by_id", "items", "1"]}
    back = decode(encoded)
    assert back["by_id"][1] is back["by_name"]["a"]


def test_an_rng_continues_its_sequence() -> None:
    rng = random.Random(5)
    rng.random()
    copy = decode(encode(rng))
    assert [rng.random() for _ in range(3)] == [copy.random() for _ in range(3)]


def test_unencodable_values_name_the_culprit() -> None:
    with pytest.raises(UnencodableValue, match="at a/0"):
        encode({"a": [lambda: 1]})
    with pytest.raises(UnencodableValue):
        encode(defaultdict(lambda: 0))


def test_type_names_map_modules_to_stable_names() -> None:
    names = TypeNames({__name__: "env"}, [Node])
    encoded = encode(Node("x"), names)
    assert encoded["type"] == "env:Node"
    assert type(decode(encoded, names)) is Node
