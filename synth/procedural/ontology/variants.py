"""A domain's variants (niches) as domains of their own, and the order a run proposes them in.

A domain is written once; its niches (a hotel's ski lodge, hostel and airport hotel) reuse its
entities, fields, roles and lifecycles under the niche's own names. Renaming is what makes a
niche a distinct env and not the same env with a new title: its tables, foreign keys, fields
named after its entities and tool names are the niche's, so its topic and schema differ from
the base domain's (a title alone moves a topic's embedding too little to pass dedup).
"""

from __future__ import annotations

import re
from functools import cache

from synth.procedural.ontology.schema import Domain, EntityT, Variant

__all__ = ["variant_domain", "all_domains", "proposal_order"]


def _plural(name: str) -> str:
    """English plural of a snake_case name's last word (`chalet_stay` -> `chalet_stays`, `pantry` -> `pantries`)."""
    if re.search(r"[^aeiou]y$", name):
        return name[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", name):
        return name + "es"
    return name + "s"


def variant_domain(domain: Domain, variant: Variant) -> Domain:
    """The domain `variant` describes: the base's entities under the variant's names, its title and description."""
    names: dict[str, tuple[str, str]] = {}
    for old, new in variant.rename.items():
        name, _, plural = new.partition(":")
        names[old] = (name, plural or _plural(name))
    # longest first, so `dining_table` is renamed before `table` would match inside it
    patterns = [(re.compile(rf"(^|_){re.escape(old)}(?=_|$)"), new) for old, (new, _) in
                sorted(names.items(), key=lambda item: -len(item[0]))]

    def field_name(name: str) -> str:
        for pattern, new in patterns:
            name = pattern.sub(rf"\g<1>{new}", name)  # names are snake_case: nothing in `new` is special
        return name

    def entity(e: EntityT) -> EntityT:
        data = e.model_dump()
        new, plural = names.get(e.name, (e.name, e.plural))
        data.update(name=new, plural=plural, parent=names[e.parent][0] if e.parent in names else e.parent,
                    refs=[names[r][0] if r in names else r for r in e.refs],
                    fields=[{**f, "name": field_name(f["name"])} for f in data["fields"]],
                    words=list(variant.words.get(new, e.words)))
        return EntityT.model_validate(data)

    return Domain(id=variant.id, sector=domain.sector, title=variant.title, description=variant.description,
                  actor=variant.actor or domain.actor, entities=tuple(entity(e) for e in domain.entities))


@cache
def all_domains() -> tuple[Domain, ...]:
    """Every designable domain: the ontology's, then each one's variants (ValueError on an id used twice)."""
    from synth.procedural.ontology import load_domains

    base = load_domains()
    out = list(base)
    seen = {d.id: d.id for d in base}
    for domain in base:
        for variant in domain.variants:
            if variant.id in seen:
                raise ValueError(f"variant {variant.id!r} of {domain.id!r}: the id is also {seen[variant.id]!r}'s")
            seen[variant.id] = f"{domain.id}'s variant"
            try:
                out.append(variant_domain(domain, variant))
            except ValueError as error:
                raise ValueError(f"domain {domain.id!r}: variant {variant.id!r}: {error}") from None
    return tuple(out)


def proposal_order(base_order: list[str]) -> list[str]:
    """The domains in the order slots take them: `base_order`, then each base's first variants, then its second...

    A run of N slots thus covers N different niches before it proposes a second design of any,
    and the first slots are the base domains in their demand order (as before variants existed).
    """
    by_id = {d.id: d for d in all_domains()}
    order = [d for d in base_order if d in by_id]
    rounds = max((len(by_id[d].variants) for d in order), default=0)
    return order + [by_id[d].variants[r].id for r in range(rounds) for d in order if r < len(by_id[d].variants)]
