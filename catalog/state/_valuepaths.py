"""Value paths over state encodings: what a delta's path names, and the shared-structure machinery.

A class env's state is stored in the codec's encoding (catalog/state/codec.py), but its deltas
are written over the *values* the code sees: a path step is a dict key (an int key is a JSON
int, a str key a JSON string, so `7` and `"7"` stay apart in a mixed dict), an object attribute
name, or (inside a reference target only) a list or tuple index. Codec tags, the `items` /
`attrs` / `pairs` levels and reference ids never appear in an op's path.

Where value paths cannot name a place (a set's item, a dict key itself, a value under a key that
is neither str nor int, an object's builtin value, a generator's state), a reference target
uses an *escape step*: a JSON list of the codec keys to follow, e.g. `["items", "3"]`. Only the
targets of references inside op values can hold one; op paths never do (such places are inside
leaves of the delta).

Shared structure: a state with codec references is *linked* (each reference replaced by the very
object it names, so an aliased record is one Python object reachable by several paths), changed
there, and *unlinked* again, which writes the codec's canonical form (a value in full at its
first place in encoding order, references elsewhere): exactly what the Encoder writes for the
same object graph, so the state after applying a delta is the one the runtime encodes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from catalog.state.codec import TAG

Step = Any  # str | int | tuple[str, ...] (an escape step; a JSON list on the wire)
VPath = tuple[Any, ...]
CodecPath = tuple[str, ...]

_REF_TEXT = f'"{TAG}": "ref"'


class Missing:
    """No value at this place (distinct from a JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = Missing()


def has_refs(value: Any) -> bool:
    """True if `value` may hold a reference (a text search: a false alarm only costs the slower, exact path)."""
    try:
        return _REF_TEXT in json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return True


def is_key_step(step: Any) -> bool:
    """A step a dict key or attribute can be named by: a str, or an int that is not a bool."""
    return type(step) is str or type(step) is int


_KINDS = frozenset({"dict", "tuple", "set", "frozenset", "decimal", "datetime", "date", "time", "timedelta", "float",
                    "bytes", "enum", "defaultdict", "random", "object", "ref"})


def kind(node: Any) -> str | None:
    """The codec kind of an encoded dict; None for a plain one (plain JSON data may hold the tag key too)."""
    tag = node.get(TAG) if type(node) is dict else None
    return tag if isinstance(tag, str) and tag in _KINDS else None


def _is_ref(value: Any) -> bool:
    return type(value) is dict and value.get(TAG) == "ref"


def _container(value: Any) -> bool:
    return type(value) is list or type(value) is dict


# --- the value positions of one encoded node, in encoding order ---------------------------------

def positions(node: Any) -> Iterator[tuple[Step, CodecPath, Any]]:
    """(value step, codec keys from the node, child) for every value position directly in `node`."""
    if type(node) is list:
        for i, v in enumerate(node):
            yield i, (str(i),), v
        return
    if type(node) is not dict:
        return
    tag = kind(node)
    if tag is None:
        for k, v in node.items():
            yield k, (k,), v
    elif tag == "dict":
        yield from _dict_positions(node, ())
    elif tag == "tuple":
        for i, v in enumerate(_list(node.get("items"))):
            yield i, ("items", str(i)), v
    elif tag in ("set", "frozenset"):
        for i, v in enumerate(_list(node.get("items"))):
            yield ("items", str(i)), ("items", str(i)), v
    elif tag == "defaultdict":
        inner = node.get("value")
        if type(inner) is dict:
            yield from _dict_positions(inner, ("value",)) if kind(inner) is not None else \
                ((k, ("value", k), v) for k, v in inner.items())
    elif tag == "random":
        if "state" in node:
            yield ("state",), ("state",), node["state"]
    elif tag == "object":
        if "value" in node:
            yield ("value",), ("value",), node["value"]
        for field in ("attrs", "private"):
            for k, v in _dict(node.get(field)).items():
                yield k, (field, k), v


def _dict_positions(node: dict[str, Any], prefix: CodecPath) -> Iterator[tuple[Step, CodecPath, Any]]:
    if "items" in node:
        for k, v in _dict(node["items"]).items():
            yield _int_key(k, prefix), (*prefix, "items", k), v
        return
    for i, pair in enumerate(_list(node.get("pairs"))):
        if type(pair) is not list or len(pair) != 2:
            continue
        key, value = pair
        yield (*prefix, "pairs", str(i), "0"), (*prefix, "pairs", str(i), "0"), key
        step = key if is_key_step(key) else (*prefix, "pairs", str(i), "1")
        yield step, (*prefix, "pairs", str(i), "1"), value


def _int_key(key: str, prefix: CodecPath = ()) -> Any:
    """The step of an int dict's entry: its int key (an escape step for a malformed one)."""
    try:
        return int(key)
    except ValueError:
        return (*prefix, "items", key)


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


# The fields of a tagged node that hold value positions (the others are copied as they are).
_POSITION_FIELDS: dict[str, tuple[str, ...]] = {
    "dict": ("items", "pairs"), "tuple": ("items",), "set": ("items",), "frozenset": ("items",),
    "defaultdict": ("value",), "random": ("state",), "object": ("value", "attrs", "private")}


def rebuild(node: Any, fn: Callable[[Step, CodecPath, Any], Any]) -> Any:
    """A copy of `node`'s own structure with each value position's child replaced by `fn(step, codec keys, child)`."""
    if type(node) is list:
        return [fn(i, (str(i),), v) for i, v in enumerate(node)]
    if type(node) is not dict:
        return node
    tag = kind(node)
    if tag is None:
        return {k: fn(k, (k,), v) for k, v in node.items()}
    own = _POSITION_FIELDS.get(tag, ()) if isinstance(tag, str) else ()
    out = {k: v if k in own else copy.deepcopy(v) for k, v in node.items()}
    if tag == "dict":
        out.update(_rebuild_dict(node, (), fn))
    elif tag in ("tuple", "set", "frozenset"):
        steps = [(i, ("items", str(i))) if tag == "tuple" else (("items", str(i)), ("items", str(i)))
                 for i in range(len(_list(node.get("items"))))]
        out["items"] = [fn(step, codec, v) for (step, codec), v in zip(steps, _list(node.get("items")), strict=True)]
    elif tag == "defaultdict" and type(node.get("value")) is dict:
        inner = node["value"]
        out["value"] = {**inner, **_rebuild_dict(inner, ("value",), fn)} if kind(inner) is not None else \
            {k: fn(k, ("value", k), v) for k, v in inner.items()}
    elif tag == "random" and "state" in node:
        out["state"] = fn(("state",), ("state",), node["state"])
    elif tag == "object":
        if "value" in node:
            out["value"] = fn(("value",), ("value",), node["value"])
        for field in ("attrs", "private"):
            if type(node.get(field)) is dict:
                out[field] = {k: fn(k, (field, k), v) for k, v in node[field].items()}
    return out


def _rebuild_dict(node: dict[str, Any], prefix: CodecPath, fn: Callable[[Step, CodecPath, Any], Any]) -> dict[str, Any]:
    if "items" in node:
        return {"items": {k: fn(_int_key(k, prefix), (*prefix, "items", k), v) for k, v in _dict(node["items"]).items()}}
    pairs = []
    for i, pair in enumerate(_list(node.get("pairs"))):
        if type(pair) is not list or len(pair) != 2:
            pairs.append(copy.deepcopy(pair))
            continue
        key, value = pair
        step = key if is_key_step(key) else (*prefix, "pairs", str(i), "1")
        pairs.append([fn((*prefix, "pairs", str(i), "0"), (*prefix, "pairs", str(i), "0"), key),
                      fn(step, (*prefix, "pairs", str(i), "1"), value)])
    return {"pairs": pairs}


# --- maps: the nodes a delta recurses into -------------------------------------------------------

def shell(node: Any) -> tuple[Any, ...] | None:
    """What a node is besides its entries, if it is a map a delta recurses into (None for a leaf).

    Maps are dicts whose keys are all str or int (any of the codec's three dict forms, so a dict
    that changes key kind is still diffed per entry), defaultdicts, and objects that are not a
    builtin's subclass. Entries of other kinds (lists, sets, tuples, scalars) are leaves.
    """
    if type(node) is not dict:
        return None
    tag = kind(node)
    if tag is None:
        return ("dict",)
    if tag == "dict":
        return ("dict",) if _keyed(node) else None
    if tag == "defaultdict":
        inner = node.get("value")
        if type(inner) is dict and (kind(inner) is None or (kind(inner) == "dict" and _keyed(inner))):
            return ("defaultdict", node.get("factory"))
        return None
    if tag == "object" and "value" not in node and type(node.get("attrs")) is dict:
        return ("object", node.get("type"), tuple(_dict(node.get("private"))))
    return None


def _keyed(node: dict[str, Any]) -> bool:
    if "items" in node:
        return node.get("keys") == "int" and type(node["items"]) is dict and \
            all(type(_int_key(k)) is int for k in node["items"])
    pairs = node.get("pairs")
    return type(pairs) is list and all(type(p) is list and len(p) == 2 and is_key_step(p[0]) for p in pairs)


def entries(node: Any) -> dict[Any, Any]:
    """A map's entries by step, in encoding order (call only when `shell(node)` is not None)."""
    return {step: child for step, _codec, child in positions(node) if is_key_step(step)}


def child(node: Any, step: Step) -> Any:
    """The value at one step below `node` (MISSING if there is none)."""
    if type(step) is tuple or type(step) is list:
        return _follow(node, step)
    if type(node) is list:
        return node[step] if type(step) is int and 0 <= step < len(node) else MISSING
    if type(node) is not dict:
        return MISSING
    tag = kind(node)
    if tag is None:
        return node.get(step, MISSING) if type(step) is str else MISSING
    if tag == "tuple":
        items = _list(node.get("items"))
        return items[step] if type(step) is int and 0 <= step < len(items) else MISSING
    if tag == "object" and type(step) is str:
        for field in ("attrs", "private"):
            found = _dict(node.get(field)).get(step, MISSING)
            if found is not MISSING:
                return found
        return MISSING
    if tag == "defaultdict":
        inner = node.get("value")
        return child(inner, step) if type(inner) is dict else MISSING
    if tag == "dict" and "items" in node:
        return _dict(node["items"]).get(str(step), MISSING) if type(step) is int else MISSING
    if tag == "dict":
        for pair in _list(node.get("pairs")):
            if type(pair) is list and len(pair) == 2 and type(pair[0]) is type(step) and pair[0] == step:
                return pair[1]
    return MISSING


def _follow(node: Any, keys: tuple[str, ...] | list[str]) -> Any:
    for key in keys:
        if type(node) is list and type(key) is str and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif type(node) is dict and type(key) is str and key in node:
            node = node[key]
        else:
            return MISSING
    return node


def put(node: dict[str, Any], step: Any, value: Any) -> None:
    """Set (MISSING: delete) entry `step` of map `node` in place, keeping the codec's form for its keys.

    A dict keeps its insertion order (a new key goes last, as in Python) and is written in the
    form the Encoder gives its keys: plain for str keys, the int form for int keys, pairs for a
    mix, so a dict whose keys change kind changes form, entry by entry.
    """
    tag = kind(node)
    if tag == "object":
        field = "private" if step in _dict(node.get("private")) else "attrs"
        target = node.setdefault(field, {})
        if value is MISSING:
            target.pop(step, None)
        else:
            target[step] = value
        return
    inner = node["value"] if tag == "defaultdict" else node
    inner_tag = kind(inner)
    if inner_tag is None and type(step) is str:  # plain data may hold the tag key itself (SQL, EnvSimBench)
        if value is MISSING:
            inner.pop(step, None)
        else:
            inner[step] = value
        return
    if inner_tag == "dict" and "items" in inner and type(step) is int and (value is not MISSING or len(inner["items"]) > 1):
        if value is MISSING:
            inner["items"].pop(str(step), None)
        else:
            inner["items"][str(step)] = value
        return
    pairs = _pairs(inner)
    for index, (key, _old) in enumerate(pairs):
        if type(key) is type(step) and key == step:
            if value is MISSING:
                del pairs[index]
            else:
                pairs[index] = (key, value)
            break
    else:
        if value is not MISSING:
            pairs.append((step, value))
    _reshape(inner, pairs)


def _pairs(node: dict[str, Any]) -> list[tuple[Any, Any]]:
    """A dict's (encoded key, value) pairs in order, whichever of the three forms it is in."""
    if kind(node) is None:
        return list(node.items())
    if "items" in node:
        return [(_int_key(k), v) for k, v in _dict(node["items"]).items()]
    return [(p[0], p[1]) for p in _list(node.get("pairs")) if type(p) is list and len(p) == 2]


def _reshape(node: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
    """Rewrite dict `node` in place (its identity is kept: references name it) in the Encoder's form."""
    node.clear()
    if all(type(k) is str for k, _ in pairs) and not any(k == TAG for k, _ in pairs):
        node.update(pairs)
    elif pairs and all(type(k) is int for k, _ in pairs):
        node.update({TAG: "dict", "keys": "int", "items": {str(k): v for k, v in pairs}})
    else:
        node.update({TAG: "dict", "pairs": [[k, v] for k, v in pairs]})


def copy_node(node: Any) -> Any:
    """A copy of a map's own structure (its children shared), for copy-on-write along a path."""
    tag = kind(node)
    if tag is None:
        return dict(node)
    out = dict(node)
    if tag == "dict":
        if "items" in node:
            out["items"] = dict(node["items"])
        else:
            out["pairs"] = [list(p) for p in node["pairs"]]
    elif tag == "defaultdict":
        out["value"] = copy_node(node["value"])
    elif tag == "object":
        for field in ("attrs", "private"):
            if field in node:
                out[field] = dict(node[field])
    return out


# --- linking and unlinking -----------------------------------------------------------------------

def link(state: dict[str, Any]) -> dict[str, Any]:
    """A copy of an encoded state with each codec reference replaced by the object it names.

    Raises ValueError for a reference to a place not written before it (as the decoder does).
    """
    places: dict[CodecPath, Any] = {}

    def walk(value: Any, path: CodecPath) -> Any:
        if _is_ref(value):
            target = value.get("path")
            found = places.get(tuple(target)) if type(target) is list and all(type(k) is str for k in target) \
                else None
            if found is None:
                raise ValueError(f"a reference to {target!r} comes before its value")
            return found
        if type(value) is list:
            out: list[Any] = []
            places[path] = out
            out.extend(walk(v, (*path, str(i))) for i, v in enumerate(value))
            return out
        if type(value) is not dict:
            return value
        node: dict[str, Any] = {}
        places[path] = node
        if kind(value) is None:
            for k, v in value.items():
                node[k] = walk(v, (*path, k))
            return node
        node.update(rebuild(value, lambda _step, keys, v: walk(v, (*path, *keys))))
        return node

    try:
        return {name: walk(value, (name,)) for name, value in state.items()}
    except RecursionError:
        raise ValueError("the state is nested too deeply") from None


def unlink(state: dict[str, Any]) -> dict[str, Any]:
    """The codec encoding of a linked state: each object in full at its first place, references after."""
    written: dict[int, CodecPath] = {}

    def walk(value: Any, path: CodecPath) -> Any:
        if not _container(value):
            return value
        if id(value) in written:
            return {TAG: "ref", "path": list(written[id(value)])}
        written[id(value)] = path
        return rebuild(value, lambda _step, keys, v: walk(v, (*path, *keys)))

    try:
        return {name: walk(value, (name,)) for name, value in state.items()}
    except RecursionError:
        raise ValueError("the state is nested too deeply") from None


def canonical_places(root: dict[str, Any], prefer: dict[VPath, None] | None = None) -> dict[int, VPath]:
    """The canonical value path of every container of a linked state: where a delta writes it in full.

    Without `prefer`: its first place in encoding order (the codec's own choice). With `prefer`
    (the canonical places of the state before a call): a container keeps the place it had
    before when it is still there, so making a record reachable from one more place (an order
    that now points at a product) changes nothing at the record's own place. Public attributes
    are placed before hidden ones (a leading `_`), as the runtime encodes them, so a public
    delta never points into hidden state.
    """
    canon: dict[int, VPath] = {}
    public = [name for name in root if not name.startswith("_")]
    hidden = [name for name in root if name.startswith("_")]
    for names in (public, hidden):
        if prefer:
            at: dict[VPath, Any] = {(): root}
            for path in prefer:
                if path[0] not in names:
                    continue
                parent = root if len(path) == 1 else at.get(path[:-1])
                if parent is None:
                    continue
                found = root.get(path[0], MISSING) if len(path) == 1 else child(parent, path[-1])
                if _container(found) and id(found) not in canon:
                    canon[id(found)] = path
                    at[path] = found
        for name in names:
            _place(root[name], (name,), canon)
    return canon


def _place(value: Any, path: VPath, canon: dict[int, VPath]) -> None:
    stack = [(value, path)]
    while stack:
        value, path = stack.pop()
        if not _container(value):
            continue
        known = canon.get(id(value))
        if known is not None and known != path:
            continue
        canon[id(value)] = path
        below = [(v, (*path, step)) for step, _codec, v in positions(value)]
        stack.extend(reversed(below))


def fragment(value: Any, path: VPath, canon: dict[int, VPath]) -> Any:
    """The encoding of the linked value at `path` for an op's value.

    In full, except a container whose canonical place is elsewhere: `{"__py__": "ref", "path": <its value path>}`.
    """
    if not _container(value):
        return value
    place = canon.get(id(value))
    if place is not None and place != path:
        return {TAG: "ref", "path": wire_path(place)}
    return rebuild(value, lambda step, _codec, v: fragment(v, (*path, step), canon))


def wire_path(path: VPath) -> list[Any]:
    return [list(step) if type(step) is tuple else step for step in path]


class _Pending:
    """A reference inside an op's value, resolved once every op is applied."""

    def __init__(self, path: list[Any]) -> None:
        self.path = path


def with_pending(value: Any) -> Any:
    """An op's value with each value-path reference replaced by a `_Pending` placeholder."""
    if _is_ref(value):
        target = value.get("path")
        if type(target) is not list or not target:
            raise ValueError(f"a reference in a delta names no place: {target!r}")
        return _Pending(target)
    if not _container(value):
        return value
    if type(value) is list:
        return [with_pending(v) for v in value]
    return {k: with_pending(v) for k, v in value.items()}


def resolve_pending(root: dict[str, Any]) -> None:
    """Replace every `_Pending` in a linked state by the object its value path names (ValueError if none)."""
    done: dict[int, Any] = {}

    def target(pending: _Pending, trail: frozenset[int]) -> Any:
        if id(pending) in done:
            return done[id(pending)]
        if id(pending) in trail:
            raise ValueError(f"a reference in a delta names itself: {pending.path!r}")
        node: Any = root
        for step in pending.path:
            node = child(node, tuple(step) if type(step) is list else step)
            if isinstance(node, _Pending):
                node = target(node, trail | {id(pending)})
            if node is MISSING:
                raise ValueError(f"a reference in a delta names no value: {pending.path!r}")
        done[id(pending)] = node
        return node

    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        slots = enumerate(node) if type(node) is list else list(node.items())
        for key, value in slots:
            if isinstance(value, _Pending):
                value = node[key] = target(value, frozenset())
            if _container(value):
                stack.append(value)
