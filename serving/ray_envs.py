"""Many env instances on a Ray cluster, for RL trainers that step a batch of episodes at once.

    EnvActorPool(env_id, n=256, *, task=None, state=None, actors=None, catalog=None, address=None,
                 trusted=None, max_steps=None, terminate_on_success=True)
    pool.reset(seeds=None, options=None) -> [(observation, info)] * n
    pool.step(actions) -> [(observation, reward, terminated, truncated, info) | None] * n
    pool.reset_one(i, seed=None, options=None), pool.step_one(i, action), pool.evaluate(indices=None, final_messages=None),
    pool.states(indices=None), pool.restarts, pool.close(); a context manager

Why actors hold the instances: an instance is in-memory state (its own SQLite database or
object, or a sandbox worker), so it must live in one process for its whole episode. The `n`
instances are split evenly over `actors` Ray actors (default: one per cluster CPU), placed with
the SPREAD strategy so a multi-node cluster spreads them over its nodes. A batched call sends
each actor one message with its instances' share, so a step of 256 instances costs `actors` round
trips, not 256. Inside an actor the share runs sequentially: in-process (reference) instances are
Python under one GIL, so more cores mean more actors, not threads (bench/executors.py measures
4 threads in one process against sequential steps: ~15% slower on a quiet machine).

Each instance is a `serving.ToolEnv` made by `make` inside the actor, so isolation,
reward, termination and trust are exactly serving's: reference envs run in the actor's process
sharing the loaded code and state templates; every other env runs in its own sandbox worker
started by the actor (the sandbox runs in the actor as it does locally).

A dead actor (killed process, lost node) loses its instances' episodes: Ray restarts it (up to
`RESTARTS` times) with fresh instances that wait for `reset`. The first call that meets the death
(it failed with the actor, or it reached the restarted one, which says so by a new incarnation id)
raises `InstancesLost` naming the lost indices and carrying every other instance's result (and
refusal), so a trainer drops or resets those episodes and loses nothing else; a `reset` that
reaches the restarted actor simply resets its fresh instances (`restarts` still counts the death).
Later calls that find the actor still restarting wait for it (up to `RESTART_WAIT_S`).
A call is never retried on the restarted actor: a step replayed on a fresh instance would be a
different step.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catalog.errors import EnvforgeError
from catalog.models import Action
from catalog.store import Catalog
from catalog.tasks import Task
from executors.ray_pool import connect
from serving.gym import ServingError, ToolEnv, make

__all__ = ["EnvActorPool", "InstancesLost", "InstanceError", "shares"]

RESTARTS = 3  # per actor: a restart brings fresh instances, never a replayed call
RESTART_WAIT_S = 120.0  # how long a call waits for a restarting actor whose death was already reported
StepTuple = tuple[Any, float, bool, bool, dict[str, Any]]


class InstancesLost(RuntimeError, EnvforgeError):
    """An actor died during a call: its instances' episodes are gone (they wait for `reset` again)."""

    def __init__(self, indices: list[int], results: list[Any], errors: dict[int, Exception], cause: str) -> None:
        super().__init__(f"{len(indices)} env instance(s) lost with their actor ({cause}); "
                         f"reset them to go on: {_ranges(indices)}")
        self.indices, self.results, self.errors = indices, results, errors


class InstanceError(ServingError):
    """Some instances refused a call (e.g. a step after the episode ended): the others' results are kept."""

    def __init__(self, errors: dict[int, Exception], results: list[Any]) -> None:
        first = min(errors)
        super().__init__(f"{len(errors)} env instance(s) refused the call, first #{first}: {errors[first]}")
        self.errors, self.results = errors, results


def _ranges(indices: list[int]) -> str:
    return ", ".join(f"#{i}" for i in indices[:8]) + (f" and {len(indices) - 8} more" if len(indices) > 8 else "")


def shares(n: int, actors: int) -> list[range]:
    """`n` instance indices split into `actors` contiguous ranges whose sizes differ by at most one."""
    base, extra = divmod(n, actors)
    out, start = [], 0
    for k in range(actors):
        size = base + (1 if k < extra else 0)
        out.append(range(start, start + size))
        start += size
    return out


class _EnvHost:
    """The actor: `count` ToolEnvs of one env, addressed by their position in this actor's share."""

    def __init__(self, env_id: str, count: int, options: dict[str, Any], catalog: tuple[str | None, bool]) -> None:
        root, include_reference = catalog
        shared = Catalog(root, include_reference=include_reference)
        self.envs: list[ToolEnv] = []
        self.problem: EnvforgeError | None = None  # bad options (an unknown task): the driver raises it, once
        try:
            self.envs = [make(env_id, catalog=shared, **options) for _ in range(count)]
        except EnvforgeError as exc:
            self.problem = exc
        self.incarnation = uuid.uuid4().hex  # a restarted actor has new instances, and says so by a new one

    def call(self, method: str, calls: list[tuple[int, tuple[Any, ...]]]) -> tuple[str, list[tuple[bool, Any]]]:
        """Run `method(*args)` on each listed instance; a refused call is that instance's answer, not the batch's."""
        answers: list[tuple[bool, Any]] = []
        for local, args in calls:
            try:
                answers.append((True, getattr(self.envs[local], method)(*args)))
            except EnvforgeError as exc:
                answers.append((False, exc))
        return self.incarnation, answers

    def hello(self) -> tuple[int, str, EnvforgeError | None]:
        return os.getpid(), self.incarnation, self.problem

    def close(self) -> None:
        for env in self.envs:
            env.close()


class EnvActorPool:
    """`n` isolated instances of env `env_id` hosted by Ray actors; see the module docstring."""

    def __init__(self, env_id: str, n: int = 256, *, task: str | Task | None = None,
                 state: str | dict[str, Any] | None = None, actors: int | None = None,
                 catalog: Catalog | Path | str | None = None, address: str | None = None,
                 trusted: bool | None = None, max_steps: int | None = None,
                 terminate_on_success: bool = True) -> None:
        if n < 1:
            raise ServingError(f"n must be at least 1, got {n}")
        if actors is not None and actors < 1:
            raise ServingError(f"actors must be at least 1, got {actors}")
        shelf = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
        handle = shelf.get(env_id)  # an unknown env (or a bad catalog) is one clear error here, not n in the actors
        if isinstance(state, str):
            handle.state(state)  # a bad or unknown state name too, before any actor starts
        self.ray = ray = connect(address)
        self.env_id, self.n = env_id, n
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        count = min(n, actors if actors is not None else max(1, int(cpus)))
        self.shares = shares(n, count)
        options = {"task": task.id if isinstance(task, Task) else task, "state": state, "trusted": trusted,
                   "max_steps": max_steps, "terminate_on_success": terminate_on_success}
        where = (str(shelf.root.resolve()), shelf.include_reference)
        host = ray.remote(_EnvHost).options(num_cpus=min(1.0, cpus / count), max_restarts=RESTARTS,
                                             max_task_retries=0, scheduling_strategy="SPREAD")
        self.actors = [host.remote(env_id, len(share), options, where) for share in self.shares]
        self.restarts = 0  # actor deaths met so far (each lost its instances' episodes)
        self._closed = False
        # every instance is made before the pool is handed out; None: a death reported, its successor not yet seen
        hellos = ray.get([a.hello.remote() for a in self.actors])
        self._incarnations: list[str | None] = [incarnation for _pid, incarnation, _problem in hellos]
        problem = next((p for _pid, _i, p in hellos if p is not None), None)
        if problem is not None:
            self.close()
            raise problem

    # --- batched calls --------------------------------------------------------------------------
    def reset(self, seeds: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None) -> list[tuple[str, dict[str, Any]]]:
        """Reset every instance: `seeds` one int (instance i gets seed + i), or one per instance; `options` one or per instance."""
        if isinstance(seeds, int):
            seeds = [seeds + i for i in range(self.n)]
        seed_list = self._per_instance(seeds, "seeds")
        option_list = self._per_instance(options if not isinstance(options, dict) else [options] * self.n, "options")
        return self._call("reset", {i: (seed_list[i], option_list[i]) for i in range(self.n)})

    def step(self, actions: Sequence[dict[str, Any] | Action | None]) -> list[StepTuple | None]:
        """Step every instance whose action is not None (None leaves it alone: its answer is None)."""
        if len(actions) != self.n:
            raise ServingError(f"step takes one action per instance ({self.n}), got {len(actions)}")
        return self._call("step", {i: (a,) for i, a in enumerate(actions) if a is not None})

    def evaluate(self, indices: Sequence[int] | None = None,
                 final_messages: Sequence[str | None] | None = None) -> list[tuple[float, dict[str, Any]]]:
        """`ToolEnv.evaluate(final_message)` of the listed instances (default: all), in their order.

        `final_messages`: each listed instance's last agent answer (a refusal task needs its decline), or None.
        """
        chosen = self._indices(indices)
        messages = list(final_messages) if final_messages is not None else [None] * len(chosen)
        if len(messages) != len(chosen) or not all(m is None or isinstance(m, str) for m in messages):
            raise ServingError(f"final_messages must be one str or None per evaluated instance ({len(chosen)})")
        return self._call("evaluate", {i: (m,) for i, m in zip(chosen, messages, strict=True)}, keep=indices)

    def states(self, indices: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The listed instances' current states (canonical snapshots), in their order."""
        return self._call("state", {i: () for i in self._indices(indices)}, keep=indices)

    # --- one instance ----------------------------------------------------------------------------
    def reset_one(self, index: int, seed: int | None = None,
                  options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        result: tuple[str, dict[str, Any]] = self._call("reset", {self._index(index): (seed, options)}, keep=[index])[0]
        return result

    def step_one(self, index: int, action: dict[str, Any] | Action) -> StepTuple:
        result: StepTuple = self._call("step", {self._index(index): (action,)}, keep=[index])[0]
        return result

    # --- plumbing --------------------------------------------------------------------------------
    def _per_instance(self, values: Sequence[Any] | None, what: str) -> list[Any]:
        if values is None:
            return [None] * self.n
        if len(values) != self.n:
            raise ServingError(f"{what} must be one value or one per instance ({self.n}), got {len(values)}")
        return list(values)

    def _index(self, index: int) -> int:
        if not 0 <= index < self.n:
            raise ServingError(f"instance index {index} out of range: the pool has {self.n} (0..{self.n - 1})")
        return index

    def _indices(self, indices: Sequence[int] | None) -> list[int]:
        return list(range(self.n)) if indices is None else [self._index(i) for i in indices]

    def _call(self, method: str, calls: dict[int, tuple[Any, ...]], keep: Sequence[int] | None = None) -> list[Any]:
        """One message per actor holding calls; answers come back in instance order (or `keep`'s)."""
        if self._closed:
            raise ServingError("the env pool is closed")
        results: list[Any] = [None] * self.n
        pending = []
        for k, (actor, share) in enumerate(zip(self.actors, self.shares, strict=True)):
            mine = [(i - share.start, calls[i]) for i in share if i in calls]
            if mine:
                pending.append((k, actor.call.remote(method, mine), mine, [share.start + local for local, _ in mine]))
        lost: list[int] = []
        errors: dict[int, Exception] = {}
        causes: list[str] = []
        for k, ref, mine, indices in pending:
            answer = self._answer(k, ref, method, mine)
            if isinstance(answer, str):  # the actor died under this call
                lost.extend(indices)
                if self._incarnations[k] is not None:  # a death not reported before
                    causes.append(answer)
                self._incarnations[k] = None
                continue
            incarnation, answers = answer
            known, self._incarnations[k] = self._incarnations[k], incarnation
            if known is not None and known != incarnation:  # died between calls: this call met fresh instances
                causes.append("the actor was restarted")
                if method != "reset":  # a reset of a fresh instance is what the caller asked for; anything else is not
                    lost.extend(indices)
                    continue
            for i, (ok, value) in zip(indices, answers, strict=True):
                if ok:
                    results[i] = value
                else:
                    errors[i] = value
        chosen = results if keep is None else [results[i] for i in keep]
        self.restarts += len(causes)
        if lost:
            raise InstancesLost(lost, chosen, errors, ", ".join(sorted(set(causes))) or "the actor is gone")
        if errors:
            if len(errors) == 1 and len(calls) == 1:
                raise next(iter(errors.values()))  # one instance asked: its own exception, as ToolEnv raises it
            raise InstanceError(errors, chosen)
        return chosen

    def _answer(self, k: int, ref: Any, method: str, mine: list[tuple[int, tuple[Any, ...]]]) -> Any:
        """Actor `k`'s answer to `ref`, or (a string) why it died.

        Once its death is reported, a call that finds it restarting is sent again when it is back:
        its instances are fresh, so the call cannot repeat anything (a step meets an instance
        waiting for reset; a reset is what was asked).
        """
        ray = self.ray
        deadline = time.monotonic() + RESTART_WAIT_S
        while True:
            try:
                return ray.get(ref)
            except ray.exceptions.ActorUnavailableError as exc:
                if self._incarnations[k] is not None or time.monotonic() > deadline:
                    return type(exc).__name__
                time.sleep(0.2)
                ref = self.actors[k].call.remote(method, mine)
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                    ray.exceptions.ObjectLostError) as exc:
                return type(exc).__name__

    def worker_pids(self) -> list[int]:
        """The actors' process ids (what a test kills to show what a lost actor costs)."""
        return [pid for pid, _i, _p in self.ray.get([a.hello.remote() for a in self.actors])]

    def close(self) -> None:
        """Close every instance (their sandbox workers too), then end the actors."""
        if self._closed:
            return
        self._closed = True
        try:
            self.ray.get([a.close.remote() for a in self.actors], timeout=60)
        except Exception:  # noqa: BLE001 - an actor already gone has nothing left to close
            pass
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)

    def __enter__(self) -> EnvActorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
