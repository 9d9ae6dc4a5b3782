"""The state of class-based envs: instance attributes, encoded losslessly, and their deltas.

State is the env instance's attributes: public ones (no leading `_`) are the state samples and
simulators see; private ones (`_random`, a cache, a current directory) are hidden state, kept
apart but tracked the same way. Callables and envforge's own `_envforge_*` attributes are not
state. Both parts are encoded in one pass (catalog/state/codec.py), public first, so a hidden
attribute that points into public state (a current directory inside the tree) is a reference
and the public part alone stays self-contained.

Deltas compare the encoding after a call with the one kept from before it (as JSON text per
attribute, so unchanged attributes cost one comparison of text). That sees every
change the code can make (set mutations, attribute writes on nested objects, pydantic models,
containers the env swapped for its own) without touching the env's values: the code runs on
exactly the dicts, lists and objects it built, so `type(x) is dict` holds as it does outside
envforge. It costs one encoding of the state per call. When a tool is proven to write only
under some paths (catalog/state/touches.py) and the values bear the proof out (plain JSON, no
shared structure, nothing moved in from elsewhere), `tracked_encode` encodes and diffs only
those subtrees, so a call costs what it can change; otherwise the full diff decides. Both are
measured side by side in bench/class_state.py.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from catalog.state import codec
from catalog.state.delta import MISSING, DeltaOp, diff, diff_at, path_key

__all__ = ["OWN_PREFIX", "ENV_ALIAS", "Encoded", "state_attributes", "encode_state", "state_delta", "tracked_encode",
           "env_type_names"]

OWN_PREFIX = "_envforge_"
ENV_ALIAS = "env"


def state_attributes(instance: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The instance's public and hidden state attributes, in the order the instance set them."""
    public: dict[str, Any] = {}
    hidden: dict[str, Any] = {}
    for name, value in vars(instance).items():
        if callable(value) and not _data_with_call(value):
            continue
        if name.startswith(OWN_PREFIX) or (name.startswith("__") and name.endswith("__")):
            continue
        (hidden if name.startswith("_") else public)[name] = value
    return public, hidden


def _data_with_call(value: Any) -> bool:
    """Instances of data classes that happen to define __call__ are still data."""
    return not inspect.isroutine(value) and not isinstance(value, type) and hasattr(value, "__dict__") \
        and type(value).__module__ not in ("builtins", "functools")


@dataclass(frozen=True)
class Encoded:
    """One encoding of an instance: public and hidden state, each attribute's JSON text, and what was left out.

    The encoded structures are the baseline the next call is compared with; nobody outside the
    runtime holds them (`state()` hands out copies). `texts` caches each attribute's JSON text,
    filled on demand. `places` (id of each container or object to where it was written, kept
    alive by `keep`) and `refs` (shared structure seen) let `tracked_encode` prove a call moved
    nothing between subtrees; left out are the hidden attributes that have no encoding.
    """

    public: dict[str, Any]
    hidden: dict[str, Any]
    texts: dict[str, str] = field(default_factory=dict)
    opaque: tuple[str, ...] = field(default=())
    places: dict[int, tuple[str, ...]] = field(default_factory=dict)
    keep: list[Any] = field(default_factory=list)
    refs: bool = False
    plain: dict[str, bool] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        return self.public[name] if name in self.public else self.hidden.get(name, MISSING)

    def text(self, name: str) -> str | None:
        """The JSON text of attribute `name` (None if it is not state), computed once."""
        if name not in self.texts:
            value = self.value(name)
            if value is MISSING:
                return None
            self.texts[name] = json.dumps(value, ensure_ascii=False)
        return self.texts[name]

    def lookup(self, path: tuple[Any, ...]) -> Any:
        """The value at `path` in a plain attribute (MISSING if there is none)."""
        value = self.value(path[0]) if path and self.is_plain(path[0]) else MISSING
        for key in path[1:]:
            if type(value) is not dict or type(key) is not str:
                return MISSING
            value = value.get(key, MISSING)
        return value

    def is_plain(self, name: str) -> bool:
        """Attribute `name` holds plain JSON only (no objects whose methods could run, no shared containers).

        The encoder counts what it writes tagged (a tuple, an object, a reference all are), so
        `encode_state` knows it for free.
        """
        return self.plain.get(name, False)

    def state(self, hidden: bool = False) -> dict[str, Any]:
        """A fresh copy of the public state (with `hidden`, the hidden attributes after it)."""
        names = [*self.public, *self.hidden] if hidden else list(self.public)
        return {name: json.loads(self.text(name) or "null") for name in names}


def encode_state(instance: Any, types: codec.TypeNames) -> Encoded:
    """Encode an instance's state; raises UnencodableValue if a public attribute has no encoding.

    A hidden attribute without an encoding (a lock, an open file) is left out and named in
    `opaque`, since envforge cannot restore it either way.
    """
    public_values, hidden_values = state_attributes(instance)
    encoder = codec.Encoder(types)
    plain: dict[str, bool] = {}
    public: dict[str, Any] = {}
    for name, value in public_values.items():
        tags = encoder.tags
        public[name] = encoder.encode(value, (name,))
        plain[name] = encoder.tags == tags
    hidden: dict[str, Any] = {}
    opaque: list[str] = []
    for name, value in hidden_values.items():
        known, tags = len(encoder.places), encoder.tags
        try:
            hidden[name] = encoder.encode(value, (name,))
            plain[name] = encoder.tags == tags
        except codec.UnencodableValue:
            for key in list(encoder.places)[known:]:  # places inside what was left out
                del encoder.places[key]
            opaque.append(name)
    return Encoded(public, hidden, {}, tuple(opaque), encoder.places, encoder.keep, encoder.refs > 0, plain)


def state_delta(before: Encoded, after: Encoded) -> tuple[list[DeltaOp], list[DeltaOp]]:
    """The public and the hidden delta between two encodings of the same instance, over value paths.

    Without shared structure, attributes whose text is unchanged are skipped and the others are
    diffed from their texts. With it (a reference on either side), the whole state is diffed at
    once (`catalog.state.delta.diff`), since a reference crosses attributes.
    """
    if before.refs or after.refs:
        ops = diff(before.state(hidden=True), after.state(hidden=True))
        return [op for op in ops if not str(op.path[0]).startswith("_")], \
            [op for op in ops if str(op.path[0]).startswith("_")]
    public: list[DeltaOp] = []
    hidden: list[DeltaOp] = []
    names = {*before.public, *before.hidden, *after.public, *after.hidden}
    for name in sorted(names):
        old, new = before.text(name), after.text(name)
        if old == new:
            continue
        ops = diff_at((name,), MISSING if old is None else json.loads(old), MISSING if new is None else json.loads(new))
        (hidden if name.startswith("_") else public).extend(ops)
    return public, hidden


def env_type_names(env_class: type) -> codec.TypeNames:
    """Stable class names for an env: its module is `env`, sibling modules keep their names.

    The env module is loaded under a name that depends on where it lives (a hash of its path,
    `sandboxed_env` in the sandbox), and its sibling modules leave `sys.modules` after loading,
    so the env's classes are found up front by walking what its module can reach. They are the
    only classes besides the codec's value types that a decoded state may hold.
    """
    aliases = {env_class.__module__: ENV_ALIAS}
    module = sys.modules.get(env_class.__module__)
    start = vars(module) if module is not None else {env_class.__name__: env_class}
    return codec.TypeNames(aliases, _local_classes(start, env_class.__module__))


def _local_classes(namespace: dict[str, Any], env_module: str) -> Iterator[type]:
    """Classes of the env module and of modules only it holds (its siblings), with nested classes."""
    seen_spaces: set[int] = set()
    seen_classes: set[int] = set()
    spaces = [namespace]
    while spaces:
        space = spaces.pop()
        if id(space) in seen_spaces:
            continue
        seen_spaces.add(id(space))
        for value in list(space.values()):
            if isinstance(value, ModuleType):
                if _belongs_to_env(value.__name__, env_module):
                    spaces.append(vars(value))
            elif isinstance(value, type) and id(value) not in seen_classes and _belongs_to_env(value.__module__, env_module):
                seen_classes.add(id(value))
                yield value
                spaces.append(dict(vars(value)))
                for member in vars(value).values():
                    function = getattr(member, "__func__", member)
                    if inspect.isfunction(function):
                        spaces.append(function.__globals__)


def _belongs_to_env(module_name: str, env_module: str) -> bool:
    """The env's own module, or one that is not importable by name (a sibling dropped after loading)."""
    return module_name == env_module or module_name not in sys.modules


def tracked_encode(before: Encoded, instance: Any, types: codec.TypeNames, reads: frozenset[str],
                   writes: list[tuple[Any, ...]]) -> tuple[Encoded, list[DeltaOp], list[DeltaOp]] | None:
    """The encoding after a call that could write only under `writes`, and its public and hidden delta.

    Only those subtrees are encoded and diffed, so the cost follows what the call can change, not
    the state. None (use the full encoding; `before` is then untouched) unless the values prove
    it faithful: every attribute the tool uses is plain JSON and stays so, the state shares no
    structure, and no container in a rewritten subtree was elsewhere in the state before
    (nothing moved or aliased in). Otherwise `before` is updated in place and returned: the
    runtime holds the only reference to its structures (`Encoded.state()` hands out copies).
    """
    if before.refs or before.opaque or not all(before.is_plain(name) for name in reads):
        return None
    attributes = vars(instance)
    if any(hasattr(type(instance), name) for name in reads):
        return None  # a class attribute (a property) set since the analysis: `self.name` may run code
    found: list[tuple[tuple[Any, ...], Any, Any]] = []
    for path in writes:
        name = path[0]
        live = attributes.get(name, MISSING)
        if not isinstance(name, str) or name.startswith(OWN_PREFIX) or before.value(name) is MISSING \
                or live is MISSING or callable(live):
            return None  # an attribute added, removed or not state: the full encoding decides
        old = before.value(name)
        depth = 1
        while depth < len(path):
            key = path[depth]
            if type(live) is not dict or type(old) is not dict or codec.TAG in old or type(key) is not str \
                    or key == codec.TAG:
                break
            if depth < len(path) - 1 and (key not in live or key not in old):
                if key not in live and key not in old:
                    live = old = MISSING  # nothing there before or after: the write was never reached
                    depth = len(path)
                break
            live, old = live.get(key, MISSING), old.get(key, MISSING)
            depth += 1
        if live is MISSING and old is MISSING:
            continue
        found.append((tuple(path[:depth]), live, old))
    found.sort(key=lambda item: len(item[0]))
    kept: list[tuple[tuple[Any, ...], Any, Any]] = []
    for item in found:
        if not any(item[0][:len(k[0])] == k[0] for k in kept):
            kept.append(item)
    encoder = codec.Encoder(types)
    updates = []
    for path, live, old in kept:
        try:
            new = MISSING if live is MISSING else encoder.encode(live, path)
        except codec.UnencodableValue:
            return None
        updates.append((path, old, new))
    if encoder.tags or any(before.places.get(key, place) != place for key, place in encoder.places.items()):
        return None
    public_ops: list[DeltaOp] = []
    hidden_ops: list[DeltaOp] = []
    for path, old, new in updates:  # the ops first: they copy the values, the baseline is updated in place next
        (hidden_ops if path[0].startswith("_") else public_ops).extend(diff_at(path, old, new))
    for path, _old, new in updates:
        before.texts.pop(path[0], None)
        before.plain[path[0]] = True
        _put(before.public if path[0] in before.public else before.hidden, path, new)
    before.places.update(encoder.places)
    before.keep.extend(encoder.keep)
    return before, sorted(public_ops, key=lambda op: path_key(op.path)), sorted(hidden_ops, key=lambda op: path_key(op.path))


def _put(root: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    """Set (or, for MISSING, delete) `path` in `root`, in place (the baseline is the runtime's alone)."""
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    if value is MISSING:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value
