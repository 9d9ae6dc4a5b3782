"""Decoding cannot run code: a class named in a document is looked up in a table, never imported,
and nothing outside the value types and the registered classes is ever built.

Documents are valid encodings with one hostile tagged value put somewhere inside (a dict value, a
dict key, a tuple item, an object's attribute, a builtin subclass's value, a generator's state);
the hostile value names a real importable class (finalizers that delete files among them),
a module no test has imported, a class of this module whose every hook records that it ran,
or a name that is not a string. Each must be refused naming the tag, with `sys.modules`, the
hooks' log and a canary file unchanged.
"""

from __future__ import annotations

import ast
import enum
import gc
import random
import sys
import uuid
from collections import ChainMap, Counter, OrderedDict, UserDict, UserList, UserString
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import catalog.state.codec as codec_module
from catalog.state.codec import TAG, VALUE_TYPES, TypeNames, UnknownClass, decode, encode
from tests.catalog.state.test_codec import NAMES, Node, roundtrip, same, values

LOG: list[str] = []


class Tripwire:
    """Records any hook a decoder could run while building or dropping an instance."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Tripwire:
        LOG.append(f"{cls.__name__}.__new__")
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        LOG.append(f"{type(self).__name__}.__init__")

    def __setstate__(self, state: Any) -> None:
        LOG.append(f"{type(self).__name__}.__setstate__")

    def __del__(self) -> None:
        LOG.append(f"{type(self).__name__}.__del__")


class DictTripwire(dict):  # type: ignore[type-arg]
    def __new__(cls, *args: Any, **kwargs: Any) -> DictTripwire:
        LOG.append("DictTripwire.__new__")
        return super().__new__(cls)

    def __setitem__(self, key: Any, value: Any) -> None:
        LOG.append("DictTripwire.__setitem__")

    def __del__(self) -> None:
        LOG.append("DictTripwire.__del__")


class TupleTripwire(tuple):  # type: ignore[type-arg]
    def __new__(cls, *args: Any) -> TupleTripwire:
        LOG.append("TupleTripwire.__new__")
        return super().__new__(cls, *args)


class RandomTripwire(random.Random):
    def __new__(cls, *args: Any) -> RandomTripwire:
        LOG.append("RandomTripwire.__new__")
        return super().__new__(cls)

    def setstate(self, state: Any) -> None:
        LOG.append("RandomTripwire.setstate")


class EnumTripwire(enum.Enum):
    A = 1

    @classmethod
    def _missing_(cls, value: object) -> Any:
        LOG.append("EnumTripwire._missing_")
        return None


HERE = __name__
# Real classes with finalizers or side effects, modules nobody here has imported, this module's
# tripwires, the env alias with nothing registered, builtins and names that are not classes.
FOREIGN = [
    "tempfile:_TemporaryFileCloser", "tempfile:TemporaryDirectory", "tempfile:SpooledTemporaryFile",
    "weakref:finalize", "subprocess:Popen", "os:_wrap_close", "os:system", "shutil:rmtree", "io:FileIO",
    "pathlib:Path", "logging:FileHandler", "zipfile:ZipFile", "sqlite3:Connection", "ctypes:CDLL",
    "multiprocessing.pool:Pool", "asyncio.subprocess:Process", "http.server:HTTPServer", "smtplib:SMTP",
    "ftplib:FTP", "webbrowser:BackgroundBrowser", "antigravity:webbrowser", "this:s", "turtle:Turtle",
    "tkinter:Tk", "xmlrpc.server:SimpleXMLRPCServer", "pydoc:HTMLServer", "pydantic:BaseModel",
    "sqlmodel:SQLModel", "ray.actor:ActorHandle", "mcp:ClientSession", "collections:deque", "random:SystemRandom",
    "builtins:object", "builtins:type", "builtins:eval", "enum:Enum", "decimal:Decimal", "datetime:datetime",
    f"{HERE}:Tripwire", f"{HERE}:DictTripwire", f"{HERE}:TupleTripwire", f"{HERE}:RandomTripwire",
    f"{HERE}:EnumTripwire", "env:Node", "env:OnlineStore", "collections:Counter.x",
    "collections", ":Counter", "",
]
NOT_STRINGS: list[Any] = [None, 1, ["tempfile", "_TemporaryFileCloser"], {"module": "os"}]


def gadget(canary: Path) -> dict[str, Any]:
    """The attributes that make tempfile's closer unlink `canary` when it is finalized."""
    return {"file": 1, "name": str(canary), "delete": True, "close_called": False}


@st.composite
def hostile(draw: st.DrawFn, canary: Path) -> tuple[Any, Any]:
    """(the tag's class name, a tagged value naming it in one of the named forms)."""
    name = draw(st.sampled_from(FOREIGN) | st.sampled_from(NOT_STRINGS))
    form = draw(st.sampled_from(["object", "builtin subclass", "enum", "random"]))
    if form == "object":
        return name, {TAG: "object", "type": name, "attrs": gadget(canary)}
    if form == "builtin subclass":
        value = draw(st.sampled_from([{"a": 1}, [1, 2], {TAG: "tuple", "items": [1]}, {TAG: "set", "items": [1]},
                                      "text", 7, 1.5, {TAG: "decimal", "value": "1.5"}]))
        return name, {TAG: "object", "type": name, "value": value, "attrs": gadget(canary)}
    if form == "enum":
        return name, {TAG: "enum", "type": name, "name": draw(st.sampled_from(["A", "RED", "x"]))}
    return name, {TAG: "random", "type": name, "state": encode(random.Random(1).getstate())}


def plant(document: Any, bad: Any, where: str) -> Any:
    """`document` (a valid encoding) with `bad` placed inside it at a kind of place `where` names."""
    if where == "dict value":
        return {"ok": document, "bad": bad}
    if where == "dict key":
        return {TAG: "dict", "pairs": [[1, document], [bad, 2]]}
    if where == "list item":
        return [document, bad]
    if where == "tuple item":
        return {TAG: "tuple", "items": [document, bad]}
    if where == "int-keyed dict":
        return {TAG: "dict", "keys": "int", "items": {"1": document, "2": bad}}
    if where == "registered object's attribute":
        return {TAG: "object", "type": NAMES.name(Node), "attrs": {"name": document, "parent": bad, "children": {}}}
    if where == "allowed builtin subclass's value":
        return {TAG: "object", "type": "collections:Counter", "value": {TAG: "dict", "pairs": [[1, document],
                                                                                                [bad, 2]]}, "attrs": {}}
    return {TAG: "random", "type": "random:Random", "state": {TAG: "tuple", "items": [3, bad, None]}}


PLACES = ["dict value", "dict key", "list item", "tuple item", "int-keyed dict", "registered object's attribute",
          "allowed builtin subclass's value", "generator's state"]


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A file the gadget would unlink; at the end, after a full collection, it and the log are intact."""
    path = tmp_path_factory.mktemp("codec") / "canary.txt"
    path.write_text("still here")
    yield path
    gc.collect()
    assert path.read_text() == "still here"
    assert not [entry for entry in LOG if "Tripwire" in entry]


def test_the_codec_has_no_way_to_import() -> None:
    tree = ast.parse(Path(codec_module.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"importlib", "pickle", "pydoc"} & {name.split(".")[0] for name in imported}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in ("__import__", "eval", "exec")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_documents_naming_foreign_classes_import_and_build_nothing(canary: Path, data: st.DataObject) -> None:
    name, bad = data.draw(hostile(canary))
    document = plant(encode(data.draw(values), NAMES), bad, data.draw(st.sampled_from(PLACES)))
    modules = set(sys.modules)
    gc.disable()  # nothing decode allocates leaves the youngest generation before the collection below
    try:
        with pytest.raises(UnknownClass) as refused:
            decode(document, NAMES)
        assert refused.value.name == name and repr(name) in str(refused.value)
        assert "\n" not in str(refused.value)
        del refused
        gc.collect(0)  # whatever decode built is gone now: a finalizer of it would have run
    finally:
        gc.enable()
    assert set(sys.modules) == modules
    assert LOG == []
    assert canary.read_text() == "still here"


def test_a_value_type_under_another_kind_is_refused_as_malformed() -> None:
    with pytest.raises(ValueError, match="is not a Enum"):
        decode({TAG: "enum", "type": "random:Random", "name": "x"})
    with pytest.raises(ValueError, match="is not a Random"):
        decode({TAG: "random", "type": "collections:Counter", "state": []})
    with pytest.raises(ValueError, match="has no member"):
        decode({TAG: "enum", "type": "uuid:SafeUUID", "name": "_generate_next_value_"})


def test_too_deep_a_document_is_a_value_error() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        decode(deep)


def test_value_types_roundtrip_with_nothing_registered() -> None:
    value: list[Any] = [Counter("abca"), OrderedDict([(2, "b"), (1, "a")]), ChainMap({"a": 1}, {"b": 2}),
                        UserDict({1: "x"}), UserList([1, (2, 3)]), UserString("hi"), Fraction(3, 7), uuid.UUID(int=42),
                        random.Random(3)]
    back = decode(encode(value))
    assert same(value, back) and encode(back) == encode(value)
    assert back[6] + 1 == Fraction(10, 7) and back[7].hex == value[7].hex


def test_value_types_have_no_python_finalizer_or_constructor_hooks_the_decoder_runs() -> None:
    for cls in VALUE_TYPES:
        assert not any("__del__" in vars(k) for k in cls.__mro__), cls


class Hooked:
    """A registered (env's own) class whose hooks must not run when its instances are decoded."""

    def __new__(cls, *args: Any) -> Hooked:
        LOG.append("Hooked.__new__")
        return super().__new__(cls)

    def __init__(self, x: Any) -> None:
        LOG.append("Hooked.__init__")
        self.x = x

    def __setstate__(self, state: Any) -> None:
        LOG.append("Hooked.__setstate__")


class HookedDict(dict):  # type: ignore[type-arg]
    def __new__(cls, *args: Any) -> HookedDict:
        LOG.append("HookedDict.__new__")
        return super().__new__(cls)

    def __init__(self, *args: Any) -> None:
        LOG.append("HookedDict.__init__")
        super().__init__(*args)


def test_registered_classes_are_rebuilt_without_their_constructors() -> None:
    names = TypeNames({HERE: "env"}, [Hooked, HookedDict])
    value = {"h": Hooked([1, 2]), "d": HookedDict({"k": Hooked(3)})}
    encoded = encode(value, names)
    LOG.clear()
    back = decode(encoded, names)
    assert LOG == [] and type(back["h"]) is Hooked and back["h"].x == [1, 2] and back["d"]["k"].x == 3
    assert encoded["h"]["type"] == "env:Hooked"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_valid_documents_still_roundtrip(value: Any) -> None:
    roundtrip(value)
