"""The quality gate: run every registered check on one env and score it (verifier/gate_report.py).

The checks and their severities are registered in verifier/properties.py (verifier/checks.py is
the registry); the threshold and effort presets are in verifier/gate_settings.py. The spec must
extract before any property can be searched, so that check is decided here. Without a plan the
intent checks cannot run, and the report says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from catalog.store import EnvHandle
from constraints.completeness import spec_of
from constraints.extract import ExtractionError
from verifier.checks import CheckResult
from verifier.gate_report import GateReport, broken_env_report
from verifier.gate_settings import GATE, VERIFY
from verifier.intent import load_plan
from verifier.properties import PropertySuite
from verifier.sandbox import SandboxPool

__all__ = ["GATE", "GateReport", "broken_env_report", "verify_env"]


def verify_env(handle: EnvHandle, pool: SandboxPool, *, examples: int = VERIFY.examples, seed: int = 0,
               gate: float = GATE, stop_early: bool = False, effort: float = VERIFY.effort,
               extra_checks: Sequence[CheckResult] = ()) -> GateReport:
    """Run every check on one env and score it.

    `effort` scales the guard-directed searches (presets in verifier/gate_settings.py).
    `extra_checks` were run by the caller (e.g. synthesis' rule-conformance judge) and are scored
    with the rest.

    With `stop_early` (mutation testing), no further check runs once a critical check has
    failed, since the verdict cannot change.
    """
    started = time.monotonic()
    plan = load_plan(handle.path)
    try:
        spec = spec_of(handle)
    except ExtractionError as exc:
        checks = [CheckResult("constraint_spec_extracts", False, None, str(exc))]
    else:
        suite = PropertySuite(handle, spec, pool, plan=plan, examples=examples, seed=seed, effort=effort)

        def decided(done: list[CheckResult]) -> bool:
            return stop_early and any(not c.ok and c.critical for c in done)

        checks = [CheckResult("constraint_spec_extracts", True), *suite.results(stop=decided)]
    return GateReport.scored(handle.id, [*checks, *extra_checks], gate=gate,
                             plan=f"present ({plan.source})" if plan else "none: generic properties only",
                             seconds=time.monotonic() - started)
