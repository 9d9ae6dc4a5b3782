"""The quality gate: an env's score is the share of its checks that pass.

Every check weighs the same: each one is a distinct way an environment can be broken
(crashes, leaky failures, writes outside the write set, nondeterminism, broken schema,
unreachable guards, unsolvable or pre-solved tasks), and none subsumes another. The default
threshold is EnvScaler's 0.85. Without a plan the intent checks cannot run, and the report
says so.
"""

from __future__ import annotations

import time
from typing import Any

from catalog.store import EnvHandle
from constraints.completeness import spec_of
from constraints.extract import ExtractionError
from verifier.properties import CheckResult, PropertySuite
from verifier.sandbox import SandboxPool

GATE = 0.85


def verify_env(handle: EnvHandle, pool: SandboxPool, *, examples: int = 120, seed: int = 0,
               gate: float = GATE) -> dict[str, Any]:
    """Run every check on one env and score it."""
    started = time.monotonic()
    try:
        spec = spec_of(handle)
    except ExtractionError as exc:
        checks = [CheckResult("constraint_spec_extracts", False, None, str(exc))]
    else:
        checks = [CheckResult("constraint_spec_extracts", True)]
        mismatches = [t["name"] for t in spec["tools"].values() if t["kind_mismatch"]]
        checks.append(CheckResult("declared_kind_matches_code", not mismatches,
                                  {"tools": mismatches} if mismatches else None))
        checks.extend(PropertySuite(handle, spec, pool, examples=examples, seed=seed).all())
    passed = sum(c.ok for c in checks)
    score = round(passed / len(checks), 4)
    plan = handle.path / "plan.json"
    return {
        "env": handle.id, "score": score, "passed": score >= gate, "gate": gate,
        "checks": [c.to_dict() for c in checks],
        "plan": "present (intent checks not built yet)" if plan.is_file() else "none: generic properties only",
        "seconds": round(time.monotonic() - started, 1),
    }
