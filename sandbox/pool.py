"""Run untrusted environment code in a pool of sandboxed worker processes.

Each worker lives in an OS sandbox (sandbox/isolation.py) and serves exactly one env version
(its folder's files as they were when the worker started, by content): it is never reused for another env,
and it is recycled after `max_jobs` jobs or on any anomaly. The pool enforces the per-call
timeout by killing a worker that does not answer, and turns every event into a result for that
job only: `timeout`, `memory`, `output_too_large`, `crash: ...` (with the worker's real exit
status or signal), `forbidden: <what>` (the audit hook stopped it) or `protocol: ...` (the
worker sent something that is not a frame of this job, or a frame whose fields are not what
sandbox/wire.py allows). Worker output is untrusted: the supervisor never raises on it. A job is a sequence of actions from one initial state, so a
restarted worker needs no memory of earlier jobs (except `resume` jobs, see sandbox/session.py).
"""

from __future__ import annotations

import collections
import hashlib
import os
import signal
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.models import StepResult
from catalog.names import check_state_name
from catalog.state.patches import PatchError, apply_patch
from catalog.store import EnvHandle, runtime_options
from sandbox.forkserver import ForkServer, Worker
from sandbox.frames import FrameError, FrameTooLarge
from sandbox.isolation import (
    VIOLATION_STATUS,
    Isolation,
    clean_stale_scratch,
    default_isolation,
    require_isolation,
)
from sandbox.wire import CallFrame, DoneFrame, ReadyFrame, TaskFrame, WireError, claims_a_kind, parse

__all__ = ["SandboxPool", "Job", "JobResult", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 5.0  # seconds a call may take before its worker is killed


@dataclass
class Job:
    """Actions to run, in order, from one initial state (by name, cached in the worker, or inline)."""

    env_dir: str
    kind: str
    actions: list[dict[str, Any]]
    entry: str | None = None
    init: str = "auto"
    failure_exceptions: list[str] = field(default_factory=list)
    convention: str = "class"
    failure: dict[str, Any] | None = None  # the manifest's FailureConvention
    strict_args: bool = True
    allow_modules: list[str] = field(default_factory=list)  # installed modules this env may import
    state_name: str | None = None
    state: dict[str, Any] | None = None
    snapshot: bool = False
    task: dict[str, Any] | None = None
    task_initial: dict[str, Any] | None = None  # judge `task` on (this, the current state) instead
    describe: bool = False  # the ready frame also lists the tool descriptors
    resume: bool = False  # continue from the worker's current state instead of resetting
    hidden: bool = False  # states include hidden state (class envs' private attributes)
    instance: int | None = None  # the instance on a dense worker (sandbox/dense.py); None: the worker's only one
    forget: list[int] = field(default_factory=list)  # dense: released instances the worker drops first
    keep_initial: bool = False  # a reset: the worker keeps the state it reset to, for `judge_from_reset`
    judge_from_reset: bool = False  # judge `task` on (the kept reset state, the current state)
    judge_after: bool = False  # judge `task` after the actions (if one changed the state, or never judged yet)
    reset_snapshot: bool = False  # the ready frame's state is the kept reset state (`keep_initial`), not the current one
    # The caller never changes the states it gets: a call that changed nothing shares the state before it, and
    # the initial state of a named state may be the one this worker gave before (sent once, held by the pool).
    share_states: bool = False
    known_initial: bool = False  # set by the pool: it holds this worker's initial state of `state_name`

    @classmethod
    def for_env(cls, handle: EnvHandle, actions: list[dict[str, Any]], *, state_name: str | None = None,
                state: dict[str, Any] | None = None, snapshot: bool = False) -> Job:
        if state_name is not None:
            check_state_name(state_name)  # the worker joins it into states/<name>.json
        m = handle.manifest
        return cls(str(handle.path.resolve()), m.kind, actions, m.entry, **runtime_options(m),
                   allow_modules=list(m.allow_modules), state_name=state_name, state=state, snapshot=snapshot)


@dataclass
class JobResult:
    """The steps of a job's actions, and `event`: why the job stopped early, if it did.

    A call's own sandbox event (`crash`, `memory`) is its step's `event` (`info["event"]`).
    """

    calls: list[StepResult]
    event: str | None = None
    seconds: float = 0.0
    initial_state: dict[str, Any] | None = None
    task: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    recycled: str | None = None  # why the worker was retired after this job, if it was


def job_version(job: Job) -> Any:
    """What a worker serves: one env version with the modules it was allowed (fixed at the worker's start)."""
    return env_version(job.env_dir), tuple(sorted(job.allow_modules))


# The catalog's own files about an env, which its code has no reason to read: rewriting them (a
# staged env gaining its tasks, a manifest gaining its quality) makes no new version.
CATALOG_FILES = frozenset({"env.json", "plan.json", "tasks.jsonl"})
_DIGESTS: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> content digest
_DIGESTS_SIZE = 4096


def _digest(path: str, size: int, mtime_ns: int) -> str:
    """The content digest of a file, read once per (path, size, mtime)."""
    key = (path, size, mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        if len(_DIGESTS) >= _DIGESTS_SIZE:
            _DIGESTS.pop(next(iter(_DIGESTS)))
        _DIGESTS[key] = digest
    return digest


def env_version(env_dir: str) -> tuple[str, tuple[tuple[str, int, str], ...]]:
    """What identifies one version of an env folder: its path and every file's content (catalog files aside).

    By content, not modification time: the same env written again (synthesis stages a slot's
    env for its smoke run, then again with its tasks for the gate) keeps the worker that serves it.
    """
    files: list[tuple[str, int, str]] = []

    def walk(folder: str, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, prefix + entry.name + "/")
                elif entry.is_file() and not (prefix == "" and entry.name in CATALOG_FILES):
                    stat = entry.stat()
                    files.append((prefix + entry.name, stat.st_size, _digest(entry.path, stat.st_size, stat.st_mtime_ns)))
            except OSError:
                continue

    walk(env_dir, "")
    return env_dir, tuple(files)


def _exit_event(status: int | None) -> str:
    """The event for a worker that ended: its real status or signal."""
    if status is None:
        return "crash: worker stopped answering"
    if status == -signal.SIGKILL:
        return "memory"  # the kernel's OOM killer; our own kills never get here
    if status < 0:
        try:
            return f"crash: worker killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"crash: worker killed by signal {-status}"
    return f"crash: worker exited with status {status}"


def _kill_all(slots: list[Worker | None], servers: list[ForkServer]) -> None:
    for worker in slots:
        if worker is not None:
            worker.kill()
    for server in servers:
        server.close()


class SandboxPool:
    """A pool of sandboxed workers, each serving one env. Use as a context manager, or call close()."""

    def __init__(self, workers: int = 2, *, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = 1024,
                 load_timeout: float = 60.0, max_jobs: int = 500, scratch_mb: int = 64,
                 isolation: Isolation | None = None) -> None:
        self.timeout, self.load_timeout, self.max_jobs = timeout, load_timeout, max_jobs
        self.memory_mb, self.scratch_mb = memory_mb, scratch_mb
        self.isolation: Isolation = isolation or default_isolation()
        if self.isolation == "os":
            require_isolation()
        else:
            clean_stale_scratch()
        self.size = max(1, workers)
        self._slots: list[Worker | None] = [None] * self.size
        self._idle = list(range(self.size))
        self._cond = threading.Condition()
        self.starts = 0  # workers forked in all (one per env version, plus replacements)
        self.events: collections.Counter[str] = collections.Counter()
        self._servers: list[ForkServer] = []  # the current one last; a dead one is replaced
        self._server_lock = threading.Lock()
        weakref.finalize(self, _kill_all, self._slots, self._servers)  # dropped without close(): no workers left

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._cond:
            for index, worker in enumerate(self._slots):
                if worker is not None:
                    worker.kill()
                    self._slots[index] = None
        with self._server_lock:
            while self._servers:
                self._servers.pop().close()

    def _server(self) -> ForkServer:
        """The pool's fork server, started (or restarted, if it died) on first use."""
        with self._server_lock:
            if not self._servers or not self._servers[-1].alive():
                while self._servers:
                    self._servers.pop().close()
                self._servers.append(ForkServer(self.isolation, max(self.load_timeout, 60.0)))  # boot: imports
            return self._servers[-1]

    # --- slots ------------------------------------------------------------------------------------
    def _take(self, version: Any) -> int:
        """An idle slot, preferring one whose worker already serves `version`."""
        with self._cond:
            while not self._idle:
                self._cond.wait()
            for index in self._idle:
                worker = self._slots[index]
                if worker is not None and worker.version == version:
                    self._idle.remove(index)
                    return index
            empty = [i for i in self._idle if self._slots[i] is None]
            index = empty[0] if empty else self._idle[0]
            self._idle.remove(index)
            return index

    def _give(self, index: int) -> None:
        with self._cond:
            self._idle.append(index)
            self._cond.notify()

    def _worker_for(self, index: int, job: Job, version: Any) -> Worker:
        worker = self._slots[index]
        if worker is not None and (worker.version != version or not worker.alive() or worker.reader.pending()):
            worker.kill()  # another env, dead, or it sent bytes nobody asked for: never reuse it
            worker = None
        if worker is None:
            worker = Worker(self._server(), Path(job.env_dir), version, self.memory_mb, self.scratch_mb,
                            allow_modules=list(job.allow_modules))
            self.starts += 1
            self._slots[index] = worker
        return worker

    def _retire(self, index: int) -> None:
        worker = self._slots[index]
        if worker is not None:
            worker.kill()
        self._slots[index] = None

    # --- running ----------------------------------------------------------------------------------
    def run(self, job: Job) -> JobResult:
        """Run one job on a worker serving its env."""
        version = job_version(job)
        index = self._take(version)
        try:
            return self._run_on(index, job, version)
        finally:
            self._give(index)

    def run_many(self, jobs: list[Job]) -> list[JobResult]:
        """Run a batch of jobs on all workers, keeping each worker on one env as long as it has jobs.

        Results come back in the order of `jobs`.
        """
        results: list[JobResult | None] = [None] * len(jobs)
        versions = [job_version(job) for job in jobs]
        pending: dict[Any, collections.deque[int]] = {}
        for index, version in enumerate(versions):
            pending.setdefault(version, collections.deque()).append(index)
        lock = threading.Lock()
        serving: collections.Counter[Any] = collections.Counter()  # env versions a drain thread is on

        def next_job(current: Any) -> int | None:
            """The next job for a thread on `current`: its env first, then the busiest env nobody serves."""
            with lock:
                serving[current] -= 1
                choice = current if pending.get(current) else None
                if choice is None and pending:
                    free = [v for v in pending if serving[v] <= 0]
                    choice = max(free or list(pending), key=lambda v: len(pending[v]))
                if choice is None:
                    return None
                queue = pending[choice]
                index = queue.popleft()
                if not queue:
                    del pending[choice]
                serving[choice] += 1
                return index

        def drain() -> None:
            current: Any = None
            while True:
                index = next_job(current)
                if index is None:
                    return
                current = versions[index]
                slot = self._take(current)
                try:
                    results[index] = self._run_on(slot, jobs[index], current)
                finally:
                    self._give(slot)

        threads = [threading.Thread(target=drain) for _ in range(min(self.size, len(jobs)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [r for r in results if r is not None]

    def _run_on(self, index: int, job: Job, version: Any) -> JobResult:
        started = time.monotonic()
        try:
            worker = self._worker_for(index, job, version)
        except Exception as exc:  # the sandbox itself could not start (e.g. isolation lost): a result
            return self._event(JobResult([], f"crash: sandbox did not start: {exc}", time.monotonic() - started))
        worker.jobs += 1
        number = worker.jobs
        held = worker.initial_states  # (state name, hidden) -> the state every reset to it gives there
        key = (job.state_name, job.hidden)
        message = {k: v for k, v in job.__dict__.items()}
        message["known_initial"] = job.share_states and job.snapshot and not job.resume and key in held
        message["env_dir"] = None  # the worker knows its env; it never gets a host path
        message.pop("allow_modules", None)  # fixed when the worker started (its first frame)
        message["job"] = number
        result = JobResult([])
        if not worker.send(message):
            self._retire(index)
            result.event = _exit_event(worker.exit_status())
            return self._finish(result, started)
        # Loading the env (first use in this worker) gets its own allowance; each call gets `timeout`.
        deadline = time.monotonic() + (self.load_timeout if number == 1 else 0) + self.timeout
        ready = False
        while True:
            try:
                frame = worker.reader.read(deadline)
            except FrameTooLarge:
                self._retire(index)
                result.event = "output_too_large"
                return self._finish(result, started)
            except FrameError as exc:
                status = worker.exit_status(0.5)
                self._retire(index)
                result.event = "forbidden: (the audit hook stopped the worker)" if status == VIOLATION_STATUS else \
                    f"protocol: {exc}"
                return self._finish(result, started)
            if frame is None:
                self._retire(index)
                result.event = "timeout"
                return self._finish(result, started)
            if frame is False:
                status = worker.exit_status()
                self._retire(index)
                result.event = _exit_event(status)
                return self._finish(result, started)
            assert isinstance(frame, dict)
            if "violation" in frame:
                status = worker.exit_status()
                self._retire(index)
                result.event = f"forbidden: {frame['violation']}" if status == VIOLATION_STATUS and \
                    isinstance(frame["violation"], str) else _exit_event(status)
                return self._finish(result, started)
            if frame.get("job") != number or type(frame.get("job")) is not int:
                self._retire(index)
                result.event = "protocol: a frame for another job"
                return self._finish(result, started)
            if frame.get("instance") != job.instance or (job.instance is not None and type(frame["instance"]) is not int):
                self._retire(index)
                result.event = "protocol: a frame for another instance"
                return self._finish(result, started)
            if frame.get("event") == "output_too_large" and not claims_a_kind(frame):
                continue  # the worker replaced an oversized frame; its `done` frame follows
            # Validated into typed values here: no later code sees what the worker wrote (sandbox/wire.py).
            try:
                parsed = parse(frame, worker.reader.openings)
            except WireError as exc:
                self._retire(index)
                result.event = f"protocol: {exc}"
                return self._finish(result, started)
            # Each deadline reset must be earned by a frame the job can have: one `ready`, then at most
            # one `task` (if asked) and one frame per action. Anything else (env code writing frames to
            # the protocol descriptor to keep the job alive forever, say) ends the job.
            unexpected = None
            if isinstance(parsed, ReadyFrame):
                unexpected = "a second ready frame" if ready else None
            elif isinstance(parsed, TaskFrame):
                unexpected = None if ready and job.task is not None and result.task is None and (
                    len(result.calls) == len(job.actions) if job.judge_after else not result.calls) \
                    else "an unexpected task frame"
            elif isinstance(parsed, CallFrame):
                unexpected = None if ready and len(result.calls) < len(job.actions) else "an unexpected call frame"
            if isinstance(parsed, CallFrame) and (parsed.same_state or parsed.patch is not None) and \
                    (not job.share_states or parsed.state is not None or (parsed.same_state and parsed.patch is not None)):
                unexpected = unexpected or "a call frame with a state it says it left out"
            if isinstance(parsed, ReadyFrame) and parsed.template and parsed.state is None and not message["known_initial"]:
                unexpected = unexpected or "a ready frame without the state it was asked for"
            if unexpected:
                self._retire(index)
                result.event = f"protocol: {unexpected}"
                return self._finish(result, started)
            if isinstance(parsed, ReadyFrame):
                ready = True
                result.initial_state = parsed.state
                if parsed.template and job.share_states and job.state_name is not None:
                    if parsed.state is None:
                        result.initial_state = held[key]
                    else:
                        held[key] = parsed.state
                result.tools = None if parsed.tools is None else [t.model_dump(mode="json") for t in parsed.tools]
                deadline = time.monotonic() + self.timeout
            elif isinstance(parsed, TaskFrame):
                result.task = parsed.model_dump(exclude={"job", "instance"})
            elif isinstance(parsed, DoneFrame):
                result.event = parsed.event
                # The worker's own check runs where env code can patch it (to say nothing); its fork
                # server's look at the worker's /proc cannot be patched. Either one retires it.
                recycle = None if parsed.fatal else (parsed.recycle or worker.leftovers())
                if parsed.fatal or recycle or number >= self.max_jobs:
                    result.recycled = recycle or ("fatal event" if parsed.fatal else f"served {number} jobs")
                    self._retire(index)
                return self._finish(result, started)
            else:
                step = parsed.step()
                if parsed.same_state or parsed.patch is not None:
                    before = result.calls[-1].state if result.calls else result.initial_state
                    try:
                        step.state = before if parsed.patch is None or before is None else apply_patch(before, parsed.patch)
                    except PatchError as exc:
                        self._retire(index)
                        result.event = f"protocol: {exc}"
                        return self._finish(result, started)
                result.calls.append(step)
                deadline = time.monotonic() + self.timeout

    def _finish(self, result: JobResult, started: float) -> JobResult:
        result.seconds = time.monotonic() - started
        return self._event(result)

    def _event(self, result: JobResult) -> JobResult:
        if result.event:
            self.events[result.event.split(":")[0]] += 1
        return result
