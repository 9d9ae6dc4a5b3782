"""Sandbox jobs on an executor: a `SandboxPool` stand-in whose workers are Ray actors.

Commands that batch sandbox jobs (`bench export`: `run_many` per search round and per
verification pass) keep their batching; with Ray each actor holds a `SandboxPool(1)` of its own
(the OS sandbox runs inside the actor, exactly as it does locally) and a unit is a run of
consecutive jobs of one env version, so an actor's sandbox worker stays on one env as the local
pool's does. Results come back in input order.

Jobs name their env by host path: on a multi-node cluster the catalog folder (and the installed
package, for reference envs) must be at the same path on every node, e.g. a shared filesystem.
"""

from __future__ import annotations

import math
from typing import Any

from executors import ExecutorSpec, open_pool
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult, SandboxPool, job_version

__all__ = ["JobPool", "RaySandboxPool", "open_sandbox_pool"]

MAX_BATCH = 32  # jobs per unit: long enough to amortise a unit's round trip, short enough to spread a round

_WORKER: dict[str, SandboxPool] = {}  # the actor's own sandbox pool


def _open_sandbox(timeout: float) -> None:
    _WORKER["pool"] = SandboxPool(1, timeout=timeout)  # the driver's isolation: executors hand it to every worker


def _run_batch(jobs: list[Job]) -> list[JobResult]:
    return _WORKER["pool"].run_many(jobs)


def batches(jobs: list[Job], workers: int) -> list[list[int]]:
    """Indices of `jobs` cut into units: runs of one env version, at most MAX_BATCH and about a share per worker."""
    size = max(1, min(MAX_BATCH, math.ceil(len(jobs) / max(1, 2 * workers))))
    groups: dict[Any, list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(job_version(job), []).append(index)
    return [group[k:k + size] for group in groups.values() for k in range(0, len(group), size)]


class RaySandboxPool:
    """`workers` Ray actors, each with a one-worker SandboxPool; what the exporter uses of SandboxPool."""

    def __init__(self, spec: ExecutorSpec, workers: int, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.size = max(1, workers)
        self._pool = open_pool(spec, workers=self.size, initializer=_open_sandbox, initargs=(timeout,), name="sandbox")

    def run_many(self, jobs: list[Job]) -> list[JobResult]:
        """Run a batch of jobs on the actors; results in the order of `jobs`."""
        units = batches(jobs, self.size)
        futures = [self._pool.submit(_run_batch, [jobs[i] for i in unit]) for unit in units]
        results: list[JobResult | None] = [None] * len(jobs)
        for unit, future in zip(units, futures, strict=True):
            for index, result in zip(unit, future.result(), strict=True):
                results[index] = result
        return [r for r in results if r is not None]

    def run(self, job: Job) -> JobResult:
        return self.run_many([job])[0]

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> RaySandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.close(cancel=exc[0] is not None)


JobPool = SandboxPool | RaySandboxPool
"""What runs a command's batches of sandbox jobs: this machine's pool or the actors'."""


def open_sandbox_pool(spec: ExecutorSpec, workers: int, *, timeout: float = DEFAULT_TIMEOUT) -> JobPool:
    """A SandboxPool on this machine for `local`, the actors' pools for `ray`."""
    if spec.is_local:
        return SandboxPool(max(1, workers), timeout=timeout)
    return RaySandboxPool(spec, workers, timeout=timeout)
