"""Prompts, answer schemas and answer decoding for the LLM simulators.

Two prompt modes (issue 6):
- plain, EnvSimBench style: the whole env source and the whole state, answer
  `{feedback, config_changes}` with dotted paths (resolved here against the state);
- constrained: the env doc, only the called tool's source (and the helpers it calls), its
  constraint-spec entry and only the slice of state the spec says it reads, answer
  `{observation, delta}` with key-list paths.

The constrained prompt is built to be short because small local models read slowly (the
embedded 135M model reads ~185 tokens/s) and have small context windows. The state slice is
narrowed further than the read set's collections where the spec's program shows that a
collection is only reached by key (`self.get(Model, member_id)`, `self.items[item_id]`, also one
hop through a record read that way, `self.get(Book, loan.book_id)`): then only those records
are shown, and a key that is absent is said to be absent.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from catalog.bench.items import BenchItem
from constraints.ir import render, walk
from constraints.spec import ConstraintSpec

__all__ = [
    "PLAIN_SCHEMA", "answer_text", "constrained_messages", "constrained_schema", "plain_messages", "read_slice",
    "resolve_dotted", "plain_ops", "tool_names_with_helpers", "tool_source",
]

Message = dict[str, str]
_MISSING = object()

PLAIN_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["feedback", "config_changes"],
    "properties": {
        "feedback": {"type": "string"},
        "config_changes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["type", "path", "value"],
            "properties": {"type": {"type": "string", "enum": ["add", "modify", "delete"]},
                           "path": {"type": "string"}, "value": {}}}},
    },
}

_OP_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["op", "path"],
    "properties": {"op": {"type": "string", "enum": ["add", "modify", "delete"]},
                   "path": {"type": "array", "items": {"type": "string"}, "minItems": 1}, "value": {}},
}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def answer_text(answer: Any) -> str:
    """An answer as the assistant turn's text: what a re-ask shows the model and what SFT targets are."""
    return json.dumps(answer, ensure_ascii=False, default=str)


def call_text(item: BenchItem) -> str:
    """The call as EnvSimBench writes it: `name({json args})`."""
    return f"{item.action.name}({json.dumps(item.action.arguments, ensure_ascii=False)})"


# --- plain mode -------------------------------------------------------------------------------


def plain_messages(item: BenchItem) -> list[Message]:
    """EnvSimBench-style prompt: env source + full pretty state + instructions; the call as user turn."""
    state = json.dumps(item.state, indent=2, ensure_ascii=False, default=str)
    system = (
        "You simulate the environment implemented by the Python code below. Given its current state and a "
        "tool call, predict exactly what the tool returns (feedback) and every change the call makes to the "
        "state (config_changes).\n\n"
        f"## Environment code\n```python\n{item.env_code.rstrip()}\n```\n\n"
        f"## Current state\n```json\n{state}\n```\n\n"
        "## Answer\nOne JSON object: {\"feedback\": the tool's return value as a string, \"config_changes\": "
        "[{\"type\": \"add\" | \"modify\" | \"delete\", \"path\": the dotted path from the state root such as "
        "\"orders.O2.status\", \"value\": the new value}]}. Use add for a new key, modify for a changed value "
        "and delete for a removed key; config_changes is [] when nothing changes."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": call_text(item)}]


def resolve_dotted(path: str, state: Any) -> list[str]:
    """Turn a dotted path into a key list by walking the state: keys may themselves contain dots.

    At each level the longest existing key that the rest of the path starts with wins; once no
    key matches (a new key, or a path into a list) the rest is split on dots.

    >>> resolve_dotted("members.ada@example.org.status", {"members": {"ada@example.org": {"status": "x"}}})
    ['members', 'ada@example.org', 'status']
    >>> resolve_dotted("loans.loan-8", {"loans": {}})
    ['loans', 'loan-8']
    """
    keys: list[str] = []
    node, rest = state, path
    while rest:
        match = None
        if isinstance(node, dict):
            candidates = [k for k in node if isinstance(k, str) and (rest == k or rest.startswith(k + "."))]
            match = max(candidates, key=len, default=None)
        if match is None:
            keys.extend(rest.split("."))
            break
        keys.append(match)
        node, rest = node[match], rest[len(match) + 1:]
    return keys


def plain_ops(changes: list[dict[str, Any]], state: dict[str, Any]) -> list[dict[str, Any]]:
    """EnvSimBench config_changes -> envforge ops with key-list paths (op names normalized)."""
    names = {"add": "add", "added": "add", "modify": "modify", "modified": "modify", "update": "modify",
             "delete": "delete", "removed": "delete", "remove": "delete"}
    ops = []
    for change in changes:
        kind = str(change.get("type", change.get("op", ""))).lower()
        path = change.get("path", "")
        keys = [str(k) for k in path] if isinstance(path, list) else resolve_dotted(str(path), state)
        op: dict[str, Any] = {"op": names.get(kind, kind), "path": keys}
        if op["op"] != "delete":
            op["value"] = change.get("value", change.get("after"))
        ops.append(op)
    return ops


# --- constrained mode: the tool's source --------------------------------------------------------


def tool_names_with_helpers(spec: ConstraintSpec, tool: str) -> list[str]:
    """The tool and every method it reaches through `self.<method>(...)` calls, transitively."""
    methods = spec.methods
    seen = [tool]
    queue = [tool]
    while queue:
        current = queue.pop()
        for node in walk(methods.get(current, {}).get("body", [])):
            fn = node.get("fn") if node.get("t") == "call" else None
            if (isinstance(fn, dict) and fn.get("t") == "attr" and _is_self(fn.get("obj"))
                    and fn.get("name") in methods and fn["name"] not in seen and fn["name"] != "__init__"):
                seen.append(fn["name"])
                queue.append(fn["name"])
    return seen


def tool_source(code: str, entry: str, names: list[str]) -> str:
    """The source of the named methods of class `entry` (decorators kept, docstrings dropped).

    Docstrings go because the spec entry carries the description; the code is what decides.
    """
    tree = ast.parse(code)
    lines = code.splitlines()
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == entry]
    if not classes:
        return ""
    parts = []
    for node in classes[0].body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name not in names:
            continue
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        chunk = lines[start - 1:node.end_lineno]
        first = node.body[0]
        if (len(node.body) > 1 and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str) and first.end_lineno is not None
                and first.lineno > node.lineno):
            del chunk[first.lineno - start:first.end_lineno - start + 1]
        parts.append(textwrap.dedent("\n".join(chunk)))
    return "\n\n".join(parts)


def used_constants(code: str, entry: str, source: str, limit: int = 200) -> list[str]:
    """Module- and class-level constant assignments whose names the given source uses."""
    tree = ast.parse(code)
    lines = code.splitlines()
    scopes: list[list[ast.stmt]] = [tree.body]
    scopes += [n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == entry]
    found = []
    for body in scopes:
        for node in body:
            target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                      else node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
            if not isinstance(target, ast.Name) or not re.search(rf"\b{re.escape(target.id)}\b", source):
                continue
            text = " ".join(line.strip() for line in lines[node.lineno - 1:node.end_lineno])
            if len(text) <= limit:
                found.append(text)
    return found


# --- constrained mode: the spec entry -----------------------------------------------------------


def spec_entry(spec: ConstraintSpec, tool: str) -> dict[str, Any]:
    """The tool's constraint spec in a compact form for the prompt (Python-like strings, no IR)."""
    entry = spec.tools[tool]
    params = []
    for p in entry.params:
        text = f"{p.name}: {p.annotation or 'Any'}"
        if not p.required:
            text += f" = {p.default!r}"
        params.append(text)
    preconditions = []
    for guard in entry.preconditions:
        condition = guard.condition.source
        message = guard.message.template
        exit_kind = "fail" if guard.exit == "return" else guard.exit
        preconditions.append(f"if {condition}: {exit_kind} {message!r}" if message else f"if {condition}: {exit_kind}")
    effects = []
    for effect in entry.effects:
        text = f"{effect.op} {'/'.join(effect.path)}"
        if effect.value is not None and effect.op != "delete":
            text += f" = {effect.value.source}"
        effects.append(text)
    return {"description": entry.description, "params": params, "preconditions": preconditions,
            "effects": effects, "read_set": entry.read_set, "write_set": entry.write_set,
            "result_shape": {k: v for k, v in entry.result_shape.model_dump().items() if v}}


def created_tables(spec: ConstraintSpec, tool: str) -> list[str]:
    """Column lists of the SQL tables the tool may add records to, so new records come out whole."""
    tables = spec.tables if spec.kind == "sql" else {}
    out = []
    for name in spec.tools[tool].write_set:
        if name not in tables:
            continue
        columns = []
        for column, info in tables[name].columns.items():
            text = f"{column}: {info.kind}" + ("|None" if info.optional else "")
            if info.has_default and info.default is not None:
                text += f" = {render(info.default)}"
            elif info.default_factory:
                text += " = <factory>"
            columns.append(text)
        out.append(f"{name}({', '.join(columns)})")
    return out


def constrained_schema(spec: ConstraintSpec, tool: str) -> dict[str, Any]:
    """`{observation, delta}`; the observation is typed as the result dict when the spec knows its keys."""
    shape = spec.tools[tool].result_shape.model_dump()
    keys = sorted({k for v in shape.values() for k in (v or [])})
    observation: dict[str, Any] = {}
    if keys and not shape.get("other"):
        kinds = {"success": {"type": "boolean"}, "error": {"type": "string"}, "message": {"type": "string"}}
        observation = {"type": "object", "properties": {k: kinds.get(k, {}) for k in keys}}
        if all("success" in (v or []) for v in shape.values() if v):
            observation["required"] = ["success"]
    return {"type": "object", "additionalProperties": False, "required": ["observation", "delta"],
            "properties": {"observation": observation, "delta": {"type": "array", "items": _OP_SCHEMA}}}


# --- constrained mode: the state slice ----------------------------------------------------------


@dataclass
class _Access:
    """How the tool's program reaches each collection: whole, or by key expressions."""

    whole: set[str] = field(default_factory=set)
    keyed: dict[str, list[Any]] = field(default_factory=dict)


def _is_self(node: Any) -> bool:
    return isinstance(node, dict) and node.get("t") == "name" and node.get("id") == "self"


def _self_collection(node: Any, attributes: set[str]) -> str | None:
    if isinstance(node, dict) and node.get("t") == "attr" and _is_self(node.get("obj")) and node.get("name") in attributes:
        return str(node["name"])
    return None


def _scan(node: Any, access: _Access, models: dict[str, str], attributes: set[str], resolvable: bool) -> None:
    """Record every collection access in a normalized program (see the module docstring)."""
    if isinstance(node, list):
        for child in node:
            _scan(child, access, models, attributes, resolvable)
        return
    if not isinstance(node, dict):
        return

    def keyed(collection: str, key: Any) -> None:
        if resolvable:
            access.keyed.setdefault(collection, []).append(key)
        else:
            access.whole.add(collection)
        _scan(key, access, models, attributes, resolvable)

    kind = node.get("t")
    if kind == "call":
        fn, args = node.get("fn") or {}, node.get("args") or []
        if (models and fn.get("t") == "attr" and fn.get("name") == "get" and _is_self(fn.get("obj")) and len(args) >= 2
                and args[0].get("t") == "name" and args[0].get("id") in models):
            keyed(models[args[0]["id"]], args[1])
            _scan([args[2:], node.get("kw")], access, models, attributes, resolvable)
            return
        owner = _self_collection(fn.get("obj"), attributes) if fn.get("t") == "attr" else None
        if owner and fn.get("name") == "get" and args:
            keyed(owner, args[0])
            _scan([args[1:], node.get("kw")], access, models, attributes, resolvable)
            return
        if fn.get("t") == "name" and fn.get("id") in models:  # constructing a record reads nothing
            _scan([args, node.get("kw")], access, models, attributes, resolvable)
            return
    elif kind == "sub":
        owner = _self_collection(node.get("obj"), attributes)
        if owner:
            keyed(owner, node.get("index"))
            return
    elif kind == "cmp":
        ops = node.get("ops") or []
        if len(ops) == 1 and ops[0][0] in ("in", "not in"):
            owner = _self_collection(ops[0][1], attributes)
            if owner:
                keyed(owner, node.get("l"))
                return
    elif kind == "name" and node.get("id") in models:
        access.whole.add(models[node["id"]])
        return
    elif kind == "attr":
        owner = _self_collection(node, attributes)
        if owner:
            access.whole.add(owner)
            return
    for value in node.values():
        _scan(value, access, models, attributes, resolvable)


def _bound_names(targets: list[Any]) -> list[str]:
    """Names an assignment target binds (`x`, `x, y`); `x.f = ...` and `x[k] = ...` bind nothing."""
    names = []
    for target in targets:
        if not isinstance(target, dict):
            continue
        if target.get("t") == "name":
            names.append(target["id"])
        elif target.get("t") in ("tuple", "list"):
            names += _bound_names(target.get("items") or [])
    return names


def _bindings(body: Any) -> tuple[dict[str, Any], set[str]]:
    """Locals assigned exactly once (`x = <expr>`, never rebound): name -> expr; and every bound name."""
    counts: dict[str, int] = {}
    single: dict[str, Any] = {}
    for node in walk(body):
        targets = node.get("targets") or ([node["target"]] if isinstance(node.get("target"), dict) else [])
        for name in _bound_names(targets):
            counts[name] = counts.get(name, 0) + 1
        if node.get("s") == "assign" and len(node.get("targets", [])) == 1 and node["targets"][0].get("t") == "name":
            single[node["targets"][0]["id"]] = node.get("value")
    return {name: expr for name, expr in single.items() if counts.get(name) == 1}, set(counts)


class _Resolver:
    """Evaluates key expressions from the call's arguments and records read by key (one hop deep)."""

    def __init__(self, spec: ConstraintSpec, tool: str, arguments: dict[str, Any], state: dict[str, Any]) -> None:
        self.spec, self.state = spec, state
        method = spec.methods[tool]
        self.bound, rebound = _bindings(method.get("body", []))
        self.params: dict[str, Any] = {}
        for p in spec.tools[tool].params:
            if p.name in arguments:
                self.params[p.name] = arguments[p.name]
            elif not p.required:
                self.params[p.name] = p.default
        self.params = {k: v for k, v in self.params.items() if k not in rebound}
        self.attributes = set(spec.state_attributes)

    def value(self, node: Any, depth: int = 0) -> Any:
        """The value of a key expression, or _MISSING when it cannot be known statically."""
        if not isinstance(node, dict) or depth > 3:
            return _MISSING
        kind = node.get("t")
        if kind == "const":
            return node.get("v")
        if kind == "name":
            return self.params.get(node["id"], _MISSING)
        if kind in ("attr", "sub"):
            owner = node.get("obj")
            name = node.get("name") if kind == "attr" else (node.get("index") or {}).get("v", _MISSING)
            if not isinstance(owner, dict) or owner.get("t") != "name" or not isinstance(name, str):
                return _MISSING
            record = self.record(self.bound.get(owner["id"]), depth + 1)
            if record is _MISSING:
                return _MISSING
            return record.get(name) if isinstance(record, dict) else None
        return _MISSING

    def record(self, node: Any, depth: int) -> Any:
        """The record a keyed read (`self.get(M, k)`, `self.c[k]`, `self.c.get(k)`) returns, None if absent."""
        if not isinstance(node, dict):
            return _MISSING
        models = self.spec.models
        collection, key = None, None
        if node.get("t") == "call":
            fn, args = node.get("fn") or {}, node.get("args") or []
            if (fn.get("t") == "attr" and fn.get("name") == "get" and _is_self(fn.get("obj")) and len(args) >= 2
                    and args[0].get("t") == "name" and args[0].get("id") in models):
                collection, key = models[args[0]["id"]], args[1]
            elif fn.get("t") == "attr" and fn.get("name") == "get" and args:
                collection, key = _self_collection(fn.get("obj"), self.attributes), args[0]
        elif node.get("t") == "sub":
            collection, key = _self_collection(node.get("obj"), self.attributes), node.get("index")
        if collection is None:
            return _MISSING
        value = self.value(key, depth)
        if value is _MISSING:
            return _MISSING
        table = self.state.get(collection)
        return table.get(str(value)) if isinstance(table, dict) and value is not None else None


def read_slice(state: dict[str, Any], spec: ConstraintSpec, tool: str,
               arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The part of `state` the tool reads for these arguments, and the keys it reads that are absent.

    Collections come from the spec's read set (`coll` = the collection, `coll.key` = one record,
    `coll.field` = fields of its records); the program narrows a collection to records when it
    reaches it only by resolvable keys. A collection whose only reads are fields of records the
    tool creates itself is left out.
    """
    entry = spec.tools[tool]
    whole_entries: set[str] = set()
    named: dict[str, list[str]] = {}
    mentioned: list[str] = []
    for item in entry.read_set:
        collection, _, rest = item.partition(".")
        if collection not in state:
            continue
        if collection not in mentioned:
            mentioned.append(collection)
        if not rest:
            whole_entries.add(collection)
        elif isinstance(state[collection], dict) and rest in state[collection]:
            named.setdefault(collection, []).append(rest)

    models = spec.models if spec.kind == "sql" else {}
    attributes = set(spec.state_attributes) if spec.kind == "class" else set()
    access = _Access()
    names = tool_names_with_helpers(spec, tool)
    # Only the tool's own body is resolved from the arguments; a construct the IR does not model
    # might bind names unseen, so then nothing is narrowed.
    opaque = any(n.get("t") == "unsupported" or n.get("s") == "unsupported"
                 for n in walk(spec.methods.get(tool, {}).get("body", [])))
    for name in names:
        body = spec.methods.get(name, {}).get("body", [])
        _scan(body, access, models, attributes, resolvable=name == tool and not opaque)
    resolver = _Resolver(spec, tool, arguments, state)
    keys: dict[str, list[str]] = {}
    for collection, expressions in access.keyed.items():
        values = [resolver.value(e) for e in expressions]
        if any(v is _MISSING for v in values):
            access.whole.add(collection)
        else:
            keys[collection] = [str(v) for v in values if v is not None]

    out: dict[str, Any] = {}
    absent: list[str] = []
    for collection in sorted(mentioned):
        value = state[collection]
        if not isinstance(value, dict) or collection in access.whole:
            out[collection] = value
            continue
        wanted = list(dict.fromkeys(keys.get(collection, []) + named.get(collection, [])))
        if collection not in keys and collection in whole_entries:
            out[collection] = value
            continue
        if not wanted:
            continue
        out[collection] = {k: value[k] for k in wanted if k in value}
        absent += [f"{collection}[{k!r}]" for k in wanted if k not in value]
    return out, absent


# --- constrained mode: the messages -------------------------------------------------------------

_CONSTRAINED_SYSTEM = (
    "You simulate one tool call of an environment exactly, without running it. Reply with JSON "
    "{\"observation\": the tool's return value, \"delta\": the state changes}. A delta op is "
    "{\"op\": \"add\"|\"modify\"|\"delete\", \"path\": [collection, key, field], \"value\": new value}: "
    "a new record is one add of the whole record at [collection, key]; each changed field is one modify; "
    "delete removes a key. When a precondition fails, the tool returns its error and the delta is []. "
    "Write only inside write_set. Values keep the state's types; times are ISO strings as in the state."
)
_SQL_NOTES = (
    " Env helpers: ok(data, message) returns {\"success\": true, \"data\": data, \"message\": message} "
    "without None parts; fail(msg) returns {\"success\": false, \"error\": msg}; self.get(Model, key) is the "
    "record or None; self.now() is env_meta.clock.value; self.new_id(\"x\") returns \"x-N\" where N is "
    "env_meta[\"next_id:x\"].value, and sets that value to N+1. Records in results look as in the state."
)
_CLASS_NOTES = " The state is the instance's attributes: self.<name> is state[<name>]."


def constrained_messages(item: BenchItem, spec: ConstraintSpec) -> list[Message]:
    """Env doc, the tool's source and spec entry, the state slice it reads, and the call."""
    tool = item.action.name
    names = tool_names_with_helpers(spec, tool)
    source = tool_source(item.env_code, spec.entry, names)
    constants = used_constants(item.env_code, spec.entry, source)
    state, absent = read_slice(item.state, spec, tool, item.action.arguments)
    parts = []
    if item.env_doc.strip():
        parts.append(f"Environment: {item.env_doc.strip()}")
    code = "\n".join(constants + ([""] if constants else []) + [source])
    parts.append(f"Tool code:\n{code}")
    parts.append(f"Spec: {_compact(spec_entry(spec, tool))}")
    tables = created_tables(spec, tool)
    if tables:
        parts.append("Columns of new records: " + "; ".join(tables))
    slice_text = f"State (only what this call reads; other records omitted): {_compact(state)}"
    if absent:
        slice_text += f"\nAbsent (no such record): {', '.join(absent)}"
    parts.append(slice_text)
    parts.append(f"Call: {call_text(item)}")
    notes = _SQL_NOTES if item.env_kind == "sql" else _CLASS_NOTES
    return [{"role": "system", "content": _CONSTRAINED_SYSTEM + notes},
            {"role": "user", "content": "\n\n".join(parts)}]
