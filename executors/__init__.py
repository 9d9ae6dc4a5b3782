"""Where a command's work units run: the local pool (default) or a Ray cluster.

Every long command is a loop over independent work units (a synthesis slot, an env to verify, a
sample to audit, a task to roll out). The command keeps the loop, the files and resume; an
executor only decides where each unit's function runs. Both kinds give the same interface, a
`WorkerPool` whose `submit` returns a `concurrent.futures.Future`, so a driver written for a local
pool (`cf.wait`, `cf.as_completed`) runs unchanged on Ray:

- `local`: a process pool (CPU-bound units: slots, envs) or a thread pool (I/O-bound units:
  model calls), as the command had before executors existed;
- `ray`: one Ray actor per worker, spread over the cluster's nodes, each initialised once (the
  worker's state, e.g. a sandbox pool or an opened pipeline) and fed one unit at a time by the
  driver, so a busy actor never queues work an idle one could take.

A worker that dies mid-unit (a killed process, a lost node) is replaced and its unit run again
(a bounded number of times); the unit's future never sees the death. Units must therefore be safe
to run twice, which is what resume already requires of them: each command's driver is the only
writer of its files, and writes a unit's result once, when its future completes.

"Executor" means this and nothing else: what runs a sequence of tool calls on one env is a call
runner (`constraints.completeness.CallRunner`, `sandbox.calls.SandboxCallRunner`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from executors.base import EXECUTORS, ExecutorError, ExecutorSpec, WorkerLost, WorkerPool

__all__ = ["EXECUTORS", "ExecutorError", "ExecutorSpec", "WorkerLost", "WorkerPool", "open_pool"]


def open_pool(spec: ExecutorSpec, *, workers: int, initializer: Callable[..., None] | None = None,
              initargs: Sequence[Any] = (), threads: bool = False, per_worker: int = 1,
              name: str = "envforge") -> WorkerPool:
    """A pool of `workers` workers, each running `initializer(*initargs)` once before its first unit.

    `threads` (local only) runs units on threads of this process, for I/O-bound units whose
    state may be shared (one simulator, one client); the initializer then runs once here. On Ray
    a worker is an actor process that runs `per_worker` units at a time on its own threads.
    Functions and arguments must be picklable (module-level functions, plain data), as for a
    process pool.
    """
    if spec.is_local:
        from executors.local import LocalPool

        return LocalPool(workers, initializer, tuple(initargs), threads=threads, per_worker=per_worker)
    from executors.ray_pool import RayPool

    return RayPool(workers, initializer, tuple(initargs), address=spec.address, per_worker=per_worker, name=name)
