"""The procedural designer: a domain, a seed and a size in, a blueprint out (no model).

Variation comes from real choices, all drawn from one `random.Random`: which domain entities (a
connected subset around a focus entity with a lifecycle), which support tables join them
(synth/procedural/ontology/support.py: audit log, payments, staff, addresses...; how many is the size
class's business), which optional fields each keeps, whether entities carry bookkeeping fields,
and which tools (archetypes, lifecycle moves, names from verb synonyms).

Tools take what a real API takes (synth/procedural/naturalness.py): an id or a natural key, the
values the action needs (a reason for a cancellation, a quantity and a payment method for an
order line, an amount for a transfer), optional fields for a partial update. Large deltas come
from domain semantics -- compound operations (`place`: a new record, its parent's counter and
total, a stock decrement, a payment drawn from the payer's balance or another method;
`transfer`: two balances, a fee and a ledger entry), cascades, derived fields and derived
records (status history, audit log) -- never from echoing record fields as arguments.

The designer also declares the env's invariants (min <= max, start < end, counters and totals
equal what their children say, balances >= 0, past dates not after the env clock), which the
compiler's code keeps and the state generator honours.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from typing import Literal

from catalog.plan import Invariant
from synth.procedural.blueprint import EDITABLE, READS, SIZES, Blueprint, EntitySpec, FieldSpec, SizeName, ToolRecipe
from synth.procedural.compiler import per_unit
from synth.procedural.ontology.schema import Domain, EntityT, FieldT, Transition
from synth.procedural.ontology.support import SUPPORT, SupportT, support_entity

__all__ = ["design", "env_id_for", "topic_text"]

_LOOKUP = ("get", "show", "fetch", "view", "lookup")
_LIST = ("list", "browse")
_SUMMARY = ("summarize_{p}", "count_{p}", "{p}_overview", "{p}_report")
_CREATE = ("create", "register", "add", "open", "record", "new")
_UPDATE = ("update_{e}", "edit_{e}", "amend_{e}", "revise_{e}", "change_{e}_details", "update_{e}_details")
_DELETE = ("delete", "remove", "purge", "discard")
_INCREASE = ("add_to_{f}", "increase_{f}", "top_up_{f}", "credit_{f}")
_DECREASE = ("deduct_{f}", "decrease_{f}", "draw_down_{f}", "debit_{f}", "use_{f}")
_RESERVED_LOCALS = {"rows", "row", "held", "moved", "amount", "status", "self", "was", "sender", "receiver", "reason",
                    "payment_method"}
# moves whose target is a refusal, a stop or a reversal take a reason (kept in `<target>_reason`)
_REASONED = re.compile(r"cancel|reject|declin|denied|deny|suspend|refund|void|withdr|revok|terminat|fail|dismiss|"
                       r"block|hold|quarantin|return|lost|no_show|expire|abandon|written_off|archiv|frozen|hidden|"
                       r"paused|closed|disabled|flagged|lapsed|escalat")
# a datetime naming the record's own creation event: creates set it to the clock (role "now")
_CREATION_EVENT = re.compile(r"(placed|opened|sold|issued|logged|paid|posted|changed|uploaded|hired|joined|started|"
                             r"created|received|submitted|recorded|filed|reported|registered|admitted|enrolled|signed|"
                             r"written|queued|ordered|arrived|collected|taken|read|measured|detected|raised|installed)"
                             r"_(at|on)$")
_PAYABLE = re.compile(r"order|book|reserv|appoint|ticket|sale|rental|subscri|enrol|registration|session|purchase")
_LINE = re.compile(r"item|line|usage|fill|application")
_QUANTITY = re.compile(r"quantit|qty|units|seats|tickets|nights|guests|passengers|count|pieces")
_PRICE = re.compile(r"price|fare|fee|cost|total|charge|rate")


def env_id_for(domain: Domain, seed: int | str) -> str:
    """A stable, readable id: the domain and a short hash of the seed."""
    return f"{domain.id.replace('_', '-')}-{hashlib.sha256(f'{domain.id}:{seed}'.encode()).hexdigest()[:6]}"


def _pick_entities(domain: Domain, rng: random.Random, want: int, focus_name: str | None = None) -> list[EntityT]:
    """A connected subset of `want` entities around a focus entity that has a lifecycle."""
    by_name = {e.name: e for e in domain.entities}
    movers = [e for e in domain.entities if e.transitions]
    focus = by_name[focus_name] if focus_name in by_name and by_name[focus_name].transitions else rng.choice(movers)
    chosen = [focus.name]
    want = max(1, min(want, len(domain.entities)))
    while len(chosen) < want:
        frontier = []
        for name in chosen:
            e = by_name[name]
            frontier += [n for n in (e.parent, *e.refs) if n]
            frontier += [o.name for o in domain.entities if name in (o.parent, *o.refs)]
        frontier = sorted({n for n in frontier if n not in chosen})
        if not frontier:
            break
        chosen.append(rng.choice(frontier))
    return [focus] + [e for e in domain.entities if e.name in chosen and e.name != focus.name]


def _pick_support(domain_entities: list[EntityT], rng: random.Random, count: int,
                  wanted: list[str]) -> list[tuple[SupportT, str | None]]:
    """`count` support templates (the `wanted` ones first, each with what it needs), bound to their hosts."""
    taken = {e.name for e in domain_entities} | {e.table for e in domain_entities}
    taken |= {f.name for e in domain_entities for f in e.fields}  # a table named like a field would shadow it
    person = _person(domain_entities)
    focus = domain_entities[0].name
    by_name = {t.name: t for t in SUPPORT}
    order = [n for n in wanted if n in by_name] + [t.name for t in rng.sample(SUPPORT, len(SUPPORT))]
    chosen: list[str] = []

    def take(name: str) -> bool:
        template = by_name[name]
        if name in chosen:
            return True
        if name in taken or (template.host == "person" and person is None):
            return False
        if any(not take(need) for need in template.needs if need not in chosen):
            return False
        chosen.append(name)
        return True

    for name in order:
        if len(chosen) >= count and name not in wanted:
            break
        if name not in chosen:
            needed = [n for n in _needs(by_name, name) if n not in chosen]
            if len(chosen) + 1 + len(needed) > count:  # wanted ones too: a size's table range holds
                continue
            take(name)
    hosts = {"none": None, "person": person, "focus": focus}
    return [(by_name[n], hosts[by_name[n].host]) for n in chosen]


def _needs(by_name: dict[str, SupportT], name: str) -> list[str]:
    """Every support template `name` needs, directly or through what it needs."""
    found: list[str] = []
    pending = list(by_name[name].needs)
    while pending:
        need = pending.pop()
        if need not in found:
            found.append(need)
            pending += by_name[need].needs
    return found


def _person(entities: list[EntityT]) -> str | None:
    """The domain entity a person is: one with an email field, else one labelled by a name."""
    for test in (lambda f: f.type == "email", lambda f: f.type == "name" and "label" in f.roles):
        for e in entities:
            if any(test(f) for f in e.fields):
                return e.name
    return None


def topic_text(domain_title: str, entities: list[EntitySpec], tools: list[ToolRecipe]) -> str:
    """The short topic line that dedup embeds: domain, focus entity with its moves, companions."""
    focus = entities[0]
    verbs = sorted({t.name.removesuffix("_" + focus.name).replace("_", " ") for t in tools
                    if t.entity == focus.name and t.archetype == "transition"})
    others = ", ".join(e.table.replace("_", " ") for e in entities[1:] if not e.support)
    moves = f" ({', '.join(verbs)})" if verbs else ""
    return f"{domain_title}: {focus.table.replace('_', ' ')}{moves}" + (f" with {others}" if others else "")


def _cls(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _field_spec(f: FieldT) -> FieldSpec:
    kind = f.type
    return FieldSpec(name=f.name, kind=kind, unique="unique" in f.roles, lo=f.lo, hi=f.hi, choices=list(f.choices),
                     nullable=kind == "datetime", roles=[r for r in f.roles if r != "unique"])


def _entity_spec(e: EntityT, names: set[str], rng: random.Random, keep: float, bookkeeping: bool,
                 rows: int, support: bool = False) -> EntitySpec:
    fields: list[FieldSpec] = []
    links = [n for n in (e.parent, *e.refs) if n and n in names]
    for target in links:
        fields.append(FieldSpec(name=f"{target}_id", kind="fk", fk=target,
                                description=f"The {target.replace('_', ' ')} this {e.name.replace('_', ' ')} belongs to"))
    for f in e.fields:
        essential = bool({"label", "core", "capacity", "balance", "deadline", "unique"} & set(f.roles)) or support
        if not support and (f.name in names or f.name in _RESERVED_LOCALS or f.name.endswith("_id")):
            continue
        if essential or rng.random() < keep:
            fields.append(_field_spec(f))
    if e.states:
        fields.append(FieldSpec(name="status", kind="status", choices=list(e.states),
                                description="Where it is in its lifecycle"))
    for spec in fields:  # a past event of the record (placed_at, opened_on): set to the clock when it is created
        if spec.kind == "datetime" and "deadline" not in spec.roles and _CREATION_EVENT.search(spec.name):
            spec.roles.append("now")
    if bookkeeping:
        fields.append(FieldSpec(name="version", kind="version", description="Bumped by every change"))
        fields.append(FieldSpec(name="updated_at", kind="stamp", nullable=True, description="Time of the last change"))
    label = next(f.name for f in e.fields if "label" in f.roles)
    parent = e.parent if e.parent in names else None
    return EntitySpec(name=e.name, cls=_cls(e.name), table=e.table, prefix=e.prefix, label=label, parent=parent,
                      fields=fields, states=list(e.states), ends=_ends(e), rows=rows, words=list(e.words),
                      description=f"A {e.name.replace('_', ' ')}", support=support)


def _ends(e: EntityT) -> list[str]:
    leaving = {s for t in e.transitions for s in t.sources}
    return [s for s in e.states if s not in leaving]


def _editable(e: EntitySpec) -> list[str]:
    return [f.name for f in e.fields if f.kind in EDITABLE and "label" not in f.roles
            and not {"derived", "fixed", "reason"} & set(f.roles)]


def _role(f: FieldSpec, role: str) -> None:
    if role not in f.roles:
        f.roles.append(role)


def _add_field(e: EntitySpec, spec: FieldSpec) -> str:
    if not e.has(spec.name):
        e.fields.append(spec)
    return spec.name


# --- invariants ------------------------------------------------------------------------------------

def _pair_of(name: str) -> str | None:
    for a, b in (("min_", "max_"), ("start", "end"), ("floor_price", "asking_price"), ("check_in", "check_out"),
                 ("_from", "_to")):
        if a in name:
            return name.replace(a, b, 1)
    return None


def _field_invariants(e: EntitySpec) -> list[Invariant]:
    """What the fields say by themselves: ordered pairs, balances >= 0, past dates not after the clock."""
    out: list[Invariant] = []
    for f in e.fields:
        other = _pair_of(f.name)
        if other and e.has(other):
            g = e.field(other)
            numeric = {"int", "float", "money"}
            if f.kind in numeric and g.kind in numeric:
                out.append(Invariant(kind="le", collection=e.table, field=f.name, other=other,
                                     description=f"{f.name} <= {other}"))
            elif f.kind == g.kind == "datetime":
                out.append(Invariant(kind="lt", collection=e.table, field=f.name, other=other,
                                     description=f"{f.name} < {other}"))
        if "balance" in f.roles or "derived" in f.roles:
            out.append(Invariant(kind="nonneg", collection=e.table, field=f.name, description=f"{f.name} >= 0"))
        if f.kind == "stamp" or "now" in f.roles:
            out.append(Invariant(kind="not_after_clock", collection=e.table, field=f.name,
                                 description=f"{f.name} is not in the future"))
    return out


# --- tools ------------------------------------------------------------------------------------------

def _reason_field(e: EntitySpec, target: str) -> str:
    return _add_field(e, FieldSpec(name=f"{target}_reason", kind="text", nullable=True,
                                   description=f"Why it became {target.replace('_', ' ')}", roles=["reason"]))


def _place_recipe(bp_entities: dict[str, EntitySpec], c: EntitySpec, rng: random.Random,
                  used: set[str]) -> tuple[ToolRecipe, list[Invariant]] | None:
    """A compound placement of a child record: stock, counter and total on its parent, payment."""
    if not c.parent or c.support and c.name not in ("invoice_line", "purchase_order_line"):
        return None
    own = not c.support  # support lines (invoice, purchase order) keep totals; only domain records are paid for
    parent = bp_entities[c.parent]
    parent_fk = next(f for f in c.fks if f.fk == parent.name)
    quantity = next((f.name for f in c.fields if f.kind == "int" and _QUANTITY.search(f.name)), None)
    stock = None
    for fk in c.fks:
        target = bp_entities[fk.fk or ""]
        balance = target.role("balance")
        if own and quantity and balance is not None and balance.kind == "int" and target.name != c.name:
            stock = f"{fk.name}.{balance.name}"
            break
    payer = None
    for fk in c.fks:
        target = bp_entities[fk.fk or ""]
        balance = target.role("balance")
        if own and balance is not None and balance.kind == "money" and target.name != c.name:
            payer = fk.name
            break
    priced = next((f.name for f in c.fields if f.kind == "money" and _PRICE.search(f.name)
                   and "derived" not in f.roles), None)
    # a payment is recorded for what a customer buys or books (or draws from a balance), not for a line of it
    payable = payer is not None or (_PAYABLE.search(c.name) is not None and _LINE.search(c.name) is None)
    price = priced if own and payable and not c.has("payment_method") else None
    if stock is None and priced is None:
        return None
    invariants = [Invariant(kind="count_of_children", collection=parent.table,
                            field=_add_field(parent, FieldSpec(name=f"{c.name}_count", kind="int", lo=0, hi=100000,
                                                               description=f"How many {c.table.replace('_', ' ')} it has",
                                                               roles=["derived"])),
                            child=c.table, via=parent_fk.name, description=f"counts its {c.table}")]
    total = next((f for f in parent.fields if f.kind == "money" and re.search(r"total|amount", f.name)
                  and "balance" not in f.roles), None)
    if total is not None and priced and quantity and per_unit(priced):
        _role(total, "derived")
        total.lo = 0
        invariants.append(Invariant(kind="sum_of_children", collection=parent.table, field=total.name, child=c.table,
                                    via=parent_fk.name, child_field=priced, times=quantity,
                                    description=f"{total.name} = sum of {priced} x {quantity} over its {c.table}"))
    for name in (priced, quantity):
        if name:
            _role(c.field(name), "fixed")  # set when placed; a later edit would break the totals
    copied = []
    if stock:
        target = bp_entities[c.field(stock.partition(".")[0]).fk or ""]
        copied = [f.name for f in c.fields if f.kind == "money" and target.has(f.name)
                  and target.field(f.name).kind == "money"]
    required = ("text", "name", "email", "phone", "code")
    params = [f.name for f in c.fields if f.kind in EDITABLE and f.name not in copied and "derived" not in f.roles
              and "reason" not in f.roles
              and ("label" in f.roles or f.unique or f.kind in required or f.name in (priced, quantity)
                   or rng.random() < 0.4)]
    params = _with_pairs(c, params)
    verb = ("place" if "order" in c.name else "book" if re.search(r"book|reserv|appoint|session|ticket|enrol", c.name)
            else "add")
    name = f"{verb}_{c.name}"
    if name in used:
        return None
    return ToolRecipe(name=name, archetype="place", entity=c.name, fields=params, stock=stock, quantity=quantity,
                      payer=payer, price=price, audit=True, touch=rng.random() < 0.7), invariants


def _pool(domain: Domain, entities: list[EntitySpec], templates: dict[str, EntityT], rng: random.Random,
          width: int, history: bool) -> tuple[list[ToolRecipe], list[ToolRecipe], list[Invariant]]:
    """Every candidate tool (names drawn from synonyms) and the ones the env must keep."""
    tools: list[ToolRecipe] = []
    required: list[ToolRecipe] = []
    invariants: list[Invariant] = []
    used: set[str] = set()
    by_name = {e.name: e for e in entities}
    focus = entities[0]
    audit_log = any(e.name == "audit_log" and e.support for e in entities)

    def add(recipe: ToolRecipe, must: bool = False) -> None:
        if recipe.name not in used:
            used.add(recipe.name)
            tools.append(recipe)
            if must:
                required.append(recipe)

    for e in entities:
        system = e.support and e.name in ("audit_log", "status_change", "ledger_entry", "payment")
        add(ToolRecipe(name=f"{rng.choice(_LOOKUP)}_{e.name}", archetype="lookup", entity=e.name))
        keys = [f for f in e.fields if f.unique and f.kind in ("email", "code", "text")]
        if keys:
            key = next((f for f in keys if f.kind == "email"), keys[0])
            add(ToolRecipe(name=f"find_{e.name}_by_{key.name}", archetype="find", entity=e.name, key=key.name),
                must=not e.support)
        options: list[Literal["none", "status", "parent"]] = ["none"]
        if e.states:
            options.append("status")
        if e.parent:
            options.append("parent")
        flt = rng.choice(options) if not system else ("parent" if e.parent else "none")
        suffix = {"none": "", "status": "_by_status", "parent": f"_of_{e.parent}"}[flt]
        add(ToolRecipe(name=f"{rng.choice(_LIST)}_{e.table}{suffix}", archetype="list", entity=e.name, filter=flt),
            must=system and e.name != "payment")
        if rng.random() < 0.3 and not system:
            add(ToolRecipe(name=rng.choice(_SUMMARY).format(p=e.table), archetype="summary", entity=e.name))
    # compound placements replace a plain create of the child; a first pass marks the derived fields
    for c in entities:
        _place_recipe(by_name, c, random.Random(0), used)
    placed: set[str] = set()
    for c in entities:
        found = _place_recipe(by_name, c, rng, used)
        if found is not None:
            recipe, extra = found
            add(recipe, must=not c.support)
            invariants += extra
            placed.add(c.name)
    for e in entities:
        template = templates.get(e.name)
        moves = list(template.transitions) if template else []
        for move in sorted(moves, key=lambda m: m.verb):
            if e.support and e.name == "payment":
                continue
            reason = _reason_field(e, move.target) if _REASONED.search(move.target) else None
            touch = rng.random() < 0.8
            bumps = touch and e.has("version")
            # a move with a reason (cancel, reject, suspend) is audited where the env keeps an audit log
            audit = bool(reason) and audit_log and rng.random() < 0.6
            stamp = None
            if rng.random() < 0.6 and not (audit and bumps):
                stamp = _add_field(e, FieldSpec(name=f"{move.target}_at", kind="stamp", nullable=True,
                                                description=f"When it became {move.target.replace('_', ' ')}"))
            owners = [f.name for f in e.fks if f.fk != e.parent]
            add(ToolRecipe(name=f"{move.verb}_{e.name}", archetype="transition", entity=e.name,
                           sources=list(move.sources), target=move.target, stamp=stamp, reason=reason,
                           # a time window binds moves out of a fresh record (confirm, approve...) only
                           deadline=(e.role("deadline") is not None and e.states[0] in move.sources
                                     and rng.random() < 0.7),
                           owner=rng.choice(owners) if owners and rng.random() < 0.4 else None,
                           history=history and not bumps and not audit, audit=audit, touch=touch),
                must=e.name == focus.name)
    for e in entities:
        if e.support and e.name in ("audit_log", "status_change", "ledger_entry", "payment"):
            continue
        required_kinds = ("text", "name", "email", "phone", "code")  # no default in the schema: must be given
        params = [f.name for f in e.fields if f.kind in EDITABLE and "derived" not in f.roles and "reason" not in f.roles
                  and ("label" in f.roles or f.unique or f.kind in required_kinds or rng.random() < 0.5)]
        params = _with_pairs(e, params)
        parent = by_name.get(e.parent or "")
        verb = next((v for v in rng.sample(_CREATE, len(_CREATE)) if f"{v}_{e.name}" not in used), "new")
        if e.name not in placed:
            add(ToolRecipe(name=f"{verb}_{e.name}", archetype="create", entity=e.name, fields=params,
                           capacity=bool(parent and parent.role("capacity")) and rng.random() < 0.8,
                           quota=rng.randint(2, 5) if parent and rng.random() < 0.35 else None))
        editable = [n for n in _editable(e)]
        if editable:
            k = max(1, min(len(editable), 4, width + rng.randint(-1, 1)))
            add(ToolRecipe(name=rng.choice(_UPDATE).format(e=e.name), archetype="update", entity=e.name,
                           fields=sorted(rng.sample(editable, k)), touch=rng.random() < 0.7))
        balance = e.role("balance")
        if balance is not None:
            ways: tuple[tuple[Literal["decrease", "increase"], tuple[str, ...]], ...] = (
                ("decrease", _DECREASE), ("increase", _INCREASE))
            for direction, names_ in ways:
                if rng.random() < 0.7:
                    add(ToolRecipe(name=f"{rng.choice(names_).format(f=balance.name)}", archetype="adjust",
                                   entity=e.name, field=balance.name, direction=direction,
                                   deadline=e.role("deadline") is not None and rng.random() < 0.4))
            if not e.support and rng.random() < 0.8:
                add(ToolRecipe(name=f"transfer_{balance.name}", archetype="transfer", entity=e.name,
                               field=balance.name, audit=True, touch=rng.random() < 0.7))
        if rng.random() < 0.4:
            moves_of = templates[e.name].transitions if e.name in templates else ()
            ends = [s for s in e.states[1:] if not any(s in m.sources for m in moves_of)]
            sources = ([e.states[0]] + ends) if e.states and rng.random() < 0.7 else []
            verb = next((v for v in rng.sample(_DELETE, len(_DELETE)) if f"{v}_{e.name}" not in used), _DELETE[0])
            add(ToolRecipe(name=f"{verb}_{e.name}", archetype="delete", entity=e.name, sources=sources,
                           audit=rng.random() < 0.5))
    cascades = [(p, c) for p in entities for c in entities if c.parent == p.name and p.name in templates
                and c.name in templates and templates[p.name].transitions and templates[c.name].transitions]
    for p, c in cascades:
        pairs = [(pm, cm) for pm in templates[p.name].transitions for cm in templates[c.name].transitions
                 if _goes_along(pm, cm)]
        if not pairs:
            continue
        pm, cm = rng.choice(sorted(pairs, key=lambda pair: (pair[0].verb, pair[1].verb)))
        if rng.random() < 0.7:
            _add_field(c, FieldSpec(name=f"{cm.target}_at", kind="stamp", nullable=True,
                                    description=f"When it became {cm.target.replace('_', ' ')}"))
        reason = _reason_field(p, pm.target) if _REASONED.search(pm.target) else None
        add(ToolRecipe(name=f"{pm.verb}_{p.name}_with_{c.table}", archetype="cascade", entity=p.name,
                       sources=list(pm.sources), target=pm.target, child=c.name, child_sources=list(cm.sources),
                       child_target=cm.target, reason=reason, audit=True, history=history, touch=rng.random() < 0.8),
            must=p.name == focus.name and rng.random() < 0.7)
    return tools, required, invariants


def _goes_along(parent_move: Transition, child_move: Transition) -> bool:
    """Whether a child's move follows from its parent's (cancel an order: cancel its lines).

    The same verb or end state, or both a stop; never a stop of the parent that moves the children on.
    """
    if parent_move.verb == child_move.verb or parent_move.target == child_move.target:
        return True
    return bool(_REASONED.search(parent_move.target)) and bool(_REASONED.search(child_move.target))


def _with_pairs(e: EntitySpec, params: list[str]) -> list[str]:
    """A create that sets one field of an ordered pair (min/max) sets both, so the pair's guard sees both."""
    out = list(params)
    for f in e.fields:
        other = _pair_of(f.name)
        if other and e.has(other) and (f.name in out) != (other in out) and e.field(other).kind in EDITABLE \
                and f.kind in EDITABLE:
            out += [n for n in (f.name, other) if n not in out]
    return [f.name for f in e.fields if f.name in out]


def _choose(pool: list[ToolRecipe], required: list[ToolRecipe], target: int, rng: random.Random,
            entities: list[EntitySpec]) -> list[ToolRecipe]:
    """Keep `target` tools: the required ones, a read of every table, then a random rest (pool order kept)."""
    must = list(dict.fromkeys(t.name for t in required))
    keep = list(must)
    for e in entities:
        if not any(t.entity == e.name and t.archetype in READS and t.name in keep for t in pool):
            reads = [t.name for t in pool if t.entity == e.name and t.archetype in READS]
            if reads:
                keep.append(rng.choice(reads))
    rest = [t for t in pool if t.name not in keep]
    writes = [t.name for t in rest if t.archetype not in READS]
    reads = [t.name for t in rest if t.archetype in READS]
    room = max(0, target - len(keep))
    n_writes = min(len(writes), max(room - len(reads), (room * 2 + 2) // 3))
    keep += rng.sample(writes, n_writes)
    keep += rng.sample(reads, min(len(reads), max(0, target - len(keep))))
    if len(keep) > target:  # too many required: drop the optional reads first, then optional writes
        kinds = {t.name: t.archetype for t in pool}
        extras = sorted((n for n in keep if n not in must), key=lambda n: (kinds[n] not in READS, rng.random()))
        for name in extras[:len(keep) - target]:
            keep.remove(name)
    chosen = set(keep)
    return [t for t in pool if t.name in chosen]


def design(domain: Domain, seed: int, *, size_class: SizeName = "medium", focus: str | None = None,
           size: int | None = None, width: int | None = None) -> Blueprint:
    """Design one environment of `domain`; the same arguments always give the same blueprint.

    `size_class` (small | medium | large, see synth.procedural.blueprint.SIZES) sets how many tables, tools
    and seed rows the env aims at; it is recorded as `Blueprint.size`. `focus`, `size` (domain
    entities) and `width` (how many optional fields an update offers) override the seeded
    choices: the LLM backend's blueprint mode lets the model make them.
    """
    klass = SIZES[size_class]
    custom = bool(focus or size or width)
    rng = random.Random(f"{domain.id}:{seed}:{size_class}:{focus}:{size}:{width}" if custom else
                        f"{domain.id}:{seed}" + ("" if size_class == "medium" else f":{size_class}"))
    lo, hi = klass.tables
    if size_class == "small":
        own = size or rng.randint(2, min(4, len(domain.entities)))
    elif size_class == "medium":
        own = size or rng.randint(2, min(5, len(domain.entities)))
    else:
        own = size or len(domain.entities)
    picked = _pick_entities(domain, rng, own, focus)
    tables = rng.randint(max(lo, len(picked)), hi)
    wanted = ["audit_log", "status_change", "payment", "ledger_entry"] if size_class != "small" else []
    wanted = wanted[:max(0, tables - len(picked))]
    support = _pick_support(picked, rng, tables - len(picked), wanted) if size_class != "small" else []
    names = {e.name for e in picked} | {t.name for t, _ in support}
    keep = rng.choice((0.6, 0.75, 0.9, 1.0))
    budget = max(klass.min_rows + 8, 6 * (len(picked) + len(support)))
    rows = max(4, math.ceil(budget / (len(picked) + len(support))))
    entities = [_entity_spec(e, names, rng, keep, bookkeeping=rng.random() < 0.6, rows=rows + rng.randint(0, 3))
                for e in picked]
    templates = {e.name: e for e in picked}
    for template, host in support:
        entity_t = support_entity(template, host)
        templates[entity_t.name] = entity_t
        entities.append(_entity_spec(entity_t, names, rng, 1.0, bookkeeping=False, rows=rows + rng.randint(0, 3),
                                     support=True))
    for e in entities:
        if e.name == "status_change" and e.support:
            e.field("reason").nullable = True
    width = width or rng.choice((1, 2, 3, 4))  # how many optional fields an update offers
    history = any(e.name == "status_change" and e.support for e in entities)
    pool, required, invariants = _pool(domain, entities, templates, rng, width, history)
    target = rng.randint(*klass.tools)
    tools = _choose(pool, required, target, rng, entities)
    kept_children = {t.entity for t in tools if t.archetype in ("place", "create")}
    invariants = [i for i in invariants if i.child is None or any(e.table == i.child and e.name in kept_children
                                                                  for e in entities)]
    derived = {(i.collection, i.field) for i in invariants}
    for e in entities:  # a derived field no kept tool maintains is an ordinary field again
        for f in e.fields:
            if "derived" in f.roles and (e.table, f.name) not in derived and f.name.endswith("_count"):
                f.roles.remove("derived")
    for e in entities:
        invariants += _field_invariants(e)
    focus_e = entities[0]
    own_tables = [e for e in entities if not e.support]
    plural_names = ", ".join(e.table.replace("_", " ") for e in own_tables)
    verbs = sorted({t.name.split("_")[0] for t in tools if t.archetype not in READS})
    topic = topic_text(domain.title, entities, tools)
    extra = f", with {len(entities) - len(own_tables)} support tables" if len(entities) > len(own_tables) else ""
    description = (f"{domain.description} This environment covers {plural_names}{extra}, centred on the "
                   f"{focus_e.name.replace('_', ' ')} lifecycle ({' -> '.join(focus_e.states)}); its tools "
                   f"{', '.join(verbs[:6])} records.")
    id_seed: int | str = f"{seed}:{focus}:{size}:{width}" if custom else seed
    if size_class != "medium":
        id_seed = f"{id_seed}:{size_class}"
    env_id = env_id_for(domain, id_seed)
    return Blueprint(env_id=env_id, name=f"{domain.title} ({focus_e.table.replace('_', ' ')})", domain=domain.id,
                     sector=domain.sector, topic=topic, description=description, actor=domain.actor,
                     entities=entities, tools=tools, seed=seed, size=size_class,
                     invariants=_unique(invariants),
                     knobs={"field_keep": keep, "update_width": width, "tools": len(tools), "entities": len(entities),
                            "size": size_class})


def _unique(invariants: list[Invariant]) -> list[Invariant]:
    seen: dict[str, Invariant] = {}
    for inv in invariants:
        seen.setdefault(inv.model_dump_json(), inv)
    return list(seen.values())
