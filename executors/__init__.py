"""Where a command's work units run: local processes or threads (default), or a Ray cluster.

Every long command is a loop over independent work units (a synthesis slot, an env to verify, a
sample to audit, a task to roll out, a batch of sandbox jobs). The command keeps the loop, the
files and resume; the executor only decides where each unit runs. A command describes its
worker once, as a picklable `Recipe` whose `open()` builds the worker's state (a catalog, a
sandbox pool, a simulator) and whose worker's `run(unit)` does one unit; `open_pool(executor,
recipe, workers)` opens `workers` workers from it and returns a `WorkerPool` whose `submit(unit)`
returns a `concurrent.futures.Future`, so one driver (`cf.wait`, `cf.as_completed`) runs on
either executor:

- `local`: spawned processes (CPU-bound units: slots, envs) or threads of this process (units
  that wait: model calls, sandbox jobs), as the recipe's `threads` says;
- `ray`: one Ray actor per worker, spread over the cluster's nodes, each opening the recipe once
  and fed one unit at a time by the driver, so a busy actor never queues work an idle one could take.

This module is the one place that chooses by executor kind: commands never do. What a worker
needs from the driver's node (`on_driver_node`) is chosen here too.

A worker that dies mid-unit (a killed process, a lost node) is replaced and its unit run again
(a bounded number of times); the unit's future never sees the death. Units must therefore be safe
to run twice, which is what resume already requires of them: each command's driver is the only
writer of its files, and writes a unit's result once, when its future completes.

"Executor" means this and nothing else: what runs a sequence of tool calls on one env is a call
runner (`constraints.completeness.CallRunner`, `sandbox.calls.SandboxCallRunner`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from executors.base import EXECUTORS, ExecutorError, ExecutorSpec, Recipe, Worker, WorkerLost, WorkerPool

__all__ = ["EXECUTORS", "ExecutorError", "ExecutorSpec", "LOCAL", "Recipe", "Worker", "WorkerLost", "WorkerPool",
           "on_driver_node", "open_pool"]

U = TypeVar("U")
R = TypeVar("R")
LOCAL = ExecutorSpec()  # the default executor: this machine


def open_pool(spec: ExecutorSpec, recipe: Recipe[U, R], workers: int, *, per_worker: int = 1,
              name: str = "envforge") -> WorkerPool[U, R]:
    """A pool of `workers` workers, each opened once from `recipe`, running units submitted to it.

    Locally the recipe's `threads` chooses threads of this process (`workers * per_worker` of
    them) or spawned processes; on Ray a worker is an actor process that runs `per_worker` units
    at a time on its own threads. The recipe and the units must pickle (module-level classes,
    plain data), as for a process pool; `name` names the Ray actors.
    """
    if spec.kind == "local":
        from executors.local import open_local

        return open_local(recipe, workers, per_worker=per_worker)
    from executors.ray_pool import RayPool

    return RayPool(recipe, workers, address=spec.address, per_worker=per_worker, name=name)


def on_driver_node(spec: ExecutorSpec, cls: type, *args: Any) -> Any | None:
    """A Ray actor of `cls(*args)` on the driver's node, for workers on other nodes; None when they all run here.

    Local workers share the driver's machine and open what they need themselves (e.g. a SQLite
    file); Ray workers may be anywhere and reach the actor instead (stop it with `ray.kill`).
    """
    if spec.kind == "local":
        return None
    from executors.ray_pool import driver_actor

    return driver_actor(cls, *args, address=spec.address)
