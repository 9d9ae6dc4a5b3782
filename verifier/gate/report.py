"""The gate's verdict on one env: the typed report, how it is scored, and how it reads as text.

Every scored check weighs the same: each is a distinct way an environment can be broken
(crashes, leaky failures, writes outside the write set, nondeterminism, broken schema,
unreachable guards, unsolvable or pre-solved tasks), and none subsumes another. An env passes
with a score at or above the threshold and no critical check failing; informational checks are
reported and never scored. A check that ran nothing (no call of it ran in the sandbox) is `not
run` and scores as failed: it proved nothing. `model_dump(mode="json")` is the JSON `verify
--json` prints and synthesis stores.

This module imports nothing heavy: the CLI renders with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict

from catalog.jsonmodel import JsonModel
from catalog.state.jsonable import canonical_json
from verifier.gate.checks import CheckResult
from verifier.gate.settings import GATE

__all__ = ["GateReport", "broken_env_report", "render_gate_report"]


class GateReport(JsonModel):
    """One env's checks, score and verdict against the threshold `gate`."""

    model_config = ConfigDict(frozen=True)

    env: str
    score: float
    passed: bool
    gate: float
    critical_failures: list[str]
    checks: list[CheckResult]
    plan: str  # "present (<source>)" or why the intent checks did not run
    seconds: float

    @classmethod
    def scored(cls, env_id: str, checks: Sequence[CheckResult], *, gate: float, plan: str,
               seconds: float) -> GateReport:
        """Score `checks`: the share of non-informational ones that pass."""
        scored = [c for c in checks if not c.informational]
        score = round(sum(c.ok for c in scored) / len(scored), 4)
        critical_failures = [c.name for c in checks if not c.ok and c.critical]
        return cls(env=env_id, score=score, passed=score >= gate and not critical_failures, gate=gate,
                   critical_failures=critical_failures, checks=list(checks), plan=plan, seconds=round(seconds, 1))

    @property
    def not_run(self) -> list[str]:
        """Names of the checks that ran nothing (failed, never passed; informational ones are not scored)."""
        return [c.name for c in self.checks if c.not_run]

    @property
    def failing(self) -> list[str]:
        """Names of the checks that failed, critical or not, in run order."""
        return [c.name for c in self.checks if not c.ok]


def broken_env_report(env_id: str, reason: str, gate: float = GATE) -> GateReport:
    """The report of a folder the catalog cannot read: one failed critical check, so `verify --all` counts it."""
    return GateReport.scored(env_id, [CheckResult("env_folder_reads", False, None, reason)], gate=gate,
                             plan="unknown: the folder does not read", seconds=0.0)


def render_gate_report(report: GateReport) -> str:
    """The report as `verify` prints it: verdict line, then one line per check with its counterexample."""
    verdict = "PASS" if report.passed else "FAIL"
    unrun = sum(c.not_run and not c.informational for c in report.checks)
    lines = [f"{report.env}: {verdict} score {report.score:.2f} (gate {report.gate}), plan: {report.plan}"
             + (f"; {unrun} checks not run (scored as failed)" if unrun else "")]
    for check in report.checks:
        mark = "info" if check.informational else "ok  " if check.ok else "FAIL"
        lines.append(f"  {mark} {check.name}" + (f": {check.detail}" if check.detail else ""))
        if check.counterexample and (not check.ok or check.informational):
            example = check.counterexample
            if "actions" in example:
                calls = "; ".join(f"{a['name']}({canonical_json(a['arguments'])})" for a in example["actions"])
                lines.append(f"       counterexample from state {example['state']!r}: {calls}")
            else:
                lines.append(f"       {canonical_json(example)}")
    return "\n".join(lines)
