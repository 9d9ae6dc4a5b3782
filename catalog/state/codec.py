"""A lossless JSON encoding of Python values, for the state and results of imported envs.

Plain JSON (str-keyed dicts, lists, str, int, float, bool, None) encodes as itself, so every
state envforge wrote before stays valid and unchanged. Anything JSON would blur is written as a
tagged object `{"__py__": KIND, ...}`, so decoding gives back a value Python cannot tell from the
original: int keys stay int, tuples stay tuples, `Decimal("1.50")` keeps its digits, an object
graph keeps its classes and its shared references. Dict order is kept (JSON objects are ordered;
`canonical_json` sorts only where text is hashed). Deltas do not see this structure: they are
over value paths (`["orders", 7, "status"]`, catalog/state/delta.py).

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
| other objects                | `{"__py__": "object", "type": T, "attrs": {...}}`               |
| subclass of a builtin type   | the object form plus `"value"`: its builtin value (a Counter, a namedtuple) |
| pydantic model               | the object form; private attributes under `"private"`           |
| a container or object seen again | `{"__py__": "ref", "path": [...]}`                         |

A reference names the place (a path of keys in the encoding itself) where the value was first
written, so shared and cyclic structure (a file's `parent`, two indexes over the same records)
survives, and adding a record elsewhere does not renumber anything: deltas stay local.

`T` names a class through a `TypeNames` registry, so the name does not depend on where the
env's module was loaded from (the runtime maps its env module to a stable name). `readable()`
gives the plain-JSON view people and LLM prompts read; it is lossy and never decoded.

Decoding cannot run code: encodings come from clients, replay and benchmark files, so a class
name in one is data, looked up in a table and never imported. The table holds `VALUE_TYPES`
(Counter, OrderedDict, Fraction, UUID, Random...: the classes the encoder names for plain
values) and the classes the caller registered (an env's own). Any other name is `UnknownClass`.
Instances are allocated by the first C-level `__new__` of their class and get their attributes
with `object.__setattr__`, so no Python `__new__`, `__init__` or `__setstate__` runs.

Limits: a reference from inside a set's item to another item of a set first met inside that set
may come out in either order; values with no faithful form (functions, modules, files, locks,
C-level objects without attributes) raise `UnencodableValue`.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import math
import random
import types as pytypes
import uuid
from collections import ChainMap, Counter, OrderedDict, UserDict, UserList, UserString, defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

__all__ = ["TAG", "VALUE_TYPES", "TypeNames", "UnencodableValue", "UnknownClass", "encode", "decode", "readable",
           "is_plain"]

TAG = "__py__"
_SCALARS = (str, int, float, bool, type(None))
_AS_IS = frozenset((str, int, bool, type(None)))  # encode as themselves (floats: unless non-finite)
Path = tuple[str, ...]


class UnencodableValue(TypeError):
    """A value with no faithful encoding (a function, a module, an open file, a lock...)."""


class UnknownClass(ValueError):
    """An encoding names a class that is neither a value type nor one the caller registered."""

    def __init__(self, name: object) -> None:
        super().__init__(f"refused to decode class {name!r}: an encoded value may name only the env's own "
                         f"classes and plain value types ({', '.join(sorted(c.__name__ for c in VALUE_TYPES))})")
        self.name = name


# The classes besides an env's own that a document may name (object, enum and random forms): the
# standard library's plain value types. Decimal, datetimes, sets, tuples... have tags of their
# own; any other class (a pathlib path, a third party's model) is refused when decoded.
VALUE_TYPES: tuple[type, ...] = (Counter, OrderedDict, ChainMap, UserDict, UserList, UserString, Fraction, uuid.UUID,
                                 uuid.SafeUUID, random.Random)


class TypeNames:
    """Maps classes to stable names and back; `aliases` renames modules (e.g. the env's own).

    `classes` are the only classes besides VALUE_TYPES a decoded value may be an instance of (an
    env's own); names resolve through this table alone, never by importing.
    """

    def __init__(self, aliases: dict[str, str] | None = None, classes: Iterable[type] = ()) -> None:
        self.aliases = dict(aliases or {})
        self._known: dict[str, type] = {self.name(cls): cls for cls in VALUE_TYPES}
        for cls in classes:
            self._known.setdefault(self.name(cls), cls)

    def name(self, cls: type) -> str:
        module = self.aliases.get(cls.__module__, cls.__module__)
        return f"{module}:{cls.__qualname__}"

    def resolve(self, name: object) -> type:
        """The class `name` stands for; raises UnknownClass for any name outside the table."""
        found = self._known.get(name) if isinstance(name, str) else None
        if found is None:
            raise UnknownClass(name)
        return found


_DEFAULT_NAMES = TypeNames()


def is_plain(value: Any) -> bool:
    """True if `value` is plain JSON data that encodes as itself (no container reached twice)."""
    return _plain(value, set())


def _plain(value: Any, seen: set[int]) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if type(value) not in (list, dict) or id(value) in seen:
        return False
    seen.add(id(value))
    if type(value) is list:
        return all(_plain(v, seen) for v in value)
    return TAG not in value and all(type(k) is str and _plain(v, seen) for k, v in value.items())


def encode(value: Any, types: TypeNames | None = None) -> Any:
    """Return the lossless JSON encoding of `value` (raises UnencodableValue naming the culprit)."""
    return Encoder(types or _DEFAULT_NAMES).encode(value, ())


def decode(data: Any, types: TypeNames | None = None) -> Any:
    """Rebuild the Python value of an encoding (plain JSON decodes to an equal copy of itself).

    Raises ValueError for anything malformed (UnknownClass for a class outside `types`).
    """
    try:
        return Decoder(types or _DEFAULT_NAMES).decode(data, ())
    except RecursionError:
        raise ValueError("the encoded value is nested too deeply to decode") from None


def readable(data: Any) -> Any:
    """A plain-JSON view of an encoding for reading. Lossy: never decode it.

    Keys become text, sets and tuples lists, Decimals and times their text, objects their attributes.
    """
    if isinstance(data, list):
        return [readable(v) for v in data]
    if not isinstance(data, dict):
        return data
    kind = data.get(TAG)
    if kind is None or not isinstance(kind, str):
        return {k: readable(v) for k, v in data.items()}
    if kind == "dict":
        if "items" in data:
            return {k: readable(v) for k, v in data["items"].items()}
        return {_readable_key(k): readable(v) for k, v in data["pairs"]}
    if kind in ("tuple", "set", "frozenset"):
        return [readable(v) for v in data["items"]]
    if kind == "object":
        return readable(data["value"]) if "value" in data else {k: readable(v) for k, v in data["attrs"].items()}
    if kind == "enum":
        return data["name"]
    if kind == "ref":
        steps = [k if isinstance(k, str) else json.dumps(k) for k in data["path"]]  # a delta's names int keys
        return f"<same as {'/'.join(steps) or 'the whole value'}>"
    if kind == "random":
        return "<random generator state>"
    if kind == "defaultdict":
        return readable(data["value"])
    return data.get("value")


def _readable_key(key: Any) -> str:
    plain = readable(key)
    return plain if isinstance(plain, str) else json.dumps(plain, sort_keys=True)


# Builtin types whose subclasses are encoded as objects carrying their builtin value.
_BASES: tuple[type, ...] = (dict, list, tuple, set, frozenset, str, int, float, Decimal)
_SKIP_MODULES = ("builtins", "_io", "io", "_thread", "threading", "socket", "types", "_socket", "sqlite3",
                 "_sqlite3", "decimal", "_decimal", "weakref", "_weakref")


def _attributes(obj: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if isinstance(slot, str) and not slot.startswith("__") and hasattr(obj, slot):
                attrs[slot] = getattr(obj, slot)
    attrs.update(getattr(obj, "__dict__", {}))
    return attrs


def _pydantic(cls: type) -> bool:
    return isinstance(getattr(cls, "model_fields", None), dict) and hasattr(cls, "__pydantic_fields_set__")


class Encoder:
    """One encoding pass: remembers where each container and object was first written."""

    def __init__(self, types: TypeNames) -> None:
        self.types = types
        self.places: dict[int, Path] = {}
        self.keep: list[Any] = []  # what has a place stays alive, so no other value reuses its id
        self.refs = 0  # references written (a value reached twice): shared structure
        self.tags = 0  # tagged values written (anything but plain JSON), refs included

    def remember(self, value: Any, path: Path) -> None:
        self.places[id(value)] = path
        self.keep.append(value)

    def encode(self, value: Any, path: Path) -> Any:  # noqa: C901 - one dispatch table
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return value
        if kind is float:
            if math.isfinite(value):
                return value
            self.tags += 1
            return {TAG: "float", "value": repr(value)}
        if kind in (dict, list, set, defaultdict) or (not isinstance(value, (*_SCALARS, tuple, frozenset, Decimal,
                                                                               dt.date, dt.time, dt.timedelta,
                                                                               bytes, enum.Enum))):
            place = self.places.get(id(value))
            if place is not None:
                self.refs += 1
                self.tags += 1
                return {TAG: "ref", "path": list(place)}
        if kind is dict:
            self.remember(value, path)
            return self._dict(value, path)
        if kind is list:
            self.remember(value, path)
            return [v if type(v) in _AS_IS else self.encode(v, (*path, str(i))) for i, v in enumerate(value)]
        self.tags += 1  # every kind below is written tagged
        if kind is tuple:
            return {TAG: "tuple", "items": [self.encode(v, (*path, "items", str(i))) for i, v in enumerate(value)]}
        if kind is set or kind is frozenset:
            if kind is set:
                self.remember(value, path)
            return {TAG: kind.__name__, "items": self._set_items(value, path)}
        if kind is Decimal:
            return {TAG: "decimal", "value": str(value)}
        if kind in (dt.datetime, dt.date, dt.time):
            return {TAG: kind.__name__, "value": value.isoformat()}
        if kind is dt.timedelta:
            return {TAG: "timedelta", "value": [value.days, value.seconds, value.microseconds]}
        if kind is bytes:
            return {TAG: "bytes", "value": base64.b64encode(value).decode("ascii")}
        if isinstance(value, enum.Enum):
            return {TAG: "enum", "type": self.types.name(kind), "name": value.name}
        if kind is defaultdict:
            factory = _factory_name(value)
            if factory is None:
                raise self._unencodable(value, path)
            self.remember(value, path)
            return {TAG: "defaultdict", "factory": factory, "value": self._dict(value, (*path, "value"))}
        if isinstance(value, random.Random):
            self.remember(value, path)
            return {TAG: "random", "type": self.types.name(kind), "state": self.encode(value.getstate(), (*path, "state"))}
        if _is_data_object(value):
            self.remember(value, path)
            return self._object(value, path)
        raise self._unencodable(value, path)

    @staticmethod
    def _unencodable(value: Any, path: Path) -> UnencodableValue:
        where = "/".join(path) or "the top level"
        return UnencodableValue(f"Cannot encode a {type(value).__qualname__} at {where}: {value!r:.80}")

    def _dict(self, value: dict[Any, Any], path: Path) -> Any:
        keys = list(value)
        if all(type(k) is str for k in keys) and TAG not in value:
            return {k: v if type(v) in _AS_IS else self.encode(v, (*path, k)) for k, v in value.items()}
        self.tags += 1
        if keys and all(type(k) is int for k in keys):
            return {TAG: "dict", "keys": "int",
                    "items": {str(k): self.encode(v, (*path, "items", str(k))) for k, v in value.items()}}
        return {TAG: "dict", "pairs": [[self.encode(k, (*path, "pairs", str(i), "0")),
                                        self.encode(v, (*path, "pairs", str(i), "1"))]
                                       for i, (k, v) in enumerate(value.items())]}

    def _set_items(self, value: Iterable[Any], path: Path) -> list[Any]:
        """Items in sorted order; places first met inside an item move with it."""
        known = set(self.places)
        items = [self.encode(v, (*path, "items", str(i))) for i, v in enumerate(value)]
        order = sorted(range(len(items)), key=lambda i: json.dumps(items[i], sort_keys=True))
        if any(key not in known for key in self.places):
            moved = {str(old): str(new) for new, old in enumerate(order)}
            depth = len(path) + 1
            for key, place in list(self.places.items()):
                if key not in known and place[:depth] == (*path, "items"):
                    self.places[key] = (*place[:depth], moved[place[depth]], *place[depth + 1:])
        return [items[i] for i in order]

    def _object(self, obj: Any, path: Path) -> Any:
        cls = type(obj)
        out: dict[str, Any] = {TAG: "object", "type": self.types.name(cls)}
        base = next((b for b in _BASES if isinstance(obj, b)), None)
        if base in (set, frozenset):
            out["value"] = {TAG: base.__name__, "items": self._set_items(obj, (*path, "value"))}
        elif base is dict:
            out["value"] = self._dict(dict(obj), (*path, "value"))
        elif base is list:
            out["value"] = [self.encode(v, (*path, "value", str(i))) for i, v in enumerate(obj)]
        elif base is tuple:
            out["value"] = {TAG: "tuple", "items": [self.encode(v, (*path, "value", "items", str(i)))
                                                    for i, v in enumerate(obj)]}
        elif base is not None:
            out["value"] = self.encode(base(obj), (*path, "value"))
        if _pydantic(cls):
            out["attrs"] = {k: self.encode(v, (*path, "attrs", k)) for k, v in obj.__dict__.items()}
            private = getattr(obj, "__pydantic_private__", None) or {}
            if private:
                out["private"] = {k: self.encode(v, (*path, "private", k)) for k, v in private.items()}
            return out
        out["attrs"] = {k: self.encode(v, (*path, "attrs", k)) for k, v in _attributes(obj).items()}
        return out


_FACTORIES: dict[str, Callable[[], Any]] = {"list": list, "dict": dict, "set": set, "int": int, "float": float,
                                             "str": str}


def _factory_name(value: defaultdict[Any, Any]) -> str | None:
    for name, factory in _FACTORIES.items():
        if value.default_factory is factory:
            return name
    return None


def _is_data_object(value: Any) -> bool:
    """Instances of user classes only: no modules, functions, files, locks or C-level objects."""
    cls = type(value)
    if isinstance(value, type) or cls.__module__ in _SKIP_MODULES:
        return False
    if isinstance(value, _BASES):
        return True
    return not callable(value) and (hasattr(value, "__dict__") or any(getattr(k, "__slots__", ()) for k in cls.__mro__))


class Decoder:
    """One decoding pass: remembers the place of each container and object it rebuilt."""

    def __init__(self, types: TypeNames) -> None:
        self.types = types
        self.places: dict[Path, Any] = {}
        self.builders: dict[str, Callable[[dict[str, Any], Path], Any]] = {
            "dict": self._dict, "tuple": lambda d, p: tuple(self._items(d, p)),
            "set": self._set, "frozenset": lambda d, p: frozenset(self._items(d, p)),
            "decimal": lambda d, p: Decimal(d["value"]), "float": lambda d, p: float(d["value"]),
            "datetime": lambda d, p: dt.datetime.fromisoformat(d["value"]),
            "date": lambda d, p: dt.date.fromisoformat(d["value"]),
            "time": lambda d, p: dt.time.fromisoformat(d["value"]),
            "timedelta": lambda d, p: dt.timedelta(*d["value"]),
            "bytes": lambda d, p: base64.b64decode(d["value"]),
            "enum": self._enum,
            "defaultdict": self._defaultdict, "random": self._random, "object": self._object, "ref": self._ref,
        }

    def decode(self, data: Any, path: Path) -> Any:
        if isinstance(data, list):
            out: list[Any] = []
            self.places[path] = out
            out.extend(self.decode(v, (*path, str(i))) for i, v in enumerate(data))
            return out
        if not isinstance(data, dict):
            return data
        kind = data.get(TAG)
        if kind is None or not isinstance(kind, str):  # a tag that names no kind is plain data holding the tag key
            plain: dict[str, Any] = {}
            self.places[path] = plain
            for k, v in data.items():
                plain[k] = self.decode(v, (*path, k))
            return plain
        builder = self.builders.get(kind)
        if builder is None:
            raise ValueError(f"Unknown encoded kind {kind!r}")
        try:
            return builder(data, path)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"Malformed encoded {kind}: {exc!r}") from exc

    def _items(self, data: dict[str, Any], path: Path) -> list[Any]:
        return [self.decode(v, (*path, "items", str(i))) for i, v in enumerate(data["items"])]

    def _set(self, data: dict[str, Any], path: Path) -> set[Any]:
        out = set(self._items(data, path))
        self.places[path] = out
        return out

    def _dict(self, data: dict[str, Any], path: Path, into: dict[Any, Any] | None = None) -> dict[Any, Any]:
        out: dict[Any, Any] = {} if into is None else into
        self.places.setdefault(path, out)
        if "items" in data:
            if data.get("keys") != "int":
                raise ValueError(f"Unknown key type {data.get('keys')!r} of an encoded dict")
            for k, v in data["items"].items():
                out[int(k)] = self.decode(v, (*path, "items", k))
            return out
        for i, (k, v) in enumerate(data["pairs"]):
            key = _hashable(self.decode(k, (*path, "pairs", str(i), "0")))
            out[key] = self.decode(v, (*path, "pairs", str(i), "1"))
        return out

    def _defaultdict(self, data: dict[str, Any], path: Path) -> defaultdict[Any, Any]:
        out: defaultdict[Any, Any] = defaultdict(_FACTORIES[data["factory"]])
        self.places[path] = out
        self._fill(data["value"], (*path, "value"), out)
        return out

    def _fill(self, data: dict[str, Any], path: Path, into: dict[Any, Any]) -> None:
        """Decode a dict's encoding (plain or tagged) into an existing dict (a subclass's value)."""
        if TAG in data:
            self._dict(data, path, into)
        else:
            for k, v in data.items():
                into[k] = self.decode(v, (*path, k))

    def _class(self, data: dict[str, Any], kind: type) -> Any:
        cls = self.types.resolve(data["type"])
        if not issubclass(cls, kind):
            raise ValueError(f"{data['type']!r} of an encoded value is not a {kind.__name__}")
        return cls

    def _enum(self, data: dict[str, Any], path: Path) -> enum.Enum:
        member = self._class(data, enum.Enum).__members__.get(data["name"])
        if not isinstance(member, enum.Enum):
            raise ValueError(f"{data['type']!r} has no member {data['name']!r}")
        return member

    def _random(self, data: dict[str, Any], path: Path) -> random.Random:
        generator = _allocate(self._class(data, random.Random))
        random.Random.__init__(generator)
        self.places[path] = generator
        generator.setstate(_tuples(self.decode(data["state"], (*path, "state"))))
        return generator

    def _object(self, data: dict[str, Any], path: Path) -> Any:
        cls: Any = self.types.resolve(data["type"])
        base = next((b for b in _BASES if issubclass(cls, b)), None)
        if "value" in data and base in (tuple, frozenset, str, int, float, Decimal):
            obj = _allocate(cls, self.decode(data["value"], (*path, "value")))
        else:
            obj = _allocate(cls)
        self.places[path] = obj
        if "value" in data and base is dict:
            self._fill(data["value"], (*path, "value"), obj)
        elif "value" in data and base is list:
            obj.extend(self.decode(v, (*path, "value", str(i))) for i, v in enumerate(data["value"]))
        elif "value" in data and base is set:
            obj.update(self._items(data["value"], (*path, "value")))
        attrs = {k: self.decode(v, (*path, "attrs", k)) for k, v in data["attrs"].items()}
        if _pydantic(cls):
            object.__setattr__(obj, "__dict__", attrs)
            object.__setattr__(obj, "__pydantic_fields_set__", set(attrs) & set(cls.model_fields))
            object.__setattr__(obj, "__pydantic_extra__", None)
            private = {k: self.decode(v, (*path, "private", k)) for k, v in data.get("private", {}).items()}
            object.__setattr__(obj, "__pydantic_private__", private or None)
            return obj
        for name, value in attrs.items():
            object.__setattr__(obj, name, value)
        return obj

    def _ref(self, data: dict[str, Any], path: Path) -> Any:
        place = tuple(data["path"])
        if place not in self.places:
            raise ValueError(f"Encoded reference to {list(place)} comes before its value")
        return self.places[place]


def _allocate(cls: type, *value: Any) -> Any:
    """A new instance of `cls` from the first C-level `__new__` of its MRO (a builtin's, `object`'s).

    The class's own Python `__new__` and `__init__` never run: decoded documents choose classes.
    """
    for klass in cls.__mro__:
        new = vars(klass).get("__new__")
        if isinstance(new, pytypes.BuiltinFunctionType):
            return new(cls, *value)
    return object.__new__(cls)


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict, set)):
        raise ValueError(f"An encoded dict key decodes to an unhashable {type(key).__name__}")
    return key


def _tuples(value: Any) -> Any:
    """Random.getstate() is nested tuples; the encoding keeps them, this guards older states."""
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value
