"""A fingerprint of interpreter-wide state, taken in the worker before and after each call.

A tool that changes process-global state (the decimal context's precision, the `random`
module's generator, the locale, the recursion limit, the environment, the working directory,
the module path, or module-level variables of the env's own modules) changes the behaviour of
every later call and of any other code in the same interpreter: its observation depends on what
ran before. The verifier reports such a call (`StepResult.info["global_change"]`), so a finding
names what changed. Only values are compared (digests of them), never identities that a harmless
call may refresh; the decimal context's flags are left out since arithmetic sets them.
"""

from __future__ import annotations

import decimal
import hashlib
import locale
import os
import random
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["fingerprint", "changed", "EnvGlobals"]

_LIMIT = 20000  # nodes walked per module-level value: a huge global is compared by its first ones


def _decimal() -> Any:
    context = decimal.getcontext()
    return (context.prec, context.rounding, context.Emin, context.Emax, context.capitals, context.clamp,
            tuple(sorted(str(t) for t, on in context.traps.items() if on)))


def _random() -> Any:
    return random.getstate()  # a tuple of ints, compared as it is (hashing its text cost a third of a call)


def _locale() -> Any:
    return locale.setlocale(locale.LC_ALL, None)  # a query: changes nothing


_PROBES: dict[str, Callable[[], Any]] = {
    "decimal context": _decimal,
    "random module state": _random,
    "locale": _locale,
    "recursion limit": sys.getrecursionlimit,
    "int max str digits": sys.get_int_max_str_digits,
    "switch interval": sys.getswitchinterval,
    "os.environ": lambda: sorted(os.environ.items()),
    "working directory": os.getcwd,
    "sys.path": lambda: list(sys.path),
    "float repr": lambda: (repr(0.1), repr(1e16), format(2.5, "")),
}


def _digest(value: Any, own_types: frozenset[type]) -> str:
    """A digest of a value's content: containers walked, and objects of the env's own classes.

    Objects of other classes (a library's internals, which may refresh caches on their own)
    count by type only, so only what the env's code keeps can raise a finding.
    """
    parts: list[str] = []
    seen: set[int] = set()

    def walk(item: Any, depth: int) -> None:
        if len(parts) > _LIMIT or depth > 30:
            return
        if item is None or isinstance(item, (bool, int, float, complex, str, bytes, decimal.Decimal)):
            parts.append(f"{type(item).__name__}:{item!r}")
            return
        if id(item) in seen:
            parts.append("<ref>")
            return
        seen.add(id(item))
        if isinstance(item, dict):
            parts.append("{")
            for key, inner in list(item.items()):
                walk(key, depth + 1)
                walk(inner, depth + 1)
            parts.append("}")
        elif isinstance(item, (list, tuple, set, frozenset)):
            parts.append(type(item).__name__ + "[")
            for inner in sorted(item, key=repr) if isinstance(item, (set, frozenset)) else list(item):
                walk(inner, depth + 1)
            parts.append("]")
        elif isinstance(item, random.Random):
            parts.append("rng:" + hashlib.sha1(repr(item.getstate()).encode()).hexdigest())
        elif type(item) in own_types and isinstance(getattr(item, "__dict__", None), dict):
            parts.append(type(item).__qualname__ + "(")
            walk(vars(item), depth + 1)
            parts.append(")")
        else:
            parts.append(f"<{type(item).__qualname__}>")

    walk(value, 0)
    return hashlib.sha1("\x00".join(parts).encode(errors="replace")).hexdigest()


class EnvGlobals:
    """The module globals and class attributes of the env's own code (files under `env_dir`).

    The env module's helpers are dropped from `sys.modules` after loading, so they are found
    through what the env module refers to: modules, functions' globals and classes. Class
    namespaces are live views, so a class attribute changed by a call is seen.
    """

    def __init__(self, module: types.ModuleType, env_dir: Path) -> None:
        self.root = str(Path(env_dir).resolve())
        self.namespaces: dict[str, Mapping[str, Any]] = {}
        own: set[type] = set()
        self._visit(vars(module), module.__name__, own)
        self.own_types = frozenset(own)
        # name -> (value, its digest) for values no call can change (`_immutable`): the same object
        # (held here, so its identity cannot be reused) has the same digest, computed once
        self.digests: dict[str, tuple[Any, str]] = {}

    def _own(self, file: Any) -> bool:
        return isinstance(file, str) and str(Path(file).resolve()).startswith(self.root)

    def _visit(self, namespace: dict[str, Any], label: str, own: set[type]) -> None:
        if label in self.namespaces:
            return
        self.namespaces[label] = namespace
        for value in list(namespace.values()):
            if isinstance(value, types.ModuleType) and self._own(getattr(value, "__file__", None)):
                self._visit(vars(value), value.__name__, own)
            elif isinstance(value, types.FunctionType) and self._own(value.__code__.co_filename):
                self._visit(value.__globals__, value.__globals__.get("__name__", label), own)
            elif isinstance(value, type) and value not in own and any(
                    isinstance(m, types.FunctionType) and self._own(m.__code__.co_filename)
                    for m in (getattr(v, "__func__", v) for v in vars(value).values())):
                own.add(value)
                self.namespaces[f"class {value.__qualname__}"] = vars(value)
                for member in vars(value).values():
                    function = getattr(member, "__func__", member)
                    if isinstance(function, types.FunctionType) and self._own(function.__code__.co_filename):
                        self._visit(function.__globals__, function.__globals__.get("__name__", label), own)


def fingerprint(env: EnvGlobals | None = None) -> dict[str, Any]:
    """Interpreter-wide state now: one entry per probe, and one per env module-level name."""
    out: dict[str, Any] = {}
    for name, probe in _PROBES.items():
        try:
            out[name] = probe()
        except Exception as exc:  # a probe the sandbox refuses: compared as its refusal
            out[name] = f"unavailable: {type(exc).__name__}"
    if env is not None:
        for label, namespace in env.namespaces.items():
            for key, value in list(namespace.items()):
                if key.startswith("__") or isinstance(value, (types.ModuleType, types.FunctionType, type, property,
                                                              staticmethod, classmethod)):
                    continue
                name = f"{label}.{key}"
                known = env.digests.get(name)
                if known is not None and known[0] is value:
                    out[name] = known[1]
                    continue
                out[name] = _digest(value, env.own_types)
                if _immutable(value, env.own_types):
                    env.digests[name] = (value, out[name])
    return out


_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes, decimal.Decimal})


def _immutable(value: Any, own_types: frozenset[type], depth: int = 0) -> bool:
    """Whether `value`'s digest can never change: scalars, classes, and tuples or frozensets of those.

    A class counts by its metaclass's name only (`_digest`), unless that metaclass is the env's own.
    """
    kind = type(value)
    if kind in _SCALARS:
        return True
    if isinstance(value, type):
        return kind not in own_types
    if (kind is tuple or kind is frozenset) and depth < 30 and len(value) <= 1000:
        return all(_immutable(item, own_types, depth + 1) for item in value)
    return False


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two fingerprints, by name (a new or removed global counts)."""
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
