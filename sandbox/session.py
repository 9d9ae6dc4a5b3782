"""A runtime whose env code runs in the sandbox, and `open_runtime`, which picks it unless trusted.

`SandboxRuntime` keeps the `Runtime` contract (reset / call / snapshot) for code envforge did not write.
By default it is an instance on a worker shared with other instances of its env version (the
process's `sandbox.dense.shared_pool`); `dense=False` gives it a sandbox and worker of its own.
`isolated` says why an env's instances each got a worker anyway (module-level state its calls change).

The worker keeps the state between calls (`resume` jobs), so a call costs one round trip; the
session also remembers the reset state and the calls since, so a worker lost to a timeout or
a violation is replaced by one replayed to the same point before the next call.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from catalog.models import Action, Outcome, StepResult, ToolDescriptor
from catalog.names import check_state_name
from catalog.runtime import ClassRuntime, SqlRuntime
from catalog.store import EnvHandle
from catalog.tasks import Task
from sandbox._worker import STALE
from sandbox.dense import DensePool, Lease, shared_pool
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult, SandboxPool

__all__ = ["SandboxRuntime", "open_runtime"]


def _event_step(result: JobResult) -> StepResult:
    """The result of a call whose job ended in an event (timeout, forbidden, ...) before answering."""
    event = result.event or "crash: no answer"
    return StepResult(observation={"error": f"sandbox: {event}"}, outcome=Outcome.CRASH, info={"event": event})


class SandboxRuntime:
    """Runs one catalog env in its own sandbox worker; see the module docstring."""

    def __init__(self, handle: EnvHandle, *, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = 1024,
                 dense: bool | DensePool = True) -> None:
        """`dense`: share a worker with other instances (True: the process's pool; or this pool), or not."""
        self.handle = handle
        self.tools: dict[str, ToolDescriptor] = {t.name: t for t in handle.manifest.tools}
        self._dense: DensePool | None = dense if isinstance(dense, DensePool) else \
            shared_pool(timeout, memory_mb) if dense else None
        self._pool = SandboxPool(1, timeout=timeout, memory_mb=memory_mb) if self._dense is None else None
        self._lease: Lease | None = None
        self._start: str | dict[str, Any] | None = None  # a state's name (the worker's template) or the state
        self._history: list[dict[str, Any]] = []
        self._fresh = True  # the worker holds no state of this session yet (new or replaced)
        self._pristine = False  # nothing ran since the reset (a snapshot now is the reset's state)
        self._initial: dict[str, Any] | None = None  # the reset's state as handed out: the worker keeps its own copy
        self._moved = False  # `load` moved the episode: the worker's reset copy is the loaded state, not the initial
        # Once a task is judged against it, every call also judges it in the same job (if the call
        # changed the state): the verdict for the current state, until a call or reset outdates it.
        # (task, initial): None as the initial is the reset's state, which the worker keeps.
        self._watch: tuple[Task, dict[str, Any] | None] | None = None
        self._task_json: tuple[Task, dict[str, Any]] | None = None  # the last task sent, as sent
        self._base: Job | None = None
        self._verdict: dict[str, Any] | None = None

    def __enter__(self) -> SandboxRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._lease is not None:
            self._lease.pool.release(self._lease)

    def __del__(self) -> None:  # an unclosed session still frees its instance in the shared worker
        lease = getattr(self, "_lease", None)
        if lease is not None:
            lease.pool.release(lease)

    @property
    def isolated(self) -> str | None:
        """Why this env's instances each run in a worker of their own, or None (shared, or not dense)."""
        return None if self._lease is None else self._lease.pool.isolated(self._lease)

    def _job(self, actions: list[dict[str, Any]], *, snapshot: bool, resume: bool, hidden: bool = False,
             task: Task | None = None, task_initial: dict[str, Any] | None = None,
             judge_after: bool = False, reset_snapshot: bool = False) -> JobResult:
        start = None if resume else self._start
        if self._base is None:
            self._base = Job.for_env(self.handle, [])  # the manifest's part of every job, read once
        job = dataclasses.replace(self._base, actions=actions, state_name=start if isinstance(start, str) else None,
                                  state=start if isinstance(start, dict) else None, snapshot=snapshot, resume=resume,
                                  hidden=hidden, keep_initial=not resume, judge_after=judge_after,
                                  reset_snapshot=reset_snapshot)
        if task is not None:
            if self._task_json is None or self._task_json[0] is not task:
                self._task_json = (task, task.model_dump(mode="json"))
            job.task = self._task_json[1]
            if (task_initial is None or task_initial is self._initial) and not self._moved:
                job.judge_from_reset = True  # the worker judges against its copy: the state is not sent again
            else:  # after a `load` the worker's copy is the loaded state: the initial one is sent
                job.task_initial = self._initial if task_initial is None else task_initial
        result = self._run(job)
        if resume and result.event == STALE:  # the pool had to start a new worker: restore, then ask again
            self._fresh = True
            self._ensure_current()
            result = self._run(job)
        self._fresh = bool(result.event) or result.recycled is not None
        return result

    def _run(self, job: Job) -> JobResult:
        if self._pool is not None:
            return self._pool.run(job)
        assert self._dense is not None
        if self._lease is None:
            self._lease = self._dense.open(job)
        return self._dense.run_for(self._lease, job)

    def _ensure_current(self) -> None:
        """Bring a new worker to the session's state: reset, then replay the calls since."""
        if self._start is None:
            raise RuntimeError("call reset(state) first")
        if self._fresh:
            result = self._job(self._history, snapshot=False, resume=False)
            if result.event:
                raise RuntimeError(f"the sandbox could not restore the session: {result.event}")

    def reset(self, state: Any) -> None:
        """Start from `state`: a state, or the name of one of the env's states (reset from the worker's template)."""
        if isinstance(state, str):
            check_state_name(state)  # the worker joins it into states/<name>.json
        self._start, self._history, self._initial, self._moved = state, [], None, False
        # the task judged last episode is likely judged again: watched against the reset's state from now on
        self._watch = None if self._watch is None else (self._watch[0], None)
        self._verdict = None
        # the worker keeps the reset's state (for checks) and sends it only when asked (`initial_state`)
        result = self._job([], snapshot=False, resume=False)
        if result.event:
            raise RuntimeError(f"reset failed in the sandbox: {result.event}")
        self._pristine = True

    def load(self, state: dict[str, Any]) -> None:
        """Go on from `state` mid-episode (e.g. a simulated step's next state); the reset's state stays the initial.

        The worker resets to `state` (a replacement worker is restored to it, then replayed), and
        checks are judged against the reset's state, fetched from the worker first and sent with them.
        """
        initial = self.initial_state()
        self._start, self._history, self._moved = state, [], True
        self._watch = None if self._watch is None else (self._watch[0], None)
        self._verdict = None
        result = self._job([], snapshot=False, resume=False)
        if result.event:
            raise RuntimeError(f"loading a state failed in the sandbox: {result.event}")
        self._initial, self._pristine = initial, False

    def initial_state(self) -> dict[str, Any]:
        """The state of the last reset, asked of the worker (which keeps it) the first time."""
        if self._initial is None:
            self._ensure_current()
            result = self._job([], snapshot=True, resume=True, reset_snapshot=True)
            if result.event or result.initial_state is None:
                raise RuntimeError(f"snapshot failed in the sandbox: {result.event}")
            self._initial = result.initial_state
        return self._initial

    def call(self, action: Action | dict[str, Any], *, snapshot: bool = False) -> StepResult:
        data = action.model_dump() if isinstance(action, Action) else dict(action)
        self._ensure_current()
        self._pristine = False
        watch = self._watch
        result = self._job([data], snapshot=snapshot, resume=True, task=None if watch is None else watch[0],
                           task_initial=None if watch is None else watch[1], judge_after=watch is not None)
        if result.task is not None:
            self._verdict = result.task
        elif result.event or not result.calls or result.calls[0].delta:
            self._verdict = None
        if not result.calls:
            return _event_step(result)
        step = result.calls[0]
        if step.outcome is Outcome.SUCCESS or step.outcome is Outcome.FAILURE or (
                step.outcome is Outcome.CRASH and self.handle.manifest.kind == "class" and step.event == "crash"):
            # a class env keeps what a raising tool wrote, so that call is replayed too; SQL
            # crashes and invalid calls roll back, and sandbox events (timeout...) end the worker
            self._history.append(data)
        return step

    def judge(self, task: Task, initial: dict[str, Any] | None = None) -> dict[str, Any]:
        """`task`'s check on (`initial`, the current state), run in the worker: checks are code too.

        `initial` None (or the reset's state as this runtime handed it out) is the reset's state,
        which the worker keeps: it is not sent. Returns the worker's task frame: `final` (the
        verdict, None if it did not run) and `error`. Judged against the reset's state, the task is
        then judged along with every call that changes the state, so asking again after such a
        call costs no round trip.
        """
        key = None if initial is None or initial is self._initial else initial
        watched = self._watch is not None and self._watch[1] is key and (self._watch[0] is task or self._watch[0] == task)
        if watched and self._verdict is not None and not self._fresh:
            return self._verdict
        self._ensure_current()
        result = self._job([], snapshot=False, resume=True, task=task, task_initial=key)
        if result.event or result.task is None:
            return {"final": None, "error": f"sandbox: {result.event or 'no answer'}"}
        if key is None:
            self._watch, self._verdict = (task, None), result.task
        return result.task

    def snapshot(self, hidden: bool = False) -> dict[str, Any]:
        self._ensure_current()
        result = self._job([], snapshot=True, resume=True, hidden=hidden)
        if result.event or result.initial_state is None:
            raise RuntimeError(f"snapshot failed in the sandbox: {result.event}")
        if not hidden and self._pristine and self._initial is None:  # nothing ran since the reset: its state
            self._initial = result.initial_state
        return result.initial_state


def open_runtime(handle: EnvHandle, *, trusted: bool = False,
                 timeout: float = DEFAULT_TIMEOUT) -> SqlRuntime | ClassRuntime | SandboxRuntime:
    """The env's runtime: in the sandbox, or in this process for reference envs and `trusted=True`."""
    if handle.reference or trusted:
        return handle.runtime(trusted=True)
    return SandboxRuntime(handle, timeout=timeout)
