"""Extract a constraint spec from an environment module's source (libcst, no execution).

Per tool: parameters, preconditions (each guard leading to a failure, with its condition and
its message template; guards inside `self._helper(...)` calls count), effects (each write with
its target path pattern and operation), read and write sets, declared and inferred kind, the
result shape, and what the analysis could not follow. The spec also carries the normalized
program of every tool and helper (constraints.ir), which the spec-only simulator runs.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import re
import threading
from collections.abc import Mapping
from typing import Any, cast

import libcst as cst
from libcst.metadata import MetadataWrapper

from constraints.ir import Node, Translator, render, walk
from constraints.normalize import MARK, NormalizeError, class_source
from constraints.purity import MUTATORS, PURE_BUILTIN_METHODS, Purity
from constraints.schema import annotation_kind, function_ir, imports_of, literal_values, module_parts, table_of
from constraints.spec import (
    ConstraintSpec,
    Effect,
    Expr,
    Guard,
    Kind,
    Message,
    Param,
    ResultShape,
    TableSpec,
    ToolKind,
    ToolSpec,
    Unfollowed,
)

__all__ = ["extract_spec", "shared_spec", "guess_entry", "template_regex", "ExtractionError"]

JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "json": "object",
              "datetime": "string", "date": "string", "decimal": "number"}


class ExtractionError(ValueError):
    """The module cannot be analysed (syntax error, missing entry class)."""


# The one cache of constraint specs (an audit asks hundreds of samples of a few dozen envs; a
# synthesis slot extracts the same module for its plan, its static check and its gate). Failures
# are cached too, so a module that cannot be analysed costs one parse, not one per sample.
_CACHE: dict[str, ConstraintSpec | ExtractionError] = {}
_CACHE_SIZE = 256
_UNFOLLOWED = "<unfollowed use of the state>"
_LOCK = threading.Lock()


def extract_spec(source: str, kind: str, entry: str | None = None, *, failure_exceptions: list[str] | None = None,
                 declared_kinds: dict[str, str] | None = None, convention: str = "class",
                 modules: Mapping[str, str] | None = None) -> ConstraintSpec:
    """Return the constraint spec of an env module of either kind; the caller's own copy.

    An imported class env of another code convention (`convention`: tool_classes, toolkit,
    functions; `modules`: the env folder's other files, see constraints.normalize.env_modules)
    is first rewritten into the class convention it runs as (constraints.normalize).
    Raises ExtractionError for a module that cannot be analysed (odd code that trips the
    analysis counts as such, with the cause in the message).
    """
    return copy.deepcopy(shared_spec(source, kind, entry, failure_exceptions=failure_exceptions,
                                     declared_kinds=declared_kinds, convention=convention, modules=modules))


def shared_spec(source: str, kind: str, entry: str | None = None, *, failure_exceptions: list[str] | None = None,
                declared_kinds: dict[str, str] | None = None, convention: str = "class",
                modules: Mapping[str, str] | None = None) -> ConstraintSpec:
    """Like extract_spec, but the cached spec itself: shared between callers and threads, never mutate it.

    Extraction is pure in its arguments, so recent results are kept by their hash.
    """
    if convention != "class":
        if kind != "class":
            raise ExtractionError(f"convention {convention!r} is for class envs, not {kind!r}")
        try:
            normalized = class_source(source, convention, entry, modules)
        except (NormalizeError, SyntaxError, RecursionError) as exc:
            raise ExtractionError(f"cannot read the {convention} convention: {exc}") from None
        spec = shared_spec(normalized.source, kind, normalized.entry, failure_exceptions=failure_exceptions,
                           declared_kinds=declared_kinds)
        return _with_markers(spec)
    # keyed by what extraction reads: None and [] (a manifest's default) are the same options, in any order
    options = json.dumps([kind, entry, sorted(set(failure_exceptions or [])), declared_kinds or {}], sort_keys=True)
    key = hashlib.sha256(f"{options}\0{source}".encode()).hexdigest()  # the source is hashed as is: no escaping
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        try:
            cached = _extract(source, kind, entry, failure_exceptions=failure_exceptions,
                              declared_kinds=declared_kinds)
        except ExtractionError as exc:
            cached = exc
        except (SyntaxError, ValueError, RecursionError) as exc:  # analysis of odd code must not kill a caller
            cached = ExtractionError(f"{type(exc).__name__}: {exc}")
        with _LOCK:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = cached
    if isinstance(cached, ExtractionError):
        raise cached
    return cached


def _with_markers(spec: ConstraintSpec) -> ConstraintSpec:
    """Where the rewrite left an abstain marker in a tool, its writes are not fully known: say so.

    (A marker stands for a use of the data dict or database the rewrite could not follow,
    e.g. passed whole to a helper that writes through it.)  Idempotent, so the cached spec
    can be marked in place once.
    """
    with _LOCK:
        for tool in spec.tools.values():
            marks = [u.src for u in tool.unsupported if u.src and MARK in u.src and u.src.lstrip("(").startswith("lambda")]
            if marks and not any(e.path == [_UNFOLLOWED] for e in tool.effects):
                why = marks[0].split(MARK, 1)[1].rstrip('")')
                tool.effects.append(Effect(line=tool.line or 0, op="unknown", path=[_UNFOLLOWED], unfollowed=why))
                tool.write_set = sorted({*tool.write_set, _UNFOLLOWED})
                tool.inferred_kind = "write"
                tool.kind_mismatch = False
    return spec


def guess_entry(code: str) -> str | None:
    """The env class of a class-convention module that names none (as EnvSimBench items don't).

    It is the class with the most methods, if one has strictly more than the rest (TypedDicts
    have none).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    counts = sorted(((sum(isinstance(n, ast.FunctionDef) for n in c.body), c.name) for c in tree.body
                     if isinstance(c, ast.ClassDef)), reverse=True)
    if counts and counts[0][0] > 0 and (len(counts) == 1 or counts[0][0] > counts[1][0]):
        return counts[0][1]
    return None


def _syntax_error(source: str, exc: cst.ParserSyntaxError) -> str:
    """Python's own one-line account of a syntax error (libcst's spans lines, with a caret); parsing runs nothing."""
    try:
        ast.parse(source)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    return f"line {exc.raw_line}: {exc.message}"


def _extract(source: str, kind: str, entry: str | None = None, *, failure_exceptions: list[str] | None = None,
             declared_kinds: dict[str, str] | None = None) -> ConstraintSpec:
    if kind not in ("sql", "class"):
        raise ExtractionError(f"unknown env kind {kind!r} (sql or class)")
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise ExtractionError(f"env source does not parse: {_syntax_error(source, exc)}") from exc
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # the module was parsed here: no copy needed
    translator = Translator(wrapper.module, wrapper)
    parts = module_parts(translator, wrapper.module)
    tables: dict[str, TableSpec] = {}
    models: dict[str, str] = {}
    for name, class_node in parts["classes"].items():
        schema = table_of(translator, class_node)
        if schema is not None:
            table = TableSpec.model_validate(schema)
            tables[table.name] = table
            models[name] = table.name
    env_class = _entry_class(parts["classes"], kind, entry)
    methods: dict[str, Any] = {}
    class_constants: dict[str, Node] = {}
    for statement in env_class.body.body:
        if isinstance(statement, cst.FunctionDef):
            methods[statement.name.value] = function_ir(translator, statement)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
                    if isinstance(target, cst.Name) and small.value is not None:
                        class_constants[target.value] = translator.expr(small.value)
    spec = ConstraintSpec(
        kind=cast(Kind, kind), entry=env_class.name.value, imports=imports_of(wrapper.module),
        constants=parts["constants"], functions=parts["functions"], tables=tables, models=models,
        class_constants=class_constants, methods=methods,
        failure_exceptions=sorted(set(failure_exceptions or []) | {"ToolError"}),
        state_attributes=_state_attributes(methods.get("__init__")) if kind == "class" else sorted(tables),
    )
    spec.unsure_names = sorted(parts["unsure"] | _mutated_globals(spec))
    # What can change how `self.x` behaves beyond the class body (a base class, a class decorator).
    spec.entry_bases = [translator.source(b.value) for b in env_class.bases] + \
        [translator.source(k.value) for k in env_class.keywords]
    spec.entry_decorators = [translator.source(d.decorator) for d in env_class.decorators]
    tools = _tool_names(methods, kind)
    purity = _module_purity(translator, parts, env_class)
    spec.tools = {name: _tool_spec(spec, name, tools[name], (declared_kinds or {}).get(name), purity) for name in tools}
    return spec


def _module_purity(translator: Translator, parts: dict[str, Any], env_class: cst.ClassDef) -> Purity:
    """Which methods of the module's other classes write nothing (constraints.purity)."""
    methods: dict[str, list[dict[str, Any]]] = {}
    for class_node in parts["classes"].values():
        if class_node is env_class:
            continue
        for statement in class_node.body.body:
            if isinstance(statement, cst.FunctionDef):
                methods.setdefault(statement.name.value, []).append(function_ir(translator, statement))
    return Purity(methods, parts["functions"], set(parts["classes"]))


def _entry_class(classes: dict[str, cst.ClassDef], kind: str, entry: str | None) -> cst.ClassDef:
    if entry:
        if entry not in classes:
            raise ExtractionError(f"no class {entry!r} in the module (classes: {', '.join(classes) or 'none'})")
        return classes[entry]
    candidates = [c for c in classes.values() if kind != "sql" or any(
        isinstance(b.value, cst.Name) and b.value.value == "Env" for b in c.bases)]
    if len(candidates) != 1:
        raise ExtractionError(f"cannot tell the env class; name it (candidates: {[c.name.value for c in candidates]})")
    return candidates[0]


def _tool_names(methods: dict[str, Any], kind: str) -> dict[str, str | None]:
    tools: dict[str, str | None] = {}
    for name, method in methods.items():
        if kind == "sql":
            for decorator in method["decorators"]:
                match = re.match(r"tool\(\s*kind\s*=\s*['\"](read|write)['\"]\s*\)", decorator)
                if match:
                    tools[name] = match.group(1)
        elif not name.startswith("_"):
            tools[name] = None
    return tools


def _mutated_globals(spec: ConstraintSpec) -> set[str]:
    """Module and class constants some function changes in place: state outside the instance."""
    names: set[str] = set()
    for function in [*spec.functions.values(), *spec.methods.values()]:
        for node in walk(function["body"]):
            targets: list[Node] = []
            if node.get("s") in ("assign", "del"):
                targets = [t for t in node["targets"] if t.get("t") in ("sub", "attr")]
            elif node.get("s") == "augassign":
                targets = [node["target"]]
            elif node.get("t") == "call" and node["fn"].get("t") == "attr" and node["fn"]["name"] in MUTATORS:
                targets = [node["fn"]]
            for target in targets:
                root = target
                while root.get("t") in ("sub", "attr") and not (root.get("t") == "attr" and root["obj"] == {"t": "name", "id": "self"}):
                    root = root["obj"]
                if root.get("t") == "name" and root["id"] in spec.constants:
                    names.add(root["id"])
                elif root.get("t") == "attr" and root["name"] in spec.class_constants:
                    names.add(root["name"])
    return names


def _state_attributes(init: dict[str, Any] | None) -> list[str]:
    if init is None:
        return []
    names = []
    for node in walk(init["body"]):
        if node.get("s") == "assign":
            for target in node["targets"]:
                if target.get("t") == "attr" and target["obj"] == {"t": "name", "id": "self"}:
                    if not target["name"].startswith("_") and target["name"] not in names:
                        names.append(target["name"])
    return names


# --- per tool -------------------------------------------------------------------------------
def _param_spec(param: dict[str, Any], body: list[Node], constants: dict[str, Node]) -> Param:
    kind, optional = annotation_kind(param["annotation"])
    spec = Param(name=param["name"], annotation=param["annotation"],
                 json_type=JSON_TYPES.get(kind) if param["annotation"] else None,
                 required=not param["has_default"], nullable=optional and bool(param["annotation"]))
    if param["has_default"] and param["default"].get("t") == "const":
        spec.default, spec.default_known = param["default"]["v"], True
    enum = literal_values(param["annotation"]) or _enum_from_guards(param["name"], body, constants)
    if enum:
        spec.enum = enum
    return spec


def _enum_from_guards(name: str, body: list[Node], constants: dict[str, Node]) -> list[Any] | None:
    """`if x not in ("a", "b"): return fail(...)` (or a constant tuple) shows x's allowed values."""
    for node in walk(body):
        if node.get("s") != "if" or not _failure_exit(node["body"]):
            continue
        test = node["test"]
        if test.get("t") == "cmp" and test["l"] == {"t": "name", "id": name} and len(test["ops"]) == 1:
            op, right = test["ops"][0]
            if op == "not in":
                if right.get("t") == "name" and right["id"] in constants:
                    right = constants[right["id"]]
                if right.get("t") in ("tuple", "list", "set") and all(i.get("t") == "const" for i in right["items"]):
                    return [i["v"] for i in right["items"]]
    return None


def _failure_exit(block: list[Node]) -> Node | None:
    """The statement by which a block exits with a failure, if it does."""
    for statement in block:
        kind = statement.get("s")
        if kind == "raise":
            return statement
        if kind == "return" and statement["e"] is not None:
            value = statement["e"]
            if value.get("t") == "call" and value["fn"] == {"t": "name", "id": "fail"}:
                return statement
            if value.get("t") == "dict":
                keys = {k["v"]: v for k, v in value["items"] if k is not None and k.get("t") == "const"}
                if keys.get("success") == {"t": "const", "v": False} or ("error" in keys and "success" not in keys):
                    return statement
    return None


def _message_of(exit_statement: Node) -> Node | None:
    value = exit_statement["e"]
    if value is None:
        return None
    if exit_statement["s"] == "raise":
        return value["args"][0] if value.get("t") == "call" and value["args"] else None
    if value.get("t") == "call":
        return (value["args"] or [value["kw"].get("message")])[0]
    keys = {k["v"]: v for k, v in value["items"] if k is not None and k.get("t") == "const"}
    return keys.get("error")


def template_of(message: Node | None) -> Message:
    """An error message as a template: literal text with named holes (and the message's source)."""
    if message is None:
        return Message(template="{*}", holes=["*"], source=None)
    source = render(message)
    if message.get("t") == "const" and isinstance(message["v"], str):
        return Message(template=message["v"].replace("{", "{{").replace("}", "}}"), holes=[], source=source)
    if message.get("t") == "fstr":
        text, holes = "", []
        for part in message["parts"]:
            if isinstance(part, str):
                text += part.replace("{", "{{").replace("}", "}}")
            else:
                holes.append(part["src"])
                text += "{" + part["src"] + "}"
        return Message(template=text, holes=holes, source=source)
    return Message(template="{" + source + "}", holes=[source], source=source)


def template_regex(template: str) -> re.Pattern[str]:
    """Compile a message template: literal text must match, each hole matches anything."""
    pattern = ""
    for literal, hole in re.findall(r"((?:[^{}]|\{\{|\}\})*)(\{[^{}]*\})?", template):
        pattern += re.escape(literal.replace("{{", "{").replace("}}", "}"))
        if hole:
            pattern += ".*?"
    return re.compile(pattern, re.DOTALL)


class _ToolAnalysis:
    """Walks one tool (and the helpers it calls) collecting guards, effects and reads."""

    def __init__(self, spec: ConstraintSpec, purity: Purity) -> None:
        self.spec = spec
        self.purity = purity
        self.preconditions: list[Guard] = []
        self.effects: list[Effect] = []
        self.reads: set[str] = set()
        self.unsupported: list[Unfollowed] = []
        self.helpers: list[str] = []
        self.returns: list[Node] = []

    # origins: local name -> what it refers to
    def block(self, body: list[Node], origins: dict[str, Any], via: str | None, in_loop: bool) -> None:
        for statement in body:
            self.statement(statement, origins, via, in_loop)

    def statement(self, node: Node, origins: dict[str, Any], via: str | None, in_loop: bool) -> None:
        kind = node["s"]
        self.scan_expr(node, origins, via, node, in_loop)
        if kind == "if":
            exit_statement = _failure_exit(node["body"])
            if exit_statement is not None:
                self.add_guard(node, exit_statement, via)
            elif via is not None and node["body"] and node["body"][-1].get("s") == "return":
                returned = node["body"][-1]["e"]
                if returned is not None and returned.get("t") in ("const", "fstr") and (
                        returned.get("t") == "fstr" or isinstance(returned.get("v"), str)):
                    self.add_guard(node, {"s": "return", "e": returned}, via, message=returned)
            self.block(node["body"], dict(origins), via, in_loop)
            self.block(node["orelse"], dict(origins), via, in_loop)
        elif kind == "for":
            inner = dict(origins)
            origin = self.origin_of(node["iter"], origins)
            if node["target"].get("t") == "name":
                inner[node["target"]["id"]] = _element_origin(origin) or self.alias_of(node["iter"], origins, True)
            self.block(node["body"], inner, via, True)
            self.block(node["orelse"], inner, via, in_loop)
        elif kind == "try":
            for handler in node["handlers"]:
                exit_statement = _failure_exit(handler["body"])
                if exit_statement is not None:
                    raised = "/".join(handler["types"] or ["any exception"])
                    body = "; ".join(n.get("src", "") for n in node["body"])
                    test = {"t": "raises", "types": handler["types"], "src": f"{raised} raised by: {body}"}
                    self.add_guard({**node, "test": test}, exit_statement, via)
            for part in (node["body"], *[h["body"] for h in node["handlers"]], node["orelse"], node["final"]):
                self.block(part, origins, via, in_loop)
        elif kind == "assign":
            origin = self.origin_of(node["value"], origins) or self.alias_of(node["value"], origins)
            for target in node["targets"]:
                if target.get("t") == "name":
                    origins[target["id"]] = origin
                else:
                    self.write(target, "set", node, origins, via, in_loop)
        elif kind == "augassign":
            self.write(node["target"], "modify", {**node, "value": {"t": "bin", "op": node["op"], "l": node["target"],
                                                                 "r": node["value"]}}, origins, via, in_loop)
        elif kind == "del":
            for target in node["targets"]:
                self.write(target, "delete", node, origins, via, in_loop)
        elif kind == "return":
            if via is None:
                self.returns.append(node)
        elif kind == "unsupported":
            self.unsupported.append(Unfollowed(line=node.get("line"), src=node.get("src"), why=node.get("why")))

    def add_guard(self, node: Node, exit_statement: Node, via: str | None, message: Node | None = None) -> None:
        message = message if message is not None else _message_of(exit_statement)
        self.preconditions.append(Guard(
            id=len(self.preconditions), line=node["line"],
            condition=Expr(source=render(node["test"]), normalized=node["test"]), message=template_of(message),
            exit="raise" if exit_statement["s"] == "raise" else "return",
            reads=sorted({n["id"] for n in walk(node["test"]) if n.get("t") == "name" and n["id"] != "self"}),
            via=via,
        ))

    def origin_of(self, expr: Node, origins: dict[str, Any]) -> Any:
        """What an expression refers to: a record of a table, rows of a table, or a state path."""
        kind = expr.get("t")
        if kind == "name":
            return origins.get(expr["id"])
        if kind == "call":
            fn = expr["fn"]
            if fn.get("t") == "attr" and fn["obj"] == {"t": "name", "id": "self"}:
                if fn["name"] == "get" and len(expr["args"]) == 2:
                    table = self.table_of(expr["args"][0])
                    return {"record": table, "key": render(expr["args"][1])} if table else None
                if fn["name"] == "select" and expr["args"]:
                    table = self.table_of(expr["args"][0])
                    return {"records": table} if table else None
            if fn.get("t") == "name" and fn["id"] in self.spec.models:
                key = expr["kw"].get(self.spec.tables[self.spec.models[fn["id"]]].key_column or "id")
                return {"record": self.spec.models[fn["id"]], "key": render(key) if key else "<new>"}
            if fn.get("t") == "attr" and fn["name"] == "get" and expr["args"]:
                base = self.origin_of(fn["obj"], origins)
                if isinstance(base, dict) and "path" in base:
                    return {"path": [*base["path"], f"<{render(expr['args'][0])}>"]}
            return None
        if kind == "sub":
            base = self.origin_of(expr["obj"], origins)
            if isinstance(base, dict) and "path" in base:
                index = expr["index"]
                key = index["v"] if index.get("t") == "const" and isinstance(index["v"], str) else f"<{render(index)}>"
                return {"path": [*base["path"], key]}
            return None
        if kind == "attr" and expr["obj"] == {"t": "name", "id": "self"} and self.spec.kind == "class" and \
                expr["name"] not in self.spec.methods:
            return {"path": [expr["name"]]}
        return None

    def alias_of(self, expr: Node, origins: dict[str, Any], elements: bool = False) -> dict[str, Any] | None:
        """For class state: whether `expr` (with `elements`, an element of it) may be a value of the state.

        Attributes of `self`, values reached from them (items, attributes, `get`, a method that is
        not a pure builtin's) and what a helper returns may be; a builtin's result is a new value,
        but its elements (`sorted(self.x.values())`) may be the state's.
        """
        if self.spec.kind != "class":
            return None
        kind = expr.get("t")
        if kind == "name":
            origin = origins.get(expr["id"])
            return _ALIAS if isinstance(origin, dict) and ("path" in origin or "alias" in origin) else None
        if kind == "attr":
            if expr["obj"] == {"t": "name", "id": "self"}:
                return None if expr["name"] in self.spec.methods else _ALIAS
            return self.alias_of(expr["obj"], origins)
        if kind == "sub":
            return self.alias_of(expr["obj"], origins)
        if kind == "ifexp":
            return self.alias_of(expr["then"], origins, elements) or self.alias_of(expr["else"], origins, elements)
        if kind == "bool":
            return self.alias_of(expr["l"], origins, elements) or self.alias_of(expr["r"], origins, elements)
        if kind == "call":
            fn = expr["fn"]
            if fn.get("t") == "attr" and fn["obj"] == {"t": "name", "id": "self"}:
                return _ALIAS if fn["name"] in self.spec.methods else None  # a helper may return a state object
            if fn.get("t") == "attr" and self.alias_of(fn["obj"], origins):
                if fn["name"] in ("get", "pop", "setdefault", "popitem") or fn["name"] not in PURE_BUILTIN_METHODS:
                    return _ALIAS
                return _ALIAS if elements and fn["name"] in ("values", "items", "copy") else None
            if elements and fn.get("t") == "name":
                return _ALIAS if any(self.alias_of(a, origins, True) for a in expr["args"]) else None
        return None

    def table_of(self, expr: Node) -> str | None:
        if expr.get("t") == "name" and expr["id"] in self.spec.models:
            return self.spec.models[expr["id"]]
        return None

    def write(self, target: Node, op: str, node: Node, origins: dict[str, Any], via: str | None, in_loop: bool) -> None:
        value = node.get("value")
        path: list[str] | None = None
        if target.get("t") == "attr" and target["obj"].get("t") == "name":
            origin = origins.get(target["obj"]["id"])
            if isinstance(origin, dict) and "record" in origin:
                path, op = [origin["record"], f"<{origin['key']}>", target["name"]], "modify"
            elif isinstance(origin, dict) and "records" in origin:
                path, op = [origin["records"], "<*>", target["name"]], "modify"
            elif target["obj"]["id"] == "self":
                if target["name"].startswith("_") and self.spec.kind != "class":
                    return
                path = [target["name"]]  # a private one too: hidden state (a cursor moved) is state
        else:
            origin = self.origin_of(target, origins)
            if isinstance(origin, dict) and "path" in origin:
                path = origin["path"]
        effect = Effect(line=node["line"], op=op, path=path or [f"<{render(target)}>"],
                        value=Expr(source=render(value), normalized=value) if value is not None else None, via=via,
                        in_loop=in_loop)
        if path is None:
            effect.unfollowed = "target is not a known record or state path"
        self.effects.append(effect)

    def scan_expr(self, statement: Node, origins: dict[str, Any], via: str | None, node: Node, in_loop: bool) -> None:
        """Find calls with effects (add, delete, new_id, container mutators, helpers) and reads."""
        expressions = [v for k, v in statement.items() if k in ("e", "value", "test", "iter", "targets", "target")]
        for expr in walk(expressions):
            kind = expr.get("t")
            if kind == "unsupported":
                self.unsupported.append(Unfollowed(line=node.get("line"), src=expr["src"], why=expr["why"]))
            if kind == "attr" and expr["obj"].get("t") == "name":
                origin = origins.get(expr["obj"]["id"])
                if isinstance(origin, dict) and ("record" in origin or "records" in origin):
                    self.reads.add(f"{origin.get('record') or origin.get('records')}.{expr['name']}")
                elif expr["obj"]["id"] == "self" and self.spec.kind == "class" and \
                        expr["name"] not in self.spec.methods and not expr["name"].startswith("_"):
                    self.reads.add(expr["name"])
            if kind != "call":
                continue
            fn = expr["fn"]
            if fn.get("t") == "attr" and fn["obj"] == {"t": "name", "id": "self"}:
                name = fn["name"]
                if name in ("get", "select") and expr["args"]:
                    table = self.table_of(expr["args"][0])
                    if table:
                        self.reads.add(table)
                elif name == "add" and expr["args"]:
                    origin = self.origin_of(expr["args"][0], origins)
                    table = origin.get("record") if isinstance(origin, dict) else None
                    key = origin.get("key", "<new>") if isinstance(origin, dict) else "<new>"
                    self.effects.append(Effect(line=node["line"], op="add", path=[table or "<?>", f"<{key}>"],
                                               value=Expr(source=render(expr["args"][0]), normalized=expr["args"][0]),
                                               via=via, in_loop=in_loop))
                elif name == "delete" and expr["args"]:
                    origin = self.origin_of(expr["args"][0], origins)
                    path = [origin["record"], f"<{origin['key']}>"] if isinstance(origin, dict) and "record" in origin \
                        else ["<?>"]
                    self.effects.append(Effect(line=node["line"], op="delete", path=path, via=via, in_loop=in_loop))
                elif name == "new_id":
                    prefix = render(expr["args"][0]) if expr["args"] else "?"
                    self.effects.append(Effect(line=node["line"], op="modify", path=["env_meta", f"next_id:<{prefix}>", "value"],
                                               value=Expr(source="counter + 1", normalized=None), via=via,
                                               in_loop=in_loop))
                    self.reads.add("env_meta")
                elif name == "now":
                    self.reads.add("env_meta.clock")
                elif name in self.spec.methods and name not in self.helpers:
                    self.helpers.append(name)
                    helper = self.spec.methods[name]
                    self.block(helper["body"], {}, name, in_loop)
                elif name not in self.spec.methods and name not in ("get", "select", "add", "delete"):
                    self.unsupported.append(Unfollowed(line=node.get("line"), src=render(expr),
                                                       why=f"call of self.{name}, which the analysis does not know"))
            elif fn.get("t") == "attr" and fn["obj"].get("t") == "attr" and \
                    fn["obj"]["obj"] == {"t": "name", "id": "self"} and fn["obj"]["name"] == "session":
                self.unsupported.append(Unfollowed(line=node.get("line"), src=render(expr),
                                                   why="direct use of the session: its writes are not followed"))
            elif fn.get("t") == "attr" and fn["name"] in MUTATORS and isinstance(
                    self.origin_of(fn["obj"], origins), dict) and "path" in self.origin_of(fn["obj"], origins):
                self.effects.append(Effect(line=node["line"], op=fn["name"], path=self.origin_of(fn["obj"], origins)["path"],
                                           value=Expr(source=", ".join(render(a) for a in expr["args"]),
                                                      normalized=expr["args"]),
                                           via=via, in_loop=in_loop))
            elif fn.get("t") == "attr" and self.spec.kind == "class" and self.alias_of(fn["obj"], origins) and (
                    fn["name"] in MUTATORS or not self.purity.method_pure(fn["name"])):
                # A method of a state value (an object of the state, or a container reached through one) that
                # may change it: a write the analysis cannot place, so the tool is never labelled read.
                self.effects.append(Effect(line=node["line"], op="unknown", path=[f"<{render(fn['obj'])}>"],
                                           via=via, in_loop=in_loop,
                                           unfollowed=f"calls {fn['name']}() of a state value, which may change it"))
            elif fn.get("t") == "name" and fn["id"] in ("getattr", "setattr", "exec", "eval", "__import__"):
                self.unsupported.append(Unfollowed(line=node.get("line"), src=render(expr), why="dynamic attribute or code"))
            elif fn.get("t") == "name" and fn["id"] in self.spec.functions and fn["id"] not in self.helpers:
                self.helpers.append(fn["id"])


_ALIAS = {"alias": True}  # a local that may be (part of) the state, at a place the analysis does not know


def _element_origin(origin: Any) -> Any:
    if isinstance(origin, dict) and "records" in origin:
        return {"records": origin["records"]}
    if isinstance(origin, dict) and "path" in origin:
        return {"path": [*origin["path"], "<*>"]}
    return None


def _result_shape(returns: list[Node]) -> ResultShape:
    shape: dict[str, set[str]] = {"success": set(), "failure": set(), "other": set()}
    for statement in returns:
        value = statement["e"]
        if value is None:
            shape["other"].add("None")
        elif value.get("t") == "call" and value["fn"].get("t") == "name" and value["fn"]["id"] in ("ok", "fail"):
            if value["fn"]["id"] == "fail":
                shape["failure"].update({"success", "error"})
            else:
                shape["success"].update({"success", *value["kw"], *(["data"] if value["args"] else [])})
        elif value.get("t") == "dict":
            keys = {k["v"] for k, _ in value["items"] if k is not None and k.get("t") == "const"}
            (shape["failure"] if _failure_exit([statement]) else shape["success"]).update(keys)
        else:
            shape["other"].add(render(value))
    return ResultShape(success=sorted(shape["success"]), failure=sorted(shape["failure"]), other=sorted(shape["other"]))


def _tool_spec(spec: ConstraintSpec, name: str, declared: str | None, override: str | None,
               purity: Purity) -> ToolSpec:
    method = spec.methods[name]
    analysis = _ToolAnalysis(spec, purity)
    origins: dict[str, Any] = {}
    analysis.block(method["body"], origins, None, False)
    params = [_param_spec(p, method["body"], spec.constants) for p in method["params"] if p["name"] != "self"]
    write_set = sorted({".".join(p for p in effect.path[:1] + [effect.path[-1]]) if len(effect.path) > 2
                        else effect.path[0] for effect in analysis.effects})
    inferred: ToolKind = "write" if analysis.effects else "read"
    kind = override or declared
    if kind not in (None, "read", "write"):
        raise ExtractionError(f"tool {name}: unknown kind {kind!r} (read or write)")
    for effect in analysis.effects:
        if effect.in_loop and effect.note is None:
            effect.note = "key computed per loop iteration"
    return ToolSpec(
        name=name, declared_kind=cast(ToolKind | None, kind), inferred_kind=inferred,
        # A tool declared write that seems to write nothing is only a mismatch if the analysis
        # followed all of it (an unfollowed call may be the write).
        kind_mismatch=kind is not None and kind != inferred and not (kind == "write" and bool(analysis.unsupported)),
        description=method["doc"].split("\n\n")[0], params=params,
        preconditions=analysis.preconditions, effects=analysis.effects,
        read_set=sorted(analysis.reads), write_set=write_set,
        result_shape=_result_shape(analysis.returns), helpers=analysis.helpers,
        unsupported=analysis.unsupported, line=method["line"],
    )
