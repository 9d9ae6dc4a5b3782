"""A sandbox worker process: serves ONE env version for the supervisor over length-prefixed frames.

Started by verifier.sandbox (see verifier/isolation.py for the OS sandbox around it) as
`python -I -c BOOT PROJECT_ROOT CONFIG_JSON`. Before any env code exists in the process it
imports everything it needs, loads the seccomp filter (verifier/_seccomp.py), drops modules env
code has no business with from `sys.modules`, sets rlimits and arms the audit hook
(verifier/_guard.py) for its whole life. Then it reads jobs (frames on stdin) and answers each
with frames tagged with the job's number: `ready`, one per call, an optional `task`, and `done`.
After each job it looks for leftovers that could change later answers (threads, pending alarms
or timers, new signal handlers) and asks to be recycled if it finds one.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import site
import sys
import traceback
from pathlib import Path
from typing import Any

# Modules env code may not get from the module cache: they give processes, sockets or native calls.
PRUNED = ("subprocess", "_posixsubprocess", "socket", "_socket", "ctypes", "_ctypes", "pyseccomp", "multiprocessing",
          "_multiprocessing", "pty", "ssl", "_ssl", "asyncio", "select", "selectors", "http", "urllib", "ftplib",
          "smtplib", "webbrowser", "mmap", "fcntl", "termios", "resource", "_thread")
STALE = "stale: this worker holds no session state"
PRELOADED = ("_strptime", "encodings.idna", "sqlalchemy.dialects.sqlite.pysqlite", "catalog.tasks")


def _limit(memory_mb: int) -> None:
    for limit, value in ((resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_FSIZE, 16 * 2**20),
                         (resource.RLIMIT_CPU, 3600), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))


def _process_state() -> dict[str, Any]:
    """What env code could change for later jobs outside its own state.

    Signal handlers, the module search path and the decimal context (its flags excepted: arithmetic sets them).
    """
    import decimal

    context = decimal.getcontext()
    return {"signals": {int(s): signal.getsignal(s) for s in signal.valid_signals()
                        if s not in (signal.SIGKILL, signal.SIGSTOP)},
            "sys.path": list(sys.path),
            "decimal context": (context.prec, context.rounding, context.Emin, context.Emax, context.capitals,
                                context.clamp, tuple(t for t, on in context.traps.items() if on))}


def _leftovers(baseline: dict[str, Any]) -> str | None:
    """Why this worker must not serve another job, if anything the env started outlives the job."""
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:
        return f"{threads - 1} thread(s) left running"
    if signal.alarm(0) or any(signal.getitimer(t)[0] for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL,
                                                                 signal.ITIMER_PROF)):
        return "a timer left pending"
    now = _process_state()
    changed = [key for key in baseline if now[key] != baseline[key]]
    return f"{changed[0]} changed" if changed else None


def _run_task(runtime: Any, task: dict[str, Any]) -> dict[str, Any]:
    """Evaluate a task's check on its initial state, and after its reference solution if any."""
    from catalog.tasks import Task

    parsed = Task.model_validate(task)
    initial = runtime.snapshot()
    out: dict[str, Any] = {"task": parsed.id, "initial": None, "final": None, "error": None, "solution_failed": None}
    try:
        out["initial"] = parsed.evaluate(initial, initial)
        if parsed.solution:
            for action in parsed.solution:
                result = runtime.call(action)
                if result.outcome.value != "success":
                    out["solution_failed"] = {"action": action.model_dump(), "observation": result.observation}
                    break
            out["final"] = parsed.evaluate(initial, runtime.snapshot())
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


class _Channel:
    """Frames out, tagged with the current job's number; a frame above the cap becomes an event."""

    def __init__(self, fd: int, cap: int) -> None:
        from verifier.frames import encode

        self.fd, self.cap, self.job, self._encode = fd, cap, 0, encode

    def send(self, message: dict[str, Any]) -> bool:
        """Send one frame; False (and an `output_too_large` frame instead) if it is over the cap."""
        frame = self._encode({**message, "job": self.job})
        if len(frame) > self.cap:
            frame = self._encode({"event": "output_too_large", "bytes": len(frame), "job": self.job})
            self._write(frame)
            return False
        self._write(frame)
        return True

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def _local_modules(env_dir: Path) -> set[str]:
    return {p.stem for p in env_dir.glob("*.py")} | {p.name for p in env_dir.iterdir() if (p / "__init__.py").is_file()}


def main(config_json: str) -> None:
    config = json.loads(config_json)
    scratch, env_dir, memory_mb = config["scratch"], Path(config["env_dir"]), int(config["memory_mb"])
    for folder in config.get("sites", []):
        if folder not in sys.path:
            site.addsitedir(folder)
    sys.dont_write_bytecode = True
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # env code that prints or reads stdin cannot touch the protocol
    os.chdir(scratch)

    import importlib

    from catalog.models import Outcome
    from catalog.runtime import load_module, runtime_for
    from verifier._guard import make_hook
    from verifier._seccomp import load_filter
    from verifier.allowlist import ALLOWED_IMPORTS, check_imports
    from verifier.frames import MAX_FRAME, FrameError, read_frame_blocking
    from verifier.isolation import VIOLATION_STATUS

    for name in (*ALLOWED_IMPORTS, *PRELOADED):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    load_filter()
    channel = _Channel(protocol_out, MAX_FRAME)
    problems = check_imports(env_dir)
    local = _local_modules(env_dir)
    for name in [m for m in sys.modules if m.split(".")[0] in PRUNED]:
        del sys.modules[name]
    allowed = (set(ALLOWED_IMPORTS) | {m.split(".")[0] for m in sys.modules} | local) - set(PRUNED)
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    baseline = _process_state()
    _limit(memory_mb)
    sys.addaudithook(make_hook(scratch, allowed, roots, protocol_out, VIOLATION_STATUS))

    runtime: Any = None
    has_state = False
    states: dict[str, Any] = {}
    while True:
        try:
            job = read_frame_blocking(protocol_in, MAX_FRAME)
        except FrameError:
            os._exit(2)
        if job is None:
            return
        channel.job = int(job.get("job", 0))
        try:
            if problems:
                channel.send({"event": f"forbidden: {problems[0]}", "done": True})
                continue
            if runtime is None:
                module = load_module(env_dir / "env.py", "sandboxed_env")
                runtime = runtime_for(module, job["kind"], job.get("entry"), init=job.get("init", "auto"),
                                      failure_exceptions=job.get("failure_exceptions", []))
            if job.get("state_name"):
                name = job["state_name"]
                if name not in states:
                    state = json.loads((env_dir / "states" / f"{name}.json").read_text())
                    states[name] = runtime.template(state) if hasattr(runtime, "template") else state
                runtime.reset(states[name])
            elif not job.get("resume"):
                runtime.reset(job["state"])
            elif not has_state:
                channel.send({"done": True, "event": STALE})  # a new worker holds no session yet
                continue
            has_state = True
            ready: dict[str, Any] = {"ready": True, "state": runtime.snapshot() if job.get("snapshot") else None}
            if job.get("describe"):
                ready["tools"] = [t.model_dump() for t in runtime.tools.values()]
            if not channel.send(ready):
                channel.send({"done": True, "event": "output_too_large"})
                continue
            event = None
            if job.get("task") is not None:
                if not channel.send(_run_task(runtime, job["task"])):
                    event = "output_too_large"
            for action in job["actions"]:
                result = runtime.call(action, snapshot=job.get("snapshot", False))
                call_event = None
                if result.outcome is Outcome.CRASH:
                    call_event = "memory" if result.info.get("exception") == "MemoryError" else "crash"
                if not channel.send({"observation": result.observation, "delta": [op.to_dict() for op in result.delta],
                                     "outcome": result.outcome.value, "state": result.state, "event": call_event,
                                     "info": {k: v for k, v in result.info.items() if k != "traceback"}}):
                    event = "output_too_large"
                    break
            channel.send({"done": True, "event": event, "recycle": _leftovers(baseline)})
        except MemoryError:
            channel.send({"event": "memory", "done": True, "fatal": True})
            os._exit(4)
        except Exception as exc:  # the env failed to load or reset: a result, not a lost worker
            channel.send({"event": f"crash: {type(exc).__name__}: {exc}", "done": True,
                          "info": {"traceback": traceback.format_exc(limit=5)}, "recycle": _leftovers(baseline)})
