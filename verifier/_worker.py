"""A sandbox worker process: runs env code for the parent over JSON lines on stdin/stdout.

Started by verifier.sandbox.SandboxPool as `python -m verifier._worker SCRATCH MEMORY_MB`. It
limits its own memory, file sizes and CPU time, writes nothing outside the scratch folder,
and installs an audit hook that refuses subprocesses, forks, sockets, file writes outside the
scratch folder and native code (ctypes); an import outside the allowlist raises ImportError.
A refused operation raises `SandboxViolation` (a BaseException, so `except Exception` in env code cannot swallow
it); the worker reports it and exits, and the parent starts a fresh worker.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback
from pathlib import Path
from typing import Any

BLOCKED_EVENTS = ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill",
                  "os.killpg", "subprocess.Popen", "socket.", "ctypes.", "pty.spawn", "os.startfile",
                  "webbrowser.open", "urllib.Request", "http.client.connect", "ftplib.", "smtplib.", "sys.remote_exec")
WRITE_EVENTS = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.truncate", "os.chmod", "os.chown", "os.link",
                "os.symlink", "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.utime", "os.unlink")


class SandboxViolation(BaseException):
    """Env code tried something the sandbox forbids."""


def _limit(memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (3600, 3600))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Guard:
    """The audit hook; armed only while env code can run."""

    def __init__(self, scratch: Path, allowed_imports: set[str]) -> None:
        self.scratch = str(scratch.resolve())
        self.allowed = allowed_imports
        self.local_modules: set[str] = set()
        self.armed = False

    def inside_scratch(self, path: Any) -> bool:
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return real == self.scratch or real.startswith(self.scratch + os.sep)

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed:
            return
        if event.startswith(BLOCKED_EVENTS):
            self.armed = False
            raise SandboxViolation(f"{event}")
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writing and not isinstance(path, int) and not self.inside_scratch(path):
                self.armed = False
                raise SandboxViolation(f"write to {os.fsdecode(path)}")
        elif event in WRITE_EVENTS:
            if not all(self.inside_scratch(a) for a in args if isinstance(a, (str, bytes, os.PathLike))):
                self.armed = False
                raise SandboxViolation(f"{event} outside the scratch folder")
        elif event == "import":
            top = str(args[0]).split(".")[0]
            if top not in self.allowed and top not in self.local_modules:
                # An ImportError, not a violation: optional imports (try/except ImportError) fall
                # back as they would without the package; required ones fail the load.
                raise ImportError(f"import of {args[0]} is not allowed in the sandbox")


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


def main() -> None:
    scratch, memory_mb = Path(sys.argv[1]), int(sys.argv[2])
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # env code printing must not corrupt the protocol
    sys.dont_write_bytecode = True
    os.chdir(scratch)
    # Everything the runtime needs is imported before the hook is armed.
    import encodings.idna  # noqa: F401 - so a socket attempt is reported as such, not as this import

    import sqlalchemy.dialects.sqlite.pysqlite  # noqa: F401 - loaded lazily by SQLAlchemy otherwise

    from catalog.models import Outcome
    from catalog.runtime import load_module, runtime_for
    from verifier.allowlist import ALLOWED_IMPORTS, check_imports

    guard = Guard(scratch, set(ALLOWED_IMPORTS) | {m.split(".")[0] for m in sys.modules})
    sys.addaudithook(guard)
    _limit(memory_mb)
    runtimes: dict[str, Any] = {}
    states: dict[tuple[str, str], Any] = {}

    def reply(message: dict[str, Any]) -> None:
        protocol_out.write(json.dumps(message) + "\n")

    for line in sys.stdin:
        job = json.loads(line)
        env_dir = Path(job["env_dir"])
        try:
            key = str(env_dir)
            if key not in runtimes:
                problems = check_imports(env_dir)
                if problems:
                    reply({"event": f"forbidden: {problems[0]}", "done": True})
                    continue
                guard.local_modules = {p.stem for p in env_dir.glob("*.py")} | \
                    {p.name for p in env_dir.iterdir() if (p / "__init__.py").is_file()}
                guard.armed = True
                module = load_module(env_dir / "env.py", f"sandboxed_{len(runtimes)}")
                runtimes[key] = runtime_for(module, job["kind"], job.get("entry"), init=job.get("init", "auto"),
                                            failure_exceptions=job.get("failure_exceptions", []))
                guard.armed = False
            runtime = runtimes[key]
            if job.get("state_name"):
                cache = (key, job["state_name"])
                if cache not in states:
                    state = json.loads((env_dir / "states" / f"{job['state_name']}.json").read_text())
                    states[cache] = runtime.template(state) if hasattr(runtime, "template") else state
                start = states[cache]
            else:
                start = job["state"]
            guard.armed = True
            runtime.reset(start)
            reply({"ready": True, "state": runtime.snapshot() if job.get("snapshot") else None})
            if job.get("task") is not None:
                reply(_run_task(runtime, job["task"]))
                guard.armed = False
                reply({"done": True})
                continue
            for action in job["actions"]:
                result = runtime.call(action, snapshot=job.get("snapshot", False))
                event = None
                if result.outcome is Outcome.CRASH:
                    event = "memory" if result.info.get("exception") == "MemoryError" else "crash"
                reply({"observation": result.observation, "delta": [op.to_dict() for op in result.delta],
                       "outcome": result.outcome.value, "state": result.state, "event": event,
                       "info": {k: v for k, v in result.info.items() if k != "traceback"}})
            guard.armed = False
            reply({"done": True})
        except SandboxViolation as violation:
            guard.armed = False
            reply({"event": f"forbidden: {violation}", "done": True, "fatal": True})
            sys.exit(3)
        except MemoryError:
            guard.armed = False
            reply({"event": "memory", "done": True, "fatal": True})
            sys.exit(4)
        except Exception as exc:  # the env failed to load or reset: a result, not a lost worker
            guard.armed = False
            reply({"event": f"crash: {type(exc).__name__}: {exc}", "done": True,
                   "info": {"traceback": traceback.format_exc(limit=5)}})


if __name__ == "__main__":
    main()
