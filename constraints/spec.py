"""The constraint spec as types: what static analysis proves about each tool, checked by mypy.

`extract_spec` builds a `ConstraintSpec`; every reader (completeness, the simulators, the gate,
the property suite, the plan capture, prompts, the CLI) reads these fields instead of string
keys. The outer structure and the SQL tables (`TableSpec`, `ColumnSpec`) are typed; the
normalized program the interpreter runs (function bodies, constants, imports) stays as JSON
dicts of constraints.ir nodes, since it is data for the interpreter rather than something
callers read.

These are pydantic models: `model_dump(mode="json")` gives the JSON form (the one printed by
`constraints --json` and sent between processes) key for key and in the same order as before
the spec was typed, and `model_validate` reads it back, so a spec survives the round trip.
Optional keys absent from the JSON (a parameter's `default` and `enum`, an effect's `unfollowed`
and `note`) stay absent.

Whether a write is inside a tool's write set is one method, `ToolSpec.allows_write`, which the
gate's properties, the simulator audit and the constrained simulator's validator all call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from catalog.jsonmodel import JsonModel

__all__ = ["ConstraintSpec", "ToolSpec", "Param", "Guard", "Message", "Expr", "Effect", "ResultShape",
           "Unfollowed", "TableSpec", "ColumnSpec", "Node", "Kind", "ToolKind", "PROGRAM_KEYS"]

Node = dict[str, Any]
"""A normalized IR node (constraints.ir): `{"t": ...}` expressions, `{"s": ...}` statements."""

Kind = Literal["sql", "class"]
ToolKind = Literal["read", "write"]

PROGRAM_KEYS = ("kind", "entry", "imports", "constants", "functions", "tables", "models", "class_constants",
                "methods", "failure_exceptions", "state_attributes")
"""The parts of a spec the interpreter runs (a plan's `program` holds these plus each tool's params)."""


class _Spec(JsonModel):
    """Common model settings: mutable (the extractor fills specs in), JSON keys by alias."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)


class ColumnSpec(_Spec):
    """One column of a SQLModel table: annotation, column kind, nullability, keys, default (an IR node)."""

    annotation: str | None = None
    kind: str = "any"
    optional: bool = False
    primary_key: bool = False
    unique: bool = False
    foreign_key: str | None = None  # "table.column"
    default: Any = None
    has_default: bool = False
    default_factory: str | None = None


class TableSpec(_Spec):
    """One SQL table: its model class, table name, columns in declaration order, primary key."""

    class_name: str = Field(default="", alias="class")
    name: str = ""
    columns: dict[str, ColumnSpec] = Field(default_factory=dict)
    pk: list[str] = Field(default_factory=list)

    def column(self, name: str) -> ColumnSpec | None:
        return self.columns.get(name)

    @property
    def key_column(self) -> str | None:
        """The first primary-key column, if the table declares one."""
        return self.pk[0] if self.pk else None


class Param(_Spec):
    """A tool parameter: its annotation, JSON type, whether it is required, nullable, its allowed values."""

    name: str
    annotation: str | None = None
    json_type: str | None = None
    required: bool = True
    nullable: bool = False
    default: Any = None
    default_known: bool = Field(default=False, exclude=True)  # the default is a constant (its value is `default`)
    enum: list[Any] | None = None  # from a Literal annotation or an `if x not in (...)` guard

    @model_validator(mode="before")
    @classmethod
    def _default_known_from_key(cls, data: Any) -> Any:
        """In the JSON form a known default is the presence of the `default` key."""
        if isinstance(data, dict) and "default_known" not in data:
            return {**data, "default_known": "default" in data}
        return data

    @model_serializer(mode="wrap")
    def _absent_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if not self.default_known:
            out.pop("default", None)
        if self.enum is None:
            out.pop("enum", None)
        return out


class Expr(_Spec):
    """An expression as source text and as its normalized form (a node, a list of nodes, or None)."""

    source: str
    normalized: Any = None


class Message(_Spec):
    """A guard's error message as a template: literal text with named `{holes}`."""

    template: str
    holes: list[str]
    source: str | None = None

    @property
    def opaque(self) -> bool:
        """The whole message is one computed hole: its text says nothing by itself."""
        return self.holes == [self.template.strip("{}")]


class Guard(_Spec):
    """A precondition: when `condition` holds the call fails with `message` (by `exit`)."""

    id: int
    line: int
    condition: Expr
    message: Message
    exit: Literal["raise", "return"]
    reads: list[str] = Field(default_factory=list)
    via: str | None = None  # the helper the guard is in, None for the tool's own body

    def place(self, tool: str) -> tuple[str, int]:
        """Where the guard is in the code: (function, line); a guard in a shared helper has one place."""
        return (self.via or tool, self.line)


class Effect(_Spec):
    """A write: operation, target path pattern (`<expr>` marks a computed key) and value."""

    line: int
    op: str
    path: list[str]
    value: Expr | None = None
    via: str | None = None
    in_loop: bool = False
    unfollowed: str | None = None  # why the target is not a known record or state path
    note: str | None = None

    @model_serializer(mode="wrap")
    def _absent_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for key in ("unfollowed", "note"):
            if out.get(key) is None:
                out.pop(key, None)
        return out

    def pattern(self) -> list[re.Pattern[str]]:
        """The path as one regex per key: a computed part (`<id>`, `next_id:<prefix>`) matches any text."""
        return [re.compile("".join(".*" if part.startswith("<") else re.escape(part)
                                   for part in re.split(r"(<[^>]*>)", key) if part) + r"\Z", re.DOTALL)
                for key in self.path]


class ResultShape(_Spec):
    """The keys of the dicts a tool returns on success and on failure, and any other results (as source)."""

    success: list[str] = Field(default_factory=list)
    failure: list[str] = Field(default_factory=list)
    other: list[str] = Field(default_factory=list)

    @field_validator("success", "failure", "other", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class Unfollowed(_Spec):
    """A construct the analysis could not follow (the spec may be incomplete there)."""

    line: int | None = None
    src: str | None = None
    why: str | None = None


class ToolSpec(_Spec):
    """One tool: parameters, preconditions in order, effects, read/write sets, kind, result shape."""

    name: str
    declared_kind: ToolKind | None = None
    inferred_kind: ToolKind = "read"
    kind_mismatch: bool = False
    description: str = ""
    params: list[Param] = Field(default_factory=list)
    preconditions: list[Guard] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    read_set: list[str] = Field(default_factory=list)
    write_set: list[str] = Field(default_factory=list)
    result_shape: ResultShape = Field(default_factory=ResultShape)
    helpers: list[str] = Field(default_factory=list)
    unsupported: list[Unfollowed] = Field(default_factory=list)
    line: int | None = None

    @field_validator("result_shape", mode="before")
    @classmethod
    def _no_shape_is_empty(cls, value: Any) -> Any:
        return value or {}

    @property
    def kind(self) -> ToolKind:
        """The declared kind if there is one, else the inferred one."""
        return self.declared_kind or self.inferred_kind

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def writes_known(self) -> bool:
        """Every effect's target was followed, so the effects name every path the tool can write."""
        return not any(effect.unfollowed for effect in self.effects)

    @cached_property
    def _write_patterns(self) -> list[list[re.Pattern[str]]]:
        # Compiled once per tool: the gate and the audits ask per written path. A spec's effects
        # are complete when it is built (extract_spec), before any write is checked.
        return [effect.pattern() for effect in self.effects if not effect.unfollowed]

    @cached_property
    def _unfollowed_fields(self) -> frozenset[str]:
        # `<member.fines_due>`: the analysis knows the field written, not the record it is in.
        return frozenset(effect.path[0].strip("<>").rsplit(".", 1)[-1] for effect in self.effects
                         if effect.unfollowed and len(effect.path) == 1 and effect.path[0].startswith("<"))

    def allows_write(self, path: Sequence[str | int]) -> bool | None:
        """Whether a write at `path` is inside the tool's write set: True, False, or None when unknown.

        A path is inside when it falls under one of the followed effects' paths (class-env
        deltas are value paths: keys and attributes as the code names them), a prefix of one
        included (adding the record a field lives in) and anything below one (a field of a
        record the tool writes whole). A path
        under none of them is outside if every effect was followed, else unknown (None), except
        that an unfollowed `obj.field` target allows that field anywhere (True).
        """
        keys = [str(key) for key in path]  # a value path's int key is matched as the code's subscript text
        if any(all(pattern[i].match(keys[i]) for i in range(min(len(pattern), len(keys))))
               for pattern in self._write_patterns):
            return True
        if self.writes_known:
            return False
        if self._unfollowed_fields & set(keys[1:]):
            return True
        return None


class ConstraintSpec(_Spec):
    """The spec of one env module: its tools, and the normalized program the spec-only simulator runs.

    Reads its JSON form with `model_validate`; a plan's program (tools with params only, no
    names in the tool entries) reads as a spec too.
    """

    kind: Kind
    entry: str = ""
    imports: dict[str, str] = Field(default_factory=dict)  # local name -> dotted origin
    constants: dict[str, Node] = Field(default_factory=dict)
    functions: dict[str, dict[str, Any]] = Field(default_factory=dict)  # module-level functions (IR)
    tables: dict[str, TableSpec] = Field(default_factory=dict)  # SQL tables by table name
    models: dict[str, str] = Field(default_factory=dict)  # model class -> table name
    class_constants: dict[str, Node] = Field(default_factory=dict)
    methods: dict[str, dict[str, Any]] = Field(default_factory=dict)  # the env class's methods (IR)
    failure_exceptions: list[str] = Field(default_factory=list)
    state_attributes: list[str] = Field(default_factory=list)
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    # What the simulator must not trust (constraints/interpreter.py abstains on them): module or
    # class names that module code rebinds or that some function changes in place ("*": any), and
    # the env class's bases and decorators (they can change what `self.x` does).
    unsure_names: list[str] = Field(default_factory=list)
    entry_bases: list[str] = Field(default_factory=list)
    entry_decorators: list[str] = Field(default_factory=list)

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value: Any) -> Any:
        if value not in ("sql", "class"):
            raise ValueError(f"unknown env kind {value!r} in a constraint spec")
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _named_tools(cls, value: Any) -> Any:
        """A tool entry's name is its key (a plan's program leaves it out of the entry)."""
        if isinstance(value, dict):
            return {name: tool if isinstance(tool, ToolSpec) else {"name": name, **tool}
                    for name, tool in value.items()}
        return value

    def guards(self) -> dict[tuple[str, int], Guard]:
        """Every guard by its place in the code (one in a helper shared by several tools counts once)."""
        return {g.place(name): g for name, tool in self.tools.items() for g in tool.preconditions}

    def program(self) -> dict[str, Any]:
        """What a plan keeps to run: the program parts plus each tool's params (JSON)."""
        out = self.model_dump(mode="json", include=set(PROGRAM_KEYS))
        out["tools"] = {name: {"params": [p.model_dump(mode="json") for p in tool.params]}
                        for name, tool in self.tools.items()}
        return out
