"""Inside the sandbox: the fork server (zygote) and the workers it forks, one per env version.

sandbox.pool starts the zygote in the OS sandbox (sandbox/isolation.py) as
`python -I -c BOOT PROJECT_ROOT CONFIG_JSON`. It imports everything a worker needs once, so a
new worker costs a fork, not an interpreter start. Each forked worker, before any env code
exists in it: takes a private tmpfs scratch in a mount namespace of its own, writes its env's
files there read-only, drops every capability, loads the seccomp filter (sandbox/_seccomp.py),
drops modules env code has no business with from `sys.modules` (and puts the stand-ins of
sandbox/_stubs.py in place of the stubbed ones), sets rlimits and arms the audit
hook (sandbox/_guard.py) for its whole life. Then it reads jobs (frames on its channel) and
answers each with frames tagged with the job's number (and its instance): `ready`, one per call,
an optional `task`, and `done`. A job naming an `instance` (sandbox/dense.py) runs on that
instance's own runtime, a sibling of the env's loaded one, reset from the worker's templates: one
env version, many instances, each its own database or object; `forget` lists instances to drop. After each job it looks for leftovers that could change later answers
(threads, pending alarms or timers, new signal handlers, the module path, the decimal context)
and asks to be recycled if it finds one. Env code can patch that check, so the supervisor also
asks the zygote, which sees the worker's /proc from outside (`outside_leftovers`).
"""

from __future__ import annotations

import _signal
import json
import marshal
import os
import resource
import signal
import site
import sys
from pathlib import Path
from typing import Any

from sandbox.allowlist import NEVER_ALLOWED

# Modules env code may not get from the module cache: they give processes, sockets or native calls
# (the stubbed ones among them are replaced by their stand-ins, sandbox/_stubs.py).
PRUNED = tuple(sorted(NEVER_ALLOWED))
NATIVE = ("sandbox._mounts", "pyseccomp", "ctypes.util", "ctypes._endian", "ctypes")
STALE = "stale: this worker holds no session state"
VIOLATION_STATUS = 86  # exit status of a worker that the audit hook stopped (sandbox.isolation re-exports it)
ZYGOTE_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from sandbox._worker import zygote_main; " \
    "zygote_main(sys.argv[2])"
PRELOADED = ("_strptime", "encodings.idna", "sqlalchemy.dialects.sqlite.pysqlite", "catalog.tasks")


def _limit(memory_mb: int) -> None:
    for limit, value in ((resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_FSIZE, 16 * 2**20),
                         (resource.RLIMIT_CPU, 3600), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))


_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))
_getsignal = _signal.getsignal  # the raw handler: `signal.getsignal` wraps each in an enum, 5x the cost


def _process_state() -> dict[str, Any]:
    """What env code could change for later jobs outside its own state.

    Signal handlers, the module search path and the decimal context (its flags excepted: arithmetic sets them).
    """
    import decimal

    context = decimal.getcontext()
    return {"signals": tuple(map(_getsignal, _SIGNALS)),
            "sys.path": list(sys.path),
            "decimal context": (context.prec, context.rounding, context.Emin, context.Emax, context.capitals,
                                context.clamp, tuple(t for t, on in context.traps.items() if on))}


def _leftovers(baseline: dict[str, Any]) -> str | None:
    """Why this worker must not serve another job, if anything the env started outlives the job."""
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = 1
    if threads > 1:
        return f"{threads - 1} thread(s) left running"
    if signal.alarm(0) or any(signal.getitimer(t)[0] for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL,
                                                                 signal.ITIMER_PROF)):
        return "a timer left pending"
    now = _process_state()
    changed = [key for key in baseline if now[key] != baseline[key]]
    return f"{changed[0]} changed" if changed else None


def _status_fields(status: bytes) -> tuple[int, tuple[str, ...]]:
    """From a /proc/<pid>/status text: its thread count, and the signals it ignores and catches.

    Found by search, not line by line (the supervisor reads it after every job); ValueError if a field is missing.
    """
    def field(name: bytes) -> bytes:
        start = status.index(b"\n" + name) + len(name) + 1
        end = status.find(b"\n", start)
        return status[start:end if end >= 0 else len(status)].strip()

    return int(field(b"Threads:")), (field(b"SigIgn:").decode(), field(b"SigCgt:").decode())


def _signal_masks(pid: int | str) -> tuple[str, ...]:
    """The signals a process ignores and catches (/proc/<pid>/status); its handlers, as the kernel sees them."""
    with open(f"/proc/{pid}/status", "rb") as status:
        return _status_fields(status.read())[1]


def outside_leftovers(pid: int, masks: tuple[str, ...], status_fd: int | None = None) -> str | None:
    """Why a worker must be retired, seen by its parent in /proc: threads, or signal handlers it installed.

    Read by the fork server, not the worker: env code can patch anything in its own process (os.listdir,
    this module), nothing in its parent. `masks` are the worker's at fork (the zygote's own).
    Timers (alarm, setitimer) are not in /proc: the worker's own check still reports those.
    `status_fd`, the worker's /proc status opened once, makes the check one read (and it names
    that process for good: a reused pid cannot answer for it).
    """
    try:
        if status_fd is None:
            with open(f"/proc/{pid}/status", "rb") as status:
                text = status.read()
        else:
            text = os.pread(status_fd, 1 << 16, 0)
        threads, now = _status_fields(text)
    except (OSError, ValueError, IndexError):
        return "the worker is gone"
    if threads > 1:
        return f"{threads - 1} thread(s) left running"
    return "signal handlers changed" if now != masks else None


def _own(state: dict[str, Any]) -> dict[str, Any]:
    """A private copy of a snapshot (canonical JSON values) for code that may change what it is given.

    A SQL runtime's snapshots share the collections of untouched tables with its template (and
    other instances), so a check gets its own copy. marshal copies JSON values ~3x faster than a
    JSON round trip; table names (str subclasses) become plain keys, as JSON would make them.
    """
    try:
        return {str(name): marshal.loads(marshal.dumps(value)) for name, value in state.items()}
    except ValueError:  # a value marshal does not take: the JSON round trip
        return json.loads(json.dumps(state))


def _run_task(runtime: Any, task: dict[str, Any], initial: dict[str, Any] | None = None,
              judges: dict[tuple[Any, Any], Any] | None = None) -> dict[str, Any]:
    """Evaluate a task's check on its initial state, and after its reference solution if any.

    Given the `initial` state a session started from (serving/), it judges the worker's
    current state instead: `final` is `check(initial, current)`, the check compiled once per
    episode (`judges`, which the episode's reset empties: compiling costs more than judging).
    """
    from catalog.tasks import Task

    def current() -> dict[str, Any]:  # the state now, the check's own (checks are code: they may change it)
        state: dict[str, Any] = runtime.snapshot()
        return _own(state) if getattr(runtime, "reuse_snapshots", False) else state

    if initial is not None:
        key = (task.get("id"), task.get("check"))
        out: dict[str, Any] = {"task": task.get("id"), "initial": None, "final": None, "error": None,
                               "solution_failed": None}
        try:
            judge = judges.get(key) if judges is not None else None
            if judge is None:
                judge = _validated(task).checker()
                if judges is not None:
                    judges[key] = judge
            out["final"] = judge(initial, current())
        except Exception as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    parsed = Task.model_validate(task)
    out = {"task": parsed.id, "initial": None, "final": None, "error": None, "solution_failed": None}
    initial = current()
    try:
        out["initial"] = parsed.evaluate(initial, initial)
        if parsed.solution:
            for action in parsed.solution:
                result = runtime.call(action)
                if result.outcome.value != "success":
                    out["solution_failed"] = {"action": action.model_dump(), "observation": result.observation}
                    break
            out["final"] = parsed.evaluate(initial, current())
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


_TASKS: dict[str, Any] = {}  # a task's JSON -> the Task it validates to (read, never changed), in this worker


def _validated(task: dict[str, Any]) -> Any:
    """`Task.model_validate(task)`, once per distinct task (validating parses its check)."""
    from catalog.tasks import Task

    key = json.dumps(task, sort_keys=True)
    parsed = _TASKS.get(key)
    if parsed is None:
        parsed = Task.model_validate(task)
        if len(_TASKS) >= 256:
            _TASKS.pop(next(iter(_TASKS)))
        _TASKS[key] = parsed
    return parsed


def _kept_initial(episode: dict[str, Any]) -> dict[str, Any] | None:
    """The episode's reset state, its own copy made the first time a check needs it."""
    if "initial" not in episode and "reset_state" in episode:
        episode["initial"] = _own(episode["reset_state"])
    return episode.get("initial")


class _Channel:
    """Frames out, tagged with the current job's number; a frame above the cap becomes an event.

    Frames wait for the job's `done` frame, or for env code to run again after env code ran
    (`before_env_code`): each write wakes the supervisor, so a step is one write, not one per frame,
    and the supervisor's deadline, which each frame renews, still runs from the end of the env code
    a frame reports.
    """

    def __init__(self, fd: int, cap: int) -> None:
        from sandbox.frames import encode

        self.fd, self.cap, self.job, self._encode = fd, cap, 0, encode
        self.instance: int | None = None  # the instance the current job is for (dense workers)
        self._pending: list[bytes] = []
        self.ran = False  # env code ran since the last write (the job's reset or load, a call, a check)

    def send(self, message: dict[str, Any]) -> bool:
        """Queue one frame (a `done` frame is written at once, with those before it).

        False (and an `output_too_large` frame instead) if it is over the cap.
        """
        frame = self._encode({**message, "job": self.job, "instance": self.instance})
        fits = len(frame) <= self.cap
        if not fits:
            frame = self._encode({"event": "output_too_large", "bytes": len(frame), "job": self.job,
                                  "instance": self.instance})
        self._pending.append(frame)
        if "done" in message:
            self.flush()
        return fits

    def before_env_code(self) -> None:
        """Env code is about to run: what earlier env code did goes out first (its time is not the next's)."""
        if self.ran:
            self.flush()
        self.ran = True

    def flush(self) -> None:
        """Write the queued frames."""
        self.ran = False
        pending, self._pending = self._pending, []
        if sum(map(len, pending)) <= 1 << 16:  # small frames: one write
            pending = [b"".join(pending)] if len(pending) > 1 else pending
        for data in pending:  # a large one is not copied again
            self._write(data)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def zygote_main(config_json: str) -> None:
    """The fork server: import everything once, then fork one worker per env on request.

    Its control socket (a SOCK_SEQPACKET on fd 0) carries JSON requests `{"op": "spawn", "id",
    "memory_mb", "scratch_mb"}` with the worker's end of its channel attached (SCM_RIGHTS), and
    `{"op": "kill", "id"}` and `{"op": "leftovers", "id"}`; it answers `{"spawned": id, "pid", "zygote"}`
    (the worker's pid and its own, inside the sandbox: the supervisor reads their /proc entries itself),
    `{"exited": id, "status": s}` (a negative status is a signal) and `{"leftovers": id, "reason": r}`
    (`outside_leftovers`). The zygote runs only envforge's code: env code exists only in
    the forked workers, after they have locked themselves down.
    """
    import importlib
    import select
    import socket

    config = json.loads(config_json)
    for folder in config.get("sites", []):
        if folder not in sys.path:
            site.addsitedir(folder)
    sys.dont_write_bytecode = True
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # env code that prints or reads stdin cannot touch a protocol
    import catalog.runtime  # noqa: F401 - what every worker needs, imported once here
    import sandbox._guard  # noqa: F401
    import sandbox._mounts as mounts
    import sandbox._seccomp  # noqa: F401
    import sandbox._stubs  # noqa: F401
    import sandbox.frames  # noqa: F401
    import sandbox.globalstate  # noqa: F401
    from sandbox.allowlist import ALLOWED_IMPORTS

    for name in (*ALLOWED_IMPORTS, *PRELOADED, "pyseccomp"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    mounts.set_dumpable(False)  # inherited by the workers: no sibling can open another's memory
    import gc

    gc.collect()
    gc.freeze()  # what the workers inherit stays shared: their collector never writes to those pages
    masks = _signal_masks("self")  # what every forked worker starts with
    children: dict[str, int] = {}
    while True:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            for key, child in list(children.items()):
                if child == pid:
                    del children[key]
                    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                    control.send(json.dumps({"exited": key, "status": code}).encode())
        if not select.select([control], [], [], 0.05)[0]:
            continue
        message, fds, _, _ = socket.recv_fds(control, 65536, 1)
        if not message:
            return  # the supervisor is gone
        request = json.loads(message)
        if request.get("op") == "kill" and request.get("id") in children:
            try:
                os.kill(children[request["id"]], signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif request.get("op") == "leftovers":
            target = children.get(request.get("id"))
            reason = "the worker is gone" if target is None else outside_leftovers(target, masks)
            control.send(json.dumps({"leftovers": request.get("id"), "reason": reason}).encode())
        elif request.get("op") == "spawn" and fds:
            pid = os.fork()
            if pid == 0:
                try:
                    control.close()
                    _child(fds[0], request, config)
                finally:
                    os._exit(3)
            os.close(fds[0])
            children[request["id"]] = pid
            control.send(json.dumps({"spawned": request["id"], "pid": pid, "zygote": os.getpid()}).encode())
        else:
            for fd in fds:
                os.close(fd)


def _write_files(root: Path, files: dict[str, str]) -> None:
    """Write the env's files (base64) under `root`, refusing paths that leave it."""
    import base64

    for relative, data in files.items():
        target = (root / relative).resolve()
        if not target.is_relative_to(root.resolve()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))


def _child(channel_fd: int, request: dict[str, Any], config: dict[str, Any]) -> None:
    """A forked worker: private scratch, its env's files (read-only), no capabilities, then serve."""
    import sandbox._mounts as mounts
    from sandbox.frames import MAX_FRAME, read_frame_blocking

    os.setsid()
    os.dup2(channel_fd, 3)
    os.closerange(4, 1 << 16)  # nothing the zygote held (other workers' channels) stays open here
    scratch = config["scratch"]
    if config.get("private_mounts"):
        mounts.private_scratch(scratch, int(request.get("scratch_mb", 64)))
        # bwrap's init (pid 1) is dumpable: through /proc/1/root every worker could reach the
        # sandbox's own writable /scratch (under each private one), a place siblings would share.
        mounts.hide("/proc/1")
    else:  # no OS sandbox: a folder of the zygote's host scratch
        scratch = os.path.join(scratch, str(request["id"]))
        os.makedirs(scratch, exist_ok=True)
    env_dir = Path(scratch) / "env"
    first = read_frame_blocking(3, MAX_FRAME)
    if first is None:
        return
    _write_files(env_dir, dict(first.get("files") or {}))
    if config.get("private_mounts"):
        mounts.bind_read_only(str(env_dir))
        mounts.drop_capabilities()
    work = Path(scratch) / "work"
    work.mkdir(exist_ok=True)
    os.chdir(work)
    allow = [str(m) for m in first.get("allow_modules") or [] if isinstance(m, str)]
    serve(3, str(scratch), env_dir, int(request.get("memory_mb", 1024)), allow)


def _import_allowed(names: list[str]) -> str | None:
    """Import the env's allowed third-party modules (before the audit hook); the first failure, if any.

    What they import in turn is in the module cache afterwards, so the hook allows it too; the
    process-, socket- and native-call modules stay pruned from the cache even then.
    """
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # an installed package that cannot load here: the env's jobs say so
            return f"crash: allowed module {name} cannot be imported in the sandbox: {type(exc).__name__}: {exc}"
    return None


def serve(fd: int, scratch: str, env_dir: Path, memory_mb: int, allow_modules: list[str] = ()) -> None:  # type: ignore[assignment]
    """Lock this process down for good (seccomp, rlimits, audit hook), then answer jobs for one env.

    `allow_modules` are installed third-party modules this env may import (its manifest's
    `allow_modules`): imported here before the hook is armed, and allowed for this worker only.
    """
    from catalog.models import Outcome
    from catalog.runtime import database_engine, load_module, local_module_names, runtime_for
    from sandbox._guard import make_hook
    from sandbox._seccomp import load_filter
    from sandbox._stubs import stub_module
    from sandbox.allowlist import ALLOWED_IMPORTS, STUBBED_IMPORTS, check_imports
    from sandbox.frames import MAX_FRAME, FrameError, read_frame_blocking
    from sandbox.globalstate import EnvGlobals, changed, fingerprint

    protocol_in = protocol_out = fd
    _limit(memory_mb)  # before the filter, which refuses setrlimit
    load_filter(os.getpid())
    channel = _Channel(protocol_out, MAX_FRAME)
    problems = check_imports(env_dir, allow_modules)
    local = local_module_names(env_dir)
    for name in NATIVE:  # the ctypes handles the worker used on itself: gone, not just hidden
        module = sys.modules.get(name)
        if module is not None:
            for key in [k for k in vars(module) if not k.startswith("__")]:
                delattr(module, key)
    for name in [m for m in sys.modules if m.split(".")[0] in PRUNED or m in NATIVE]:
        del sys.modules[name]
    unloadable = _import_allowed(list(allow_modules))
    for name in [m for m in sys.modules if m.split(".")[0] in PRUNED or m in NATIVE]:
        del sys.modules[name]  # brought back by an allowed module: it keeps its reference, env code gets none
    allowed = (set(ALLOWED_IMPORTS) | set(allow_modules) | {m.split(".")[0] for m in sys.modules} | local) - \
        set(PRUNED)
    for name, does in STUBBED_IMPORTS.items():  # importable stand-ins: a use is refused at the call
        sys.modules[name] = stub_module(name, does)
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    baseline = _process_state()
    sys.addaudithook(make_hook(scratch, allowed, roots, protocol_out, VIOLATION_STATUS))

    builder: Any = None  # the env's runtime as loaded: the single-instance runtime, and the dense instances' template
    env_globals: Any = None
    has_state = False
    states: dict[str, Any] = {}
    instances: dict[int, Any] = {}  # dense mode: instance id -> its own runtime (sibling of the builder)
    # per instance (None: the single one), since its last reset: the reset's state if kept, compiled checks
    episodes: dict[int | None, dict[str, Any]] = {}
    last_print: dict[str, Any] | None = None  # the fingerprint after the last call, if no env code ran since
    while True:
        try:
            job = read_frame_blocking(protocol_in, MAX_FRAME)
        except FrameError:
            os._exit(2)
        if job is None:
            return
        channel.job = int(job.get("job", 0))
        instance = job.get("instance")
        channel.instance = instance if type(instance) is int else None
        for gone in job.get("forget") or []:  # instances the supervisor released: their state goes
            if type(gone) is int:
                instances.pop(gone, None)
                episodes.pop(gone, None)
        try:
            if problems:
                channel.send({"event": f"forbidden: {problems[0]}", "done": True})
                continue
            if unloadable:
                channel.send({"event": unloadable, "done": True})
                continue
            if builder is None:
                module = load_module(env_dir / "env.py", "sandboxed_env")
                builder = runtime_for(module, job["kind"], job.get("entry"), init=job.get("init", "auto"),
                                      failure_exceptions=job.get("failure_exceptions", []),
                                      convention=job.get("convention", "class"), failure=job.get("failure"),
                                      strict_args=bool(job.get("strict_args", True)),
                                      engine=database_engine() if job["kind"] == "sql" else None)
                env_globals = EnvGlobals(module, env_dir)
                channel.ran = True  # the env's module ran
            if channel.instance is None:
                runtime = builder
            elif job.get("resume"):
                runtime = instances.get(channel.instance)
            else:
                runtime = instances.get(channel.instance) or builder.sibling()
            resetting = not job.get("resume")
            if resetting:
                last_print = None  # a reset runs env code (a class's __init__)
                channel.ran = True
            template_state = False  # the state after the reset is the one every reset to this name gives here
            if job.get("state_name"):
                name = job["state_name"]
                if name not in states:
                    state = json.loads((env_dir / "states" / f"{name}.json").read_text())
                    states[name] = builder.template(state) if hasattr(builder, "template") else state
                runtime.reset(states[name])
                template_state = getattr(states[name], "stable", False) is not False  # class envs (catalog/state/rewind.py)
            elif not job.get("resume"):
                runtime.reset(job["state"])
            elif runtime is None or (channel.instance is None and not has_state):
                channel.send({"done": True, "event": STALE})  # this worker holds no state of that session
                continue
            if channel.instance is None:
                has_state = True
            else:
                instances[channel.instance] = runtime
            if resetting:
                episodes[channel.instance] = {"judges": {}}
            episode = episodes.setdefault(channel.instance, {"judges": {}})
            if (job.get("judge_from_reset") or job.get("reset_snapshot")) and "reset_state" not in episode:
                channel.send({"done": True, "event": STALE})  # no kept reset state here: the session replays
                continue
            if hasattr(runtime, "reuse_snapshots"):  # snapshots share unchanged tables: frames only encode them,
                runtime.reuse_snapshots = True  # and a task's check gets its own copy (`_own`)
            hidden = bool(job.get("hidden"))
            known = bool(job.get("share_states") and job.get("known_initial") and template_state)
            shown = (episode["reset_state"] if job.get("reset_snapshot") else runtime.snapshot(hidden=hidden)) \
                if job.get("snapshot") and not known else None
            share = bool(job.get("share_states")) and bool(job.get("snapshot"))
            if share and template_state and not job.get("reset_snapshot"):
                if job.get("known_initial"):  # the supervisor holds it: not encoded and sent again
                    shown = None
                ready: dict[str, Any] = {"ready": True, "state": shown, "template": True}
            else:
                ready = {"ready": True, "state": shown}
            if job.get("describe"):
                ready["tools"] = [t.model_dump() for t in runtime.tools.values()]
            if not channel.send(ready):
                channel.send({"done": True, "event": "output_too_large"})
                continue
            if resetting and job.get("keep_initial"):  # judged against later (`judge_from_reset`): its own copy,
                # made when first judged (nothing changes a snapshot meanwhile: frames only encode it)
                episode["reset_state"] = ready["state"] if ready["state"] is not None and not hidden else \
                    runtime.snapshot()
            event = None
            after = bool(job.get("judge_after"))  # judge after the actions, if one changed the state
            if job.get("task") is not None and not after:
                last_print = None  # a check is code too
                initial = _kept_initial(episode) if job.get("judge_from_reset") else job.get("task_initial")
                episode["judged"] = bool(job.get("judge_from_reset"))  # a verdict on this state: later calls judge on change
                channel.before_env_code()
                if not channel.send(_run_task(runtime, job["task"], initial, episode["judges"])):
                    event = "output_too_large"
            changed_state = False
            for action in job["actions"]:
                before = last_print if last_print is not None else fingerprint(env_globals)
                channel.before_env_code()
                result = runtime.call(action)
                last_print = fingerprint(env_globals)
                moved = changed(before, last_print)
                if moved:  # interpreter-wide state this call changed (sandbox/globalstate.py)
                    result.info["global_change"] = moved
                # a class env's call with no delta, public or hidden, left the state as it was: the
                # supervisor reuses the one before (states of plain JSON values compare as JSON)
                same = share and job["kind"] == "class" and not result.delta and not result.info.get("hidden_delta")
                # a tracked call's state after is the one before with the subtrees it rewrote (catalog/state/patches.py)
                patch = runtime.patch() if share and not same and not hidden and hasattr(runtime, "patch") else None
                if job.get("snapshot") and not same and patch is None:
                    result.state = runtime.snapshot(hidden=hidden)
                result.info.pop("traceback", None)  # the supervisor's callers never show it
                if result.outcome is Outcome.CRASH:
                    result.info["event"] = "memory" if result.info.get("exception") == "MemoryError" else "crash"
                changed_state = changed_state or bool(result.delta)
                step = result.model_dump(mode="json")  # the step's wire form (sandbox/wire.py)
                if same:
                    step["same_state"] = True
                elif patch is not None:
                    step["patch"] = patch
                if not channel.send(step):
                    event = "output_too_large"
                    break
            if after and job.get("task") is not None and event is None and (changed_state or not episode.get("judged")):
                last_print = None
                initial = _kept_initial(episode) if job.get("judge_from_reset") else job.get("task_initial")
                episode["judged"] = True
                channel.before_env_code()
                if not channel.send(_run_task(runtime, job["task"], initial, episode["judges"])):
                    event = "output_too_large"
            channel.send({"done": True, "event": event, "recycle": _leftovers(baseline)})
        except MemoryError:
            channel.send({"event": "memory", "done": True, "fatal": True})
            os._exit(4)
        except Exception as exc:  # the env failed to load or reset: a result, not a lost worker
            channel.send({"event": f"crash: {type(exc).__name__}: {exc}", "done": True,
                          "recycle": _leftovers(baseline)})
