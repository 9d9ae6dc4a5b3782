"""A small interpreter for normalized forms: runs a tool's spec over a JSON state.

It evaluates the restricted Python of constraints.ir on plain data. Only whitelisted
operations run: operators on JSON-like values, a list of builtins, methods of str/list/dict,
datetime arithmetic, and the env primitives of both conventions (`self.get/select/add/delete/
now/new_id` over SQL tables held as records; `self.<attr>` over class state). Whatever falls
outside raises `Abstain`: the simulator then says "I don't know" rather than guessing.

SQL semantics that differ from Python are modelled where they matter (three-valued NULL logic in
`where` clauses, SQLite's ASCII-only case folding in LIKE, NULL ordering) and abstained on
where they are not (ties in ORDER BY, type-mixing comparisons, integrity errors).

Class envs run on the real Python values of their state (constraints.values decodes it), so
operators, builtins and their exceptions are CPython's own. What Python decides from something
the state does not hold is abstained on: a set's iteration order (in loops, text, keyed sorts),
identity (`is` beyond None/True/False), the clock and module RNGs (a generator kept in the
state is run exactly), module and class attributes a call changes, mutable defaults, the
decimal context, base classes and attribute hooks, unbound locals, and binding errors whose
message is the runtime's. tests/constraints/adversarial.py and bench/soundness.py check this
against execution on random envs written to trip it.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
import operator
import random
import re
from collections import ChainMap
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, cast

from catalog.envkit import DEFAULT_CLOCK, META_TABLE, ToolError, fail, ok
from catalog.models import Outcome
from catalog.runtime import outcome_of
from catalog.state.delta import DeltaOp, diff
from catalog.state.jsonable import json_equal, to_jsonable
from catalog.tools.argcheck import type_problem
from constraints.ir import walk
from constraints.spec import ConstraintSpec, TableSpec
from constraints.values import (
    UnmodelledValue,
    decode_state,
    encode_attributes,
    encode_value,
    shared_attributes,
)

MAX_STEPS = 200_000
INT64 = (-(2**63), 2**63 - 1)
META_SCHEMA = TableSpec.model_validate({"class": "EnvMeta", "name": META_TABLE, "pk": ["key"], "columns": {
    "key": {"kind": "str", "optional": False, "unique": False, "has_default": False, "primary_key": True},
    "value": {"kind": "json", "optional": True, "unique": False, "has_default": True, "primary_key": False,
              "default": {"t": "const", "v": None}}}})
"""The table `new_id` keeps its counters in (catalog.envkit's EnvMeta), which env modules do not declare."""


class Abstain(BaseException):
    """The interpreter cannot predict this call faithfully; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Genuine(BaseException):
    """A Python exception the tool's own code would raise too (so tool `except` can catch it)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(repr(error))
        self.error = error


class _Return(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(BaseException):
    pass


class _Continue(BaseException):
    pass


class _Self:
    """The env instance (`self`)."""


SELF = _Self()


class Row:
    """A SQL record: typed field values of one table row (what the ORM object would hold)."""

    __slots__ = ("table", "values", "source")

    def __init__(self, table: str, values: dict[str, Any], source: dict[str, Any] | None = None) -> None:
        self.table = table
        self.values = values
        self.source = source  # the state's record it was loaded from, until a field is set

    def model_dump(self) -> dict[str, Any]:
        return dict(self.values)


class ModelRef:
    """A table class used as a value: `Member`, `Member.email`, `Member(...)`."""

    def __init__(self, table: str) -> None:
        self.table = table


class ColumnRef:
    """A column of a table used in a query (`Member.email`)."""

    def __init__(self, table: str, field: str) -> None:
        self.table, self.field = table, field


class Pred:
    """A SQL condition over one row, with three-valued logic (True / False / None = NULL)."""

    def __init__(self, test: Callable[[Row], bool | None]) -> None:
        self.test = test


class Order:
    """An ORDER BY item: a column and its direction."""

    def __init__(self, column: ColumnRef, descending: bool) -> None:
        self.column, self.descending = column, descending


class Function:
    """A function or method defined in the env module (interpreted)."""

    def __init__(self, ir: dict[str, Any], bound: Any = None) -> None:
        self.ir, self.bound = ir, bound


class Opaque:
    """An imported name the interpreter does not model; using it abstains."""

    def __init__(self, name: str) -> None:
        self.name = name


def _ascii_lower(text: str) -> str:
    return text.translate({c: c + 32 for c in range(65, 91)})


def _col(column: Any) -> Any:
    """`sqlmodel.col(X.y)` only helps type checkers: it returns the column."""
    if not isinstance(column, ColumnRef):
        raise Abstain("col() of a non-column")
    return column


def _bounded_range(*args: int) -> range:
    values = range(*args)
    if len(values) > 10_000:
        raise Abstain("a range too long to interpret")
    return values


SAFE_BUILTINS: dict[str, Any] = {
    "len": len, "round": round, "min": min, "max": max, "abs": abs, "int": int, "float": float, "str": str,
    "bool": bool, "sum": sum, "sorted": sorted, "any": any, "all": all, "list": list, "dict": dict, "set": set,
    "tuple": tuple, "enumerate": enumerate, "zip": zip, "reversed": reversed, "range": _bounded_range,
    "ValueError": ValueError, "KeyError": KeyError, "TypeError": TypeError, "PermissionError": PermissionError,
    "LookupError": LookupError, "RuntimeError": RuntimeError, "Exception": Exception, "IndexError": IndexError,
    "ok": ok, "fail": fail, "ToolError": ToolError, "isinstance": isinstance, "ZeroDivisionError": ZeroDivisionError,
    "ArithmeticError": ArithmeticError, "AttributeError": AttributeError,
}
# Builtins whose result does not depend on the iteration order of a set argument (unless they raise).
ORDER_FREE = {len, sorted, min, max, any, all, set, bool, isinstance}
MUTABLE = (list, dict, set)
DECIMAL_MODULE: dict[str, Any] = {"Decimal": Decimal, "ROUND_HALF_UP": "ROUND_HALF_UP", "ROUND_HALF_EVEN": "ROUND_HALF_EVEN",
                                  "ROUND_DOWN": "ROUND_DOWN", "ROUND_UP": "ROUND_UP", "ROUND_FLOOR": "ROUND_FLOOR",
                                  "ROUND_CEILING": "ROUND_CEILING", "InvalidOperation": __import__("decimal").InvalidOperation}
DATETIME_MODULE: dict[str, Any] = {"datetime": dt.datetime, "date": dt.date, "timedelta": dt.timedelta,
                                   "timezone": dt.timezone, "UTC": dt.UTC, "time": dt.time}
KNOWN_IMPORTS: dict[str, Any] = {
    "datetime": DATETIME_MODULE, **{f"datetime.{k}": v for k, v in DATETIME_MODULE.items()},
    "catalog.envkit.ok": ok, "catalog.envkit.fail": fail, "catalog.envkit.ToolError": ToolError,
    "sqlmodel.col": _col, "math": {"floor": math.floor, "ceil": math.ceil},
    "math.floor": math.floor, "math.ceil": math.ceil, "copy.deepcopy": copy.deepcopy,
    "copy": {"deepcopy": copy.deepcopy}, "decimal": DECIMAL_MODULE,
    **{f"decimal.{k}": v for k, v in DECIMAL_MODULE.items()},
}
SAFE_METHODS: dict[type, set[str]] = {
    str: {"strip", "lower", "upper", "startswith", "endswith", "split", "join", "replace", "title", "capitalize",
          "isdigit", "isalpha", "isalnum", "isspace", "count", "find", "rstrip", "lstrip", "zfill", "format",
          "removeprefix", "removesuffix", "casefold"},
    list: {"append", "extend", "pop", "remove", "insert", "index", "count", "copy", "clear", "reverse", "sort"},
    dict: {"get", "items", "keys", "values", "pop", "setdefault", "update", "copy", "clear"},
    set: {"add", "discard", "remove", "union", "intersection", "difference", "copy"},
    dt.datetime: {"date", "isoformat", "replace", "strftime", "weekday", "isoweekday", "astimezone", "utcoffset",
                  "time", "timestamp"},
    dt.date: {"isoformat", "weekday", "isoweekday", "replace", "strftime"},
    dt.timedelta: {"total_seconds"},
    Decimal: {"quantize", "normalize", "to_integral_value", "copy_abs", "is_zero", "is_signed", "adjusted"},
    # A generator decoded from the state draws exactly what the env's would (same algorithm, same state).
    random.Random: {"random", "randint", "randrange", "choice", "uniform", "shuffle", "sample", "getrandbits"},
    tuple: {"index", "count"},
    frozenset: {"union", "intersection", "difference", "issubset", "issuperset", "isdisjoint"},
}
SAFE_METHODS[set] |= {"issubset", "issuperset", "isdisjoint", "update", "difference_update", "intersection_update",
                      "symmetric_difference"}
SAFE_ATTRIBUTES: dict[type, set[str]] = {
    dt.datetime: {"year", "month", "day", "hour", "minute", "second", "microsecond", "tzinfo"},
    dt.date: {"year", "month", "day"},
    dt.timedelta: {"days", "seconds", "microseconds"},
}
CLASS_METHODS: dict[type, set[str]] = {dt.datetime: {"fromisoformat", "combine", "strptime"}, dt.date: {"fromisoformat"}}
COMPARE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
    "is": lambda a, b: a is b, "is not": lambda a, b: a is not b,
}
BINARY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a**b, "|": lambda a, b: a | b,
    "&": lambda a, b: a & b,
}


def _genuine(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except (Abstain, Genuine, _Return, _Break, _Continue):
        raise
    except Exception as exc:  # the tool's code would raise exactly this
        raise Genuine(exc) from exc


def _iterate(value: Any) -> Iterator[Any]:
    """Iterate as Python does (live: a container changed during the loop behaves as in the env).

    The iteration order of a set depends on its history and on str hashing (which differs
    between processes), so anything that depends on it is not predicted.
    """
    if isinstance(value, (set, frozenset)):
        raise Abstain("iteration over a set (its order is not in the state)")
    iterator = _genuine(iter, value)
    while True:
        try:
            yield next(iterator)
        except StopIteration:
            return
        except (Abstain, Genuine, _Return, _Break, _Continue):
            raise
        except Exception as exc:
            raise Genuine(exc) from exc


def _has_set(value: Any, depth: int = 0) -> bool:
    """Whether a value holds a set anywhere (its text would show the set's iteration order)."""
    if isinstance(value, (set, frozenset)):
        return True
    if depth > 50:
        raise Abstain("value nested too deep to inspect")
    if isinstance(value, dict):
        return any(_has_set(k, depth + 1) or _has_set(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_set(v, depth + 1) for v in value)
    return False


def _assigned_names(body: list[dict[str, Any]]) -> set[str]:
    """Names a function body binds (Python makes them local: reading one unbound raises)."""
    names: set[str] = set()

    def targets(node: dict[str, Any]) -> None:
        if node.get("t") == "name":
            names.add(node["id"])
        elif node.get("t") == "tuple":
            for item in node["items"]:
                targets(item)

    stack = list(body)
    while stack:
        node = stack.pop()
        kind = node.get("s")
        if kind == "assign":
            for target in node["targets"]:
                targets(target)
        elif kind in ("augassign", "for"):
            targets(node["target"])
        elif kind == "del":
            for target in node["targets"]:
                targets(target)
        for key in ("body", "orelse", "final"):
            stack.extend(node.get(key) or [])
        for handler in node.get("handlers") or []:
            if handler.get("name"):
                names.add(handler["name"])
            stack.extend(handler["body"])
    return names


# Caches keyed by id() keep the keyed object too, so an id is never reused while cached.
_LOCALS: dict[int, tuple[Any, set[str]]] = {}


def _locals_of(ir: dict[str, Any]) -> set[str]:
    cached = _LOCALS.get(id(ir))
    if cached is None or cached[0] is not ir:
        if len(_LOCALS) > 4096:
            _LOCALS.clear()
        cached = _LOCALS[id(ir)] = (ir, _assigned_names(ir["body"]) | {p["name"] for p in ir["params"]})
    return cached[1]


INPLACE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv, "//": operator.ifloordiv,
    "%": operator.imod, "**": operator.ipow, "|": operator.ior, "&": operator.iand,
}


class Interpreter:
    """Runs one tool of a spec on one state; `run` returns (observation, outcome, delta)."""

    def __init__(self, spec: ConstraintSpec, state: dict[str, Any], *, strict_args: bool = True) -> None:
        self.spec = spec
        self.state = state
        self.strict_args = strict_args
        self.hidden_delta: list[DeltaOp] = []
        self._last_kwargs: dict[str, Any] = {}
        self._mutable_constants: list[tuple[str, Any, Any]] = []  # (name, value, its encoding at first use)
        self.steps = 0
        self.tables = {**spec.tables, META_TABLE: META_SCHEMA}
        self._rows: dict[str, dict[str, Row]] = {}
        self._constants: dict[str, Any] = {}
        self._class_state: dict[str, Any] | None = None
        self._shared: set[str] | None = None
        self._frames: list[str] = []
        self.fired: list[tuple[str, int]] = []  # (function, line) of every `if` whose test held

    # --- entry point --------------------------------------------------------------------
    def run(self, tool: str, arguments: dict[str, Any]) -> tuple[Any, Outcome, list[DeltaOp]]:
        if tool not in self.spec.tools:
            raise Abstain(f"unknown tool {tool}")
        method = self.spec.methods[tool]
        if _decorators(method):
            raise Abstain(f"{tool} is decorated")
        if self.spec.kind == "class":
            self.check_class()
        params = {p.name: p for p in self.spec.tools[tool].params}
        posonly = {p["name"] for p in method["params"] if p.get("posonly")}
        if set(arguments) - set(params) or any(p.required and n not in arguments for n, p in params.items()) \
                or set(arguments) & posonly:
            raise Abstain("arguments that do not bind (the runtime's message is not modelled)")
        for name, value in arguments.items():  # the runtimes refuse ill-typed arguments the same way
            annotation = params[name].annotation
            if annotation and set(_words(annotation)) & self._module_names():
                raise Abstain(f"annotation {annotation} names something of the module")
            problem = type_problem(name, annotation, value) if self.strict_args else None
            if problem:
                return {"error": f"Bad arguments for {tool}: {problem}"}, Outcome.INVALID, []
        try:
            result = self.call_function(Function(method, SELF), [], dict(arguments))
        except Genuine as raised:
            name = type(raised.error).__name__
            if not (isinstance(raised.error, ToolError) or name in self.spec.failure_exceptions):
                raise Abstain(f"the tool raises {name}: {raised.error}") from None
            self.check_constants()
            failure = {"success": False, "error": str(raised.error)}
            # SQL envs roll the call back; a class env keeps what the code wrote before raising.
            return failure, Outcome.FAILURE, self.class_delta() if self.spec.kind == "class" else []
        except RecursionError:
            raise Abstain("recursion too deep") from None
        self.check_constants()
        if self.spec.kind == "sql":
            observation = self.to_json(result)
            return observation, outcome_of(observation), diff(self.state, self.sql_state())
        observation = self.encode(result)
        return observation, outcome_of(observation), self.class_delta()

    def check_class(self) -> None:
        """Abstain on class envs whose attribute access or values work beyond what the spec shows."""
        bases = [b for b in self.spec.entry_bases if b != "object"]
        if bases or self.spec.entry_decorators:
            raise Abstain(f"the env class has bases or decorators ({', '.join(bases) or 'decorated'})")
        hooks = {"__getattr__", "__getattribute__", "__setattr__", "__delattr__"} & set(self.spec.methods)
        if hooks:
            raise Abstain(f"the env class defines {', '.join(sorted(hooks))}")
        if _changes_decimal_context(self.spec):
            raise Abstain("the env changes the decimal context (interpreter-wide state)")

    def check_constants(self) -> None:
        for name, value, encoded in self._mutable_constants:
            if self.encode(value) != encoded:
                raise Abstain(f"the call changes module-level {name} (state outside the instance)")

    def class_delta(self) -> list[DeltaOp]:
        """The public delta of the call (the hidden one goes to `hidden_delta`)."""
        if self._class_state is None:
            return []
        # The instance's order: attributes it had, then new ones as first assigned (a shared value
        # is written in full at its first place in that order and referenced after).
        touched = self._class_state
        ordered = {name: touched[name] for name in self.state if name in touched}
        ordered.update((name, value) for name, value in touched.items() if name not in ordered)
        try:
            encoded = encode_attributes(ordered)
        except UnmodelledValue as exc:
            raise Abstain(str(exc)) from None
        after = {**self.state, **encoded}  # attributes the call never read are as they were
        # One diff of the whole state, split after, as the runtime does: a reference crosses attributes.
        ops = diff(self.state, after)
        self.hidden_delta = [op for op in ops if str(op.path[0]).startswith("_")]
        return [op for op in ops if not str(op.path[0]).startswith("_")]

    def _module_names(self) -> set[str]:
        """Names an annotation may use that the module defines (an alias such as `OrderId = int`)."""
        standard = ("typing", "typing_extensions", "collections", "decimal", "datetime", "__future__")
        imported = {name for name, origin in self.spec.imports.items() if origin.split(".")[0] not in standard}
        return set(self.spec.constants) | set(self.spec.functions) | imported

    def encode(self, value: Any) -> Any:
        """A class env's value in the state encoding (catalog.state.codec), as its runtime writes it."""
        try:
            return encode_value(value)
        except UnmodelledValue as exc:
            raise Abstain(str(exc)) from None

    def to_json(self, value: Any) -> Any:
        try:
            return to_jsonable(value)
        except (TypeError, ValueError) as exc:
            raise Abstain(f"result is not JSON: {exc}") from None

    # --- functions and statements ---------------------------------------------------------
    def call_function(self, function: Function, args: list[Any], kwargs: dict[str, Any]) -> Any:
        ir = function.ir
        if ir.get("variadic"):
            raise Abstain(f"{ir['name']} takes *args/**kwargs")
        params = [p for p in ir["params"]]
        local: dict[str, Any] = {}
        if function.bound is not None:
            if not params:
                raise Abstain(f"{ir['name']} has no self")
            local[params[0]["name"]] = function.bound
            params = params[1:]
        if len(args) > len(params):
            raise Abstain(f"too many arguments for {ir['name']}")
        for param, value in zip(params, args, strict=False):
            local[param["name"]] = value
        for name, value in kwargs.items():
            if name in local or name not in {p["name"] for p in params if not p.get("posonly")}:
                raise Abstain(f"bad argument {name} for {ir['name']}")
            local[name] = value
        for param in params:
            if param["name"] not in local:
                if not param["has_default"]:
                    raise Abstain(f"missing argument {param['name']}")
                default = self.eval(param["default"], {})
                if isinstance(default, MUTABLE):
                    raise Abstain(f"mutable default of {param['name']} (it persists between calls)")
                local[param["name"]] = default
        local["<locals>"] = _locals_of(ir)
        self._frames.append(ir["name"])
        try:
            self.block(ir["body"], local)
        except _Return as returned:
            return returned.value
        finally:
            self._frames.pop()
        return None

    def block(self, body: list[dict[str, Any]], local: dict[str, Any]) -> None:
        for statement in body:
            self.exec(statement, local)

    def exec(self, node: dict[str, Any], local: dict[str, Any]) -> None:  # noqa: C901
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Abstain("step budget exhausted")
        kind = node["s"]
        if kind == "assign":
            value = self.eval(node["value"], local)
            for target in node["targets"]:
                self.assign(target, value, local)
        elif kind == "augassign":
            self.augassign(node, local)
        elif kind == "expr":
            self.eval(node["e"], local)
        elif kind == "return":
            raise _Return(None if node["e"] is None else self.eval(node["e"], local))
        elif kind == "if":
            if self.truth(self.eval(node["test"], local)):
                self.fired.append((self._frames[-1] if self._frames else "", node.get("line", 0)))
                self.block(node["body"], local)
            else:
                self.block(node["orelse"], local)
        elif kind == "for":
            iterable = self.eval(node["iter"], local)
            broke = False
            for item in _iterate(iterable):
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise Abstain("step budget exhausted")
                self.assign(node["target"], item, local)
                try:
                    self.block(node["body"], local)
                except _Break:
                    broke = True
                    break
                except _Continue:
                    continue
            if not broke:
                self.block(node["orelse"], local)
        elif kind == "try":
            self.try_(node, local)
        elif kind == "raise":
            if node["e"] is None:
                raise Abstain("bare raise")
            error = self.eval(node["e"], local)
            if isinstance(error, type) and issubclass(error, Exception):
                error = _genuine(error)
            if not isinstance(error, Exception):
                raise Abstain("raise of a non-exception")
            raise Genuine(error)
        elif kind == "break":
            raise _Break()
        elif kind == "continue":
            raise _Continue()
        elif kind == "pass":
            pass
        elif kind == "del":
            for target in node["targets"]:
                self.delete(target, local)
        else:
            raise Abstain(f"unsupported statement at line {node.get('line')}: {node.get('src')}")

    def try_(self, node: dict[str, Any], local: dict[str, Any]) -> None:
        try:
            try:
                self.block(node["body"], local)
            except Genuine as raised:
                for handler in node["handlers"]:
                    if handler["types"] is None:
                        raise Abstain("bare except") from None
                    names = {c.__name__ for c in type(raised.error).__mro__}
                    if names & set(handler["types"]):
                        if handler["name"]:
                            local[handler["name"]] = raised.error
                        try:
                            self.block(handler["body"], local)
                        finally:
                            if handler["name"]:  # Python unbinds the name after the handler
                                local.pop(handler["name"], None)
                        break
                else:
                    raise
            else:
                self.block(node["orelse"], local)
        finally:
            if node["final"]:
                self.block(node["final"], local)

    # --- assignment targets ---------------------------------------------------------------
    def assign(self, target: dict[str, Any], value: Any, local: dict[str, Any]) -> None:
        kind = target.get("t")
        if kind == "name":
            local[target["id"]] = value
        elif kind == "tuple":
            if isinstance(value, (set, frozenset)) or not hasattr(value, "__iter__"):
                raise Abstain("unpacking of a set or a non-iterable (message not modelled)")
            items = list(_iterate(value))
            if len(items) != len(target["items"]):
                raise Abstain("unpacking of the wrong number of values (message not modelled)")
            for sub, item in zip(target["items"], items, strict=True):
                self.assign(sub, item, local)
        elif kind == "attr":
            self.set_attribute(self.eval(target["obj"], local), target["name"], value)
        elif kind == "sub":
            container = self.eval(target["obj"], local)
            key = self.eval(target["index"], local)
            if not isinstance(container, (dict, list)):
                raise Abstain(f"item assignment on {type(container).__name__}")
            _genuine(container.__setitem__, key, value)
        else:
            raise Abstain(f"unsupported assignment target {kind}")

    def set_attribute(self, owner: Any, name: str, value: Any) -> None:
        if owner is SELF:
            self.set_self(name, value)
        elif isinstance(owner, Row):
            self.set_field(owner, name, value)
        else:
            raise Abstain(f"attribute assignment on {type(owner).__name__}")

    def delete(self, target: dict[str, Any], local: dict[str, Any]) -> None:
        if target.get("t") == "sub":
            container = self.eval(target["obj"], local)
            if not isinstance(container, (dict, list)):
                raise Abstain("del on a non-container")
            _genuine(container.__delitem__, self.eval(target["index"], local))
        elif target.get("t") == "name":
            if target["id"] not in local:
                raise Abstain(f"del of unbound {target['id']}")
            del local[target["id"]]
        else:
            raise Abstain("unsupported del target")

    def augassign(self, node: dict[str, Any], local: dict[str, Any]) -> None:
        """`x op= v` as Python runs it: the target once, the in-place operator (aliases see it)."""
        target, op = node["target"], node["op"]
        if target.get("t") == "sub":
            container = self.eval(target["obj"], local)
            if not isinstance(container, (dict, list)):
                raise Abstain(f"item assignment on {type(container).__name__}")
            index = target["index"]
            if index.get("t") == "slice":
                raise Abstain("augmented assignment to a slice")
            key = self.eval(index, local)
            current = _genuine(lambda: container[key])
            value = self.inplace(op, current, self.eval(node["value"], local))
            _genuine(container.__setitem__, key, value)
        elif target.get("t") == "attr":
            owner = self.eval(target["obj"], local)
            current = self.attribute(owner, target["name"])
            self.set_attribute(owner, target["name"], self.inplace(op, current, self.eval(node["value"], local)))
        elif target.get("t") == "name":
            current = self.lookup(target["id"], local)
            local[target["id"]] = self.inplace(op, current, self.eval(node["value"], local))
        else:
            raise Abstain("unsupported augmented assignment target")

    def inplace(self, op: str, left: Any, right: Any) -> Any:
        if self.spec.kind != "class":
            return self.binary(op, left, right)
        if isinstance(left, (Pred, ColumnRef, Row, ModelRef, Opaque)) or isinstance(right, (Pred, ColumnRef, Row, ModelRef, Opaque)):
            raise Abstain(f"operator {op}= on a modelled object")
        return _genuine(INPLACE_OPS[op], left, right)

    # --- expressions ----------------------------------------------------------------------
    def truth(self, value: Any) -> bool:
        if isinstance(value, (Pred, ColumnRef, ModelRef, Opaque)):
            raise Abstain("truth value of a SQL expression")
        return _genuine(bool, value)

    def eval(self, node: dict[str, Any] | None, local: dict[str, Any]) -> Any:  # noqa: C901
        if node is None:
            return None
        kind = node["t"]
        if kind == "const":
            return node["v"]
        if kind == "name":
            return self.lookup(node["id"], local)
        if kind == "attr":
            return self.attribute(self.eval(node["obj"], local), node["name"])
        if kind == "sub":
            container = self.eval(node["obj"], local)
            if isinstance(container, (Row, ModelRef, Opaque, Function)) or container is SELF:
                raise Abstain("subscript of a non-container")
            index = node["index"]
            if index.get("t") == "slice":
                key: Any = slice(*[None if p is None else self.eval(p, local) for p in index["parts"]])
            else:
                key = self.eval(index, local)
            return _genuine(lambda: container[key])
        if kind == "call":
            return self.call(node, local)
        if kind == "bin":
            return self.binary(node["op"], self.eval(node["l"], local), self.eval(node["r"], local))
        if kind == "unary":
            value = self.eval(node["e"], local)
            if node["op"] == "not":
                return not self.truth(value)
            if node["op"] == "~" and isinstance(value, Pred):
                inner = value.test
                return Pred(lambda row: None if inner(row) is None else not inner(row))
            return _genuine({"-": lambda v: -v, "+": lambda v: +v, "~": lambda v: ~v}[node["op"]], value)
        if kind == "bool":
            left = self.eval(node["l"], local)
            if isinstance(left, Pred):
                raise Abstain("python and/or on SQL expressions")
            if node["op"] == "and":
                return self.eval(node["r"], local) if self.truth(left) else left
            return left if self.truth(left) else self.eval(node["r"], local)
        if kind == "cmp":
            left = self.eval(node["l"], local)
            result: Any = True
            for op, right_node in node["ops"]:
                right = self.eval(right_node, local)
                outcome = self.compare(op, left, right)
                if isinstance(outcome, Pred):
                    if len(node["ops"]) > 1:
                        raise Abstain("chained SQL comparison")
                    return outcome
                if not outcome:
                    return False
                left, result = right, outcome
            return result
        if kind == "ifexp":
            return self.eval(node["then"] if self.truth(self.eval(node["test"], local)) else node["else"], local)
        if kind == "fstr":
            return self.fstring(node, local)
        if kind == "list":
            return [self.eval(i, local) for i in node["items"]]
        if kind == "tuple":
            return tuple(self.eval(i, local) for i in node["items"])
        if kind == "set":
            return _genuine(set, [self.eval(i, local) for i in node["items"]])
        if kind == "dict":
            out: dict[Any, Any] = {}
            for key_node, value_node in node["items"]:
                if key_node is None:
                    _genuine(out.update, self.eval(value_node, local))
                else:
                    _genuine(out.__setitem__, self.eval(key_node, local), self.eval(value_node, local))
            return out
        if kind == "comp":
            return self.comprehension(node, local)
        raise Abstain(f"unsupported expression: {node.get('src', kind)}")

    def fstring(self, node: dict[str, Any], local: dict[str, Any]) -> str:
        text = ""
        for part in node["parts"]:
            if isinstance(part, str):
                text += part
                continue
            value = self.eval(part["e"], local)
            if isinstance(value, (Row, ModelRef, ColumnRef, Pred, Function, Opaque, _Self, random.Random)):
                raise Abstain("formatting an object the interpreter models differently")
            if _has_set(value):
                raise Abstain("formatting a set (its order is not in the state)")
            if part["conv"] == "r":
                value = _genuine(repr, value)
            elif part["conv"] == "s":
                value = _genuine(str, value)
            text += _genuine(format, value, part["spec"] or "")
        return text

    def comprehension(self, node: dict[str, Any], local: dict[str, Any]) -> Any:
        """Comprehensions as Python runs them: own scope, live iteration, lazy generators.

        A generator is lazy so that `any(...)` stops at the first true item, as in Python.
        """
        # Names the comprehension binds are its own; others are read live from the enclosing
        # scope (a generator consumed later sees later values, as in Python).
        scope = cast(dict[str, Any], ChainMap({}, local))
        first = self.eval(node["gens"][0]["iter"], scope)  # Python evaluates it before anything else

        def generate(index: int) -> Iterator[Any]:
            if index == len(node["gens"]):
                if node["kind"] == "dict":
                    yield self.eval(node["key"], scope), self.eval(node["elt"], scope)
                else:
                    yield self.eval(node["elt"], scope)
                return
            generator = node["gens"][index]
            iterable = first if index == 0 else self.eval(generator["iter"], scope)
            for item in _iterate(iterable):
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise Abstain("step budget exhausted")
                self.assign(generator["target"], item, scope)
                if all(self.truth(self.eval(test, scope)) for test in generator["ifs"]):
                    yield from generate(index + 1)

        if node["kind"] == "gen":
            return generate(0)
        results = list(generate(0))
        if node["kind"] == "dict":
            out: dict[Any, Any] = {}
            for key, value in results:
                _genuine(out.__setitem__, key, value)
            return out
        if node["kind"] == "set":
            return _genuine(set, results)
        return results

    def lookup(self, name: str, local: dict[str, Any]) -> Any:
        if name in local:
            return local[name]
        if name in local.get("<locals>", ()):
            raise Abstain(f"local {name} read before it is bound (UnboundLocalError)")
        unsure = self.spec.unsure_names
        if name in self._constants:
            return self._constants[name]
        if name in self.spec.constants:
            if name in unsure or "*" in unsure:
                raise Abstain(f"module-level {name} may be changed by module code")
            value = self.eval(self.spec.constants[name], {})
            self._constants[name] = value
            self._watch(name, value)
            return value
        if name in self.spec.functions:
            if _decorators(self.spec.functions[name]) or name in unsure or "*" in unsure:
                raise Abstain(f"function {name} is decorated or rebound")
            return Function(self.spec.functions[name])
        if name in self.spec.models:
            return ModelRef(self.spec.models[name])
        if name in self.spec.imports:
            origin = self.spec.imports[name]
            if origin in KNOWN_IMPORTS:
                return KNOWN_IMPORTS[origin]
            return Opaque(origin)
        if name in SAFE_BUILTINS:
            return SAFE_BUILTINS[name]
        raise Abstain(f"unknown name {name}")

    def attribute(self, owner: Any, name: str) -> Any:
        if owner is SELF:
            return self.get_self(name)
        if isinstance(owner, Row):
            if name not in self.tables[owner.table].columns:
                raise Abstain(f"unknown field {owner.table}.{name}")
            return owner.values[name]
        if isinstance(owner, ModelRef):
            if name not in self.tables[owner.table].columns:
                raise Abstain(f"unknown column {owner.table}.{name}")
            return ColumnRef(owner.table, name)
        if isinstance(owner, ColumnRef):
            return _BoundColumnMethod(owner, name)
        if isinstance(owner, dict) and any(owner is m for m in (DATETIME_MODULE, KNOWN_IMPORTS["math"], KNOWN_IMPORTS["copy"], DECIMAL_MODULE)):
            if name not in owner:
                raise Abstain(f"unknown module attribute {name}")
            return owner[name]
        if isinstance(owner, type) and name in CLASS_METHODS.get(owner, set()):
            return getattr(owner, name)
        if isinstance(owner, dt.timezone) or owner is dt.timezone:
            if name == "utc":
                return dt.UTC
        for kind in (dt.datetime, dt.date, dt.timedelta, str, list, dict, set, Decimal, random.Random, tuple, frozenset):
            if type(owner) is kind:
                if name in SAFE_METHODS.get(kind, set()) or name in SAFE_ATTRIBUTES.get(kind, set()):
                    return getattr(owner, name)
                raise Abstain(f"{kind.__name__}.{name} is not modelled")
        raise Abstain(f"attribute {name} of {type(owner).__name__}")

    def call(self, node: dict[str, Any], local: dict[str, Any]) -> Any:
        fn_node = node["fn"]
        if fn_node.get("t") == "attr" and self.eval(fn_node["obj"], local) is SELF:
            name = fn_node["name"]
            args = [self.eval(a, local) for a in node["args"]]
            kwargs = {k: self.eval(v, local) for k, v in node["kw"].items()}
            return self.self_method(name, args, kwargs)
        function = self.eval(fn_node, local)
        args = [self.eval(a, local) for a in node["args"]]
        kwargs = {k: self.eval(v, local) for k, v in node["kw"].items()}
        if isinstance(function, Function):
            return self.call_function(function, args, kwargs)
        if isinstance(function, ModelRef):
            return self.new_row(function.table, args, kwargs)
        if isinstance(function, _BoundColumnMethod):
            return function.call(args, kwargs)
        if isinstance(function, Opaque):
            raise Abstain(f"call into unmodelled code {function.name}")
        if function is _col:
            return _col(*args)
        if callable(function) and (function in SAFE_BUILTINS.values() or function in KNOWN_IMPORTS.values()
                                   or function in DATETIME_MODULE.values() or _is_safe_bound(function)):
            for value in [*args, *kwargs.values()]:
                if function in (ok, fail, len, list):
                    break  # they only wrap or count: records pass through as values
                if isinstance(value, (Row, ModelRef, ColumnRef, Pred, Function, Opaque, _Self)):
                    raise Abstain("builtin applied to a modelled object")
            self._last_kwargs = kwargs
            self.check_order_free(function, [*args, *kwargs.values()])
            if function in ORDER_FREE and any(isinstance(a, (set, frozenset)) for a in args):
                try:
                    return _genuine(function, *args, **kwargs)
                except Genuine:
                    raise Abstain("a builtin over a set raises (what it meets first depends on order)") from None
            return _genuine(function, *args, **kwargs)
        raise Abstain(f"call of {type(function).__name__}")

    def check_order_free(self, function: Any, values: list[Any]) -> None:
        """Abstain where a result would show a set's iteration order (not in the state)."""
        if function in (sorted, min, max) and "key" in self._last_kwargs and any(
                isinstance(v, (set, frozenset)) for v in values):
            raise Abstain("ties under a key function keep a set's order")
        if function in (str, repr, format, ok, fail) or getattr(function, "__name__", "") in ("format", "join"):
            if any(_has_set(v) for v in values):
                raise Abstain("text of a set (its order is not in the state)")
        elif function in ORDER_FREE or (isinstance(getattr(function, "__self__", None), (set, frozenset))
                                        and not isinstance(function, type)):
            return
        elif any(isinstance(v, (set, frozenset)) for v in values):
            raise Abstain("a set passed where its order matters")

    # --- the env object ---------------------------------------------------------------------
    def self_method(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.spec.kind == "sql" and name in ("get", "select", "add", "delete", "now", "new_id"):
            return getattr(self, f"sql_{name}")(*args, **kwargs)
        if self.spec.kind == "sql" and name in self.spec.methods:
            return self.call_function(Function(self.spec.methods[name], SELF), args, kwargs)
        target = self.get_self(name)
        if isinstance(target, Function):
            return self.call_function(target, args, kwargs)
        raise Abstain(f"self.{name}(...) calls a {type(target).__name__}")

    def get_self(self, name: str) -> Any:
        """`self.name` in Python's order: a property, the instance's attribute, a method, a class attribute."""
        method = self.spec.methods.get(name)
        if method is not None and name in self.spec.class_constants:
            raise Abstain(f"{name} is both a method and a class attribute")
        decorators = _decorators(method) if method is not None else []
        if method is not None and decorators == ["property"]:
            return self.call_function(Function(method, SELF), [], {})
        if self.spec.kind == "class":
            state = self.class_state()
            if name in state:
                return state[name]
            if name in self.state:
                return self.decode_attribute(name)
        if method is not None:
            if not decorators:
                return Function(method, SELF)
            if decorators == ["staticmethod"]:
                return Function(method)
            raise Abstain(f"self.{name} is decorated ({', '.join(decorators)})")
        if name in self.spec.class_constants:
            if name in self.spec.unsure_names or "*" in self.spec.unsure_names:
                raise Abstain(f"class attribute {name} may change")
            value = self.eval(self.spec.class_constants[name], {})
            self._watch(f"class attribute {name}", value)
            return value
        raise Abstain(f"self.{name} is not in the state")

    def set_self(self, name: str, value: Any) -> None:
        if self.spec.kind != "class" or name.startswith("__") or name.startswith("_envforge"):
            raise Abstain(f"assignment to self.{name}")
        if name in self.spec.methods:
            raise Abstain(f"assignment over method {name}")
        self.class_state()[name] = value

    def class_state(self) -> dict[str, Any]:
        """The instance attributes the call has read or written, as Python values.

        Attributes are decoded when first read, so a value the interpreter does not model (an
        object graph, say) only matters to the calls that touch it.
        """
        if self._class_state is None:
            self._class_state = {}
        return self._class_state

    def decode_attribute(self, name: str) -> Any:
        if self._shared is None:
            self._shared = shared_attributes(self.state)
        # Attributes that reference each other are decoded in one pass, so they share as they did.
        group = [n for n in self.state if n in self._shared] if name in self._shared else [name]
        try:
            values = decode_state({n: self.state[n] for n in group})
        except UnmodelledValue as exc:
            raise Abstain(f"state holds {exc}") from None
        state = self.class_state()
        for other in group:
            state.setdefault(other, values[other])
        return state[name]

    def _watch(self, name: str, value: Any) -> None:
        """Remember a mutable module-level value: a call that changes it changes hidden state."""
        if isinstance(value, MUTABLE) and not any(v is value for _, v, _ in self._mutable_constants):
            self._mutable_constants.append((name, value, self.encode(value)))

    # --- SQL primitives ------------------------------------------------------------------------
    def rows(self, table: str) -> dict[str, Row]:
        if table not in self._rows:
            schema = self.tables.get(table)
            if schema is None:
                raise Abstain(f"unknown table {table}")
            collection = self.state.get(table, {})
            self._rows[table] = {key: Row(table, self.typed(schema, record), record)
                                 for key, record in collection.items()}
        return self._rows[table]

    def typed(self, schema: TableSpec, record: dict[str, Any]) -> dict[str, Any]:
        """A JSON record as the ORM would load it (floats as float, times as aware datetimes)."""
        values: dict[str, Any] = {}
        for name, column in schema.columns.items():
            value = record.get(name)
            kind = column.kind
            if value is None:
                values[name] = None
            elif kind == "float":
                values[name] = float(value)
            elif kind == "int" and not isinstance(value, bool):
                values[name] = int(value)
            elif kind == "bool":
                values[name] = bool(value)
            elif kind == "datetime":
                parsed = dt.datetime.fromisoformat(value)
                values[name] = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
            elif kind == "date":
                values[name] = dt.date.fromisoformat(value)
            elif kind in ("str", "json"):
                values[name] = value if isinstance(value, str) else copy.deepcopy(value)  # str: immutable
            else:
                raise Abstain(f"column kind {kind} of {schema.name}.{name} is not modelled")
        return values

    def key_of(self, table: str, value: Any) -> str:
        pk = self.tables[table].pk
        if len(pk) != 1:
            raise Abstain("composite primary key")
        kind = self.tables[table].columns[pk[0]].kind
        if kind == "str" and isinstance(value, str):
            return value
        if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise Abstain(f"key {value!r} does not match the primary key type of {table}")

    def sql_get(self, model: Any, key: Any) -> Row | None:
        if not isinstance(model, ModelRef):
            raise Abstain("self.get of a non-table")
        return self.rows(model.table).get(self.key_of(model.table, key))

    def sql_select(self, model: Any, *where: Any, order_by: Any = None) -> list[Row]:
        if not isinstance(model, ModelRef):
            raise Abstain("self.select of a non-table")
        table = model.table
        pk = self.tables[table].pk[0]
        rows = sorted(self.rows(table).values(), key=lambda r: r.values[pk])
        for condition in where:
            if not isinstance(condition, Pred):
                raise Abstain("a where clause that is not a SQL condition")
            rows = [r for r in rows if condition.test(r) is True]
        if order_by is None:
            return rows
        orders = order_by if isinstance(order_by, (list, tuple)) else [order_by]
        keys = [o if isinstance(o, Order) else Order(o, False) for o in orders]
        if not all(isinstance(k.column, ColumnRef) and k.column.table == table for k in keys):
            raise Abstain("order_by on something other than this table's columns")
        for order in reversed(keys):
            rows.sort(key=_order_key(order.column.field), reverse=order.descending)
        if keys[-1].column.field != pk:
            signature = [tuple(r.values[k.column.field] for k in keys) for r in rows]
            if len(set(map(repr, signature))) != len(signature):
                raise Abstain("ORDER BY with ties: SQLite's order is unspecified")
        return rows

    def sql_add(self, row: Any) -> None:
        if not isinstance(row, Row):
            raise Abstain("self.add of a non-record")
        rows = self.rows(row.table)
        key = self.key_of(row.table, row.values[self.tables[row.table].pk[0]])
        if key in rows and rows[key] is not row:
            raise Abstain("insert of an existing primary key (IntegrityError)")
        rows[key] = row

    def sql_delete(self, row: Any) -> None:
        if not isinstance(row, Row):
            raise Abstain("self.delete of a non-record")
        rows = self.rows(row.table)
        key = self.key_of(row.table, row.values[self.tables[row.table].pk[0]])
        if rows.get(key) is not row:
            raise Abstain("delete of a record that is not stored")
        del rows[key]

    def sql_now(self) -> dt.datetime:
        clock = self.rows(META_TABLE).get("clock")
        if clock is None:
            return DEFAULT_CLOCK
        value = dt.datetime.fromisoformat(clock.values["value"])
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)

    def sql_new_id(self, prefix: str) -> str:
        meta = self.rows(META_TABLE)
        key = f"next_id:{prefix}"
        if key not in meta:
            meta[key] = Row(META_TABLE, {"key": key, "value": 2})
            return f"{prefix}-1"
        number = int(meta[key].values["value"])
        meta[key].values["value"] = number + 1
        meta[key].source = None
        return f"{prefix}-{number}"

    def new_row(self, table: str, args: list[Any], kwargs: dict[str, Any]) -> Row:
        if args:
            raise Abstain("positional arguments to a table class")
        columns = self.tables[table].columns
        values: dict[str, Any] = {}
        for name, column in columns.items():
            if name in kwargs:
                values[name] = self.checked(table, name, kwargs[name])
            elif column.default_factory:
                factory = column.default_factory
                if factory not in ("list", "dict"):
                    raise Abstain(f"default_factory {factory}")
                values[name] = [] if factory == "list" else {}
            elif column.has_default:
                values[name] = self.eval(column.default, {})
            else:
                values[name] = None
        unknown = set(kwargs) - set(columns)
        if unknown:
            raise Abstain(f"unknown fields {sorted(unknown)}")
        return Row(table, values)

    def set_field(self, row: Row, name: str, value: Any) -> None:
        if name not in self.tables[row.table].columns:
            raise Abstain(f"unknown field {row.table}.{name}")
        if name in self.tables[row.table].pk:
            raise Abstain("primary key change")
        row.values[name] = self.checked(row.table, name, value)
        row.source = None

    def checked(self, table: str, name: str, value: Any) -> Any:
        """Accept only values the ORM stores and reads back unchanged (else abstain)."""
        column = self.tables[table].columns[name]
        kind = column.kind
        fits = {
            "str": lambda v: isinstance(v, str),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1],
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
            "bool": lambda v: isinstance(v, bool),
            "datetime": lambda v: isinstance(v, dt.datetime) and v.utcoffset() == dt.timedelta(0),
            "date": lambda v: isinstance(v, dt.date) and not isinstance(v, dt.datetime),
            "json": lambda v: True,
        }.get(kind)
        if value is None or fits is not None and fits(value):
            return value
        raise Abstain(f"value {value!r} for {table}.{name} ({kind}) is not stored unchanged")

    def sql_state(self) -> dict[str, Any]:
        """The state after the call: untouched tables as they were, touched ones re-encoded.

        A record no field was set on (and whose JSON values are as loaded) is the state's own
        record, and a table of only such records the state's own collection: the states are
        canonical snapshots, which decode and encode back unchanged, and `diff` skips shared objects.
        """
        after = dict(self.state)
        for table, rows in self._rows.items():
            schema = self.tables[table]
            required = [name for name, column in schema.columns.items()
                        if not column.optional and not column.primary_key]
            mutable = [name for name, column in schema.columns.items() if column.kind == "json"]
            original = self.state.get(table)
            loaded: dict[str, Any] = original if isinstance(original, dict) else {}
            same = isinstance(original, dict) and len(loaded) == len(rows)
            collection = {}
            for key, row in rows.items():
                for name in required:
                    if row.values[name] is None:
                        raise Abstain(f"NULL in non-null column {table}.{name} (IntegrityError)")
                record = row.source
                if record is None or any(isinstance(row.values[name], (list, dict)) and
                                         not json_equal(self.to_json(row.values[name]), record.get(name))
                                         for name in mutable):
                    record = self.to_json(row.values)
                collection[key] = record
                same = same and loaded.get(key) is record
            for name, column in schema.columns.items():
                if column.unique:
                    seen = [r.values[name] for r in rows.values() if r.values[name] is not None]
                    if len(seen) != len(set(map(repr, seen))):
                        raise Abstain(f"duplicate value in unique column {table}.{name} (IntegrityError)")
            if table in self.state or collection:
                after[table] = original if same else collection
        return after

    def binary(self, op: str, left: Any, right: Any) -> Any:
        if op in ("|", "&") and isinstance(left, Pred) and isinstance(right, Pred):
            return Pred(_and_or(op, left.test, right.test))
        if isinstance(left, (Pred, ColumnRef, Row, ModelRef, Opaque)) or isinstance(right, (Pred, ColumnRef, Row, ModelRef, Opaque)):
            raise Abstain(f"operator {op} on a modelled object")
        if op == "%" and isinstance(left, str) and _has_set(right):
            raise Abstain("text of a set (its order is not in the state)")
        return _genuine(BINARY_OPS[op], left, right)

    def compare(self, op: str, left: Any, right: Any) -> Any:
        if isinstance(left, ColumnRef) or isinstance(right, ColumnRef):
            if isinstance(right, ColumnRef) and not isinstance(left, ColumnRef):
                left, right = right, left
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            return _column_compare(left, op, right)
        if isinstance(left, (Row, ModelRef, Pred, Opaque)) or isinstance(right, (Row, ModelRef, Pred, Opaque)):
            if op in ("is", "is not") and (left is None or right is None):
                return COMPARE_OPS[op](left, right)
            if op in ("==", "!=") and (isinstance(left, Row) or isinstance(right, Row)):
                return COMPARE_OPS["is" if op == "==" else "is not"](left, right)
            raise Abstain(f"comparison {op} on a modelled object")
        if op in ("is", "is not") and not any(v is None or v is True or v is False or v is Ellipsis
                                              for v in (left, right)):
            raise Abstain("identity of values (interning and aliasing are not in the state)")
        return _genuine(COMPARE_OPS[op], left, right)


class _BoundColumnMethod:
    """`Book.title.icontains(...)`, `col(X.y).desc()` and friends."""

    def __init__(self, column: ColumnRef, name: str) -> None:
        self.column, self.name = column, name

    def call(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        field, name = self.column.field, self.name
        if name in ("desc", "asc") and not args:
            return Order(self.column, name == "desc")
        if name in ("icontains", "contains") and len(args) == 1 and isinstance(args[0], str):
            pattern = args[0]
            if "%" in pattern or "_" in pattern:
                raise Abstain("LIKE wildcard characters in a contains() pattern")
            needle = _ascii_lower(pattern)

            def like(row: Row) -> bool | None:
                value = row.values[field]
                if value is None:
                    return None
                if not isinstance(value, str):
                    raise Abstain("LIKE on a non-text column")
                return needle in _ascii_lower(value)

            return Pred(like)
        if name in ("in_", "not_in") and len(args) == 1 and isinstance(args[0], (list, tuple, set)):
            options = list(args[0])
            return Pred(lambda row: None if row.values[field] is None else
                        ((row.values[field] in options) == (name == "in_")))
        if name in ("is_", "is_not", "isnot") and args == [None]:
            return Pred(lambda row: (row.values[field] is None) == (name == "is_"))
        raise Abstain(f"column method {name} is not modelled")


def _column_compare(column: ColumnRef, op: str, value: Any) -> Pred:
    if isinstance(value, (ColumnRef, Row, Pred)):
        raise Abstain("column-to-column comparison")
    field = column.field
    if value is None:
        if op == "==":
            return Pred(lambda row: row.values[field] is None)
        if op == "!=":
            return Pred(lambda row: row.values[field] is not None)
        raise Abstain("ordering comparison with NULL")
    if op not in ("==", "!=", "<", "<=", ">", ">="):
        raise Abstain(f"SQL operator {op}")
    if isinstance(value, dt.datetime) and value.utcoffset() is None:
        raise Abstain("naive datetime compared with a UTC column")

    def test(row: Row) -> bool | None:
        stored = row.values[field]
        if stored is None:
            return None
        if not _same_sql_class(stored, value):
            raise Abstain("comparison between different SQL types")
        return COMPARE_OPS[op](stored, value)

    return Pred(test)


def _same_sql_class(a: Any, b: Any) -> bool:
    numeric = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, (bool, int)) and isinstance(b, (bool, int)) and not isinstance(a, float) \
            and not isinstance(b, float)
    if isinstance(a, numeric) and isinstance(b, numeric):
        return True
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return True
    if isinstance(a, dt.date) and isinstance(b, dt.date):
        return not isinstance(a, dt.datetime) and not isinstance(b, dt.datetime)
    return type(a) is type(b) and isinstance(a, str)


def _and_or(op: str, left: Callable[[Row], Any], right: Callable[[Row], Any]) -> Callable[[Row], Any]:
    def test(row: Row) -> bool | None:
        a, b = left(row), right(row)
        if op == "&":
            if a is False or b is False:
                return False
            return None if a is None or b is None else True
        if a is True or b is True:
            return True
        return None if a is None or b is None else False

    return test


def _order_key(field: str) -> Callable[[Row], tuple[int, Any]]:
    return lambda row: _null_order(row.values[field])


def _null_order(value: Any) -> tuple[int, Any]:
    """SQLite sorts NULL first ascending (and so last descending)."""
    if value is None:
        return (0, 0)
    return (1, value)


_DECIMAL_CONTEXT = {"getcontext", "setcontext", "localcontext", "DefaultContext"}
_CONTEXT_USE: dict[int, tuple[Any, bool]] = {}


def _changes_decimal_context(spec: ConstraintSpec) -> bool:
    """Whether module code touches the decimal context (then Decimal results depend on earlier calls)."""
    cached = _CONTEXT_USE.get(id(spec))
    if cached is None or cached[0] is not spec:
        if len(_CONTEXT_USE) > 4096:
            _CONTEXT_USE.clear()
        names = {n.get("id") for n in walk([spec.methods, spec.functions, spec.constants])
                 if n.get("t") == "name"} | {n.get("name") for n in walk([spec.methods, spec.functions,
                                                                        spec.constants]) if n.get("t") == "attr"}
        origins = {spec.imports[n].split(".")[-1] for n in names if n in spec.imports}
        uses = bool((names | origins) & _DECIMAL_CONTEXT) or bool(
            "*" in spec.unsure_names and "decimal" in {o.split(".")[0] for o in spec.imports.values()})
        cached = _CONTEXT_USE[id(spec)] = (spec, uses)
    return cached[1]


def _decorators(function: dict[str, Any]) -> list[str]:
    """A function's decorators that change how it runs (envkit's `tool(...)` only marks it)."""
    return [d for d in function.get("decorators") or [] if not re.fullmatch(r"(envkit\.)?tool\(.*\)", d, re.DOTALL)]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)


def _is_safe_bound(function: Any) -> bool:
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", "")
    if owner is None:
        return False
    if isinstance(owner, type):
        return name in CLASS_METHODS.get(owner, set())
    for kind, names in SAFE_METHODS.items():
        if type(owner) is kind and name in names:
            return True
    return False
