"""The procedural designer: a domain and a seed in, a blueprint out (no model).

Variation comes from real choices, all drawn from one `random.Random(seed)`: which entities
(a connected subset around a focus entity with a lifecycle), which optional fields each keeps,
whether entities carry bookkeeping fields, which tools (archetypes, lifecycle moves, names from
verb synonyms), and the difficulty knobs: how many fields an update or a transition writes (so
|Δ| runs from 0 to 12+), ownership and time-window checks, capacities and quotas, cascades.
"""

from __future__ import annotations

import hashlib
import random

from synth.blueprint import EDITABLE, Blueprint, EntitySpec, FieldSpec, ToolRecipe
from synth.ontology.schema import Domain, EntityT, FieldT

__all__ = ["design", "env_id_for", "topic_text"]

_LOOKUP = ("get", "show", "fetch", "view", "lookup")
_LIST = ("list", "browse", "find")
_SUMMARY = ("summarize_{p}", "count_{p}", "{p}_overview", "{p}_report")
_CREATE = ("create", "register", "add", "open", "record", "new")
_UPDATE = ("update_{e}", "edit_{e}", "amend_{e}", "revise_{e}", "change_{e}_details", "update_{e}_details")
_DELETE = ("delete", "remove", "purge", "discard")
_INCREASE = ("add_to_{f}", "increase_{f}", "top_up_{f}", "credit_{f}")
_DECREASE = ("deduct_{f}", "decrease_{f}", "draw_down_{f}", "debit_{f}", "use_{f}")
_RESERVED_LOCALS = {"rows", "row", "held", "moved", "amount", "status", "self"}


def env_id_for(domain: Domain, seed: int | str) -> str:
    """A stable, readable id: the domain and a short hash of the seed."""
    return f"{domain.id.replace('_', '-')}-{hashlib.sha256(f'{domain.id}:{seed}'.encode()).hexdigest()[:6]}"


def _pick_entities(domain: Domain, rng: random.Random, focus_name: str | None = None,
                   size: int | None = None) -> list[EntityT]:
    """A connected subset of 2-4 entities around a focus entity that has a lifecycle."""
    by_name = {e.name: e for e in domain.entities}
    movers = [e for e in domain.entities if e.transitions]
    focus = by_name[focus_name] if focus_name in by_name and by_name[focus_name].transitions else rng.choice(movers)
    chosen = [focus.name]
    want = max(1, min(size, len(domain.entities))) if size else rng.randint(2, min(4, len(domain.entities)))
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


def topic_text(domain_title: str, entities: list[EntitySpec], tools: list[ToolRecipe]) -> str:
    """The short topic line that dedup embeds: domain, focus entity with its moves, companions."""
    focus = entities[0]
    verbs = sorted({t.name.removesuffix("_" + focus.name).replace("_", " ") for t in tools
                    if t.entity == focus.name and t.archetype == "transition"})
    others = ", ".join(e.table.replace("_", " ") for e in entities[1:])
    moves = f" ({', '.join(verbs)})" if verbs else ""
    return f"{domain_title}: {focus.table.replace('_', ' ')}{moves}" + (f" with {others}" if others else "")


def _cls(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _field_spec(f: FieldT) -> FieldSpec:
    kind = f.type
    return FieldSpec(name=f.name, kind=kind, unique="unique" in f.roles, lo=f.lo, hi=f.hi, choices=list(f.choices),
                     nullable=kind == "datetime", roles=[r for r in f.roles if r != "unique"])


def _entity_spec(e: EntityT, names: set[str], rng: random.Random, keep: float, bookkeeping: bool) -> EntitySpec:
    fields: list[FieldSpec] = []
    links = [(n, "parent" if n == e.parent else "ref") for n in (e.parent, *e.refs) if n and n in names]
    for target, _how in links:
        fields.append(FieldSpec(name=f"{target}_id", kind="fk", fk=target,
                                description=f"The {target.replace('_', ' ')} this {e.name.replace('_', ' ')} belongs to"))
    for f in e.fields:
        essential = bool({"label", "core", "capacity", "balance", "deadline"} & set(f.roles))
        if f.name in names or f.name in _RESERVED_LOCALS or f.name.endswith("_id"):
            continue
        if essential or rng.random() < keep:
            fields.append(_field_spec(f))
    if e.states:
        fields.append(FieldSpec(name="status", kind="status", choices=list(e.states),
                                description="Where it is in its lifecycle"))
    if bookkeeping:
        fields.append(FieldSpec(name="version", kind="version", description="Bumped by every change"))
        fields.append(FieldSpec(name="updated_at", kind="stamp", nullable=True, description="Time of the last change"))
    label = next(f.name for f in e.fields if "label" in f.roles)
    parent = e.parent if e.parent in names else None
    return EntitySpec(name=e.name, cls=_cls(e.name), table=e.table, prefix=e.prefix, label=label, parent=parent,
                      fields=fields, states=list(e.states), ends=_ends(e), rows=rng.randint(4, 8), words=list(e.words),
                      description=f"A {e.name.replace('_', ' ')}")


def _ends(e: EntityT) -> list[str]:
    leaving = {s for t in e.transitions for s in t.sources}
    return [s for s in e.states if s not in leaving]


def _editable(e: EntitySpec) -> list[str]:
    return [f.name for f in e.fields if f.kind in EDITABLE and "label" not in f.roles]


def _choose(pool: list[ToolRecipe], focus: str, rng: random.Random) -> list[ToolRecipe]:
    """Keep 5-11 tools: a read, a move of the focus entity's lifecycle, then a random rest."""
    reads = [t for t in pool if t.archetype in ("lookup", "list", "summary")]
    moves = [t for t in pool if t.archetype == "transition" and t.entity == focus] or \
        [t for t in pool if t.archetype not in ("lookup", "list", "summary")]
    keep = [rng.choice(reads), rng.choice(moves)] + [t for t in pool if t.archetype == "cascade"]
    rest = [t for t in pool if t not in keep]
    keep += rng.sample(rest, min(len(rest), rng.randint(3, 9)))
    return [t for t in pool if t in keep]


def design(domain: Domain, seed: int, *, size_class: str = "medium", focus: str | None = None,
           size: int | None = None, width: int | None = None) -> Blueprint:
    """Design one environment of `domain`; the same arguments always give the same blueprint.

    `size_class` (small | medium | large, see synth.blueprint.SIZES) sets how many tables, tools
    and seed rows the env aims at; it is recorded as `Blueprint.size`. `focus`, `size` (domain
    entities) and `width` (how many optional fields an update offers) override the seeded
    choices: the LLM backend's blueprint mode lets the model make them.
    """
    rng = random.Random(f"{domain.id}:{seed}:{focus}:{size}:{width}" if (focus or size or width) else
                        f"{domain.id}:{seed}")
    picked = _pick_entities(domain, rng, focus, size)
    names = {e.name for e in picked}
    keep = rng.choice((0.45, 0.6, 0.75, 0.9, 1.0))
    entities = [_entity_spec(e, names, rng, keep, bookkeeping=rng.random() < 0.6) for e in picked]
    templates = {e.name: e for e in picked}
    tools: list[ToolRecipe] = []
    width = width or rng.choice((1, 2, 3, 4, 5, 6, 8, 10, 12))  # the |Δ| knob: fields written by updates and transitions
    used: set[str] = set()

    def add(recipe: ToolRecipe) -> None:
        if recipe.name not in used:
            used.add(recipe.name)
            tools.append(recipe)

    by_name = {e.name: e for e in entities}
    for e in entities:
        plural = e.table
        if rng.random() < 0.75:
            add(ToolRecipe(name=f"{rng.choice(_LOOKUP)}_{e.name}", archetype="lookup", entity=e.name))
        if rng.random() < 0.55:
            options = ["none"] + (["status"] if e.states else []) + (["parent"] if e.parent else [])
            flt = rng.choice(options)
            suffix = {"none": "", "status": "_by_status", "parent": f"_of_{e.parent}"}[flt]
            add(ToolRecipe(name=f"{rng.choice(_LIST)}_{plural}{suffix}", archetype="list", entity=e.name, filter=flt))
        if rng.random() < 0.3:
            add(ToolRecipe(name=rng.choice(_SUMMARY).format(p=plural), archetype="summary", entity=e.name))
    # writes: lifecycle moves first (the heart of a stateful env)
    for e in entities:
        template = templates[e.name]
        moves = list(template.transitions)
        if not moves:
            continue
        rng.shuffle(moves)
        count = len(moves) if e.name == picked[0].name or rng.random() < 0.5 else rng.randint(1, len(moves))
        for move in sorted(moves[:count], key=lambda m: m.verb):
            editable = [n for n in _editable(e) if not e.field(n).unique]
            extra = rng.sample(editable, min(len(editable), max(0, width - 1 - rng.randint(0, 1))))
            stamp = None
            if rng.random() < 0.6:
                stamp = f"{move.target}_at"
                if not e.has(stamp):
                    e.fields.append(FieldSpec(name=stamp, kind="stamp", nullable=True,
                                              description=f"When it became {move.target.replace('_', ' ')}"))
            owners = [f.name for f in e.fks if f.fk != e.parent]
            add(ToolRecipe(name=f"{move.verb}_{e.name}", archetype="transition", entity=e.name,
                           sources=list(move.sources), target=move.target, stamp=stamp, extra=sorted(extra),
                           # a time window binds moves out of a fresh record (confirm, approve...) only
                           deadline=(e.role("deadline") is not None and e.states[0] in move.sources
                                     and rng.random() < 0.7),
                           owner=rng.choice(owners) if owners and rng.random() < 0.5 else None,
                           touch=rng.random() < 0.8))
    creatable = [e for e in entities if e.parent] or entities
    for e in rng.sample(creatable, min(len(creatable), rng.randint(1, 2))):
        required = ("text", "name", "email", "phone", "code")  # no default in the schema: must be given
        params = [f.name for f in e.fields if f.kind in EDITABLE and ("label" in f.roles or f.unique
                                                                      or f.kind in required or rng.random() < 0.5)]
        parent = by_name.get(e.parent or "")
        verb = next(v for v in rng.sample(_CREATE, len(_CREATE)) if f"{v}_{e.name}" not in used)
        add(ToolRecipe(name=f"{verb}_{e.name}", archetype="create", entity=e.name, fields=params,
                       capacity=bool(parent and parent.role("capacity")) and rng.random() < 0.8,
                       quota=rng.randint(2, 5) if parent and rng.random() < 0.35 else None))
    updatable = [e for e in entities if len(_editable(e)) >= 1]
    for e in rng.sample(updatable, min(len(updatable), rng.randint(1, 2))):
        editable = _editable(e)
        k = max(1, min(len(editable), width + rng.randint(-1, 1)))
        add(ToolRecipe(name=rng.choice(_UPDATE).format(e=e.name), archetype="update", entity=e.name,
                       fields=sorted(rng.sample(editable, k)), touch=rng.random() < 0.7))
    for e in entities:
        balance = e.role("balance")
        if balance is None:
            continue
        for direction, names_ in (("decrease", _DECREASE), ("increase", _INCREASE)):
            if rng.random() < 0.6:
                add(ToolRecipe(name=f"{rng.choice(names_).format(f=balance.name)}", archetype="adjust",
                               entity=e.name, field=balance.name, direction=direction,
                               deadline=e.role("deadline") is not None and rng.random() < 0.4))
    if rng.random() < 0.5:
        e = rng.choice(entities)
        ends = [s for s in e.states[1:] if not any(m.sources and s in m.sources for m in templates[e.name].transitions)]
        sources = ([e.states[0]] + ends) if e.states and rng.random() < 0.7 else []
        verb = next((v for v in rng.sample(_DELETE, len(_DELETE)) if f"{v}_{e.name}" not in used), _DELETE[0])
        add(ToolRecipe(name=f"{verb}_{e.name}", archetype="delete", entity=e.name, sources=sources))
    cascades = [(p, c) for p in entities for c in entities
                if c.parent == p.name and templates[p.name].transitions and templates[c.name].transitions]
    if cascades and rng.random() < 0.8:
        p, c = rng.choice(cascades)
        pm = rng.choice(templates[p.name].transitions)
        cm = max(templates[c.name].transitions, key=lambda m: (len(m.sources), m.verb))
        stamp = f"{cm.target}_at"
        if not c.has(stamp) and rng.random() < 0.7:
            c.fields.append(FieldSpec(name=stamp, kind="stamp", nullable=True,
                                      description=f"When it became {cm.target.replace('_', ' ')}"))
        add(ToolRecipe(name=f"{pm.verb}_{p.name}_with_{c.table}", archetype="cascade", entity=p.name,
                       sources=list(pm.sources), target=pm.target, child=c.name, child_sources=list(cm.sources),
                       child_target=cm.target, touch=rng.random() < 0.8))
    if not any(t.archetype in ("lookup", "list", "summary") for t in tools):
        e = entities[0]
        add(ToolRecipe(name=f"get_{e.name}", archetype="lookup", entity=e.name))
    tools = _choose(tools, entities[0].name, rng)
    focus = entities[0]
    plural_names = ", ".join(e.table.replace("_", " ") for e in entities)
    verbs = sorted({t.name.split("_")[0] for t in tools if t.archetype not in ("lookup", "list", "summary")})
    topic = topic_text(domain.title, entities, tools)
    description = (f"{domain.description} This environment covers {plural_names}, centred on the "
                   f"{focus.name.replace('_', ' ')} lifecycle ({' -> '.join(focus.states)}); its tools "
                   f"{', '.join(verbs[:6])} records.")
    env_id = env_id_for(domain, seed if not (focus or size or width) else f"{seed}:{focus}:{size}:{width}")
    return Blueprint(env_id=env_id, name=f"{domain.title} ({focus.table.replace('_', ' ')})", domain=domain.id,
                     sector=domain.sector, topic=topic, description=description, actor=domain.actor,
                     entities=entities, tools=tools, seed=seed, size=size_class,  # type: ignore[arg-type]
                     knobs={"field_keep": keep, "write_width": width, "tools": len(tools), "entities": len(entities)})
