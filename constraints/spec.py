"""The constraint spec as types: what static analysis proves about each tool, checked by mypy.

`extract_spec` builds a `ConstraintSpec`; every reader (completeness, the simulators, the gate,
the property suite, the plan capture, prompts, the CLI) reads these fields instead of string
keys. The outer structure is typed; the normalized program the interpreter runs (function
bodies, constants, table schemas, imports) stays as JSON dicts of constraints.ir nodes, since it
is data for the interpreter rather than something callers read.

`to_dict()` gives the JSON form (the one printed by `constraints --json` and sent between
processes) key for key and in the same order as before the spec was typed; `from_dict()` reads
it back, so `ConstraintSpec.from_dict(s.to_dict()).to_dict() == s.to_dict()`. Optional keys
absent from the JSON (a parameter's `default` and `enum`, an effect's `unfollowed` and `note`)
stay absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

__all__ = ["ConstraintSpec", "ToolSpec", "Param", "Guard", "Message", "Expr", "Effect", "ResultShape",
           "Unfollowed", "Node", "Kind", "ToolKind", "PROGRAM_KEYS"]

Node = dict[str, Any]
"""A normalized IR node (constraints.ir): `{"t": ...}` expressions, `{"s": ...}` statements."""

Kind = Literal["sql", "class"]
ToolKind = Literal["read", "write"]

PROGRAM_KEYS = ("kind", "entry", "imports", "constants", "functions", "tables", "models", "class_constants",
                "methods", "failure_exceptions", "state_attributes")
"""The parts of a spec the interpreter runs (a plan's `program` holds these plus each tool's params)."""


@dataclass
class Param:
    """A tool parameter: its annotation, JSON type, whether it is required, nullable, its allowed values."""

    name: str
    annotation: str | None
    json_type: str | None
    required: bool
    nullable: bool
    default: Any = None
    default_known: bool = False  # the default is a constant (its value is `default`); JSON key `default`
    enum: list[Any] | None = None  # from a Literal annotation or an `if x not in (...)` guard

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "annotation": self.annotation, "json_type": self.json_type,
                               "required": self.required, "nullable": self.nullable}
        if self.default_known:
            out["default"] = self.default
        if self.enum is not None:
            out["enum"] = self.enum
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Param:
        return cls(name=data["name"], annotation=data.get("annotation"), json_type=data.get("json_type"),
                   required=data.get("required", True), nullable=data.get("nullable", False),
                   default=data.get("default"), default_known="default" in data, enum=data.get("enum"))


@dataclass
class Expr:
    """An expression as source text and as its normalized form (a node, a list of nodes, or None)."""

    source: str
    normalized: Any

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "normalized": self.normalized}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Expr:
        return cls(source=data["source"], normalized=data["normalized"])


@dataclass
class Message:
    """A guard's error message as a template: literal text with named `{holes}`."""

    template: str
    holes: list[str]
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "holes": self.holes, "source": self.source}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(template=data["template"], holes=list(data["holes"]), source=data.get("source"))

    @property
    def opaque(self) -> bool:
        """The whole message is one computed hole: its text says nothing by itself."""
        return self.holes == [self.template.strip("{}")]


@dataclass
class Guard:
    """A precondition: when `condition` holds the call fails with `message` (by `exit`)."""

    id: int
    line: int
    condition: Expr
    message: Message
    exit: Literal["raise", "return"]
    reads: list[str]
    via: str | None  # the helper the guard is in, None for the tool's own body

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "line": self.line, "condition": self.condition.to_dict(),
                "message": self.message.to_dict(), "exit": self.exit, "reads": self.reads, "via": self.via}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Guard:
        return cls(id=data["id"], line=data["line"], condition=Expr.from_dict(data["condition"]),
                   message=Message.from_dict(data["message"]), exit=data["exit"], reads=list(data.get("reads", [])),
                   via=data.get("via"))

    def place(self, tool: str) -> tuple[str, int]:
        """Where the guard is in the code: (function, line); a guard in a shared helper has one place."""
        return (self.via or tool, self.line)


@dataclass
class Effect:
    """A write: operation, target path pattern (`<expr>` marks a computed key) and value."""

    line: int
    op: str
    path: list[str]
    value: Expr | None = None
    via: str | None = None
    in_loop: bool = False
    unfollowed: str | None = None  # why the target is not a known record or state path
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "op": self.op, "path": self.path,
                               "value": self.value.to_dict() if self.value is not None else None,
                               "via": self.via, "in_loop": self.in_loop}
        if self.unfollowed is not None:
            out["unfollowed"] = self.unfollowed
        if self.note is not None:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Effect:
        value = data.get("value")
        return cls(line=data["line"], op=data["op"], path=list(data["path"]),
                   value=Expr.from_dict(value) if value is not None else None, via=data.get("via"),
                   in_loop=data.get("in_loop", False), unfollowed=data.get("unfollowed"), note=data.get("note"))


@dataclass
class ResultShape:
    """The keys of the dicts a tool returns on success and on failure, and any other results (as source)."""

    success: list[str] = field(default_factory=list)
    failure: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"success": self.success, "failure": self.failure, "other": self.other}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultShape:
        return cls(success=list(data.get("success", [])), failure=list(data.get("failure", [])),
                   other=list(data.get("other", [])))


@dataclass
class Unfollowed:
    """A construct the analysis could not follow (the spec may be incomplete there)."""

    line: int | None
    src: str | None
    why: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "src": self.src, "why": self.why}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Unfollowed:
        return cls(line=data.get("line"), src=data.get("src"), why=data.get("why"))


@dataclass
class ToolSpec:
    """One tool: parameters, preconditions in order, effects, read/write sets, kind, result shape."""

    name: str
    params: list[Param] = field(default_factory=list)
    declared_kind: ToolKind | None = None
    inferred_kind: ToolKind = "read"
    kind_mismatch: bool = False
    description: str = ""
    preconditions: list[Guard] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    read_set: list[str] = field(default_factory=list)
    write_set: list[str] = field(default_factory=list)
    result_shape: ResultShape = field(default_factory=ResultShape)
    helpers: list[str] = field(default_factory=list)
    unsupported: list[Unfollowed] = field(default_factory=list)
    line: int | None = None

    @property
    def kind(self) -> ToolKind:
        """The declared kind if there is one, else the inferred one."""
        return self.declared_kind or self.inferred_kind

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "declared_kind": self.declared_kind, "inferred_kind": self.inferred_kind,
            "kind_mismatch": self.kind_mismatch, "description": self.description,
            "params": [p.to_dict() for p in self.params],
            "preconditions": [g.to_dict() for g in self.preconditions],
            "effects": [e.to_dict() for e in self.effects],
            "read_set": self.read_set, "write_set": self.write_set, "result_shape": self.result_shape.to_dict(),
            "helpers": self.helpers, "unsupported": [u.to_dict() for u in self.unsupported], "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolSpec:
        return cls(
            name=data["name"], params=[Param.from_dict(p) for p in data.get("params", [])],
            declared_kind=data.get("declared_kind"), inferred_kind=data.get("inferred_kind", "read"),
            kind_mismatch=data.get("kind_mismatch", False), description=data.get("description", ""),
            preconditions=[Guard.from_dict(g) for g in data.get("preconditions", [])],
            effects=[Effect.from_dict(e) for e in data.get("effects", [])],
            read_set=list(data.get("read_set", [])), write_set=list(data.get("write_set", [])),
            result_shape=ResultShape.from_dict(data.get("result_shape") or {}),
            helpers=list(data.get("helpers", [])),
            unsupported=[Unfollowed.from_dict(u) for u in data.get("unsupported", [])], line=data.get("line"))


@dataclass
class ConstraintSpec:
    """The spec of one env module: its tools, and the normalized program the spec-only simulator runs."""

    kind: Kind
    entry: str
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted origin
    constants: dict[str, Node] = field(default_factory=dict)
    functions: dict[str, dict[str, Any]] = field(default_factory=dict)  # module-level functions (IR)
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # SQL tables: class, name, columns, pk
    models: dict[str, str] = field(default_factory=dict)  # model class -> table name
    class_constants: dict[str, Node] = field(default_factory=dict)
    methods: dict[str, dict[str, Any]] = field(default_factory=dict)  # the env class's methods (IR)
    failure_exceptions: list[str] = field(default_factory=list)
    state_attributes: list[str] = field(default_factory=list)
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    # What the simulator must not trust (constraints/interpreter.py abstains on them): module or
    # class names that module code rebinds or that some function changes in place ("*": any), and
    # the env class's bases and decorators (they can change what `self.x` does).
    unsure_names: list[str] = field(default_factory=list)
    entry_bases: list[str] = field(default_factory=list)
    entry_decorators: list[str] = field(default_factory=list)

    def guards(self) -> dict[tuple[str, int], Guard]:
        """Every guard by its place in the code (one in a helper shared by several tools counts once)."""
        return {g.place(name): g for name, tool in self.tools.items() for g in tool.preconditions}

    def program(self) -> dict[str, Any]:
        """What a plan keeps to run: the program parts plus each tool's params (JSON)."""
        out = {key: value for key, value in self.to_dict().items() if key in PROGRAM_KEYS}
        out["tools"] = {name: {"params": [p.to_dict() for p in tool.params]} for name, tool in self.tools.items()}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "entry": self.entry, "imports": self.imports, "constants": self.constants,
            "functions": self.functions, "tables": self.tables, "models": self.models,
            "class_constants": self.class_constants, "methods": self.methods,
            "failure_exceptions": self.failure_exceptions, "state_attributes": self.state_attributes,
            "tools": {name: tool.to_dict() for name, tool in self.tools.items()},
            "unsure_names": self.unsure_names, "entry_bases": self.entry_bases,
            "entry_decorators": self.entry_decorators,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConstraintSpec:
        """Read the JSON form back; a plan's program (tools with params only) reads as a spec too."""
        kind = data["kind"]
        if kind not in ("sql", "class"):
            raise ValueError(f"unknown env kind {kind!r} in a constraint spec")
        return cls(
            kind=cast(Kind, kind), entry=data.get("entry", ""), imports=dict(data.get("imports", {})),
            constants=dict(data.get("constants", {})), functions=dict(data.get("functions", {})),
            tables=dict(data.get("tables", {})), models=dict(data.get("models", {})),
            class_constants=dict(data.get("class_constants", {})), methods=dict(data.get("methods", {})),
            failure_exceptions=list(data.get("failure_exceptions", [])),
            state_attributes=list(data.get("state_attributes", [])),
            tools={name: ToolSpec.from_dict({"name": name, **tool}) for name, tool in data.get("tools", {}).items()},
            unsure_names=list(data.get("unsure_names", [])), entry_bases=list(data.get("entry_bases", [])),
            entry_decorators=list(data.get("entry_decorators", [])))
