"""Run untrusted environment code in a pool of sandboxed worker processes.

Each worker (verifier._worker) limits its own memory and refuses forbidden operations with an
audit hook; the pool enforces the per-call timeout by killing a worker that does not answer,
restarts dead or killed workers, and turns every such event into a result: `timeout`,
`memory`, `crash`, or `forbidden: <what>`. One job's event never costs the other jobs of a
batch. A job is a sequence of actions from one initial state, so a restarted worker needs no
memory of earlier jobs.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.store import EnvHandle

__all__ = ["SandboxPool", "Job", "JobResult", "CallResult"]


@dataclass
class Job:
    """Actions to run, in order, from one initial state (by name, cached in the worker, or inline)."""

    env_dir: str
    kind: str
    actions: list[dict[str, Any]]
    entry: str | None = None
    init: str = "auto"
    failure_exceptions: list[str] = field(default_factory=list)
    state_name: str | None = None
    state: dict[str, Any] | None = None
    snapshot: bool = False
    task: dict[str, Any] | None = None

    @classmethod
    def for_env(cls, handle: EnvHandle, actions: list[dict[str, Any]], *, state_name: str | None = None,
                state: dict[str, Any] | None = None, snapshot: bool = False) -> Job:
        m = handle.manifest
        return cls(str(handle.path.resolve()), m.kind, actions, m.entry, m.init, list(m.failure_exceptions), state_name,
                   state, snapshot)


@dataclass
class CallResult:
    """One action's result; `event` is None for a normal call (success or rule failure)."""

    observation: Any = None
    delta: list[dict[str, Any]] = field(default_factory=list)
    outcome: str = "crash"
    state: dict[str, Any] | None = None
    event: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class JobResult:
    """The results of a job's actions; `event` says why it stopped early, if it did."""

    calls: list[CallResult]
    event: str | None = None
    seconds: float = 0.0
    initial_state: dict[str, Any] | None = None
    task: dict[str, Any] | None = None


class _Worker:
    def __init__(self, scratch: Path, memory_mb: int) -> None:
        self.scratch, self.memory_mb = scratch, memory_mb
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""
        self.starts = 0

    def ensure(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.scratch.mkdir(parents=True, exist_ok=True)
            env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "PYTHONPATH")}
            self.process = subprocess.Popen(
                [sys.executable, "-m", "verifier._worker", str(self.scratch), str(self.memory_mb)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=str(Path(__file__).resolve().parents[1]), env=env)
            self.buffer = b""
            self.starts += 1
        return self.process

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def readline(self, deadline: float) -> bytes | None:
        """The next line from the worker, or None if it did not come in time or the worker died."""
        process = self.process
        assert process is not None and process.stdout is not None
        fd = process.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                if not selector.select(remaining):
                    return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return b""
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line


class SandboxPool:
    """A pool of sandboxed workers. Use as a context manager, or call close()."""

    def __init__(self, workers: int = 2, *, timeout: float = 5.0, memory_mb: int = 1024,
                 load_timeout: float = 60.0, scratch: Path | None = None) -> None:
        self.timeout, self.load_timeout = timeout, load_timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="envforge-sandbox-") if scratch is None else None
        root = Path(self._tmp.name) if self._tmp else Path(scratch)  # type: ignore[arg-type]
        self.scratch = root
        self._workers = [_Worker(root / f"worker-{i}", memory_mb) for i in range(workers)]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            worker.kill()
        if self._tmp is not None:
            self._tmp.cleanup()

    @property
    def restarts(self) -> int:
        """How many times workers were (re)started in all."""
        return sum(w.starts for w in self._workers)

    def warm(self) -> None:
        """Start every worker now rather than on first use."""
        for worker in self._workers:
            worker.ensure()

    def run(self, job: Job) -> JobResult:
        """Run one job on an idle worker."""
        worker = self._idle.get()
        try:
            return self._run_on(worker, job)
        finally:
            self._idle.put(worker)

    def run_many(self, jobs: list[Job]) -> list[JobResult]:
        """Run a batch of jobs on all workers; results come back in the order of `jobs`."""
        results: list[JobResult | None] = [None] * len(jobs)
        pending: queue.Queue[int] = queue.Queue()
        for index in range(len(jobs)):
            pending.put(index)

        def drain() -> None:
            while True:
                try:
                    index = pending.get_nowait()
                except queue.Empty:
                    return
                results[index] = self.run(jobs[index])

        threads = [threading.Thread(target=drain) for _ in self._workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [r for r in results if r is not None]

    def _run_on(self, worker: _Worker, job: Job) -> JobResult:
        started = time.monotonic()
        process = worker.ensure()
        assert process.stdin is not None
        payload = {k: v for k, v in job.__dict__.items()}
        try:
            process.stdin.write((json.dumps(payload) + "\n").encode())
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            worker.kill()
            return JobResult([], "crash: worker died before the job started", time.monotonic() - started)
        calls: list[CallResult] = []
        initial_state: dict[str, Any] | None = None
        task_result: dict[str, Any] | None = None
        # Loading the env (first use in this worker) gets its own allowance; each call gets `timeout`.
        deadline = time.monotonic() + self.load_timeout + self.timeout
        while True:
            line = worker.readline(deadline)
            if line is None:
                worker.kill()
                return JobResult(calls, "timeout", time.monotonic() - started, initial_state, task_result)
            if line == b"":
                code = worker.process.poll() if worker.process else None
                worker.kill()
                event = "memory" if code in (-9, 137) else f"crash: worker exited with status {code}"
                return JobResult(calls, event, time.monotonic() - started, initial_state, task_result)
            message = json.loads(line)
            if message.get("ready"):
                initial_state = message.get("state")
                deadline = time.monotonic() + self.timeout
                continue
            if "task" in message:
                task_result = message
                continue
            if message.get("done"):
                if message.get("fatal"):
                    worker.kill()
                return JobResult(calls, message.get("event"), time.monotonic() - started, initial_state, task_result)
            calls.append(CallResult(message["observation"], message["delta"], message["outcome"], message.get("state"),
                                    message.get("event"), message.get("info", {})))
            deadline = time.monotonic() + self.timeout
