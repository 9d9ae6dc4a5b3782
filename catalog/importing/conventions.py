"""The four code conventions an imported env may follow, and the class each becomes for ClassRuntime.

- `class`: a class whose instance attributes are the state and whose public methods are tools
  (EnvScaler/BFCL style); used as it is.
- `tool_classes`: one class per tool with a static `invoke(data, **kwargs)` over one shared data
  dict and `get_info()` returning the OpenAI tool schema (tau-bench style).
- `toolkit`: a class whose tool methods are marked by a decorator (`@is_tool(...)`, tau2-bench
  style), constructed with a typed pydantic database.
- `functions`: plain module-level functions over a module-level dict.

`detect` reads source (ast, no code runs) to pick the convention and its entry at import;
`env_class` turns a loaded module into one class ClassRuntime runs: instance attributes are the
state collections (the data dict's keys, the database's fields, the module dict's keys) and
methods are the tools with their original signatures and docstrings, so tool schemas stay right
(`tool_classes` take theirs from `get_info()`, carried in `__envforge_schema__`).
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, get_args

from catalog import pyast
from catalog.errors import EnvforgeError
from catalog.models import Convention

__all__ = ["CONVENTIONS", "ConventionError", "Detected", "detect", "env_class", "SCHEMA_ATTR"]

CONVENTIONS: tuple[Convention, ...] = ("class", "tool_classes", "toolkit", "functions")
SCHEMA_ATTR = "__envforge_schema__"
_PLAIN_DECORATORS = {"staticmethod", "classmethod", "property", "abstractmethod", "cached_property", "wraps",
                     "overload", "override", "lru_cache", "cache", "setter", "getter", "deleter"}
_DB_ATTR = "_envforge_db"


class ConventionError(ValueError, EnvforgeError):
    """Code does not follow the convention asked for (or none); the message says what was found."""


@dataclass
class Detected:
    """What `detect` found: the convention, its entry and the syntax trees holding the tools."""

    convention: Convention
    entry: str | None
    name: str
    doc: str = ""
    scopes: Sequence[ast.AST] = field(default_factory=list)


# --- reading source (import time: no code runs) ------------------------------------------------
def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def marked_tools(node: ast.ClassDef) -> list[str]:
    """Public methods of a toolkit class marked by its tool decorator (the one most methods carry)."""
    methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
               and not s.name.startswith("_")]
    marks: Counter[str] = Counter()
    for method in methods:
        for name in {_decorator_name(d) for d in method.decorator_list} - _PLAIN_DECORATORS - {""}:
            marks[name] += 1
    if not marks:
        return []
    marker = max(sorted(marks), key=lambda m: marks[m])
    return [m.name for m in methods if marker in {_decorator_name(d) for d in m.decorator_list}]


def _methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {s.name: s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _is_tool_class(node: ast.ClassDef) -> bool:
    methods = _methods(node)
    return "invoke" in methods and "get_info" in methods


def _takes_db(node: ast.ClassDef) -> bool:
    init = _methods(node).get("__init__")
    if init is not None and any(a.arg == "db" for a in init.args.args[1:] + init.args.kwonlyargs):
        return True
    return any(isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == "db"
               for s in node.body)


def _class_doc(node: ast.ClassDef | ast.Module) -> str:
    return (ast.get_docstring(node) or "").strip()


def _find_tool_classes(tree: ast.Module, others: list[ast.Module], wanted: str | None) -> Detected:
    here = [n for n in tree.body if isinstance(n, ast.ClassDef) and _is_tool_class(n)]
    imported = {alias.asname or alias.name for n in tree.body if isinstance(n, ast.ImportFrom) for alias in n.names}
    there = [n for other in others for n in other.body
             if isinstance(n, ast.ClassDef) and _is_tool_class(n) and n.name in imported]
    classes = here + there
    bases = {_decorator_name(b) for c in classes for b in c.bases}
    concrete = [c for c in classes if c.name not in bases]
    if not concrete:
        raise ConventionError("no tool classes (a class per tool with invoke(data, ...) and get_info())")
    lists = [n.targets[0].id for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and isinstance(n.value, (ast.List, ast.Tuple))
             and n.value.elts and all(isinstance(e, ast.Name) and e.id in {c.name for c in concrete}
                                      for e in n.value.elts)]
    entry = wanted or (lists[0] if lists else None)
    return Detected("tool_classes", entry, entry or "Tools", _class_doc(tree), list(concrete))


def _find_toolkit(tree: ast.Module, wanted: str | None) -> Detected:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and marked_tools(n)
               and (_takes_db(n) or n.name == wanted)]
    if wanted:
        classes = [c for c in classes if c.name == wanted]
    if len(classes) != 1:
        names = [c.name for c in classes]
        raise ConventionError("no toolkit class (a class constructed with a db whose tool methods carry a decorator "
                              "such as @is_tool)" if not names else f"several toolkit classes {names}: pass --class NAME")
    return Detected("toolkit", classes[0].name, classes[0].name, _class_doc(classes[0]), [classes[0]])


def _find_class(tree: ast.Module, wanted: str | None) -> Detected:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if wanted:
        found = [c for c in classes if c.name == wanted]
        if not found:
            raise ConventionError(f"no class {wanted!r}; the module defines {[c.name for c in classes]}")
        return Detected("class", wanted, wanted, _class_doc(found[0]), found)
    candidates = [c for c in classes if any(not n.startswith("_") for n in _methods(c))]
    if len(candidates) != 1:
        raise ConventionError(f"cannot tell which class is the env: {[c.name for c in candidates] or 'none with public methods'}"
                              + ("; pass --class NAME" if candidates else ""))
    return Detected("class", candidates[0].name, candidates[0].name, _class_doc(candidates[0]), candidates)


def _module_dicts(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None and (
                isinstance(value, (ast.Dict, ast.DictComp)) or isinstance(value, ast.Call)):
            names.append(target.id)
    return names


def _public_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")]


def _find_functions(tree: ast.Module, wanted: str | None) -> Detected:
    functions = _public_functions(tree)
    if not functions:
        raise ConventionError("no public module-level functions")
    dicts = _module_dicts(tree)
    uses: Counter[str] = Counter()
    for function in functions:
        used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
        for name in dicts:
            uses[name] += name in used
    candidates = [n for n in dicts if uses[n]] if not wanted else [n for n in dicts if n == wanted]
    if not candidates:
        raise ConventionError(f"no module-level dict named {wanted!r}" if wanted else
                              "no module-level dict that the functions use as their state")
    entry = max(candidates, key=lambda n: uses[n])
    return Detected("functions", entry, entry, _class_doc(tree), [tree])


def detect(tree: ast.Module, others: list[ast.Module], *, convention: Convention | None = None,
           wanted: str | None = None) -> Detected:
    """The convention `tree` follows (the one forced, else the first that fits, in CONVENTIONS order).

    `others` are the local modules it imports (tool classes may live there); `wanted` names the
    entry (a class, a tool list or the state dict). Raises ConventionError saying what was found.
    """
    finders: dict[Convention, Callable[[], Detected]] = {
        "tool_classes": lambda: _find_tool_classes(tree, others, wanted),
        "toolkit": lambda: _find_toolkit(tree, wanted),
        "class": lambda: _find_class(tree, wanted),
        "functions": lambda: _find_functions(tree, wanted),
    }
    if convention is not None:
        try:
            return finders[convention]()
        except ConventionError as exc:
            fits = [c for c in ("tool_classes", "toolkit", "class", "functions") if c != convention and _fits(finders[c])]
            hint = f"; it looks like --convention {fits[0]}" if fits else ""
            raise ConventionError(f"not the {convention} convention: {exc}{hint}") from None
    problems = []
    for name in ("tool_classes", "toolkit", "class", "functions"):
        try:
            return finders[name]()
        except ConventionError as exc:
            problems.append(f"{name}: {exc}")
            if name == "class" and "pass --class" in str(exc):
                raise
    raise ConventionError("no known convention fits (" + "; ".join(problems) + ")")


def _fits(finder: Callable[[], Detected]) -> bool:
    try:
        finder()
    except ConventionError:
        return False
    return True


# --- building the class ClassRuntime runs (inside the worker: the module is loaded) ----------
def env_class(module: ModuleType, convention: Convention, entry: str | None) -> type:
    """The class ClassRuntime runs for `module` written in `convention`; see the module docstring."""
    if convention == "class":
        found = getattr(module, entry or "", None)
        if not isinstance(found, type):
            raise ConventionError(f"{module.__name__} has no class {entry!r}")
        return found
    if convention == "tool_classes":
        return _tool_classes_env(module, entry)
    if convention == "toolkit":
        return _toolkit_env(module, entry)
    if convention == "functions":
        return _functions_env(module, entry)
    raise ConventionError(f"unknown convention {convention!r}; known: {', '.join(CONVENTIONS)}")


def _state_of(instance: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


def _write_back(instance: Any, data: dict[str, Any]) -> None:
    """Collections a tool rebound, added or removed at the top of the shared dict become attributes."""
    current = _state_of(instance)
    for key, value in data.items():
        if current.get(key, data) is not value:
            setattr(instance, key, value)
    for key in current.keys() - data.keys():
        delattr(instance, key)


def _load_attributes(self: Any, config: dict[str, Any]) -> None:
    for key, value in config.items():
        setattr(self, key, value)


def _no_arguments(self: Any) -> None:
    """Built empty; `_load_scenario` loads the state."""


def _with_self(function: Callable[..., Any], drop_first: bool) -> inspect.Signature:
    """The tool's signature as a method: `self`, then its parameters with their annotations resolved."""
    signature = inspect.signature(function)
    hints = _hints(function)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
    if drop_first and params:
        params = params[1:]
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return signature.replace(parameters=[self_param, *params])


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:
        return dict(getattr(function, "__annotations__", {}))


def _shaped(method: Callable[..., Any], name: str, original: Callable[..., Any], drop_first: bool,
            doc: str | None, schema: dict[str, Any] | None = None) -> Callable[..., Any]:
    """Give `method` the tool's name, signature (self first), annotations and docstring."""
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    setattr(method, "__signature__", _with_self(original, drop_first))  # noqa: B010 (mypy: no such attribute)
    hints = _hints(original)
    if drop_first:
        first = next(iter(inspect.signature(original).parameters), None)
        hints.pop(first or "", None)
    method.__annotations__ = hints
    if schema is not None:
        setattr(method, SCHEMA_ATTR, schema)
    return method


# tool_classes ---------------------------------------------------------------------------------
def _is_tool_type(value: Any) -> bool:
    return isinstance(value, type) and callable(getattr(value, "invoke", None)) and \
        callable(getattr(value, "get_info", None))


def _tool_types(module: ModuleType, entry: str | None) -> list[type]:
    listed = getattr(module, entry, None) if entry else None
    if isinstance(listed, (list, tuple)) and listed and all(_is_tool_type(t) for t in listed):
        return list(listed)
    lists = [v for v in vars(module).values() if isinstance(v, (list, tuple)) and v and all(map(_is_tool_type, v))]
    if lists:
        return list(max(lists, key=len))
    found = [v for v in vars(module).values() if _is_tool_type(v) and not inspect.isabstract(v)]
    return [t for t in found if not any(o is not t and issubclass(o, t) for o in found)]


def _tool_classes_env(module: ModuleType, entry: str | None) -> type:
    namespace: dict[str, Any] = {"__module__": module.__name__, "__doc__": module.__doc__,
                                 "__init__": _no_arguments, "_load_scenario": _load_attributes}
    for tool in _tool_types(module, entry):
        info = tool.get_info()  # type: ignore[attr-defined]  # a tool class: _is_tool_type checked it has one
        schema = info.get("function", info) if isinstance(info, dict) else None
        if not isinstance(schema, dict) or not isinstance(schema.get("name"), str):
            raise ConventionError(f"{tool.__name__}.get_info() gives no function name")
        invoke = tool.invoke  # type: ignore[attr-defined]  # likewise

        def method(self: Any, *args: Any, _invoke: Callable[..., Any] = invoke, **kwargs: Any) -> Any:
            data = _state_of(self)
            try:
                return _invoke(data, *args, **kwargs)
            finally:
                _write_back(self, data)

        namespace[schema["name"]] = _shaped(method, schema["name"], invoke, True, schema.get("description"), schema)
    if len(namespace) == 4:
        raise ConventionError(f"{module.__name__} has no tool classes")
    return type(entry or "Tools", (), namespace)


# toolkit --------------------------------------------------------------------------------------
class _Hidden:
    """A public method of the toolkit that is not a tool: bound on instances, not a function on the class."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else self.function.__get__(instance, owner)


def _database_type(toolkit: type) -> Any:
    from pydantic import BaseModel

    for hints in (_hints(vars(toolkit).get("__init__") or object.__init__), _hints(toolkit)):
        annotation = hints.get("db")
        for candidate in (annotation, *get_args(annotation)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                return candidate
    raise ConventionError(f"{toolkit.__name__}: cannot tell its database class (annotate `db` with a pydantic model)")


def _decorators(function: Callable[..., Any]) -> set[str]:
    """Names of the decorators on a function, read from its source (decorators leave no trace otherwise)."""
    try:
        tree = pyast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return set()
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    return {_decorator_name(d) for d in node.decorator_list} - _PLAIN_DECORATORS - {""}


def _toolkit_tools(toolkit: type) -> list[str]:
    """Public methods carrying the toolkit's tool decorator (the one most public methods carry), in definition order."""
    order = [n for klass in reversed(toolkit.__mro__) for n in vars(klass)]
    members = sorted(((n, f) for n, f in inspect.getmembers(toolkit, callable)
                      if not n.startswith("_") and inspect.isfunction(f)), key=lambda item: order.index(item[0]))
    marks = {name: _decorators(function) for name, function in members}
    counts = Counter(mark for found in marks.values() for mark in found)
    if not counts:
        return []
    marker = max(sorted(counts), key=lambda m: counts[m])
    return [name for name, _ in members if marker in marks[name]]


def _toolkit_env(module: ModuleType, entry: str | None) -> type:
    toolkit = getattr(module, entry or "", None)
    if not isinstance(toolkit, type):
        raise ConventionError(f"{module.__name__} has no toolkit class {entry!r}")
    database = _database_type(toolkit)
    tools = _toolkit_tools(toolkit)
    if not tools:
        raise ConventionError(f"{toolkit.__name__} has no decorated tool methods")
    fields = list(database.model_fields)

    def get_db(self: Any) -> Any:
        db = self.__dict__[_DB_ATTR]
        for name in fields:  # the instance's attributes are the truth: rollbacks and tracking act there
            if name in self.__dict__:
                db.__dict__[name] = self.__dict__[name]
        return db

    def set_db(self: Any, db: Any) -> None:
        self.__dict__[_DB_ATTR] = db
        for name in fields:
            setattr(self, name, db.__dict__[name])

    def sync(self: Any) -> None:
        db = self.__dict__.get(_DB_ATTR)
        for name in fields if db is not None else ():
            if db.__dict__.get(name) is not self.__dict__.get(name):
                setattr(self, name, db.__dict__[name])

    def load(self: Any, config: dict[str, Any]) -> None:
        initialise: Callable[..., None] = getattr(toolkit, "__init__")  # noqa: B009 (mypy: unsound on instances)
        initialise(self, database.model_validate(config))

    namespace: dict[str, Any] = {"__module__": toolkit.__module__, "__doc__": toolkit.__doc__,
                                 "__init__": _no_arguments, "_load_scenario": load, "db": property(get_db, set_db)}
    for name, member in inspect.getmembers(toolkit, inspect.isfunction):
        if name.startswith("_"):
            continue
        if name not in tools:
            namespace[name] = _Hidden(member)
            continue

        def method(self: Any, *args: Any, _tool: Callable[..., Any] = member, **kwargs: Any) -> Any:
            try:
                return _tool(self, *args, **kwargs)
            finally:
                sync(self)

        namespace[name] = _shaped(method, name, member, True, member.__doc__)
    order = {name: i for i, name in enumerate(tools)}
    ordered = dict(sorted(namespace.items(), key=lambda item: order.get(item[0], -1)))
    return type(toolkit.__name__, (toolkit,), ordered)


# functions ------------------------------------------------------------------------------------
def _functions_env(module: ModuleType, entry: str | None) -> type:
    shared = getattr(module, entry or "", None)
    if not isinstance(shared, dict):
        raise ConventionError(f"{module.__name__} has no module-level dict {entry!r}")
    pristine = copy.deepcopy(shared)
    exported = getattr(module, "__all__", None)
    functions = [(n, f) for n, f in vars(module).items() if inspect.isfunction(f) and not n.startswith("_")
                 and f.__module__ == module.__name__ and (exported is None or n in exported)]

    def load(self: Any, config: dict[str, Any]) -> None:
        _load_attributes(self, config if config else copy.deepcopy(pristine))

    namespace: dict[str, Any] = {"__module__": module.__name__, "__doc__": module.__doc__,
                                 "__init__": _no_arguments, "_load_scenario": load}
    for name, function in functions:
        def method(self: Any, *args: Any, _function: Callable[..., Any] = function, **kwargs: Any) -> Any:
            data = _state_of(self)
            setattr(module, entry or "", data)  # the functions read the module global: point it at the state
            try:
                return _function(*args, **kwargs)
            finally:
                current = getattr(module, entry or "", data)
                _write_back(self, current if isinstance(current, dict) else data)

        namespace[name] = _shaped(method, name, function, False, function.__doc__)
    if len(namespace) == 4:
        raise ConventionError(f"{module.__name__} has no public functions")
    return type(module.__name__.rsplit(".", 1)[-1].title().replace("_", ""), (), namespace)
