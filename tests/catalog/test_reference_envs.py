"""The reference environments: substance (tools, rules, states, tasks) and fresh manifests."""

import pytest

from catalog.bench.strata import delta_band
from catalog.manifest import refresh_manifest
from catalog.models import Outcome, ToolKind

from .conftest import REFERENCE_IDS, SQL_IDS


def test_three_sql_envs_and_one_class_env(reference):
    summaries, problems = reference.list()
    assert problems == []
    kinds = {s.id: s.kind for s in summaries}
    assert kinds == {"library": "sql", "bank": "sql", "clinic": "sql", "store": "class"}


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_env_has_substance(env_id, reference, runtimes):
    handle = reference.get(env_id)
    runtime = runtimes[env_id]
    assert 6 <= len(runtime.tools) <= 15
    assert len(handle.state_names()) >= 2
    assert len(handle.tasks()) >= 3
    assert len(handle.manifest.rules) >= 4
    if env_id in SQL_IDS:
        kinds = {t.kind for t in runtime.tools.values()}
        assert kinds == {ToolKind.READ, ToolKind.WRITE}
    for tool in runtime.tools.values():
        assert tool.description, tool.name
        for name, schema in tool.parameters["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no Args doc"


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_manifest_on_disk_is_fresh(env_id, reference):
    """env.json's tools, states and hash must match the code (run refresh_manifest after edits)."""
    handle = reference.get(env_id)
    assert refresh_manifest(handle.path, write=False) == handle.manifest


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_tasks_are_unsolved_initially_and_solved_by_their_solution(env_id, reference, runtimes):
    handle = reference.get(env_id)
    runtime = runtimes[env_id]
    for task in handle.tasks():
        runtime.reset(handle.state(task.state))
        initial = runtime.snapshot()
        assert task.evaluate(initial, initial) is False, task.id
        for action in task.solution:
            result = runtime.call(action)
            assert result.outcome is Outcome.SUCCESS, (task.id, action, result.observation)
        assert task.evaluate(initial, runtime.snapshot()) is True, task.id


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_a_single_call_can_change_seven_or_more_fields(env_id, reference, runtimes):
    """Every |Δ| band up to 7-12 must be reachable; the task solutions include such a call."""
    handle = reference.get(env_id)
    runtime = runtimes[env_id]
    bands = set()
    for task in handle.tasks():
        runtime.reset(handle.state(task.state))
        for action in task.solution:
            bands.add(delta_band(len(runtime.call(action).delta)))
    assert "7-12" in bands
