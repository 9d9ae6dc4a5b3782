"""Sandbox jobs on an executor: what a command that batches sandbox jobs runs them on.

Commands that batch sandbox jobs (`bench export`: `run_many` per search round and per
verification pass) keep their batching; each worker (a thread here, an actor on Ray) holds a
`SandboxPool(1)` of its own (the OS sandbox runs inside the worker, exactly as it does for a
single pool) and a unit is a run of consecutive jobs of one env version, so a worker's sandbox
process stays on one env as a local pool's does. Results come back in input order.

Jobs name their env by host path: on a multi-node cluster the catalog folder (and the installed
package, for reference envs) must be at the same path on every node, e.g. a shared filesystem.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from executors import ExecutorSpec, Recipe, WorkerPool, open_pool
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult, SandboxPool, job_version

__all__ = ["JobPool", "SandboxJobs", "batches", "open_sandbox_pool"]

MAX_BATCH = 32  # jobs per unit: long enough to amortise a unit's round trip, short enough to spread a round


class _SandboxWorker:
    """One worker's sandbox pool, running one batch of jobs per unit."""

    def __init__(self, timeout: float) -> None:
        self.pool = SandboxPool(1, timeout=timeout)  # the driver's isolation: executors hand it to every worker

    def run(self, jobs: list[Job]) -> list[JobResult]:
        return self.pool.run_many(jobs)

    def close(self) -> None:
        self.pool.close()


@dataclass(frozen=True)
class SandboxJobs(Recipe[list[Job], list[JobResult]]):
    """The recipe of a sandbox-job worker: a one-worker SandboxPool (the jobs run in its sandbox process)."""

    timeout: float = DEFAULT_TIMEOUT
    threads = True  # a worker only waits on its sandbox process

    def open(self) -> _SandboxWorker:
        return _SandboxWorker(self.timeout)


def batches(jobs: list[Job], workers: int) -> list[list[int]]:
    """Indices of `jobs` cut into units: runs of one env version, at most MAX_BATCH and about a share per worker."""
    size = max(1, min(MAX_BATCH, math.ceil(len(jobs) / max(1, 2 * workers))))
    groups: dict[Any, list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(job_version(job), []).append(index)
    return [group[k:k + size] for group in groups.values() for k in range(0, len(group), size)]


class JobPool:
    """`workers` sandbox-job workers of an executor; what the exporter uses of SandboxPool."""

    def __init__(self, spec: ExecutorSpec, workers: int, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.size = max(1, workers)
        self._pool: WorkerPool[list[Job], list[JobResult]] = open_pool(spec, SandboxJobs(timeout), self.size,
                                                                         name="sandbox")

    def run_many(self, jobs: list[Job], progress: Callable[[int, int], None] | None = None) -> list[JobResult]:
        """Run a batch of jobs on the workers; results in the order of `jobs`.

        `progress(done, total)` hears of the jobs finished as each unit comes back.
        """
        units = batches(jobs, self.size)
        futures = {self._pool.submit([jobs[i] for i in unit]): unit for unit in units}
        results: list[JobResult | None] = [None] * len(jobs)
        done = 0
        for future in cf.as_completed(futures):
            unit = futures[future]
            for index, result in zip(unit, future.result(), strict=True):
                results[index] = result
            done += len(unit)
            if progress is not None:
                progress(done, len(jobs))
        return [r for r in results if r is not None]

    def run(self, job: Job) -> JobResult:
        return self.run_many([job])[0]

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> JobPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.close(cancel=exc[0] is not None)


def open_sandbox_pool(spec: ExecutorSpec, workers: int, *, timeout: float = DEFAULT_TIMEOUT) -> JobPool:
    """`workers` sandbox-job workers on `spec`'s executor."""
    return JobPool(spec, workers, timeout=timeout)
