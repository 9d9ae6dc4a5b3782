"""The domain ontology's data model: what a domain author writes, validated on load.

A domain lists entity templates. Each entity has typed fields written in a one-line shorthand
(so a domain stays short enough to review), an optional parent (a many-to-one relation that
becomes a foreign key), and an optional lifecycle (states plus named transitions). Rules are
not written per domain: they come from rule templates (capacity, balance, ownership, time
windows, uniqueness, quotas, lifecycles) that the designer applies wherever a field's role or
a relation allows, so every domain gets them without repeating them.

Field shorthand: ``name:type [lo..hi] [a|b|c] [role ...]``, e.g.

    "title:text label"             the entity's human label (a text field)
    "email:email unique"           unique among the entity's records
    "seats:int 1..300 capacity"    how many children (records of entities whose parent this is) fit
    "balance:money 0..5000 balance"  a quantity that goes up and down, never below zero
    "due_at:datetime deadline"     a time window: actions after it are refused
    "priority:choice low|normal|high"

Types: text, name, email, phone, code, int, float, money, bool, datetime, choice.
Roles: label, unique, capacity, balance, deadline, core (always kept).
Ownership rules come from `refs`: a tool acting for a referenced record checks it is the one the
record names.
"""

from __future__ import annotations

import re
from typing import Literal, TypeGuard, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["FieldType", "FieldT", "EntityT", "Transition", "Variant", "Domain", "SECTORS", "parse_field"]

FieldType = Literal["text", "name", "email", "phone", "code", "int", "float", "money", "bool", "datetime", "choice"]
Role = Literal["label", "unique", "capacity", "balance", "deadline", "core"]
FIELD_TYPES: tuple[FieldType, ...] = get_args(FieldType)
ROLES: tuple[Role, ...] = get_args(Role)
SECTORS = ("retail", "finance", "travel", "health", "education", "logistics", "government", "media", "iot", "hr",
           "hospitality", "real_estate", "legal", "energy", "agriculture", "automotive", "telecom", "insurance",
           "nonprofit", "sports", "manufacturing")
_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
# Bookkeeping fields the compiler adds, and local names its code uses.
_RESERVED = frozenset({"id", "version", "updated_at", "created_at", "status", "self", "note", "amount", "rows", "row",
                       "held", "moved"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldT(_Strict):
    """One typed field of an entity template."""

    name: str
    type: FieldType
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    roles: tuple[Role, ...] = ()

    @property
    def numeric(self) -> bool:
        return self.type in ("int", "float", "money")


def _is_field_type(kind: str) -> TypeGuard[FieldType]:
    return kind in FIELD_TYPES


def _is_role(token: str) -> TypeGuard[Role]:
    return token in ROLES


def parse_field(text: str) -> FieldT:
    """Parse the shorthand ``name:type [lo..hi] [a|b|c] [role ...]``.

    >>> parse_field("seats:int 1..300 capacity")
    FieldT(name='seats', type='int', lo=1.0, hi=300.0, choices=(), roles=('capacity',))
    >>> parse_field("tier:choice basic|plus|pro").choices
    ('basic', 'plus', 'pro')
    """
    head, *rest = text.split()
    if ":" not in head:
        raise ValueError(f"field {text!r}: expected 'name:type ...'")
    name, kind = head.split(":", 1)
    if not _SNAKE.match(name) or name in _RESERVED:
        raise ValueError(f"field {text!r}: name must be snake_case and not one of {sorted(_RESERVED)}")
    if not _is_field_type(kind):
        raise ValueError(f"field {text!r}: type {kind!r} is not one of {FIELD_TYPES}")
    lo = hi = None
    choices: tuple[str, ...] = ()
    roles: list[Role] = []
    for token in rest:
        if ".." in token:
            low, high = token.split("..", 1)
            lo, hi = float(low), float(high)
            if lo > hi:
                raise ValueError(f"field {text!r}: empty range {token}")
        elif "|" in token:
            choices = tuple(token.split("|"))
        elif _is_role(token):
            roles.append(token)
        else:
            raise ValueError(f"field {text!r}: unknown token {token!r} (roles: {ROLES})")
    if kind == "choice" and len(choices) < 2:
        raise ValueError(f"field {text!r}: a choice needs at least two options, as a|b")
    if kind in ("int", "float", "money") and lo is None:
        lo, hi = (0.0, 1000.0) if kind != "int" else (0.0, 100.0)
    if "capacity" in roles and kind != "int":
        raise ValueError(f"field {text!r}: a capacity must be an int")
    if "balance" in roles and kind not in ("int", "money", "float"):
        raise ValueError(f"field {text!r}: a balance must be numeric")
    if "deadline" in roles and kind != "datetime":
        raise ValueError(f"field {text!r}: a deadline must be a datetime")
    return FieldT(name=name, type=kind, lo=lo, hi=hi, choices=choices, roles=tuple(roles))


class Transition(_Strict):
    """A named lifecycle move: from any of `sources` to `target` (e.g. approve: submitted -> approved)."""

    verb: str
    sources: tuple[str, ...]
    target: str


class EntityT(_Strict):
    """An entity template: a table with typed fields, a parent, and a lifecycle."""

    name: str = Field(description="Singular snake_case, e.g. 'booking'.")
    plural: str = Field("", description="Plural snake_case (default: name + 's').")
    prefix: str = Field(description="Id prefix of records in initial states, e.g. 'BK'.")
    fields: tuple[FieldT, ...]
    parent: str | None = Field(None, description="Entity this one belongs to (foreign key <parent>_id).")
    refs: tuple[str, ...] = Field((), description="Other entities referenced (more foreign keys).")
    states: tuple[str, ...] = Field((), description="Lifecycle states; the first is a new record's.")
    transitions: tuple[Transition, ...] = ()
    words: tuple[str, ...] = Field((), description="Label values for initial states, e.g. room names.")

    @field_validator("fields", mode="before")
    @classmethod
    def _parse_fields(cls, value: object) -> object:
        if isinstance(value, (list, tuple)):
            return tuple(parse_field(v) if isinstance(v, str) else v for v in value)
        return value

    @field_validator("transitions", mode="before")
    @classmethod
    def _parse_transitions(cls, value: object) -> object:
        """Accept {"approve": "submitted,draft>approved"}."""
        if isinstance(value, dict):
            out = []
            for verb, move in value.items():
                sources, _, target = move.partition(">")
                out.append(Transition(verb=verb, sources=tuple(s.strip() for s in sources.split(",")),
                                      target=target.strip()))
            return tuple(out)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> EntityT:
        if not _SNAKE.match(self.name):
            raise ValueError(f"entity {self.name!r}: name must be snake_case")
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"entity {self.name!r}: duplicate field names")
        labels = [f for f in self.fields if "label" in f.roles]
        if len(labels) != 1 or labels[0].type not in ("text", "name", "code", "email"):
            raise ValueError(f"entity {self.name!r}: exactly one text-like field must have the role 'label'")
        for t in self.transitions:
            unknown = [s for s in (*t.sources, t.target) if s not in self.states]
            if unknown:
                raise ValueError(f"entity {self.name!r}: transition {t.verb!r} names unknown states {unknown}")
        if self.transitions and len(self.states) < 2:
            raise ValueError(f"entity {self.name!r}: transitions need at least two states")
        return self

    @property
    def table(self) -> str:
        return self.plural or self.name + "s"


class Variant(_Strict):
    """A niche of a domain: its own title and description, and its entities under the niche's names.

    `rename` maps an entity of the domain to the niche's name for it (`"room": "chalet"`, or
    `"room": "chalet:chalets"` with its plural); fields named after a renamed entity follow
    (`room_type` becomes `chalet_type`). `words` replaces the label values of an entity (by its
    new name). A variant is designed as a domain of its own (synth/procedural/ontology/variants.py):
    the same rules, its own tables and topics.
    """

    id: str = Field(description="Snake_case, unique across every domain and variant, e.g. 'ski_lodge'.")
    title: str
    description: str
    actor: str | None = None
    rename: dict[str, str] = Field(default_factory=dict)
    words: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names(self) -> Variant:
        if not _SNAKE.match(self.id):
            raise ValueError(f"variant {self.id!r}: id must be snake_case")
        for old, new in self.rename.items():
            name, _, plural = new.partition(":")
            if not _SNAKE.match(name) or (plural and not _SNAKE.match(plural)):
                raise ValueError(f"variant {self.id!r}: rename {old!r} -> {new!r} is not snake_case[:plural]")
        return self


class Domain(_Strict):
    """A domain: a sector, a title, a one-sentence description, 3+ related entities, and its niches."""

    id: str
    sector: str
    title: str = Field(description="E.g. 'Hotel front desk'.")
    description: str = Field(description="One sentence: who uses it and what for.")
    actor: str = Field("operator", description="Who calls the tools, e.g. 'front-desk clerk'.")
    entities: tuple[EntityT, ...]
    variants: tuple[Variant, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Domain:
        if self.sector not in SECTORS:
            raise ValueError(f"domain {self.id!r}: sector {self.sector!r} is not one of {SECTORS}")
        names = {e.name for e in self.entities}
        if len(names) != len(self.entities) or len(self.entities) < 3:
            raise ValueError(f"domain {self.id!r}: needs 3+ entities with distinct names")
        for e in self.entities:
            for other in (e.parent, *e.refs):
                if other is not None and (other not in names or other == e.name):
                    raise ValueError(f"domain {self.id!r}: entity {e.name!r} refers to unknown entity {other!r}")
        if not any(e.transitions for e in self.entities):
            raise ValueError(f"domain {self.id!r}: at least one entity needs a lifecycle with transitions")
        for v in self.variants:
            unknown = sorted(set(v.rename) - names)
            if unknown:
                raise ValueError(f"domain {self.id!r}: variant {v.id!r} renames unknown entities {unknown}")
            renamed = {v.rename.get(n, n).partition(":")[0] for n in names}
            if len(renamed) != len(names):
                raise ValueError(f"domain {self.id!r}: variant {v.id!r} gives two entities one name")
            unknown = sorted(set(v.words) - renamed)
            if unknown:
                raise ValueError(f"domain {self.id!r}: variant {v.id!r} has words for unknown entities {unknown}")
        return self
