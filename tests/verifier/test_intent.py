"""Intent vs implementation, and mutation testing of the gate."""

import shutil
from collections import Counter

import libcst as cst
import pytest

from catalog.store import read_env
from constraints.completeness import spec_of
from sandbox.pool import SandboxPool
from verifier.gate.intent import load_plan, static_mismatches
from verifier.gate.mutation import OPERATORS, mutants_of, mutation_test


def _mutated(tmp_path, reference, env_id, old, new):
    folder = tmp_path / env_id
    shutil.copytree(reference.get(env_id).path, folder)
    source = (folder / "env.py").read_text()
    assert old in source
    (folder / "env.py").write_text(source.replace(old, new, 1))
    return read_env(folder)


@pytest.mark.parametrize("env_id", ["library", "bank", "clinic", "store"])
def test_reference_code_matches_its_plan(env_id, reference):
    handle = reference.get(env_id)
    assert static_mismatches(load_plan(handle.path), spec_of(handle)) == []


@pytest.mark.parametrize("old, new, finding", [
    ('        if member.fines_due >= FINE_BLOCK:\n            return fail(f"Member {member_id} owes {member.fines_due:.2f} EUR in fines")\n', "",
     "borrow_book: guard #3 planned `if member.fines_due >= FINE_BLOCK`"),
    ("        book.times_borrowed += 1\n", "", "borrow_book: planned effect modify books/<book_id>/times_borrowed"),
    ("if loan.renewals >= MAX_RENEWALS:", "if loan.renewals > MAX_RENEWALS:", "renew_loan: guard #3 planned"),
    ('return fail(f"Loan {loan_id} is overdue and cannot be renewed")', 'return fail("Loan is late")',
     "renew_loan: guard #4 planned"),
])
def test_deviations_from_the_plan_are_found_statically(tmp_path, reference, old, new, finding):
    handle = _mutated(tmp_path, reference, "library", old, new)
    findings = static_mismatches(load_plan(handle.path), spec_of(handle))
    assert any(f.startswith(finding) for f in findings), findings


def test_every_operator_makes_valid_mutants(reference):
    mutants = [m for env_id in ("library", "store") for m in mutants_of(reference.get(env_id))]
    kinds = Counter(m.operator for m in mutants)
    assert set(kinds) == set(OPERATORS)
    for mutant in mutants[:: max(1, len(mutants) // 40)]:
        cst.parse_module(mutant.source)  # still valid Python
        assert mutant.source != reference.get(mutant.env_id).source()


def test_mutation_testing_kills_planted_bugs_without_false_alarms(reference):
    with SandboxPool(2, timeout=5.0) as pool:
        report = mutation_test([reference.get("store")], 9, pool, examples=20)
    assert report.mutants == 9 and report.false_alarms == 0
    assert report.killed + report.survived == 9 and report.mutation_score >= 0.75
    assert all({"env", "operator", "line", "change"} <= s.keys() for s in report.survivors)
    assert report.model_dump(mode="json")["mutants"] == 9
