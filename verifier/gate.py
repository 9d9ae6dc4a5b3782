"""The quality gate: an env's score is the share of its checks that pass.

Every check weighs the same: each one is a distinct way an environment can be broken
(crashes, leaky failures, writes outside the write set, nondeterminism, broken schema,
unreachable guards, unsolvable or pre-solved tasks), and none subsumes another. The default
threshold is EnvScaler's 0.85, and a critical check failing rejects the env whatever the score
(see CheckResult). Without a plan the intent checks cannot run, and the report says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from catalog.store import EnvHandle
from constraints.completeness import spec_of
from constraints.extract import ExtractionError
from verifier.intent import load_plan, static_mismatches
from verifier.properties import CheckResult, PropertySuite
from verifier.sandbox import SandboxPool

GATE = 0.85


def verify_env(handle: EnvHandle, pool: SandboxPool, *, examples: int = 120, seed: int = 0,
               gate: float = GATE, stop_early: bool = False, effort: float = 1.0,
               extra_checks: Sequence[CheckResult] = ()) -> dict[str, Any]:
    """Run every check on one env and score it.

    `effort` scales the guard-directed searches: `verify` uses 1.0; the synthesis gate less, as
    it runs on every candidate (the same checks, fewer generated calls). `extra_checks` were run
    by the caller (e.g. synthesis' rule-conformance judge) and are scored with the rest.

    With `stop_early` (mutation testing), the slow checks are skipped once a critical check has
    failed, since the verdict cannot change.
    """
    started = time.monotonic()
    try:
        spec = spec_of(handle)
    except ExtractionError as exc:
        checks = [CheckResult("constraint_spec_extracts", False, None, str(exc))]
    else:
        checks = [CheckResult("constraint_spec_extracts", True)]
        mismatches = [t.name for t in spec.tools.values() if t.kind_mismatch]
        checks.append(CheckResult("declared_kind_matches_code", not mismatches,
                                  {"tools": mismatches} if mismatches else None))
        plan = load_plan(handle.path)
        if plan is not None:
            findings = static_mismatches(plan, spec)
            checks.append(CheckResult("code_matches_plan_statically", not findings,
                                      {"findings": findings} if findings else None,
                                      findings[0] if findings else f"{len(plan.rules)} rules, "
                                      f"{sum(len(t.effects) for t in plan.tools.values())} effects matched"))
        suite = PropertySuite(handle, spec, pool, examples=examples, seed=seed, effort=effort)

        def decided() -> bool:
            return stop_early and any(not c.ok and c.critical for c in checks)

        if plan is not None and not decided():
            checks.append(suite.check_intent_dynamic(plan))
        if not decided():
            checks.extend(suite.all())
    return _report(handle, [*checks, *extra_checks], gate, started)


def _report(handle: EnvHandle, checks: list[CheckResult], gate: float, started: float) -> dict[str, Any]:
    plan = load_plan(handle.path) if (handle.path / "plan.json").is_file() else None
    return _scored(handle.id, checks, gate, f"present ({plan.source})" if plan else "none: generic properties only",
                   time.monotonic() - started)


def broken_env_report(env_id: str, reason: str, gate: float = GATE) -> dict[str, Any]:
    """The report of a folder the catalog cannot read: one failed critical check, so `verify --all` counts it."""
    return _scored(env_id, [CheckResult("env_folder_reads", False, None, reason)], gate, "unknown: the folder does "
                   "not read", 0.0)


def _scored(env_id: str, checks: list[CheckResult], gate: float, plan: str, seconds: float) -> dict[str, Any]:
    scored = [c for c in checks if not c.informational]  # information (e.g. hidden writes seen) is no verdict
    passed = sum(c.ok for c in scored)
    score = round(passed / len(scored), 4)
    critical_failures = [c.name for c in checks if not c.ok and c.critical]
    return {
        "env": env_id, "score": score, "passed": score >= gate and not critical_failures, "gate": gate,
        "critical_failures": critical_failures, "checks": [c.to_dict() for c in checks], "plan": plan,
        "seconds": round(seconds, 1),
    }
