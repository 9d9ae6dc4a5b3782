"""Domain variants (niches): valid, renamed through and through, distinct topics, and designs that plan and solve."""

from __future__ import annotations

import re

import pytest

from catalog.search.vectors import DEDUP_THRESHOLD, DedupFilter
from synth.assemble import plan_of
from synth.procedural.compiler import compile_env
from synth.procedural.design import design
from synth.procedural.ontology import Domain, load_domains
from synth.procedural.ontology.variants import all_domains, proposal_order, variant_domain
from synth.procedural.states import initial_states
from synth.procedural.tasks import make_tasks
from verifier.gate.invariants import violations

BASE = load_domains()
ALL = all_domains()
VARIANTS = [(d, v) for d in BASE for v in d.variants]


def test_every_domain_has_niches_with_unique_ids_that_rename_every_entity():
    assert len(VARIANTS) >= 4 * len(BASE)
    ids = [d.id for d in ALL]
    assert len(ids) == len(set(ids)) == len(BASE) + len(VARIANTS)
    for domain, variant in VARIANTS:
        assert set(variant.rename) == {e.name for e in domain.entities}, variant.id
    tables = [frozenset(e.table for e in d.entities) for d in ALL]
    assert len(set(tables)) == len(tables)  # no two designable domains share their set of tables


def test_renames_follow_into_links_fields_and_plurals():
    hotel = next(d for d in BASE if d.id == "hotel")
    lodge = variant_domain(hotel, next(v for v in hotel.variants if v.id == "ski_lodge"))
    stay = next(e for e in lodge.entities if e.name == "chalet_stay")
    assert stay.parent == "chalet" and stay.refs == ("skier",) and stay.table == "chalet_stays"
    chalet = next(e for e in lodge.entities if e.name == "chalet")
    assert "chalet_number" in {f.name for f in chalet.fields} and "room_number" not in {f.name for f in chalet.fields}
    assert lodge.title == "Ski lodge reception" and lodge.sector == hotel.sector
    camp = variant_domain(hotel, next(v for v in hotel.variants if v.id == "campground_office"))
    assert "pitches" in {e.table for e in camp.entities}  # an irregular plural, as written


@pytest.mark.parametrize("change, message", [
    ({"rename": {"lobby": "hall"}}, "renames unknown entities ['lobby']"),
    ({"rename": {"guest": "room"}}, "gives two entities one name"),
    ({"rename": {"guest": "Bad-Name"}}, "is not snake_case"),
    ({"words": {"nobody": ["x"]}}, "words for unknown entities"),
])
def test_a_bad_variant_is_refused_naming_it(change, message):
    hotel = next(d for d in BASE if d.id == "hotel")
    entry = hotel.model_dump()
    entry["variants"] = [{"id": "inn", "title": "Inn", "description": "An inn.", **change}]
    with pytest.raises(ValueError, match=re.escape(message)):
        Domain.model_validate(entry)


def test_proposal_order_takes_every_niche_once_base_domains_first():
    base = [d.id for d in BASE][::-1]
    order = proposal_order(base)
    assert order[:len(base)] == base and sorted(order) == sorted(d.id for d in ALL)
    first_variants = order[len(base):2 * len(base)]
    by_id = {d.id: d for d in BASE}
    assert first_variants == [by_id[d].variants[0].id for d in base]


def test_most_niche_topics_are_no_duplicates_of_their_base_domain():
    """Same focus, same lifecycle verbs: the renamed tables alone must carry most niches past dedup."""
    dedup_hits = 0
    sample = VARIANTS[::25]
    for domain, variant in sample:
        niche = variant_domain(domain, variant)
        focus = next(e.name for e in domain.entities if e.transitions)
        ours = design(niche, 0, focus=variant.rename[focus].partition(":")[0])
        theirs = design(domain, 0, focus=focus)
        dedup = DedupFilter()
        dedup.add([theirs.env_id], [theirs.topic])
        dedup_hits += not dedup.accept(ours.env_id, ours.topic).accepted
    assert dedup_hits <= len(sample) // 2, f"{dedup_hits}/{len(sample)} niche topics within {DEDUP_THRESHOLD} of their base's"


@pytest.mark.parametrize("index", range(0, len(VARIANTS), max(1, len(VARIANTS) // 6)))
def test_a_niche_designs_plans_compiles_and_has_solvable_tasks(index):
    domain, variant = VARIANTS[index]
    bp = design(variant_domain(domain, variant), index)
    plan, _ = plan_of(bp)
    compile(compile_env(bp), f"<{bp.env_id}>", "exec")
    states = initial_states(bp)
    assert all(violations(bp.invariants, state) == [] for state in states.values())
    assert make_tasks(bp, plan, states), bp.env_id


def test_a_domains_next_designs_centre_on_its_other_lifecycle_entities():
    from synth.generators import ProceduralGenerator

    generator = ProceduralGenerator([d.id for d in BASE])
    rounds = len(generator.order)
    hotel = generator.order.index("hotel")
    topics = [generator.topic(hotel + r * rounds, 0)[0] for r in range(3)]
    focuses = [generator.blueprint(t)[0].entities[0].name for t in topics]
    assert len(set(focuses)) == 3 and "focus" not in topics[0] and topics[1]["focus"] == focuses[1]
    assert generator.blueprint(topics[1])[0].env_id == topics[1]["env_id"]  # the plan stage designs the same env
