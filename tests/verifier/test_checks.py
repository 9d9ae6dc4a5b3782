"""The gate's checks one by one: the registry, scoring, and each check run directly on real envs.

The buggy fixture plants one bug per generic property; each check is called on its own (not
through `verify_env`) and must find its bug with a shrunk counterexample, and pass on a
reference env. Class-env findings (hidden state, interpreter-wide state) use the quirk fixtures.
"""

import json
import shutil
from pathlib import Path

import pytest

from catalog.importing.importer import import_class_env
from catalog.models import FailureConvention
from catalog.store import Catalog, read_env
from constraints.completeness import spec_of
from sandbox.pool import SandboxPool
from verifier.gate.checks import CHECKS, CheckResult, Severity, Verdict, check, describe, runnable
from verifier.gate.intent import load_plan
from verifier.gate.properties import PropertySuite
from verifier.gate.report import GateReport, broken_env_report, render_gate_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BUGGY = FIXTURES / "buggy"
QUIRKS = FIXTURES / "external" / "quirks"

# The severities the gate has always applied (MINOR_CHECKS and the informational flags before the registry).
SEVERITIES = {
    "env_folder_reads": "critical", "constraint_spec_extracts": "critical", "judge_agrees_with_execution": "minor",
    "declared_kind_matches_code": "minor", "code_matches_plan_statically": "critical",
    "code_agrees_with_plan": "critical", "initial_states_load": "critical", "no_crash_on_typed_input": "critical",
    "failure_changes_nothing": "critical", "writes_inside_write_set": "critical",
    "read_tools_write_nothing": "critical", "deterministic": "critical", "schema_constraints_hold": "critical",
    "invariants_hold": "critical", "every_guard_reachable": "minor", "tasks_unsolved_then_solved": "critical",
    "no_task_passes_empty_episode": "critical", "read_tools_keep_hidden_state": "minor", "no_interpreter_wide_change": "critical",
    "errors_signalled_as_failures": "minor", "hidden_writes": "informational", "ill_typed_accepted": "informational",
}


# --- the registry and scoring (no sandbox) ------------------------------------------------------
def test_every_check_is_registered_once_with_its_severity_in_run_order():
    assert {name: spec.severity.value for name, spec in CHECKS.items()} == SEVERITIES
    assert list(CHECKS) == list(SEVERITIES)  # reports list checks in this order
    assert [s.name for s in runnable()] == list(SEVERITIES)[3:]  # the first three are decided outside the suite
    assert all(spec.about and not spec.about.endswith(" ") for spec in CHECKS.values())
    listed = describe()
    assert all(name in listed for name in CHECKS) and max(len(line) for line in listed.splitlines()) <= 100


def test_a_new_check_is_one_decorated_function():
    @check(Severity.MINOR)
    def answers_politely(suite) -> Verdict:
        """Every observation says please."""
        return Verdict(False, {"tool": "x"}, "no please")

    try:
        spec = CHECKS["answers_politely"]
        assert spec.severity is Severity.MINOR and spec.about == "Every observation says please."
        assert "answers_politely" in [s.name for s in runnable()]
        result = CheckResult.of("answers_politely", spec.run(None))
        assert not result.critical and not result.informational and result.model_dump(mode="json")["detail"] == "no please"
        with pytest.raises(ValueError, match="registered twice"):
            check()(answers_politely)
    finally:
        del CHECKS["answers_politely"]


def test_a_result_under_an_unregistered_name_is_refused():
    with pytest.raises(KeyError, match="unregistered check 'made_up'"):
        CheckResult("made_up", True)


def test_scoring_leaves_information_out_and_a_critical_failure_rejects():
    def scored(*checks: CheckResult) -> GateReport:
        return GateReport.scored("toy", checks, gate=0.5, plan="none", seconds=0.04)

    minor = scored(CheckResult("deterministic", True), CheckResult("every_guard_reachable", False),
                   CheckResult("hidden_writes", True, {"x": 1}))
    assert minor.score == 0.5 and minor.passed and minor.critical_failures == [] and minor.failing == [
        "every_guard_reachable"]
    critical = scored(*[CheckResult("every_guard_reachable", True)] * 3, CheckResult("deterministic", False))
    assert critical.score == 0.75 and not critical.passed and critical.critical_failures == ["deterministic"]
    data = critical.model_dump(mode="json")
    assert list(data) == ["env", "score", "passed", "gate", "critical_failures", "checks", "plan", "seconds"]
    assert data["seconds"] == 0.0 and data["checks"][3] == {
        "name": "deterministic", "ok": False, "critical": True, "counterexample": None, "detail": "",
        "informational": False, "not_run": False}


def test_an_unreadable_folder_is_one_failed_critical_check():
    report = broken_env_report("half", "no env.json")
    assert (report.score, report.passed, report.critical_failures) == (0.0, False, ["env_folder_reads"])
    assert render_gate_report(report) == ("half: FAIL score 0.00 (gate 0.85), plan: unknown: the folder does not "
                                          "read\n  FAIL env_folder_reads: no env.json")


# --- each check run directly ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pool():
    with SandboxPool(2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def buggy(pool):
    handle = read_env(BUGGY)
    return PropertySuite(handle, spec_of(handle), pool, examples=60, effort=0.2)


@pytest.mark.parametrize("name, tool, arguments", [
    ("no_crash_on_typed_input", "shout", {"name": ""}),
    ("failure_changes_nothing", "take", None),
    ("writes_inside_write_set", "reset_all", None),
    ("read_tools_write_nothing", "peek", None),
    ("deterministic", "shuffle", None),
    ("schema_constraints_hold", "orphan", None),
])
def test_each_property_finds_its_planted_bug_shrunk_to_one_call(buggy, name, tool, arguments):
    result = buggy.run_check(name)
    assert result is not None and not result.ok and result.detail
    actions = result.counterexample["actions"]
    assert [a["name"] for a in actions] == [tool]
    if arguments is not None:
        assert actions[0]["arguments"] == arguments
    assert len(result.counterexample["results"]) == 1


def test_checks_that_read_code_tasks_or_coverage(buggy):
    assert buggy.declared_kind_matches_code() == Verdict(False, {"tools": ["peek"]})
    assert buggy.tasks_unsolved_then_solved() == Verdict(False, {"task": "pre-solved"}, "already satisfied initially")
    assert buggy.no_task_passes_empty_episode() == Verdict(False, {"task": "pre-solved"},
                                                           "task pre-solved is passed by an empty episode")
    guards = buggy.every_guard_reachable()
    assert not guards.ok and "count > 5 and count < 3" in guards.counterexample["untriggered"][0]
    assert buggy.initial_states_load() == Verdict(True)
    assert "cause: rng" in buggy.deterministic().detail  # uuid4 draws random values
    assert buggy.code_matches_plan_statically() is None and buggy.code_agrees_with_plan() is None  # no plan


def test_a_state_breaking_the_schema_does_not_load(tmp_path, pool):
    folder = tmp_path / "buggy"
    shutil.copytree(BUGGY, folder)
    state = json.loads((folder / "states" / "default.json").read_text())
    state["items"]["i1"]["owner_id"] = "nobody"
    (folder / "states" / "default.json").write_text(json.dumps(state))
    handle = read_env(folder)
    verdict = PropertySuite(handle, spec_of(handle), pool, examples=5).initial_states_load()
    assert verdict == Verdict(False, {"state": "default"}, "items.owner_id points to missing owners.id 'nobody'")


def test_code_against_its_plan(tmp_path, reference, pool):
    folder = tmp_path / "library"
    shutil.copytree(reference.get("library").path, folder)
    source = (folder / "env.py").read_text()
    old = 'return fail(f"Loan {loan_id} is overdue and cannot be renewed")'
    assert old in source
    (folder / "env.py").write_text(source.replace(old, 'return fail("Loan is late")', 1))
    handle = read_env(folder)
    suite = PropertySuite(handle, spec_of(handle), pool, plan=load_plan(folder), examples=20, effort=0.1)
    static = suite.code_matches_plan_statically()
    assert not static.ok and static.detail.startswith("renew_loan: guard #4 planned")
    dynamic = suite.code_agrees_with_plan()
    assert not dynamic.ok and "Loan is late" in dynamic.detail


def test_a_reference_env_passes_every_check(reference, pool):
    handle = reference.get("store")
    suite = PropertySuite(handle, spec_of(handle), pool, plan=load_plan(handle.path), examples=20, effort=0.1)
    results = suite.results()
    assert [r.name for r in results] == [s.name for s in runnable()]
    assert [r.name for r in results if not r.ok] == []


def test_stop_ends_the_run_at_the_first_critical_failure(buggy):
    results = buggy.results(stop=lambda done: any(not r.ok and r.critical for r in done))
    assert [r.name for r in results if not r.ok] == ["declared_kind_matches_code", "no_crash_on_typed_input"]


@pytest.fixture(scope="module")
def quirks(tmp_path_factory, pool):
    """Two imported class envs with findings only such envs have, as a user imports them."""
    catalog = Catalog(tmp_path_factory.mktemp("quirks"))
    suites = {}
    for name, config in (("hidden_cache", "prices.json"), ("decimal_precision", "balances.json")):
        handle = import_class_env(QUIRKS / f"{name}.py", catalog, configs=[QUIRKS / config],
                                  env_id=name.replace("_", "-")).handle
        manifest = handle.manifest.model_copy(update={"strict_args": False, "failure": FailureConvention(
            exceptions=list(handle.manifest.failure_exceptions))})
        (handle.path / "env.json").write_text(json.dumps(manifest.model_dump(mode="json"), indent=1))
        handle = catalog.get(handle.id)
        suites[name] = PropertySuite(handle, spec_of(handle), pool, examples=40, effort=0.2)
    return suites


def test_hidden_state_a_read_tool_changes(quirks):
    suite = quirks["hidden_cache"]
    kept = suite.read_tools_keep_hidden_state()
    assert not kept.ok and "_quote_cache" in kept.detail
    assert kept.counterexample["actions"][0]["name"] == "get_price"
    seen = suite.run_check("hidden_writes")
    assert seen.ok and seen.informational and seen.counterexample  # reported, never failed
    ill_typed = suite.run_check("ill_typed_accepted")
    assert ill_typed.ok and ill_typed.informational


def test_interpreter_wide_state_a_call_changes(quirks):
    verdict = quirks["decimal_precision"].no_interpreter_wide_change()
    assert not verdict.ok and "decimal context" in verdict.detail
    assert quirks["hidden_cache"].no_interpreter_wide_change().ok


def _library_with_tasks(tmp_path, reference, tasks):
    folder = tmp_path / "library"
    shutil.copytree(reference.get("library").path, folder)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return read_env(folder)


REFUSAL = {"id": "refuse-calvino", "state": "default", "refusal": True,
           "instruction": "Grace Hopper asks to borrow Invisible Cities. Policy: no loans of Calvino this week.",
           "check": "def check(initial, final):\n    return final['books']['B010']['status'] == "
                    "initial['books']['B010']['status']\n",
           "solution": [{"name": "search_books", "arguments": {"query": "calvino"}}],
           "forbidden": [{"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}}]}


def test_a_refusal_task_is_confirmed_by_its_forbidden_calls(tmp_path, reference, pool):
    handle = _library_with_tasks(tmp_path, reference, [REFUSAL])
    suite = PropertySuite(handle, spec_of(handle), pool, examples=5)
    assert suite.tasks_unsolved_then_solved().ok
    # its check holds on the initial state, yet an empty episode does not pass it: the decline is missing
    assert suite.no_task_passes_empty_episode() == Verdict(True, detail="1 tasks")
    blind = dict(REFUSAL, check="def check(initial, final):\n    return True\n")  # cannot tell the forbidden loan
    handle = _library_with_tasks(tmp_path / "blind", reference, [blind])
    verdict = PropertySuite(handle, spec_of(handle), pool, examples=5).tasks_unsolved_then_solved()
    assert not verdict.ok and "does not reject the state its forbidden calls reach" in verdict.detail
    unconfirmed = {k: v for k, v in REFUSAL.items() if k != "forbidden"}
    handle = _library_with_tasks(tmp_path / "unconfirmed", reference, [unconfirmed])
    verdict = PropertySuite(handle, spec_of(handle), pool, examples=5).tasks_unsolved_then_solved()
    assert verdict.detail == "a refusal without forbidden calls: nothing shows its check can fail"
