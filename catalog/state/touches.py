"""Which parts of a class env's state one tool can write, proven from its code, or None when unsure.

A call of a class env is diffed against the state before it; when a tool is proven to write only
under some paths (`self.data["orders"][order_id]`), only those subtrees need encoding and diffing
(catalog/state/_tracking.py `tracked_encode`). The proof is a flow-insensitive taint analysis of the
method's AST: a value reached from `self` keeps the longest access path known for it; every write
through such a value (item or attribute store, delete, a mutating container method) is recorded at
that path. Anything the analysis cannot follow makes it unsure (None), and the runtime falls back to
the full diff: `self` used bare or its methods called (helpers are not followed), attributes of a
state value read (a property may run code), methods other than the builtin containers' and str's,
a state value passed to anything but a pure builtin, lambdas, nested functions, `global`,
walrus, `yield`, decorators. The runtime adds the checks only values can answer (state kept as
plain JSON, no shared containers: aliasing), so a wrong guess here costs speed, never a delta.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Param", "StateKey", "ToolTouches", "tool_touches"]


@dataclass(frozen=True)
class Param:
    """A key given by the tool's argument `name` (never reassigned in the tool's body)."""

    name: str


@dataclass(frozen=True)
class StateKey:
    """A key read from the state at `source` (`self.users[order["user_id"]]`), a path of constants and Params.

    Resolved from the state before the call, which is the value the tool read as long as no
    write of the call can reach `source` (ToolTouches.resolve checks) and nothing was aliased in
    (the runtime checks); else the write path ends before it.
    """

    source: tuple[Any, ...]


Key = str | int | Param | StateKey
Path = tuple[Any, ...]  # (attribute name, key, key...)

_READERS = frozenset({"get", "keys", "values", "items", "copy", "count", "index", "startswith", "endswith", "lower",
                      "upper", "strip", "lstrip", "rstrip", "split", "join", "format", "replace", "find", "isdigit",
                      "isalpha", "isalnum", "title", "capitalize", "casefold", "issubset", "issuperset", "union",
                      "intersection", "difference"})
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
                       "sort", "reverse", "add", "discard", "difference_update", "intersection_update",
                       "symmetric_difference_update"})
_KEYED_MUTATORS = frozenset({"pop", "setdefault"})  # on a dict, `d.pop(k)` writes only under key k
_PURE_TAINTED = frozenset({"list", "dict", "set", "tuple", "frozenset", "sorted", "reversed", "enumerate", "zip",
                           "min", "max", "filter", "iter", "next"})  # results may hold state values
_PURE_FRESH = frozenset({"len", "str", "int", "float", "bool", "repr", "round", "abs", "isinstance", "sum", "any",
                         "all", "range", "hash", "print", "format", "divmod", "type", "id", "ord", "chr"})
_REJECTED = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal, ast.Yield,
             ast.YieldFrom, ast.Await, ast.NamedExpr, ast.AsyncFor, ast.AsyncWith, ast.Match,
             ast.Import, ast.ImportFrom)  # an import binds a module to a local name, past the globals' checks


class _Unsure(Exception):
    """The analysis cannot follow this tool."""


@dataclass(frozen=True)
class ToolTouches:
    """What one tool can touch: the attributes it reads and the paths under which it can write."""

    reads: frozenset[str]
    writes: tuple[Path, ...]

    def resolve(self, arguments: Mapping[str, Any],
                lookup: Callable[[tuple[Any, ...]], Any] | None = None) -> list[tuple[Any, ...]]:
        """The write paths with argument keys filled in (a missing argument ends its path there).

        A StateKey is filled in from `lookup` (the state before the call) when it is text and its
        source lies apart from every write of the call; otherwise its path ends there.
        """
        sources: dict[StateKey, tuple[Any, ...]] = {}
        states: dict[StateKey, str] = {}
        for key in {k for path in self.writes for k in path if isinstance(k, StateKey)} if lookup else ():
            source = _concrete(key.source, arguments, None)
            value = lookup(source) if len(source) == len(key.source) else None  # type: ignore[misc]
            if type(value) is str:
                sources[key], states[key] = source, value
        while True:
            # Sound by the first write in time that reaches a source: every key it used was read before
            # it, from untouched sources, so it is one of these paths, and none of these reaches a source.
            resolved = [_concrete(path, arguments, states) for path in self.writes]
            reached = {key for key in states if any(_overlap(sources[key], path) for path in resolved)}
            if not reached:
                return resolved
            for key in reached:
                del states[key]


def _concrete(path: Path, arguments: Mapping[str, Any], states: dict[StateKey, str] | None) -> tuple[Any, ...]:
    out: list[Any] = []
    for key in path:
        if isinstance(key, Param):
            if key.name not in arguments:
                break
            key = arguments[key.name]
        elif isinstance(key, StateKey):
            if states is None or key not in states:
                break
            key = states[key]
        out.append(key)
    return tuple(out)


def _overlap(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


_HOOKS = ("__getattribute__", "__getattr__", "__setattr__", "__delattr__")


def tool_touches(env_class: type, method: Callable[..., Any]) -> ToolTouches | None:
    """The proven touches of one tool method of `env_class`, or None when the analysis is unsure.

    The source analysed must be the code that runs: it is compiled again and its bytecode compared
    (a file edited after loading, a method set by `exec`, a closure: unsure).
    """
    if any(getattr(env_class, hook, None) is not getattr(object, hook, None) for hook in _HOOKS):
        return None  # attribute access on the instance runs the env's code
    try:
        source = inspect.getsource(method)
        if source[:1].isspace():  # a method: parsed inside a block, so its strings keep their text
            source = "if 1:\n" + source
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    function = tree.body[0] if tree.body else None
    if isinstance(function, ast.If):
        function = function.body[0]
    if not isinstance(function, ast.FunctionDef) or function.decorator_list or not _same_code(source, method):
        return None
    defaults = [*(getattr(method, "__defaults__", None) or ()), *(getattr(method, "__kwdefaults__", None) or {}).values()]
    if not all(_immutable(value) for value in defaults):
        return None  # a mutable default lives across calls: stored into the state once, it is written unseen
    positional = [*function.args.posonlyargs, *function.args.args]
    if not positional:
        return None
    params = [a.arg for a in (*positional[1:], *function.args.kwonlyargs, function.args.vararg, function.args.kwarg)
              if a is not None]
    try:
        return _Analysis(env_class, function, positional[0].arg, params, getattr(method, "__globals__", {})).run()
    except _Unsure:
        return None


def _same_code(source: str, method: Callable[..., Any]) -> bool:
    code = getattr(method, "__code__", None)
    try:
        compiled = compile(source, "<touches>", "exec")
    except (SyntaxError, ValueError):
        return False
    ours = next((c for c in compiled.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name), None) \
        if code is not None else None
    return code is not None and ours is not None and not code.co_freevars and _shape(ours) == _shape(code)


def _shape(code: types.CodeType) -> tuple[Any, ...]:
    """A code object without its positions (the source analysed is dedented): bytecode, names, constants."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else (type(c), c) for c in code.co_consts)
    return code.co_name, code.co_code, code.co_names, code.co_varnames, code.co_cellvars, code.co_freevars, consts


_ANY = "\x00any"  # ends a path that is only a bound: the value lies somewhere below it, keys unknown
# Modules that reach the running program itself (every object, frames, the interpreter): never harmless.
_INTROSPECTIVE = frozenset({"gc", "sys", "inspect", "ctypes", "types", "traceback", "weakref", "builtins", "importlib",
                            "code", "pdb", "bdb", "tracemalloc", "faulthandler", "runpy", "threading", "_thread",
                            "multiprocessing", "concurrent", "asyncio", "signal", "atexit", "pickle", "copyreg"})
_FRAME_ATTRIBUTES = frozenset({"f_locals", "f_globals", "f_back", "f_builtins", "f_code", "tb_frame", "tb_next",
                               "gi_frame", "cr_frame", "ag_frame", "func_globals"})
_UNBOUND = object()


def _stdlib(value: Any) -> bool:
    """A module, class or function of the standard library or the builtins (its code is not the env's)."""
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    if not isinstance(name, str):
        return False
    top = name.partition(".")[0]
    if top == "builtins" and not isinstance(value, types.ModuleType):
        # builtin classes (dict, str) are; builtin functions only if pure (`sorted(x, key=exec)` runs code)
        return isinstance(value, type) or getattr(value, "__name__", None) in _PURE_FRESH | _PURE_TAINTED
    return top in sys.stdlib_module_names and top not in _INTROSPECTIVE


def _immutable(value: Any) -> bool:
    if value is None or type(value) in (str, int, float, bool, bytes, complex):
        return True
    return type(value) in (tuple, frozenset) and all(_immutable(v) for v in value)


def _harmless(value: Any) -> bool:
    """A global whose use cannot reach the state: an immutable scalar, or a stdlib module, class or function."""
    if value is _UNBOUND or _immutable(value):
        return True
    if isinstance(value, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)):
        return _stdlib(value) or _is_plain_exception(value)
    return False


def _below(path: Path | None) -> Path | None:
    """The path of a value somewhere below `path` (an element, a copy's content)."""
    if path is None:
        return None
    return path if path and path[-1] == _ANY else (*path, _ANY)


def _extend(path: Path, key: Key | None) -> Path:
    return path if path and path[-1] == _ANY else (*path, key) if key is not None else (*path, _ANY)


def _strip(path: Path) -> Path:
    return path[:-1] if path and path[-1] == _ANY else path


def _common(a: Path | None, b: Path | None) -> Path | None:
    """The longest path both values lie under (None: untainted)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n] and a[n] != _ANY:
        n += 1
    return (*a[:n], _ANY)


class _Analysis:
    def __init__(self, env_class: type, function: ast.FunctionDef, self_name: str, params: list[str],
                 module_globals: dict[str, Any]) -> None:
        self.env_class = env_class
        self.function = function
        self.self_name = self_name
        self.globals = module_globals
        # The body alone: the signature's annotations and defaults ran once, when the class was made
        # (defaults are checked as values), and a local's annotation is never evaluated.
        nodes = [node for statement in function.body for node in ast.walk(statement)]
        annotations = {id(node) for a in nodes if isinstance(a, ast.AnnAssign) for node in ast.walk(a.annotation)}
        self.nodes = [node for node in nodes if id(node) not in annotations]
        if any(isinstance(node, _REJECTED) for node in self.nodes):
            raise _Unsure
        assigned = {node.id for node in self.nodes if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
        assigned |= {node.name for node in self.nodes if isinstance(node, ast.ExceptHandler) and node.name}
        assigned |= {alias.asname or alias.name for node in self.nodes if isinstance(node, (ast.Import, ast.ImportFrom))
                     for alias in node.names}
        if self_name in assigned:
            raise _Unsure
        self.locals = assigned | set(params)
        self.key_params = {p for p in params if p not in assigned}
        self.paths: dict[str, Path] = {}
        self.reads: set[str] = set()
        self.definite = self._definite(assigned - set(params))
        self.strict = self._definite(assigned - set(params), constants=False)  # state values only: key sources

    # -- locals that only ever hold state values ----------------------------------------------------
    def _definite(self, candidates: set[str], constants: bool = True) -> set[str]:
        """Locals every binding of which is a value of the state (or an immutable constant), never a fresh container.

        Storing into such a local stores into the state, as `self.x[k] = v` does: the runtime checks
        that for aliasing, so the local's own place need not widen to the stored value's.
        """
        bindings: list[tuple[str, ast.expr, bool]] = []  # (name, expression, is an iteration's element)
        handled: set[int] = set()
        for node in self.nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        bindings.append((target.id, node.value, False))
                        handled.add(id(target))
            elif isinstance(node, (ast.For, ast.comprehension)):
                names = [node.target] if isinstance(node.target, ast.Name) else \
                    node.target.elts if isinstance(node.target, ast.Tuple) and _is_items(node.iter) else []
                for target in names:
                    if isinstance(target, ast.Name):
                        bindings.append((target.id, node.iter, True))
                        handled.add(id(target))
        definite = set(candidates)
        definite -= {n.id for n in self.nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                     and id(n) not in handled}
        definite -= {n.name for n in self.nodes if isinstance(n, ast.ExceptHandler) and n.name}
        changed = True
        while changed:  # the greatest set: a value comes from some binding that is not circular
            changed = False
            for name, value, element in bindings:
                if name in definite and not (self._elements_of_state(value, definite, constants) if element
                                             else self._only_state(value, definite, constants)):
                    definite.discard(name)
                    changed = True
        return definite

    def _only_state(self, node: ast.expr, definite: set[str], constants: bool = True) -> bool:
        """`node` is a value of the state (or, with `constants`, an immutable constant or None)."""
        if isinstance(node, ast.Constant):
            return constants
        if isinstance(node, ast.Name):
            return node.id in definite
        if isinstance(node, ast.Attribute):
            return isinstance(node.value, ast.Name) and node.value.id == self.self_name
        if isinstance(node, ast.Subscript):
            return self._only_state(node.value, definite, constants)
        if isinstance(node, ast.IfExp):
            return self._only_state(node.body, definite, constants) and self._only_state(node.orelse, definite,
                                                                                         constants)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and not node.keywords and 1 <= len(node.args) <= (2 if constants else 1):
            # a record or None (no record: indexing it raises, so no key is ever read from it)
            return self._only_state(node.func.value, definite, constants) and all(
                self._only_state(a, definite) for a in node.args[1:])
        return False

    def _elements_of_state(self, node: ast.expr, definite: set[str], constants: bool = True) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("values", "items", "keys") and not node.args and not node.keywords:
            return constants and self._only_state(node.func.value, definite)  # keys() are values of no place
        return self._only_state(node, definite, constants)

    def run(self) -> ToolTouches:
        for _ in range(len(self.nodes) + 2):  # paths only get shorter or appear: a fixpoint is reached
            before = dict(self.paths)
            for node in self.nodes:
                self._bind_flows(node)
            if self.paths == before:
                break
        else:
            raise _Unsure
        writes: set[Path] = set()
        methods = {id(node.func) for node in self.nodes if isinstance(node, ast.Call)}
        methods |= {id(node.value) for node in self.nodes if isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name) and node.value.id == self.self_name}
        for node in self.nodes:
            writes.update(self._writes(node))
            if isinstance(node, ast.expr) and id(node) not in methods and isinstance(getattr(node, "ctx", ast.Load()),
                                                                                     ast.Load):
                self.path(node)  # every expression must be one the analysis follows
        if any(len(w) == 0 for w in writes):
            raise _Unsure
        minimal = [w for w in sorted(writes, key=len) if not any(w[:len(v)] == v and v != w for v in writes)]
        return ToolTouches(frozenset(self.reads), tuple(dict.fromkeys(minimal)))

    # -- values ---------------------------------------------------------------------------------------
    def global_value(self, name: str) -> Any:
        return self.globals[name] if name in self.globals else getattr(builtins, name, _UNBOUND)

    def static(self, node: ast.expr) -> Any:
        """The value of a dotted name rooted at a global (`datetime.datetime`), _UNBOUND for a local root."""
        if isinstance(node, ast.Name):
            return _UNBOUND if node.id in self.locals else self.global_value(node.id)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)  # _UNBOUND: an attribute of a fresh value (`now().year`)
            return _UNBOUND if base is _UNBOUND else getattr(base, node.attr, None)
        return _UNBOUND

    def key(self, node: ast.expr) -> Key | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.key_params:
            return Param(node.id)
        if isinstance(node, ast.Subscript) and self._only_state(node, self.strict, constants=False):
            source = self.path(node)  # `order["user_id"]`, order a record of the state
            if source is not None and not any(k == _ANY or isinstance(k, StateKey) for k in source):
                return StateKey(source)
        return None

    def _all(self, nodes: Iterable[ast.AST | None]) -> Path | None:
        out: Path | None = None
        for node in nodes:
            if isinstance(node, ast.expr):
                out = _common(out, self.path(node))
        return out

    def path(self, node: ast.expr) -> Path | None:  # noqa: C901 - one dispatch over expression kinds
        """Where the value of `node` may lie in the state (None: it holds no state value)."""
        if isinstance(node, ast.Name):
            if node.id == self.self_name:
                raise _Unsure  # `self` used bare: passed on, getattr'd, compared...
            if node.id in self.locals:
                return self.paths.get(node.id)
            if not _harmless(self.global_value(node.id)):
                raise _Unsure  # a module global the env holds (it may alias the state) or its own code
            return None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == self.self_name:
                if hasattr(self.env_class, node.attr):
                    raise _Unsure  # a method, property or class attribute: code may run
                self.reads.add(node.attr)
                return (node.attr,)
            if self.path(node.value) is not None:
                raise _Unsure  # an attribute of a state value (a property may run code)
            if node.attr.startswith("_") or node.attr in _FRAME_ATTRIBUTES:
                raise _Unsure  # `e.__traceback__.tb_frame.f_locals`: the way back to `self`
            static = self.static(node)
            if static is not _UNBOUND and not _harmless(static):
                raise _Unsure
            return None
        if isinstance(node, ast.Subscript):
            base = self.path(node.value)
            self.path(node.slice)
            if base is None:
                return None
            return _extend(base, self.key(node.slice))
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, (ast.Compare, ast.JoinedStr, ast.FormattedValue, ast.UnaryOp, ast.Constant)):
            self._all(ast.iter_child_nodes(node))
            return None
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            self._all(ast.iter_child_nodes(node))
            return _below(self.path(node.elt))
        if isinstance(node, ast.DictComp):
            self._all(ast.iter_child_nodes(node))
            return _below(_common(self.path(node.key), self.path(node.value)))
        if isinstance(node, ast.comprehension):
            return self._all([node.iter, *node.ifs])
        if isinstance(node, ast.IfExp):
            self.path(node.test)
            return _common(self.path(node.body), self.path(node.orelse))
        return _below(self._all(ast.iter_child_nodes(node)))  # literals, BoolOp, BinOp, Starred, Slice: what they hold

    def _call(self, node: ast.Call) -> Path | None:
        arguments = [*node.args, *(k.value for k in node.keywords)]
        tainted = self._all(arguments)
        any_tainted = any(self.path(a) is not None for a in arguments)
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.path(func.value) if not (isinstance(func.value, ast.Name) and func.value.id == self.self_name) \
                else None
            if isinstance(func.value, ast.Name) and func.value.id == self.self_name:
                raise _Unsure  # a method of the env: helpers are not followed
            if base is not None:  # a state value's (or a global's) builtin method: it may return an argument
                if func.attr == "get" and node.args:
                    return _common(_extend(base, self.key(node.args[0])), self._all(
                        [*node.args[1:], *(k.value for k in node.keywords)]))
                if func.attr in _READERS or func.attr in _MUTATORS:
                    return _common(_below(base), tainted)
                raise _Unsure
            if not any_tainted:
                return None  # a method of a fresh local or a stdlib function (globals were checked above)
            if isinstance(func.value, ast.Constant) and func.attr in _READERS:
                return None  # ", ".join(names)
            if isinstance(func.value, ast.Name) and func.value.id in self.locals and func.attr in _MUTATORS:
                return None  # a local container taking state values: bound in _bind_flows
            if func.attr == "deepcopy" and self.static(func.value) is copy:
                return None
            raise _Unsure
        if not isinstance(func, ast.Name) or func.id in self.locals:
            raise _Unsure  # a computed or local callable
        target = self.global_value(func.id)
        if target is getattr(builtins, func.id, _UNBOUND):
            if func.id in _PURE_FRESH:
                return None
            if func.id in _PURE_TAINTED:
                return _below(tainted)
        if _is_plain_exception(target):
            return None
        if not any_tainted and _stdlib(target) and not isinstance(target, types.BuiltinFunctionType):
            return None  # a stdlib function or class given no state value (`uuid4()`, `datetime(...)`)
        raise _Unsure  # the env's own functions and classes are not followed; other builtins may run anything

    # -- flows and writes ---------------------------------------------------------------------------
    def _bind(self, target: ast.expr, path: Path | None) -> None:
        if path is None:
            return
        if isinstance(target, ast.Name):
            old = self.paths.get(target.id)
            self.paths[target.id] = path if target.id not in self.paths else _common(old, path)  # type: ignore[assignment]
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element, path)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, path)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            root = _root(target)
            if isinstance(root, ast.Name) and (root.id == self.self_name or root.id in self.definite):
                return  # a state value stored into the state: aliasing, checked by the runtime
            if isinstance(root, ast.Name) and root.id in self.locals:
                self._bind(root, path)
            else:
                raise _Unsure  # a state value stored into a global
        else:
            raise _Unsure

    def _bind_flows(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, self.path(node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            self._bind(node.target, self.path(node.value))
        elif isinstance(node, (ast.For, ast.comprehension)):
            self._bind(node.target, _below(self.path(node.iter)))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind(node.optional_vars, self.path(node.context_expr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            root = _root(node.func.value)
            if isinstance(root, ast.Name) and root.id in self.definite:
                return  # into the state: aliasing, checked by the runtime
            self._bind(node.func.value, _below(self._all([*node.args, *(k.value for k in node.keywords)])))

    def _writes(self, node: ast.AST) -> list[Path]:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            path = self.paths.get(node.target.id)  # `items += [x]` extends the list in place
            return [] if path is None else [_strip(path)]
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
                if hasattr(self.env_class, node.attr):
                    raise _Unsure
                self.reads.add(node.attr)
                return [(node.attr,)]
            base = self.path(node.value)
            if base is None:
                return []
            if isinstance(node, ast.Attribute):
                return [_strip(base)]
            return [_strip(_extend(base, self.key(node.slice)))]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            if isinstance(node.func.value, ast.Name) and node.func.value.id == self.self_name:
                raise _Unsure
            base = self.path(node.func.value)
            if base is None:
                return []
            key = self.key(node.args[0]) if node.func.attr in _KEYED_MUTATORS and node.args else None
            return [_strip(_extend(base, key) if key is not None else base)]
        return []


def _is_items(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "items"


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node


def _is_plain_exception(value: Any) -> bool:
    """An exception class whose construction runs only the builtin exceptions' code."""
    if not (isinstance(value, type) and issubclass(value, BaseException)):
        return False
    return all(cls.__module__ == "builtins" or not ({"__init__", "__new__"} & set(vars(cls))) for cls in value.__mro__)
