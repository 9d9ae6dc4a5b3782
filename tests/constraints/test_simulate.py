"""The spec-only simulator against execution: it may abstain, it must never be wrong."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.runtime import ClassRuntime
from catalog.state.delta import Delta
from catalog.state.jsonable import json_equal
from constraints.completeness import completeness, spec_of
from constraints.extract import extract_spec
from constraints.simulate import SpecSimulator
from tests.catalog.state.test_change_tracking import call_sequences

from ..conftest import REFERENCE_IDS, SQL_IDS
from .test_extract import CLASS_MODULE


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_never_disagrees_with_execution_without_abstaining(env_id, reference, runtimes):
    handle = reference.get(env_id)
    runtime = runtimes[env_id]
    simulator = SpecSimulator(spec_of(handle))
    seen = {"exact": 0, "abstained": 0}

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(handle.state_names()), st.data())
    def check(state_name, data):
        state = handle.state(state_name)
        runtime.reset(state)
        for action in data.draw(call_sequences(runtime, state)):
            prediction = simulator.predict(runtime.snapshot(), action)
            result = runtime.call(action)
            if prediction.abstained:
                seen["abstained"] += 1
                continue
            seen["exact"] += 1
            assert json_equal(prediction.observation, result.observation), (action, prediction, result)
            assert prediction.delta == result.delta, (action, prediction.delta, result.delta)
            assert prediction.outcome == result.outcome

    check()
    assert seen["exact"] > seen["abstained"]


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_completeness_on_the_reference_envs(env_id, reference):
    report = completeness(reference.get(env_id))
    assert report.wrong == 0, report.wrong_examples
    assert report.exact / report.steps >= (0.8 if env_id in SQL_IDS else 0.6)
    assert report.guards_triggered == report.guards_total, report.untriggered_guards
    assert report.failures_explained >= 0.95 * report.failures


def test_unfollowable_code_makes_it_abstain_not_guess():
    spec = extract_spec(CLASS_MODULE, "class", "Shelf", failure_exceptions=["KeyError"])
    simulator = SpecSimulator(spec)
    state = {"slots": {"s1": {"items": ["a"]}}, "log": [], "meta": {}}
    weird = simulator.predict(state, {"name": "weird", "arguments": {"name": "slots"}})
    assert weird.abstained and "getattr" in weird.reason

    placed = simulator.predict(state, {"name": "place", "arguments": {"slot_id": "s1", "item": "b"}})
    assert not placed.abstained
    assert Delta.dump_python(placed.delta, mode="json") == [
        {"op": "modify", "path": ["log"], "value": [{"placed": "b"}]},
        {"op": "add", "path": ["meta", "count"], "value": 0},
        {"op": "add", "path": ["meta", "last"], "value": "b"},
        {"op": "modify", "path": ["slots", "s1", "items"], "value": ["a", "b"]}]
    failed = simulator.predict(state, {"name": "clear", "arguments": {"slot_id": "zz"}})
    assert failed.observation == {"success": False, "error": "'No slot zz'"} and failed.delta == []


def test_raised_failures_match_the_class_runtime():
    namespace: dict = {}
    exec(CLASS_MODULE, namespace)
    runtime = ClassRuntime(namespace["Shelf"], failure_exceptions=["KeyError"])
    state = {"slots": {"s1": {"items": ["a"]}}, "log": [], "meta": {}}
    runtime.reset(state)
    spec = extract_spec(CLASS_MODULE, "class", "Shelf", failure_exceptions=["KeyError"])
    for action in ({"name": "clear", "arguments": {"slot_id": "zz"}}, {"name": "parse", "arguments": {"text": "x1"}},
                   {"name": "clear", "arguments": {"slot_id": "s1"}}):
        prediction = SpecSimulator(spec).predict(runtime.snapshot(), action)
        result = runtime.call(action)
        assert not prediction.abstained
        assert prediction.observation == result.observation and prediction.delta == result.delta


def test_candidate_cache_keeps_a_nullable_parameter_apart_from_its_required_namesake():
    """`email: str | None` of an update and `email: str` of a find share a name: None is only for the first."""
    from constraints.completeness import CandidateCache
    from constraints.spec import Param

    state = {"guests": {"G001": {"id": "G001", "email": "kim@example.org"}}}
    cache = CandidateCache()
    optional = Param(name="email", annotation="str | None", json_type="string", required=False, nullable=True)
    required = Param(name="email", annotation="str", json_type="string", required=True, nullable=False)
    assert None in cache.get(optional, state)[0]
    assert None not in cache.get(required, state)[0] and "kim@example.org" in cache.get(required, state)[1]
