"""A lossless JSON encoding of Python values, for the state and results of imported envs.

Plain JSON (str-keyed dicts, lists, str, int, float, bool, None) encodes as itself, so every
state envforge wrote before stays valid and unchanged. Anything JSON would blur is written as a
tagged object `{"__py__": KIND, ...}`, so decoding gives back a value Python cannot tell from the
original: int keys stay int, tuples stay tuples, `Decimal("1.50")` keeps its digits, an object
graph keeps its classes and its shared references. Dict order is kept (JSON objects are ordered;
`canonical_json` sorts only where text is hashed). Containers keep str keys as data keys, so a
delta into an int-keyed dict still addresses one record: `["orders", "items", "7", "status"]`.

| Python value                 | encoded as                                                      |
|------------------------------|-----------------------------------------------------------------|
| dict, all keys str           | `{key: value}` (the pairs form if a key is `"__py__"`)          |
| dict, all keys int           | `{"__py__": "dict", "keys": "int", "items": {"7": value}}`      |
| other dicts                  | `{"__py__": "dict", "pairs": [[key, value], ...]}`              |
| tuple / set / frozenset      | `{"__py__": "tuple"/"set"/"frozenset", "items": [...]}` (sets sorted) |
| Decimal                      | `{"__py__": "decimal", "value": "1.50"}`                        |
| datetime / date / time       | `{"__py__": "datetime"/"date"/"time", "value": ISO text}`        |
| timedelta                    | `{"__py__": "timedelta", "value": [days, seconds, microseconds]}` |
| non-finite float             | `{"__py__": "float", "value": "nan"/"inf"/"-inf"}`              |
| bytes                        | `{"__py__": "bytes", "value": base64}`                          |
| enum member                  | `{"__py__": "enum", "type": T, "name": member name}`            |
| defaultdict(list/dict/...)   | `{"__py__": "defaultdict", "factory": "list", "value": dict}`    |
| random.Random                | `{"__py__": "random", "type": T, "state": [...]}`               |
| other objects                | `{"__py__": "object", "type": T, "attrs": {...}}` (+ `"id"` when shared) |
| a shared object seen again   | `{"__py__": "ref", "id": N}`                                    |

`T` names a class through a `TypeNames` registry, so the name does not depend on where the
env's module was loaded from (the runtime maps its env module to a stable name). `readable()`
gives the plain-JSON view people and LLM prompts read; it is lossy and never decoded.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import importlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal
from typing import Any

__all__ = ["TAG", "TypeNames", "UnencodableValue", "encode", "decode", "readable", "is_plain"]

TAG = "__py__"
_SCALARS = (str, int, float, bool, type(None))


class UnencodableValue(TypeError):
    """A value with no faithful encoding (a function, a module, an open file, a lock...)."""


class TypeNames:
    """Maps classes to stable names and back; `aliases` renames modules (e.g. the env's own)."""

    def __init__(self, aliases: dict[str, str] | None = None) -> None:
        self.aliases = dict(aliases or {})
        self._reverse = {alias: module for module, alias in self.aliases.items()}

    def name(self, cls: type) -> str:
        module = self.aliases.get(cls.__module__, cls.__module__)
        return f"{module}:{cls.__qualname__}"

    def resolve(self, name: str) -> type:
        module_name, _, qualname = name.partition(":")
        module_name = self._reverse.get(module_name, module_name)
        try:
            found: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"Cannot find class {name!r} of an encoded value: {exc}") from exc
        if not isinstance(found, type):
            raise ValueError(f"{name!r} of an encoded value is not a class")
        return found


_DEFAULT_NAMES = TypeNames()


def is_plain(value: Any) -> bool:
    """True if `value` is plain JSON data that encodes as itself."""
    if isinstance(value, _SCALARS):
        return not isinstance(value, float) or math.isfinite(value)
    if type(value) is list:
        return all(is_plain(v) for v in value)
    if type(value) is dict:
        return TAG not in value and all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    return False


def encode(value: Any, types: TypeNames | None = None) -> Any:
    """Return the lossless JSON encoding of `value` (raises UnencodableValue naming the culprit)."""
    return _Encoder(types or _DEFAULT_NAMES, _shared_objects(value)).encode(value, ())


def decode(data: Any, types: TypeNames | None = None) -> Any:
    """Rebuild the Python value of an encoding (plain JSON decodes to an equal copy of itself)."""
    return _Decoder(types or _DEFAULT_NAMES).decode(data)


def readable(data: Any) -> Any:
    """A plain-JSON view of an encoding for reading: keys as text, sets and tuples as lists,
    Decimals and times as their text, objects as their attributes. Lossy: never decode it."""
    if isinstance(data, list):
        return [readable(v) for v in data]
    if not isinstance(data, dict):
        return data
    kind = data.get(TAG)
    if kind is None:
        return {k: readable(v) for k, v in data.items()}
    if kind == "dict":
        if "items" in data:
            return {k: readable(v) for k, v in data["items"].items()}
        return {_readable_key(k): readable(v) for k, v in data["pairs"]}
    if kind in ("tuple", "set", "frozenset"):
        return [readable(v) for v in data["items"]]
    if kind == "object":
        return {k: readable(v) for k, v in data["attrs"].items()}
    if kind == "enum":
        return data["name"]
    if kind == "ref":
        return f"<same object as #{data['id']}>"
    if kind == "random":
        return "<random generator state>"
    if kind == "defaultdict":
        return readable(data["value"])
    return data.get("value")


def _readable_key(key: Any) -> str:
    plain = readable(key)
    return plain if isinstance(plain, str) else json.dumps(plain, sort_keys=True)


def _is_object(value: Any) -> bool:
    return not isinstance(value, (*_SCALARS, list, dict, tuple, set, frozenset, Decimal, dt.date, dt.time,
                                  dt.timedelta, bytes, bytearray, enum.Enum, random.Random, type))


def _shared_objects(value: Any) -> set[int]:
    """Ids of objects reached more than once (shared or cyclic): only those get an `id`."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
        elif _is_object(node):
            if id(node) in seen:
                shared.add(id(node))
                continue
            seen.add(id(node))
            stack.extend(_attributes(node).values())
    return shared


def _attributes(obj: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                attrs[slot] = getattr(obj, slot)
    attrs.update(getattr(obj, "__dict__", {}))
    return attrs


class _Encoder:
    def __init__(self, types: TypeNames, shared: set[int]) -> None:
        self.types = types
        self.shared = shared
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps encoded objects alive so their ids stay unique

    def encode(self, value: Any, path: tuple[str, ...]) -> Any:  # noqa: C901 - one dispatch table
        if isinstance(value, bool) or value is None or type(value) in (str, int):
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {TAG: "float", "value": repr(value)}
        if isinstance(value, defaultdict) and _factory_name(value) is not None:
            return {TAG: "defaultdict", "factory": _factory_name(value), "value": self._dict(value, path)}
        if isinstance(value, dict) and _plain_subclass(value):
            return self._dict(value, path)
        if isinstance(value, list) and _plain_subclass(value):
            return [self.encode(v, (*path, str(i))) for i, v in enumerate(value)]
        if type(value) is tuple:
            return {TAG: "tuple", "items": [self.encode(v, (*path, str(i))) for i, v in enumerate(value)]}
        if type(value) in (set, frozenset):
            items = [self.encode(v, path) for v in value]
            items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return {TAG: type(value).__name__, "items": items}
        if type(value) is Decimal:
            return {TAG: "decimal", "value": str(value)}
        if type(value) in (dt.datetime, dt.date, dt.time):
            return {TAG: type(value).__name__, "value": value.isoformat()}
        if type(value) is dt.timedelta:
            return {TAG: "timedelta", "value": [value.days, value.seconds, value.microseconds]}
        if type(value) in (bytes, bytearray):
            return {TAG: "bytes", "value": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, enum.Enum):
            return {TAG: "enum", "type": self.types.name(type(value)), "name": value.name}
        if isinstance(value, random.Random):
            return {TAG: "random", "type": self.types.name(type(value)), "state": self.encode(value.getstate(), path)}
        if _is_object(value) and not callable(value) and _is_data_object(value):
            return self._object(value, path)
        where = "/".join(path) or "the top level"
        raise UnencodableValue(f"Cannot encode a {type(value).__qualname__} at {where}: {value!r:.80}")

    def _dict(self, value: dict[Any, Any], path: tuple[str, ...]) -> Any:
        keys = list(value)
        if all(type(k) is str for k in keys) and TAG not in value:
            return {k: self.encode(v, (*path, k)) for k, v in value.items()}
        if keys and all(type(k) is int for k in keys):
            return {TAG: "dict", "keys": "int", "items": {str(k): self.encode(v, (*path, str(k))) for k, v in value.items()}}
        return {TAG: "dict", "pairs": [[self.encode(k, path), self.encode(v, (*path, str(k)))] for k, v in value.items()]}

    def _object(self, obj: Any, path: tuple[str, ...]) -> Any:
        if id(obj) in self.ids:
            return {TAG: "ref", "id": self.ids[id(obj)]}
        out: dict[str, Any] = {TAG: "object", "type": self.types.name(type(obj))}
        if id(obj) in self.shared:
            self.ids[id(obj)] = len(self.ids) + 1
            self.keep.append(obj)
            out["id"] = self.ids[id(obj)]
        out["attrs"] = {k: self.encode(v, (*path, k)) for k, v in _attributes(obj).items()}
        return out


def _plain_subclass(value: Any) -> bool:
    """dict/list, or a subclass that only observes them (no attributes, same behaviour)."""
    return type(value) in (dict, list) or (not hasattr(value, "__dict__") and type(value).__module__.startswith("catalog."))


_FACTORIES: dict[str, Callable[[], Any]] = {"list": list, "dict": dict, "set": set, "int": int, "float": float,
                                             "str": str}


def _factory_name(value: defaultdict[Any, Any]) -> str | None:
    for name, factory in _FACTORIES.items():
        if value.default_factory is factory:
            return name
    return None


def _is_data_object(value: Any) -> bool:
    """Instances of user classes only: no modules, functions, files, locks or C-level objects."""
    module = type(value).__module__
    return module not in ("builtins", "_io", "io", "_thread", "threading", "socket", "types") and (
        hasattr(value, "__dict__") or any(getattr(k, "__slots__", ()) for k in type(value).__mro__))


class _Decoder:
    def __init__(self, types: TypeNames) -> None:
        self.types = types
        self.objects: dict[int, Any] = {}
        self.builders: dict[str, Callable[[dict[str, Any]], Any]] = {
            "dict": self._dict, "tuple": lambda d: tuple(self.decode(v) for v in d["items"]),
            "set": lambda d: {self.decode(v) for v in d["items"]},
            "frozenset": lambda d: frozenset(self.decode(v) for v in d["items"]),
            "decimal": lambda d: Decimal(d["value"]), "float": lambda d: float(d["value"]),
            "datetime": lambda d: dt.datetime.fromisoformat(d["value"]),
            "date": lambda d: dt.date.fromisoformat(d["value"]), "time": lambda d: dt.time.fromisoformat(d["value"]),
            "timedelta": lambda d: dt.timedelta(*d["value"]),
            "bytes": lambda d: base64.b64decode(d["value"]),
            "enum": lambda d: self.types.resolve(d["type"])[d["name"]],  # type: ignore[index]
            "defaultdict": lambda d: defaultdict(_FACTORIES[d["factory"]], self.decode(d["value"])),
            "random": self._random, "object": self._object, "ref": self._ref,
        }

    def decode(self, data: Any) -> Any:
        if isinstance(data, list):
            return [self.decode(v) for v in data]
        if not isinstance(data, dict):
            return data
        kind = data.get(TAG)
        if kind is None:
            return {k: self.decode(v) for k, v in data.items()}
        builder = self.builders.get(kind)
        if builder is None:
            raise ValueError(f"Unknown encoded kind {kind!r}")
        try:
            return builder(data)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"Malformed encoded {kind}: {exc}") from exc

    def _dict(self, data: dict[str, Any]) -> dict[Any, Any]:
        if "items" in data:
            if data.get("keys") != "int":
                raise ValueError(f"Unknown key type {data.get('keys')!r} of an encoded dict")
            return {int(k): self.decode(v) for k, v in data["items"].items()}
        return {_hashable(self.decode(k)): self.decode(v) for k, v in data["pairs"]}

    def _random(self, data: dict[str, Any]) -> random.Random:
        cls: Any = self.types.resolve(data["type"])
        generator = cls.__new__(cls)
        random.Random.__init__(generator)
        generator.setstate(_tuples(self.decode(data["state"])))
        return generator

    def _object(self, data: dict[str, Any]) -> Any:
        cls: Any = self.types.resolve(data["type"])
        obj = cls.__new__(cls)
        if "id" in data:
            self.objects[data["id"]] = obj
        attrs = {k: self.decode(v) for k, v in data["attrs"].items()}
        pydantic_fields = getattr(cls, "model_fields", None)
        if isinstance(pydantic_fields, dict):
            object.__setattr__(obj, "__dict__", attrs)
            object.__setattr__(obj, "__pydantic_fields_set__", set(attrs) & set(pydantic_fields))
            object.__setattr__(obj, "__pydantic_extra__", None)
            object.__setattr__(obj, "__pydantic_private__", None)
            return obj
        for name, value in attrs.items():
            object.__setattr__(obj, name, value)
        return obj

    def _ref(self, data: dict[str, Any]) -> Any:
        if data["id"] not in self.objects:
            raise ValueError(f"Encoded reference #{data['id']} comes before its object")
        return self.objects[data["id"]]


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict, set)):
        raise ValueError(f"An encoded dict key decodes to an unhashable {type(key).__name__}")
    return key


def _tuples(value: Any) -> Any:
    """Random.getstate() is nested tuples; the encoding keeps them, this guards older states."""
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value
