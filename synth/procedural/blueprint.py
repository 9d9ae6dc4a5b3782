"""The blueprint: a structured design of one environment, from which envforge's compiler writes code.

Both generators fill it: the procedural designer from the ontology, and an LLM in `blueprint`
mode under its JSON schema (a small model can pick entities, fields and tool recipes; it cannot
be trusted to write SQLModel code). The compiler (synth/procedural/compiler.py) turns a blueprint into the
intended program, from which the plan (`plan.json`) is extracted before any env code is written.

Tools are recipes, not free code: each names an archetype and the entity, fields and lifecycle
moves it uses. The rules each archetype enforces are fixed templates (existence, non-empty text,
ranges, choices, uniqueness, lifecycle states, capacity, balance, time windows, ownership,
quotas, referential integrity, invariants), so a recipe is checkable without running anything.
Archetype names are stable (task generators and reports read them):
- reads: `lookup` (by id), `find` (by a natural key a user knows: email, order number, sku),
  `list`, `summary`;
- simple writes: `create`, `update` (partial: every field parameter optional, only what is given
  changes), `adjust` (a balance by an amount), `delete`;
- lifecycle: `transition` (id, plus the move's own values: a reason), `cascade` (a parent and its
  children move together);
- compound operations, whose large |Δ| comes from domain semantics, not arguments: `transfer`
  (two balances, a ledger entry and a fee) and `place` (a new child record, its parent's counter
  and total, a stock decrement, a payment that draws on the payer's balance or another method).
Write tools can also append derived records: a status-history row (`history`) and an
audit-log row (`audit`), when the env has those tables.

`Blueprint.invariants` are the cross-field value constraints (catalog.plan.Invariant, in the
state's names) that every state satisfies; the compiled code keeps them true (guards, derived
field updates), the plan carries them for the verifier, and the state generator honours them.
`Blueprint.size` names the size class (`SIZES`): how many tables, tools and seed rows it aims at.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from catalog.errors import EnvforgeError
from catalog.plan import Invariant, InvariantKind

__all__ = ["FieldSpec", "EntitySpec", "ToolRecipe", "Blueprint", "BlueprintError", "Archetype", "PYTHON_TYPES",
           "Invariant", "InvariantKind", "SizeClass", "SIZES", "SizeName", "READS", "COMPOUND"]

Archetype = Literal["lookup", "find", "list", "summary", "create", "update", "adjust", "delete", "transition", "cascade",
                    "transfer", "place"]
READS = ("lookup", "find", "list", "summary")
COMPOUND = ("transfer", "place", "cascade")
SizeName = Literal["small", "medium", "large"]
ValueKind = Literal["text", "name", "email", "phone", "code", "int", "float", "money", "bool", "datetime", "choice",
                    "fk", "status", "version", "stamp"]
PYTHON_TYPES = {"text": "str", "name": "str", "email": "str", "phone": "str", "code": "str", "int": "int",
                "float": "float", "money": "float", "bool": "bool", "datetime": "dt.datetime", "choice": "str",
                "fk": "str", "status": "str", "version": "int", "stamp": "dt.datetime"}
EDITABLE = ("text", "name", "email", "phone", "code", "int", "float", "money", "bool", "choice")
_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")


class SizeClass(BaseModel):
    """What a size aims at: tables and tools per env (inclusive ranges), seed rows per state (at least)."""

    model_config = ConfigDict(frozen=True)
    tables: tuple[int, int]
    tools: tuple[int, int]
    min_rows: int


# medium is the default; large reaches Agent World Model's scale (35 tools, 18.5 tables, 129 rows on average)
SIZES: dict[str, SizeClass] = {
    "small": SizeClass(tables=(2, 4), tools=(5, 12), min_rows=12),
    "medium": SizeClass(tables=(4, 8), tools=(12, 25), min_rows=40),
    "large": SizeClass(tables=(15, 25), tools=(30, 45), min_rows=120),
}


class BlueprintError(ValueError, EnvforgeError):
    """The blueprint is inconsistent (unknown entity, field or state); the message says where."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Strict):
    """A column: its value kind decides the Python type, the checks on it and generated values."""

    name: str
    kind: ValueKind
    description: str = ""
    nullable: bool = False
    unique: bool = False
    lo: float | None = None
    hi: float | None = None
    choices: list[str] = Field(default_factory=list)
    fk: str | None = Field(None, description="Entity name this field refers to (kind fk).")
    roles: list[str] = Field(default_factory=list, description=(
        "label, capacity, balance, deadline; derived (kept by the code: counters, totals), fixed (set when created, "
        "never edited), reason (a move's reason), now (a past event, set to the clock on creation)"))

    @property
    def python_type(self) -> str:
        base = PYTHON_TYPES[self.kind]
        return f"{base} | None" if self.nullable else base


class EntitySpec(_Strict):
    """A table: class name, table name, id prefix, fields (id excluded), lifecycle states."""

    name: str
    cls: str
    table: str
    prefix: str
    label: str
    description: str = ""
    parent: str | None = None
    fields: list[FieldSpec]
    states: list[str] = Field(default_factory=list)
    ends: list[str] = Field(default_factory=list, description="Lifecycle ends: states no move leaves.")
    rows: int = Field(6, ge=1, le=200, description="Records per entity in the default initial state.")
    support: bool = Field(False, description="A shared support table (audit log, payments...), not the domain's own.")
    words: list[str] = Field(default_factory=list)

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise BlueprintError(f"entity {self.name!r} has no field {name!r} (fields: {[f.name for f in self.fields]})")

    def has(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    def role(self, role: str) -> FieldSpec | None:
        return next((f for f in self.fields if role in f.roles), None)

    @property
    def fks(self) -> list[FieldSpec]:
        return [f for f in self.fields if f.kind == "fk"]


class ToolRecipe(_Strict):
    """One tool: an archetype applied to an entity, with the knobs that archetype takes."""

    name: str
    archetype: Archetype
    entity: str
    doc: str = ""
    fields: list[str] = Field(default_factory=list, description="create/update: fields set from parameters.")
    filter: Literal["none", "status", "parent"] = "none"
    field: str | None = Field(None, description="adjust: the balance field.")
    direction: Literal["increase", "decrease"] = "decrease"
    sources: list[str] = Field(default_factory=list, description="transition/cascade/delete: allowed states.")
    target: str | None = Field(None, description="transition/cascade: the new state.")
    stamp: str | None = Field(None, description="transition: datetime field set to now.")
    extra: list[str] = Field(default_factory=list, description=(
        "transition: more fields set from parameters (unnatural unless the field is the move's own; "
        "the procedural designer never sets it; see synth.procedural.naturalness)."))
    key: str | None = Field(None, description="find: the unique field a user knows (email, order number).")
    reason: str | None = Field(None, description="transition/cascade: field the required `reason` parameter goes to.")
    history: bool = Field(False, description="transition/cascade: append a status_change row.")
    audit: bool = Field(False, description="write tools: append an audit_log row.")
    stock: str | None = Field(None, description="place: 'fk_field.balance_field' decremented by the quantity.")
    quantity: str | None = Field(None, description="place: the new record's int field giving the quantity.")
    payer: str | None = Field(None, description="place: fk field of the new record naming who pays.")
    price: str | None = Field(None, description="place: the new record's money field the payment is for.")
    deadline: bool = Field(False, description="transition/adjust: refuse after the entity's deadline field.")
    owner: str | None = Field(None, description="transition: fk field the caller must match (ownership).")
    capacity: bool = Field(False, description="create: refuse when the parent's capacity is reached.")
    quota: int | None = Field(None, description="create: at most this many open records per parent.")
    child: str | None = Field(None, description="cascade: the child entity moved along with the parent.")
    child_sources: list[str] = Field(default_factory=list)
    child_target: str | None = None
    touch: bool = Field(True, description="write tools: bump version and updated_at when the entity has them.")


class Blueprint(_Strict):
    """The whole design of one environment."""

    env_id: str
    name: str
    domain: str
    sector: str
    topic: str
    description: str
    actor: str = "operator"
    entities: list[EntitySpec]
    tools: list[ToolRecipe]
    seed: int = 0
    size: SizeName = "medium"
    invariants: list[Invariant] = Field(default_factory=list)
    knobs: dict[str, Any] = Field(default_factory=dict, description="The difficulty choices made, for the record.")

    def entity(self, name: str) -> EntitySpec:
        for e in self.entities:
            if e.name == name:
                return e
        raise BlueprintError(f"unknown entity {name!r} (entities: {[e.name for e in self.entities]})")

    def by_table(self, table: str) -> EntitySpec:
        for e in self.entities:
            if e.table == table:
                return e
        raise BlueprintError(f"unknown table {table!r} (tables: {[e.table for e in self.entities]})")

    def children(self, name: str) -> list[EntitySpec]:
        """Entities with a foreign key to `name` (whatever the field)."""
        return [e for e in self.entities if any(f.fk == name for f in e.fields)]

    @model_validator(mode="after")
    def _consistent(self) -> Blueprint:
        names = [e.name for e in self.entities]
        if len(set(names)) != len(names) or not names:
            raise BlueprintError("entity names must be distinct and at least one entity given")
        tool_names = [t.name for t in self.tools]
        if len(set(tool_names)) != len(tool_names):
            raise BlueprintError(f"duplicate tool names in {tool_names}")
        for e in self.entities:
            if not _IDENT.match(e.name) or not _IDENT.match(e.table):
                raise BlueprintError(f"entity {e.name!r}: names must be snake_case identifiers")
            e.field(e.label)
            for f in e.fields:
                if f.kind == "fk" and f.fk not in names:
                    raise BlueprintError(f"{e.name}.{f.name} refers to unknown entity {f.fk!r}")
                if f.kind == "choice" and len(f.choices) < 2:
                    raise BlueprintError(f"{e.name}.{f.name}: a choice needs two or more options")
        for t in self.tools:
            self._check_tool(t)
        for inv in self.invariants:
            self._check_invariant(inv)
        return self

    def _check_invariant(self, inv: Invariant) -> None:
        e = self.by_table(inv.collection)
        for name in (inv.field, *([inv.other] if inv.other else [])):
            e.field(name)
        if inv.kind in ("le", "lt") and not inv.other:
            raise BlueprintError(f"invariant {inv.kind} on {e.table}.{inv.field} needs `other`")
        if inv.kind in ("sum_of_children", "count_of_children"):
            child = self.by_table(inv.child or "")
            via = child.field(inv.via or "")
            if via.fk != e.name:
                raise BlueprintError(f"invariant on {e.table}.{inv.field}: {child.table}.{via.name} does not refer to it")
            for summed in (inv.child_field, inv.times):
                if summed:
                    child.field(summed)

    def _check_tool(self, t: ToolRecipe) -> None:
        if not _IDENT.match(t.name):
            raise BlueprintError(f"tool {t.name!r}: name must be a snake_case identifier")
        e = self.entity(t.entity)
        named = [n for n in (t.field, t.stamp, t.key, t.reason, t.quantity, t.payer, t.price) if n]
        for name in (*t.fields, *t.extra, *named):
            e.field(name)
        if t.archetype == "find" and (t.key is None or not e.field(t.key).unique):
            raise BlueprintError(f"tool {t.name!r}: find needs a unique key field")
        if t.archetype == "transfer" and (t.field is None or "balance" not in e.field(t.field).roles):
            raise BlueprintError(f"tool {t.name!r}: transfer needs a balance field")
        if t.stock:
            fk, _, balance = t.stock.partition(".")
            self.entity(e.field(fk).fk or "").field(balance)
        for state in (*t.sources, *([t.target] if t.target else [])):
            if state not in e.states:
                raise BlueprintError(f"tool {t.name!r}: {e.name} has no state {state!r} (states: {e.states})")
        if t.archetype in ("transition", "cascade") and (not t.target or not t.sources):
            raise BlueprintError(f"tool {t.name!r}: a {t.archetype} needs sources and a target")
        if t.archetype == "adjust" and (t.field is None or "balance" not in e.field(t.field).roles):
            raise BlueprintError(f"tool {t.name!r}: adjust needs a balance field")
        if t.archetype == "cascade":
            child = self.entity(t.child or "")
            if not any(f.fk == e.name for f in child.fields):
                raise BlueprintError(f"tool {t.name!r}: {child.name} has no foreign key to {e.name}")
            for state in (*t.child_sources, t.child_target or ""):
                if state not in child.states:
                    raise BlueprintError(f"tool {t.name!r}: {child.name} has no state {state!r}")
        if t.owner is not None and e.field(t.owner).kind != "fk":
            raise BlueprintError(f"tool {t.name!r}: owner must be a foreign-key field of {e.name}")
