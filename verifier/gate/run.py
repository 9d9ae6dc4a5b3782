"""The quality gate: run every registered check on one env and score it (verifier/gate/report.py).

The checks and their severities are registered in verifier/gate/properties.py (verifier/gate/checks.py is
the registry); the threshold and effort presets are in verifier/gate/settings.py. The spec must
extract before any property can be searched, so that check is decided here. Without a plan the
intent checks cannot run, and the report says so.

`verify_envs` runs the gate over many envs (`verify --all`), one env per unit on an executor
(executors): each worker, a local process or a Ray actor opened from `GateWorkers`, holds the
catalog and one sandbox pool, so envs are checked side by side where the single-env loop ran one
at a time.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalog.errors import EnvforgeError
from catalog.store import Catalog, EnvHandle
from constraints.completeness import spec_of
from constraints.extract import ExtractionError
from executors import LOCAL, ExecutorSpec, Recipe, open_pool
from sandbox.isolation import default_isolation, require_isolation
from sandbox.pool import DEFAULT_TIMEOUT, SandboxPool
from verifier.gate.checks import CheckResult
from verifier.gate.intent import load_plan
from verifier.gate.properties import PropertySuite
from verifier.gate.report import GateReport, broken_env_report
from verifier.gate.settings import GATE, VERIFY

__all__ = ["GATE", "GateReport", "broken_env_report", "verify_env", "verify_envs"]

def verify_env(handle: EnvHandle, pool: SandboxPool, *, examples: int = VERIFY.examples, seed: int = 0,
               gate: float = GATE, stop_early: bool = False, effort: float = VERIFY.effort,
               extra_checks: Sequence[CheckResult] = (),
               progress: Callable[[int, int, str], None] | None = None) -> GateReport:
    """Run every check on one env and score it.

    `progress(checks done, checks in all, the check starting)` follows the property checks (`verify gate ENV`'s status line).

    `effort` scales the guard-directed searches (presets in verifier/gate/settings.py).
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

        checks = [CheckResult("constraint_spec_extracts", True), *suite.results(stop=decided, progress=progress)]
    return GateReport.scored(handle.id, [*checks, *extra_checks], gate=gate,
                             plan=f"present ({plan.source})" if plan else "none: generic properties only",
                             seconds=time.monotonic() - started)


# --- many envs, one per unit ------------------------------------------------------------------------

class _GateWorker:
    """What a worker keeps between envs: the catalog and one sandbox pool."""

    def __init__(self, gating: GateWorkers) -> None:
        self.gating = gating
        self.pool = SandboxPool(1, timeout=gating.timeout)

    def run(self, env_id: str) -> GateReport:
        """One env's report; an env that cannot be verified (a corrupt state file, say) is its own failed report."""
        g = self.gating
        try:
            return verify_env(g.catalog.get(env_id), self.pool, examples=g.examples, seed=g.seed, gate=g.gate)
        except Exception as exc:  # noqa: BLE001 - whatever one env's files do, the other envs keep their reports
            return broken_env_report(env_id, _reason(exc), g.gate)

    def close(self) -> None:
        self.pool.close()


@dataclass(frozen=True)
class GateWorkers(Recipe[str, GateReport]):
    """The recipe of a `verify --all` worker: the catalog (it pickles as its root) and the gate's settings."""

    catalog: Catalog
    examples: int = VERIFY.examples
    seed: int = 0
    gate: float = GATE
    timeout: float = DEFAULT_TIMEOUT

    def open(self) -> _GateWorker:
        return _GateWorker(self)


def _reason(exc: BaseException) -> str:
    """One line for an env that could not be verified: the project's own message, else the exception's."""
    return str(exc) if isinstance(exc, EnvforgeError) else f"{type(exc).__name__}: {exc}"


def verify_envs(catalog: Catalog, env_ids: Sequence[str], *, executor: ExecutorSpec = LOCAL, workers: int = 2,
                examples: int = VERIFY.examples, seed: int = 0, gate: float = GATE, timeout: float = DEFAULT_TIMEOUT,
                progress: Callable[[GateReport], None] | None = None) -> list[GateReport]:
    """The gate report of each env of `catalog` in `env_ids`, in that order, whichever executor ran them.

    Envs run side by side on `workers` workers of `executor`, each with its own sandbox pool;
    `progress` sees each report as its env finishes. An env that cannot be verified (its files
    do not read, its worker was lost) gets a failed report of its own; the others are unaffected. On Ray every node needs the catalog folder
    at the same path (reference envs ship with the package).
    """
    if not env_ids:
        return []
    if default_isolation() == "os":
        require_isolation()  # one line with the fix here, rather than every worker failing to start its sandbox
    reports: list[GateReport | None] = [None] * len(env_ids)
    gating = GateWorkers(catalog, examples=examples, seed=seed, gate=gate, timeout=timeout)
    with open_pool(executor, gating, min(workers, len(env_ids)), name="verify") as pool:
        futures = {pool.submit(env_id): k for k, env_id in enumerate(env_ids)}
        for future in cf.as_completed(futures):
            try:
                report = future.result()
            except Exception as exc:  # noqa: BLE001 - the unit's worker was lost: that env's report says so
                report = broken_env_report(env_ids[futures[future]], f"not verified: {_reason(exc)}", gate)
            reports[futures[future]] = report
            if progress is not None:
                progress(report)
    return [r for r in reports if r is not None]
