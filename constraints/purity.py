"""Which method calls on a state value are proven not to write, read from source (no execution).

A class env's state holds objects, and a tool may change one through its own method
(`self._current_dir.mkdir(name)`); the object may also be part of the public state. A call of
a method on a state value counts as a write unless the method is proven pure: a method of the
builtin containers and scalars that changes nothing (`get`, `lower`, `count`...), or a method
every class of the module that defines it writes nothing with (no store into `self`, an
argument or a global; only pure calls). Anything the check cannot follow is impure, so a tool
is labelled `read` only when no write is possible.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any

from constraints.ir import Node, walk

__all__ = ["MUTATORS", "PURE_BUILTIN_METHODS", "Purity"]

MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort",
                      "reverse", "popitem", "add", "discard", "difference_update", "intersection_update",
                      "symmetric_difference_update"})
"""The methods of list, dict and set that change their receiver."""

_IMMUTABLE = (str, bytes, int, float, complex, tuple, frozenset, range, dt.date, dt.datetime, dt.time, dt.timedelta,
              decimal.Decimal)
PURE_BUILTIN_METHODS = frozenset(name for kind in (*_IMMUTABLE, dict, list, set) for name in dir(kind)
                                 if not name.startswith("_")) - MUTATORS
"""Public methods of the builtin scalars and containers that change nothing."""

# Builtin functions that run no code of the env's and change none of their arguments.
_PURE_FUNCTIONS = frozenset({"len", "str", "int", "float", "bool", "repr", "round", "abs", "isinstance", "sum", "any",
                             "all", "range", "sorted", "reversed", "enumerate", "zip", "min", "max", "list", "dict",
                             "set", "tuple", "frozenset", "format", "divmod", "type", "ord", "chr", "hash", "iter",
                             "next", "print"})
_FRESH = frozenset({"list", "dict", "set", "tuple", "comp", "const", "fstr"})  # expressions that build a new value


class Purity:
    """The method purity of one module's classes (the env class's own methods excluded)."""

    def __init__(self, methods: Mapping[str, list[dict[str, Any]]], functions: Mapping[str, dict[str, Any]],
                 classes: set[str]) -> None:
        """Hold the module's parts the check follows.

        `methods`: every definition of each method name in the module's other classes (IR);
        `functions`: the module functions; `classes`: the class names (constructing one writes only the new object).
        """
        self.methods, self.functions, self.classes = methods, functions, classes
        self._memo: dict[int, bool] = {}
        self._visiting: set[int] = set()

    def method_pure(self, name: str) -> bool:
        """Whether calling a method of this name on a state value changes nothing, proven."""
        definitions = self.methods.get(name)
        if definitions:
            return all(self._pure(d) for d in definitions)
        return name in PURE_BUILTIN_METHODS

    def _pure(self, function: dict[str, Any]) -> bool:
        key = id(function)
        if key in self._memo:
            return self._memo[key]
        if key in self._visiting:
            return False  # recursion: not proven (pessimistic, so a memoized answer is never too kind)
        self._visiting.add(key)
        try:
            result = self._body_pure(function["body"])
        finally:
            self._visiting.discard(key)
        self._memo[key] = result
        return result

    def _body_pure(self, body: list[Node]) -> bool:
        fresh = _fresh_locals(body)
        for node in walk(body):
            if node.get("s") == "unsupported" or node.get("t") == "unsupported":
                return False
            if node.get("s") in ("assign", "del"):
                if not all(_local_target(t, fresh) for t in node["targets"]):
                    return False
            elif node.get("s") == "augassign":
                if not _local_target(node["target"], fresh):
                    return False
            elif node.get("t") == "call" and not self._call_pure(node, fresh):
                return False
        return True

    def _call_pure(self, call: Node, fresh: set[str]) -> bool:
        fn = call["fn"]
        if fn.get("t") == "name":
            name = fn["id"]
            if name in self.functions:
                return self._pure(self.functions[name])
            return name in _PURE_FUNCTIONS or name in self.classes
        if fn.get("t") == "attr":
            name = fn["name"]
            root = _root(fn["obj"])
            if name in MUTATORS and root.get("t") == "name" and root["id"] in fresh:
                return True  # filling a list the method built itself
            definitions = self.methods.get(name)
            if definitions:
                return all(self._pure(d) for d in definitions)
            return name in PURE_BUILTIN_METHODS
        return False


def _root(node: Node) -> Node:
    while node.get("t") in ("attr", "sub"):
        node = node["obj"]
    return node


def _local_target(target: Node, fresh: set[str]) -> bool:
    """A store that changes only the method's own locals (a name, or into a value it built)."""
    if target.get("t") == "name":
        return True
    if target.get("t") in ("tuple", "list"):
        return all(_local_target(t, fresh) for t in target.get("items", []))
    root = _root(target)
    return target.get("t") in ("attr", "sub") and root.get("t") == "name" and root["id"] in fresh


def _fresh_locals(body: list[Node]) -> set[str]:
    """Local names every assignment of which builds a new value (`out = []`): storing into them writes no state."""
    bound: dict[str, bool] = {}
    for node in walk(body):
        if node.get("s") == "assign":
            for target in node["targets"]:
                if target.get("t") == "name":
                    value = node["value"]
                    built = value.get("t") in _FRESH or (value.get("t") == "call" and value["fn"].get("t") == "name"
                                                        and value["fn"]["id"] in ("list", "dict", "set"))
                    bound[target["id"]] = bound.get(target["id"], True) and built
        elif node.get("s") == "for":
            for name in walk(node["target"]):
                if name.get("t") == "name":
                    bound[name["id"]] = False
    return {name for name, built in bound.items() if built}
