"""The gate passes the reference envs and catches each planted bug with a shrunk counterexample."""

from pathlib import Path

import pytest

from catalog.store import read_env
from sandbox.pool import SandboxPool
from verifier.gate.run import verify_env

from ..conftest import REFERENCE_IDS

BUGGY = Path(__file__).resolve().parents[1] / "fixtures" / "buggy"


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(2, timeout=5.0) as sandbox:
        yield sandbox


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_reference_envs_pass_with_no_false_alarm(env_id, reference, pool):
    report = verify_env(reference.get(env_id), pool, examples=60)
    assert report.failing == [] and report.score == 1.0 and report.passed
    assert report.plan == "present (captured from reviewed code)"
    names = [c.name for c in report.checks]
    assert "code_matches_plan_statically" in names and "code_agrees_with_plan" in names


def test_each_planted_bug_is_caught_with_a_minimal_counterexample(pool):
    report = verify_env(read_env(BUGGY), pool, examples=120)
    checks = {c["name"]: c for c in report.model_dump(mode="json")["checks"]}
    assert not report.passed and report.plan == "none: generic properties only"
    expected = {
        "no_crash_on_typed_input": ("shout", {"name": ""}),
        "read_tools_write_nothing": ("peek", None),
        "writes_inside_write_set": ("reset_all", None),
        "failure_changes_nothing": ("take", None),
        "deterministic": ("shuffle", None),
        "schema_constraints_hold": ("orphan", None),
    }
    for name, (tool, arguments) in expected.items():
        check = checks[name]
        assert not check["ok"], name
        actions = check["counterexample"]["actions"]
        assert len(actions) == 1 and actions[0]["name"] == tool, (name, actions)  # shrunk to the one bad call
        if arguments is not None:
            assert actions[0]["arguments"] == arguments
    assert checks["declared_kind_matches_code"]["counterexample"] == {"tools": ["peek"]}
    assert "count > 5 and count < 3" in checks["every_guard_reachable"]["counterexample"]["untriggered"][0]
    assert checks["tasks_unsolved_then_solved"]["detail"] == "already satisfied initially"
