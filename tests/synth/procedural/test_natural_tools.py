"""Issue 12's structure: natural signatures, compound operations, sizes and invariants (no execution).

Calls are predicted with the plan interpreter (the plan is extracted from the compiled code; the
quality gate checks code and plan agree in the sandbox), so nothing synthesized runs here.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from catalog.models import Action, Outcome
from catalog.state.delta import apply_delta
from constraints.completeness import candidates
from constraints.spec import Param
from synth.assemble import plan_of
from synth.procedural.blueprint import READS, SIZES, Blueprint
from synth.procedural.compiler import compile_env, tool_params
from synth.procedural.design import design
from synth.procedural.naturalness import unnatural_parameters
from synth.procedural.ontology import load_domains
from synth.procedural.states import initial_states
from verifier.gate.intent import PlanSimulator

DOMAINS = load_domains()
BY_ID = {d.id: d for d in DOMAINS}


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_sizes_reach_their_tables_and_tools_with_natural_parameters_only(size):
    klass = SIZES[size]
    for i in range(0, len(DOMAINS), 6):
        bp = design(DOMAINS[i], i, size_class=size)
        assert bp.size == size
        assert klass.tables[0] <= len(bp.entities) <= klass.tables[1], (bp.env_id, len(bp.entities))
        assert klass.tools[0] <= len(bp.tools) <= klass.tools[1], (bp.env_id, len(bp.tools))
        assert unnatural_parameters(bp) == [], bp.env_id
        if size == "large":
            assert sum(e.rows for e in bp.entities) >= klass.min_rows


def test_an_echoed_field_and_a_full_overwrite_are_counted_as_unnatural():
    bp = design(BY_ID["cold_chain_monitoring"], 3)
    data = bp.model_dump()
    move = next(t for t in data["tools"] if t["archetype"] == "transition")
    entity = next(e for e in data["entities"] if e["name"] == move["entity"])
    echoed = next(f["name"] for f in entity["fields"] if f["kind"] in ("int", "float", "money", "choice"))
    move["extra"] = [echoed]
    found = unnatural_parameters(Blueprint.model_validate(data))
    assert found == [f"{move['name']}.{echoed}"]


def test_updates_are_partial_and_moves_take_only_their_own_values():
    for i in range(0, len(DOMAINS), 3):
        bp = design(DOMAINS[i], i)
        for t in bp.tools:
            params = tool_params(bp, t)
            if t.archetype == "update":
                assert all(default == "None" for name, _, _, default in params[1:]), t.name
            if t.archetype == "transition":
                assert [p[0] for p in params] == [f"{t.entity}_id", *([t.owner] if t.owner else []),
                                                  *(["reason"] if t.reason else [])]


def test_same_seed_same_large_env():
    domain = BY_ID["grocery_delivery"]
    assert design(domain, 5, size_class="large") == design(domain, 5, size_class="large")
    assert compile_env(design(domain, 5, size_class="large")) == compile_env(design(domain, 5, size_class="large"))
    assert design(domain, 5, size_class="large").env_id != design(domain, 5).env_id


def _consistent(bp: Blueprint, state: dict[str, Any]) -> dict[str, Any]:
    """The state with every counter and total recomputed from its children (what the states generator does)."""
    state = {k: {key: dict(row) for key, row in v.items()} for k, v in state.items()}
    for inv in bp.invariants:
        if inv.kind not in ("count_of_children", "sum_of_children"):
            continue
        for key, row in state[inv.collection].items():
            children = [c for c in state[inv.child or ""].values() if c[inv.via or ""] == key]
            if inv.kind == "count_of_children":
                row[inv.field] = len(children)
            else:
                row[inv.field] = round(sum(c[inv.child_field or ""] * (c[inv.times] if inv.times else 1)
                                           for c in children), 2)
    return state


def _derived_hold(bp: Blueprint, state: dict[str, Any]) -> list[str]:
    broken = []
    for inv in bp.invariants:
        for key, row in state.get(inv.collection, {}).items():
            value = row.get(inv.field)
            if inv.kind == "nonneg" and value is not None and value < 0:
                broken.append(f"{inv.collection}.{key}.{inv.field} < 0")
            if inv.kind in ("count_of_children", "sum_of_children"):
                children = [c for c in state[inv.child or ""].values() if c[inv.via or ""] == key]
                want = len(children) if inv.kind == "count_of_children" else sum(
                    c[inv.child_field or ""] * (c[inv.times] if inv.times else 1) for c in children)
                if abs(value - want) > 0.01:
                    broken.append(f"{inv.collection}.{key}.{inv.field} = {value}, children say {want}")
    return broken


def _calls(bp: Blueprint, plan: Any, state: dict[str, Any], tool: str, rng: random.Random, n: int) -> list[Action]:
    """Calls a user could make: choices from their options, fresh values for unique fields, the rest from the state."""
    recipe = next(t for t in bp.tools if t.name == tool)
    unique = {f.name for f in bp.entity(recipe.entity).fields if f.unique}
    pools = {}
    for p in map(Param.model_validate, plan.tools[tool].params):
        pools[p.name] = list(p.enum) if p.enum else [v for v in candidates(p, state)[:10] if v not in ("", -5, -5.0)]
    out = []
    for i in range(n):
        arguments = {k: rng.choice(v) if v else None for k, v in pools.items()}
        arguments.update({k: f"NEW-{i}" for k in unique if k in pools})
        out.append(Action(name=tool, arguments={k: v for k, v in arguments.items() if v is not None}))
    return out


def test_compound_and_child_writes_keep_counters_totals_and_balances():
    """From a consistent state, every successful place / create / delete / transfer keeps the invariants."""
    rng = random.Random(0)
    checked = set()
    for i in range(0, 60, 2):
        bp = design(DOMAINS[i % len(DOMAINS)], i)
        tools = [t for t in bp.tools if t.archetype in ("place", "create", "delete", "transfer", "adjust")]
        if not tools or not any(inv.kind in ("count_of_children", "sum_of_children") for inv in bp.invariants):
            continue
        plan, _ = plan_of(bp)
        simulator = PlanSimulator(plan)
        state = _consistent(bp, initial_states(bp)["default"])
        assert _derived_hold(bp, state) == []
        for t in tools:
            for action in _calls(bp, plan, state, t.name, rng, 25):
                prediction = simulator.predict(state, action)
                if prediction.abstained or prediction.outcome != Outcome.SUCCESS:
                    continue
                after = apply_delta(state, prediction.delta)
                assert _derived_hold(bp, after) == [], (bp.env_id, action)
                checked.add(t.archetype)
    assert {"place", "create"} <= checked


def test_place_draws_on_the_payers_balance_or_asks_for_another_way():
    for i in range(200):
        bp = design(DOMAINS[i % len(DOMAINS)], i)
        place = next((t for t in bp.tools if t.archetype == "place" and t.payer and t.price and not t.stock), None)
        if place is not None:
            break
    else:
        pytest.fail("no design places a record paid from a balance")
    plan, _ = plan_of(bp)
    simulator = PlanSimulator(plan)
    state = _consistent(bp, initial_states(bp)["default"])
    payer = bp.entity(bp.entity(place.entity).field(place.payer or "").fk or "")
    balance = payer.role("balance")
    assert balance is not None
    seen = set()
    for action in _calls(bp, plan, state, place.name, random.Random(1), 300):
        action.arguments["payment_method"] = "balance"
        prediction = simulator.predict(state, action)
        if prediction.outcome == Outcome.SUCCESS:
            after = apply_delta(state, prediction.delta)
            key = action.arguments[place.payer or ""]
            charged = prediction.observation["data"]["charged"]
            assert after[payer.table][key][balance.name] == pytest.approx(state[payer.table][key][balance.name] - charged)
            assert any(op.path[0] == "payments" and op.op == "add" for op in prediction.delta)
            seen.add("paid")
        elif prediction.outcome == Outcome.FAILURE and "pay the rest another way" in str(prediction.observation):
            seen.add("short")
    assert seen == {"paid", "short"}


def test_read_tools_include_a_natural_key_lookup_for_every_domain_entity_with_one():
    bp = next(b for b in (design(BY_ID["grocery_delivery"], seed) for seed in range(50))
              if any(e.name == "customer" for e in b.entities))
    finds = {t.entity: t.key for t in bp.tools if t.archetype == "find"}
    assert finds.get("customer") == "email"
    assert all(t.archetype in READS or t.archetype not in ("lookup", "find") for t in bp.tools)
