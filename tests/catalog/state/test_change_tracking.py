"""The runtime's tracked delta must equal the diff of full snapshots, for any calls on any env.

Calls are drawn by hypothesis from each tool's JSON schema, with ids taken from the state so
that guards pass as well as fail. The reference envs must also never crash on typed input.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.models import Outcome
from catalog.state.delta import Delta, diff
from tests.catalog.conftest import REFERENCE_IDS

TIMES = ["2026-03-02T11:00:00", "2026-03-03T09:30:00", "2026-03-04T14:00:00", "2026-03-05T17:45:00",
         "2026-03-07T10:00:00", "2026-03-02T07:00:00", "not a time", "2026-02-01"]


WORDS = ["", "x", "le guin", "mug", "Ünïcode ✓", "cardiology", "checking", "savings", "EUR", "USD", "12 Quay St, Dublin",
         "ada@example.org", "new@example.org", "+49 30 1234567", "1990-05-01", "DHL", "rash"]


def _candidates(state, name):
    """Values worth trying for a string parameter: keys of the collection it names, values of a
    field of the same name, times and a few words (so guards both pass and fire)."""
    stem = name.removesuffix("_id").removesuffix("_code").split("_")[-1]
    values = set()
    for collection_name, collection in state.items():
        if not isinstance(collection, dict):
            continue
        if collection_name.startswith(stem):
            values.update(collection)
        for record in collection.values():
            if isinstance(record, dict) and isinstance(record.get(name), str):
                values.add(record[name])
    return sorted(values) + TIMES + WORDS


def _value(schema, state, name):
    types = schema.get("type")
    if "anyOf" in schema:
        return st.one_of(*[_value(s, state, name) for s in schema["anyOf"]])
    if types == "string":
        return st.one_of(st.sampled_from(_candidates(state, name)), st.text(max_size=6))
    if types == "integer":
        return st.one_of(st.integers(-2, 12), st.sampled_from([0, 1, 3, 14, 28, 30, 45, 91]))
    if types == "number":
        return st.sampled_from([-5.0, 0.0, 0.5, 1.0, 3.5, 12.0, 20.0, 450.0, 10.123, 1e7])
    if types == "boolean":
        return st.booleans()
    if types == "null":
        return st.none()
    return st.sampled_from(_candidates(state, name))


@st.composite
def call_sequences(draw, runtime, state):
    calls = []
    for _ in range(draw(st.integers(1, 4))):
        tool = draw(st.sampled_from(sorted(runtime.tools)))
        props = runtime.tools[tool].parameters["properties"]
        required = set(runtime.tools[tool].parameters["required"])
        arguments = {}
        for name, schema in props.items():
            if name in required or draw(st.booleans()):
                arguments[name] = draw(_value(schema, state, name))
        calls.append({"name": tool, "arguments": arguments})
    return calls


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_tracked_delta_equals_snapshot_diff(env_id, reference, runtimes):
    handle = reference.get(env_id)
    runtime = runtimes[env_id]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(handle.state_names()), st.data())
    def check(state_name, data):
        state = handle.state(state_name)
        runtime.reset(state)
        before = runtime.snapshot()
        for action in data.draw(call_sequences(runtime, state)):
            result = runtime.call(action, snapshot=True)
            assert result.outcome is not Outcome.CRASH, (action, result.observation, result.info.get("traceback"))
            assert result.outcome is not Outcome.INVALID, (action, result.observation)
            assert result.delta == diff(before, result.state), action
            if result.outcome is Outcome.FAILURE:
                assert result.delta == [], (action, result.observation)
            before = result.state

    check()


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_same_call_on_same_state_gives_same_result(env_id, reference, runtimes):
    handle = reference.get(env_id)
    runtime = runtimes[env_id]
    for task in handle.tasks():
        outcomes = []
        for _ in range(2):
            runtime.reset(handle.state(task.state))
            outcomes.append([(r.observation, Delta.dump_python(r.delta, mode="json"), r.state)
                             for r in (runtime.call(a, snapshot=True) for a in task.solution)])
        assert outcomes[0] == outcomes[1]
