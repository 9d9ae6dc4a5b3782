"""Argument type checks shared by the runtimes, the spec interpreter and the verifier's generator.

A call whose argument does not fit the tool's type hint (10.5 for an `int`, 0 for a `List[str]`)
is ill-typed. Synthesized envs (strict runtimes) refuse it as an invalid action, so an `int`
column never silently stores a float; imported envs (faithful runtimes) run it as Python would
and the verifier reports it. Both need the same verdict, so every reader calls this module.

Hints are compiled once into a small `Form` tree: simple types, `list[X]`/`List[X]`/`Sequence`,
`dict[K, V]`, `set[X]`, `tuple[...]`, `Optional`, `Union`/`X | Y`, `Literal`, `Any`. String hints
(`from __future__ import annotations`, or the spec's annotation text) are parsed with `ast`, never
evaluated, and their names resolved in the module's globals when given. Anything else (a class
of the env, a pydantic model, an unresolvable name) is unknown and accepted: no check beats a
wrong one. JSON has no tuples or sets, so a list is accepted where either is expected.

>>> type_problem("amount", "int", 10.5)
'amount must be an integer, got 10.5'
>>> type_problem("amount", "float", 3) is None
True
>>> type_problem("note", "str | None", None) is None
True
>>> type_problem("stocks", "List[str]", 0)
'stocks must be a list, got 0'
>>> type_problem("stocks", "list[str]", ["A", 1])
'stocks[1] must be a string, got 1'
"""

from __future__ import annotations

import ast
import builtins
import collections.abc as abc
import functools
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any

from catalog import pyast

__all__ = ["Form", "compile_annotation", "form_problem", "type_problem", "describe", "ANY"]


@dataclass(frozen=True)
class Form:
    """A compiled hint.

    `kind` is one of: any, int, float, str, bool, none, list, set, tuple, dict, union, literal.
    `args` holds the element forms (list/set: 1; dict: key, value; tuple: the items, or one item
    when `variadic`; union: the members) or, for literal, the allowed values.
    """

    kind: str
    args: tuple[Any, ...] = ()
    variadic: bool = False


ANY = Form("any")
_SIMPLE = {int: "int", float: "float", str: "str", bool: "bool", type(None): "none", complex: "float"}
_NAMES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false", "none": "null",
          "list": "a list", "set": "a list", "tuple": "a list", "dict": "an object"}
_LISTS = {list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection}
_SETS = {set, frozenset, abc.Set, abc.MutableSet}
_DICTS = {dict, abc.Mapping, abc.MutableMapping}
# Names a string hint may use without the module's globals (the spec interpreter has none).
_KNOWN: dict[str, Any] = {
    **{name: getattr(builtins, name) for name in ("int", "float", "str", "bool", "complex", "list", "dict", "set",
                                                  "frozenset", "tuple", "object", "bytes")},
    **{name: getattr(typing, name) for name in ("Any", "List", "Dict", "Set", "FrozenSet", "Tuple", "Optional",
                                                "Union", "Literal", "Sequence", "Mapping", "MutableMapping",
                                                "MutableSequence", "Iterable", "Collection", "Annotated")},
    "typing": typing, "None": None,
}


def compile_annotation(annotation: Any, namespace: dict[str, Any] | None = None) -> Form:
    """The form of a hint (a typing object, a class, or its source text resolved in `namespace`)."""
    if isinstance(annotation, str) and namespace is None:
        return _text_form(annotation)
    try:
        if isinstance(annotation, str):
            return _from_node(pyast.parse(annotation.strip(), mode="eval").body, namespace, 0)
        return _from_object(annotation, namespace, 0)
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return ANY


@functools.lru_cache(maxsize=4096)
def _text_form(text: str) -> Form:
    """Namespace-free texts (the spec's annotations) are compiled once."""
    try:
        return _from_node(pyast.parse(text.strip(), mode="eval").body, None, 0)
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return ANY


def _lookup(name: str, namespace: dict[str, Any] | None) -> Any:
    if namespace is not None and name in namespace:
        return namespace[name]
    if name in _KNOWN:
        return _KNOWN[name]
    raise ValueError(name)


def _resolve(node: ast.expr, namespace: dict[str, Any] | None) -> Any:
    """The object a name or dotted name denotes (attributes only of modules), or ValueError."""
    if isinstance(node, ast.Name):
        return _lookup(node.id, namespace)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace)
        if isinstance(base, types.ModuleType):
            return getattr(base, node.attr)
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    raise ValueError(ast.dump(node))


def _from_node(node: ast.expr, namespace: dict[str, Any] | None, depth: int) -> Form:
    if depth > 20:
        return ANY
    if isinstance(node, ast.Constant):
        if node.value is None:
            return Form("none")
        if isinstance(node.value, str):  # a quoted forward reference
            return _from_node(pyast.parse(node.value.strip(), mode="eval").body, namespace, depth + 1)
        return ANY
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([_from_node(node.left, namespace, depth + 1), _from_node(node.right, namespace, depth + 1)])
    if isinstance(node, ast.Subscript):
        try:
            origin = _resolve(node.value, namespace)
        except (ValueError, AttributeError):
            return ANY
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin is typing.Literal:
            values = []
            for item in items:
                if not isinstance(item, ast.Constant):
                    return ANY  # an enum member or a name: not checked
                values.append(item.value)
            return Form("literal", tuple(values))
        if origin is typing.Annotated:
            return _from_node(items[0], namespace, depth + 1)
        inner = [_from_node(item, namespace, depth + 1) if not _is_ellipsis(item) else None for item in items]
        return _generic(origin, inner)
    try:
        return _from_object(_resolve(node, namespace), namespace, depth + 1)
    except (ValueError, AttributeError):
        return ANY


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _generic(origin: Any, inner: list[Form | None]) -> Form:
    """The form of `origin[inner...]` (None in `inner` stands for `...`)."""
    forms = [f if f is not None else ANY for f in inner]
    if origin is typing.Union:
        return _union(forms)
    if origin is typing.Optional:
        return _union([forms[0], Form("none")])
    origin = typing.get_origin(origin) or origin
    if origin in _LISTS:
        return Form("list", (forms[0] if forms else ANY,))
    if origin in _SETS:
        return Form("set", (forms[0] if forms else ANY,))
    if origin in _DICTS:
        return Form("dict", (forms[0], forms[1]) if len(forms) == 2 else (ANY, ANY))
    if origin is tuple:
        if len(inner) == 2 and inner[1] is None:
            return Form("tuple", (forms[0],), variadic=True)
        if inner == [] or (len(inner) == 1 and isinstance(inner[0], Form) and inner[0].kind == "tuple"):
            return Form("tuple", (), variadic=False)
        return Form("tuple", tuple(forms))
    return ANY


def _union(members: list[Form]) -> Form:
    flat: list[Form] = []
    for member in members:
        if member.kind == "any":
            return ANY
        for item in (member.args if member.kind == "union" else (member,)):
            if item not in flat:
                flat.append(item)
    return flat[0] if len(flat) == 1 else Form("union", tuple(flat))


def _from_object(hint: Any, namespace: dict[str, Any] | None, depth: int) -> Form:
    if depth > 20 or hint is typing.Any or hint is object:
        return ANY
    if hint is None or hint is type(None):
        return Form("none")
    if isinstance(hint, str):
        return _from_node(pyast.parse(hint.strip(), mode="eval").body, namespace, depth + 1)
    if isinstance(hint, typing.ForwardRef):
        return _from_node(pyast.parse(hint.__forward_arg__.strip(), mode="eval").body, namespace, depth + 1)
    if isinstance(hint, type) and hint in _SIMPLE:
        return Form(_SIMPLE[hint])
    supertype = getattr(hint, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return _from_object(supertype, namespace, depth + 1)
    origin = typing.get_origin(hint)
    if origin is None:
        if hint in _LISTS or hint in (typing.List, typing.Sequence):  # noqa: UP006 (bare typing aliases are hints too)
            return Form("list", (ANY,))
        if hint in _SETS or hint in (typing.Set, typing.FrozenSet):  # noqa: UP006
            return Form("set", (ANY,))
        if hint in _DICTS or hint in (typing.Dict, typing.Mapping):  # noqa: UP006
            return Form("dict", (ANY, ANY))
        if hint is tuple or hint is typing.Tuple:  # noqa: UP006
            return Form("tuple", (ANY,), variadic=True)
        return ANY  # a class of the env, a TypeVar, a pydantic model: not checked
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return Form("literal", tuple(args))
    if origin is typing.Annotated:
        return _from_object(args[0], namespace, depth + 1)
    if origin is typing.Union or origin is types.UnionType:
        return _union([_from_object(a, namespace, depth + 1) for a in args])
    inner: list[Form | None] = [None if a is Ellipsis else _from_object(a, namespace, depth + 1) for a in args]
    if origin is tuple and args == ((),):
        return Form("tuple", ())
    return _generic(origin, inner)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fits_literal(value: Any, allowed: tuple[Any, ...]) -> bool:
    return any(type(value) is type(v) and value == v for v in allowed) or \
        any(getattr(v, "value", v) == value and type(getattr(v, "value", v)) is type(value) for v in allowed)


def form_problem(name: str, form: Form, value: Any) -> str | None:
    """Why `value` does not fit `form` (the message names the path of the first misfit), or None."""
    kind = form.kind
    if kind == "any":
        return None
    if kind == "union":
        if all(form_problem(name, member, value) is not None for member in form.args):
            return f"{name} must be {describe(form)}, got {_show(value)}"
        return None
    if kind == "literal":
        return None if _fits_literal(value, form.args) else \
            f"{name} must be one of {', '.join(map(repr, form.args))}, got {_show(value)}"
    simple = {"int": _is_int(value), "float": isinstance(value, (int, float)) and not isinstance(value, bool),
              "str": isinstance(value, str), "bool": isinstance(value, bool), "none": value is None}
    if kind in simple:
        return None if simple[kind] else f"{name} must be {_NAMES[kind]}, got {_show(value)}"
    if kind == "dict":
        if not isinstance(value, dict):
            return f"{name} must be {_NAMES[kind]}, got {_show(value)}"
        for key, item in value.items():
            problem = form_problem(f"{name} key {key!r}", form.args[0], key) or \
                form_problem(f"{name}[{key!r}]", form.args[1], item)
            if problem:
                return problem
        return None
    containers: tuple[type, ...] = {"list": (list, tuple), "set": (list, tuple, set, frozenset),
                                    "tuple": (list, tuple)}[kind]
    if not isinstance(value, containers):
        return f"{name} must be {_NAMES[kind]}, got {_show(value)}"
    items: list[Any] = list(value)  # type: ignore[call-overload]  # a list, tuple or set here
    if kind == "tuple" and not form.variadic:
        if len(items) != len(form.args):
            return f"{name} must have {len(form.args)} items, got {len(items)}"
        pairs = list(zip(form.args, items, strict=True))
    else:
        pairs = [(form.args[0], item) for item in items]
    for index, (inner, item) in enumerate(pairs):
        problem = form_problem(f"{name}[{index}]", inner, item)
        if problem:
            return problem
    return None


def describe(form: Form) -> str:
    """English for a form, as the messages use it: 'an integer or null', 'a list of strings'."""
    if form.kind == "union":
        return " or ".join(describe(m) for m in form.args)
    if form.kind == "literal":
        return "one of " + ", ".join(map(repr, form.args))
    if form.kind in ("list", "set") and form.args and form.args[0].kind != "any":
        return f"a list of {describe(form.args[0])}"
    return _NAMES.get(form.kind, "anything")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def type_problem(name: str, annotation: Any, value: Any, namespace: dict[str, Any] | None = None) -> str | None:
    """Why `value` does not fit parameter `name` annotated `annotation`, or None if it does."""
    if annotation is None or annotation is inspect.Parameter.empty:
        return None
    return form_problem(name, compile_annotation(annotation, namespace), value)
