"""Realistic values, the value-constraint checker, multi-step tasks and the report's `realism` (no sandbox)."""

from __future__ import annotations

import json
import re

import pytest

from catalog.plan import Invariant
from synth.assemble import plan_of
from synth.procedural.blueprint import Blueprint, EntitySpec, FieldSpec
from synth.procedural.design import design
from synth.procedural.ontology import load_domains
from synth.procedural.states import initial_states
from synth.procedural.tasks import make_tasks
from synth.realism import env_realism, realism_totals
from synth.report import build_report, render_markdown
from verifier.gate.intent import PlanSimulator
from verifier.gate.invariants import violations

DOMAINS = load_domains()
CLOCK = {"env_meta": {"clock": {"key": "clock", "value": "2026-03-02T10:00:00+00:00"}}}


@pytest.fixture(scope="module")
def envs():
    """Six designs across sectors with their plans, states and tasks (planned, not executed)."""
    out = []
    for i in (0, 7, 19, 33, 48, 61):
        bp = design(DOMAINS[i % len(DOMAINS)], i)
        plan, _ = plan_of(bp)
        states = initial_states(bp)
        out.append((bp, plan, states, make_tasks(bp, plan, states)))
    return out


def _people(bp, states):
    for e in bp.entities:
        names = [f.name for f in e.fields if f.kind == "name"]
        emails = [f.name for f in e.fields if f.kind == "email"]
        if names and emails:
            yield from ((row[names[0]], row[emails[0]]) for row in states["default"][e.table].values())


def test_states_are_realistic_deterministic_and_keep_every_invariant(envs):
    pairs = []
    for bp, _plan, states, _tasks in envs:
        assert json.dumps(initial_states(bp), sort_keys=True) == json.dumps(states, sort_keys=True)  # same bytes
        invariants = bp.invariants
        for state in states.values():
            assert violations(invariants, state) == []
        pairs += list(_people(bp, states))
        for e in bp.entities:
            for f in e.fields:
                if f.kind == "money":
                    values = [r[f.name] for r in states["default"][e.table].values()]
                    assert all(round(v, 2) == v for v in values), (e.name, f.name)
    assert pairs, "some entity has a name and an email"
    for name, email in pairs:  # the email is made from the person's own name
        first, last = (re.sub(r"[^a-z]", "", part.lower()) for part in (name.split()[0], name.split()[-1]))
        assert email.split("@")[0].startswith(f"{first}.{last}"), (name, email)


def _entity(**fields: FieldSpec) -> EntitySpec:
    return EntitySpec(name="shipment", cls="Shipment", table="shipments", prefix="SH", label="code",
                      fields=[FieldSpec(name="code", kind="code", roles=["label"]), *fields.values()], rows=8)


def test_declared_pairs_and_past_dates_are_made_to_hold():
    e = _entity(min_temp_c=FieldSpec(name="min_temp_c", kind="float", lo=-30, hi=30),
                max_temp_c=FieldSpec(name="max_temp_c", kind="float", lo=-30, hi=30),
                starts_at=FieldSpec(name="starts_at", kind="datetime", nullable=True),
                ends_at=FieldSpec(name="ends_at", kind="datetime", nullable=True),
                booked_at=FieldSpec(name="booked_at", kind="datetime", nullable=True))
    declared = [Invariant(kind="le", collection="shipments", field="min_temp_c", other="max_temp_c"),
                Invariant(kind="lt", collection="shipments", field="starts_at", other="ends_at"),
                Invariant(kind="not_after_clock", collection="shipments", field="booked_at")]
    bp = Blueprint(env_id="cold-chain-x", name="Cold chain", domain="cold_chain", sector="logistics", topic="t",
                   description="d", entities=[e], tools=[], seed=3, invariants=declared)
    for state in initial_states(bp).values():
        assert violations(declared, state) == []
    # unrepaired, independent draws break them: the repair is what makes them hold
    broken = Blueprint(**{**bp.model_dump(), "invariants": []})
    assert any(violations(declared, state) for state in initial_states(broken).values())


def test_the_checker_finds_each_kind_of_violation():
    state = {**CLOCK,
             "orders": {"O1": {"id": "O1", "lo": 5, "hi": 3, "total": 10.0, "lines": 1, "placed_at": "2026-04-01T00:00:00+00:00",
                               "credit": -1}},
             "order_lines": {"L1": {"id": "L1", "order_id": "O1", "price": 2.5, "qty": 2},
                             "L2": {"id": "L2", "order_id": "O1", "price": 1.0, "qty": 1}}}
    invariants = [Invariant(kind="le", collection="orders", field="lo", other="hi"),
                  Invariant(kind="nonneg", collection="orders", field="credit"),
                  Invariant(kind="sum_of_children", collection="orders", field="total", child="order_lines",
                            via="order_id", child_field="price", times="qty"),
                  Invariant(kind="count_of_children", collection="orders", field="lines", child="order_lines",
                            via="order_id"),
                  Invariant(kind="not_after_clock", collection="orders", field="placed_at")]
    found = violations(invariants, state)
    assert len(found) == 5 and "sum to 6.0" in found[2] and "after the clock" in found[4]
    fixed = json.loads(json.dumps(state))
    fixed["orders"]["O1"].update(lo=1, credit=0, total=6.0, lines=2, placed_at="2026-03-01T00:00:00+00:00")
    assert violations(invariants, fixed) == []


def test_tasks_are_multi_step_checked_on_the_final_state_and_refusals_are_confirmed(envs):
    calls, refusals = [], 0
    for bp, plan, states, tasks in envs:
        simulator = PlanSimulator(plan)
        assert tasks, bp.env_id
        for task in tasks:
            initial = states[task.state]
            final = initial
            for action in task.solution or []:
                prediction = simulator.predict(final, action)
                assert prediction.outcome.value == "success", (task.id, action)
                final = _apply(final, prediction)
            assert task.evaluate(initial, final)
            assert task.refusal or not task.evaluate(initial, initial)
            if task.forbidden is not None:  # the wrong branch / the forbidden write: the check must tell
                wrong = initial
                for action in task.forbidden:
                    wrong = _apply(wrong, simulator.predict(wrong, action))
                assert not task.evaluate(initial, wrong), task.id
            assert violations(bp.invariants, final) == []
            ids = {key for table in initial.values() if isinstance(table, dict) for key in table}
            found_by_key = (task.solution or [None])[0] is not None and not any(
                k.endswith("_id") for k in task.solution[0].arguments)
            if found_by_key:  # a record found by what the user knows is not named by its internal id
                assert not any(re.search(rf"\b{re.escape(key)}\b", task.instruction) for key in ids
                               if len(key) > 3 and key not in ("clock",)), task.instruction
            calls.append(len(task.solution or []))
            refusals += task.refusal
    assert sorted(calls)[len(calls) // 2] >= 3 and max(calls) <= 10
    assert refusals >= 2


def _apply(state, prediction):
    from catalog.state.delta import apply_delta

    return apply_delta(state, prediction.delta)


def test_the_report_carries_realism_with_its_distributions(envs):
    summaries = []
    for slot, (bp, plan, states, tasks) in enumerate(envs):
        summaries.append({"slot": slot, "env_id": bp.env_id, "status": "registered", "tools": len(bp.tools),
                          "tables": len(bp.entities), "quality": 1.0,
                          "realism": env_realism(bp, plan, states, tasks)})
    report = build_report("run-x", {"n": len(envs)}, summaries, wall_s=1.0)
    realism = report.model_dump(mode="json")["realism"]
    assert set(realism) >= {"tools_per_env", "tables_per_env", "seed_rows_per_state", "solution_calls",
                            "unnatural_parameters", "value_constraint_violations", "refusal_tasks"}
    assert set(realism["solution_calls"]) == {"min", "median", "max", "histogram"}
    assert realism["value_constraint_violations"] == 0 and realism["envs"] == len(envs)
    assert sum(realism["solution_calls"]["histogram"].values()) == realism["tasks"]
    assert "## Realism" in render_markdown(report)
    assert realism_totals([{}]) is None  # an older run's slots carry no figures


def test_every_free_text_value_a_check_pins_is_given_in_the_instruction():
    """A check may require a reason or a note only if the request says it (else no agent can pass)."""
    seen_cascades = checked = 0
    for i in range(0, 120, 2):
        bp = design(DOMAINS[i % len(DOMAINS)], i)
        if not any(t.archetype == "cascade" for t in bp.tools):
            continue
        plan, _ = plan_of(bp)
        states = initial_states(bp)
        for task in make_tasks(bp, plan, states):
            for action in task.solution or []:
                seen_cascades += bp.tools[[t.name for t in bp.tools].index(action.name)].archetype == "cascade"
                for value in action.arguments.values():
                    if isinstance(value, str) and " " in value and repr(value) in task.check:
                        checked += 1
                        assert value in task.instruction, (task.id, value, task.instruction)
        if seen_cascades >= 4 and checked >= 8:
            break
    assert seen_cascades >= 4 and checked >= 8, (seen_cascades, checked)


def test_every_table_is_checked_for_placeholders_and_support_tables_have_none(envs):
    from synth.realism import placeholders

    large = design(DOMAINS[3], 5, size_class="large")  # many support tables: audit log, status history, ledger...
    checked = [(bp, states) for bp, _plan, states, _tasks in envs] + [(large, initial_states(large))]
    support = set()
    for bp, states in checked:
        tables = {e.table for e in bp.entities if e.support}
        support |= tables
        found = [p for p in placeholders(bp, states) if p.split(": ", 1)[1].split(".")[0] in tables]
        assert found == [], found[:5]
    assert {"audit_logs", "status_changes"} <= support
    state = initial_states(large)["default"]
    audit = next(iter(state["audit_logs"].values()))
    tools = {t.name for t in large.tools}
    assert audit["action"] in tools and any(audit["record_id"] in state[e.table] for e in large.entities)
    for row in state.get("status_changes", {}).values():  # a real record, a move its lifecycle has
        kind = next(e for e in large.entities if e.name == row["record_kind"])
        assert row["record_id"] in state[kind.table] and row["to_status"] in kind.states


def test_the_placeholder_check_finds_each_kind_and_passes_every_phrase():
    from synth.procedural.phrases import PHRASES
    from synth.realism import placeholders

    e = EntitySpec(name="agent", cls="Agent", table="agents", prefix="AG", label="full_name", rows=4, fields=[
        FieldSpec(name="full_name", kind="name", roles=["label"]), FieldSpec(name="email", kind="email"),
        FieldSpec(name="action", kind="code"), FieldSpec(name="badge_number", kind="code"),
        FieldSpec(name="item_name", kind="text"), FieldSpec(name="note", kind="text")])
    bp = Blueprint(env_id="agents-x", name="Agents", domain="d", sector="hr", topic="t", description="d",
                   entities=[e], tools=[], seed=1)
    bad = {"id": "AG001", "full_name": "Ines Moreau", "email": "tom.hale@example.com", "action": "AL-5026-HS",
           "badge_number": "AG-1234-XY", "item_name": "Sign relationship item", "note": "Director several high."}
    found = placeholders(bp, {"default": {"agents": {"AG001": bad}}})
    assert [p.split(" (")[-1] for p in found] == [
        "a generated code in a column that is no identifier)", "a label made of the column's name)", "word salad)",
        "not 'Ines Moreau''s)"]
    phrases = {f"P{i}": {"id": f"P{i}", "full_name": "Ines Moreau", "email": "ines.moreau@example.com",
                         "action": "cancel_booking", "badge_number": "AG-1234-XY", "item_name": phrase, "note": phrase}
               for i, phrase in enumerate(p for values in PHRASES.values() for p in values)}
    assert placeholders(bp, {"default": {"agents": phrases}}) == []
