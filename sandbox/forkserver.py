"""The supervisor's side of a pool's fork server: start it in the sandbox, fork workers, learn their fate.

One fork server (sandbox/_worker.py `zygote_main`) per pool runs in the OS sandbox with every
module a worker needs already imported; a worker for an env version is a fork of it, so it costs
milliseconds instead of an interpreter start (about a second with SQLAlchemy), which is what
makes one-env-per-worker affordable. The supervisor talks to the server over a SOCK_SEQPACKET
socket (spawn and kill requests; spawned and exit reports) and to each worker over a socketpair
whose far end travels with the spawn request (SCM_RIGHTS). The env's files go to the worker in
its first frame, so the sandbox never sees the catalog.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catalog.errors import EnvforgeError
from sandbox._worker import _signal_masks, outside_leftovers
from sandbox.frames import MAX_FRAME, FrameReader, encode
from sandbox.isolation import Isolation, new_scratch, zygote_command

__all__ = ["ForkServer", "Worker", "EnvTooLarge", "EnvHasSymlink"]


class EnvHasSymlink(RuntimeError, EnvforgeError):
    """A symlink in an env folder: what it points to is a host file, never shipped into the sandbox."""


class EnvTooLarge(RuntimeError):
    """The env folder does not fit in one frame."""


class _Spawner:
    """Starts processes from one thread that lives as long as this process.

    bwrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it ends, so a
    sandbox started from a short-lived pool thread would die with that thread; started from here,
    it dies only with the supervisor process (and never outlives it).
    """

    def __init__(self) -> None:
        self._requests: queue.Queue[tuple[dict[str, Any], queue.Queue[Any]]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, **options: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="envforge-sandbox-spawner", daemon=True)
                self._thread.start()
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._requests.put((options, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        return result

    def _serve(self) -> None:
        while True:
            options, answer = self._requests.get()
            try:
                answer.put(subprocess.Popen(**options))
            except BaseException as exc:  # reported to the caller, which turns it into a job event
                answer.put(exc)


_spawner = _Spawner()


class ForkServer:
    """One sandbox with its fork server; see the module docstring."""

    def __init__(self, isolation: Isolation, start_timeout: float = 60.0) -> None:
        self.isolation, self.start_timeout = isolation, start_timeout
        self.scratch_root = new_scratch() if isolation == "none" else None
        command, environment, cwd = zygote_command(isolation, self.scratch_root)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = _spawner.popen(args=command, stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=environment, cwd=cwd, start_new_session=True)
        theirs.close()
        self.control = ours
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._spawned: set[str] = set()
        self._inner: dict[str, int] = {}  # worker -> its pid inside the sandbox (the fork server's report)
        self._zygote_inner: int | None = None
        self._hosts: dict[str, int] = {}  # worker -> its pid as this process sees it (found once)
        self._status_fds: dict[str, int] = {}  # worker -> its /proc status, opened once (one read per check)
        self._zygote_masks: tuple[str, ...] | None = None
        self._statuses: dict[str, int] = {}
        self._leftovers: dict[str, str | None] = {}
        self._dead = False
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, name="envforge-forkserver-reader", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = self.control.recv(65536)
            except OSError:
                message = b""
            if not message:
                with self._cond:
                    self._dead = True
                    self._cond.notify_all()
                return
            try:
                report = json.loads(message)
            except ValueError:
                continue
            with self._cond:
                if "spawned" in report:
                    self._spawned.add(str(report["spawned"]))
                    if type(report.get("pid")) is int and type(report.get("zygote")) is int:
                        self._inner[str(report["spawned"])] = report["pid"]
                        self._zygote_inner = report["zygote"]
                elif "exited" in report:
                    self._statuses[str(report["exited"])] = int(report["status"])
                elif "leftovers" in report:
                    reason = report.get("reason")
                    self._leftovers[str(report["leftovers"])] = None if reason is None else str(reason)
                self._cond.notify_all()

    def alive(self) -> bool:
        return not self._dead and self.process.poll() is None

    def _request(self, request: dict[str, Any], fds: Sequence[int] = ()) -> bool:
        try:
            with self._send_lock:
                socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
        except OSError:
            return False
        return True

    def spawn(self, memory_mb: int, scratch_mb: int) -> tuple[str, socket.socket]:
        """Fork a worker; its id and the supervisor's end of its channel."""
        key = str(next(self._ids))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sent = self._request({"op": "spawn", "id": key, "memory_mb": memory_mb, "scratch_mb": scratch_mb},
                             [theirs.fileno()])
        theirs.close()
        with self._cond:
            answered = sent and self._cond.wait_for(lambda: key in self._spawned or self._dead,
                                                    self.start_timeout)
            ok = bool(answered) and key in self._spawned
        if not ok:
            ours.close()
            raise RuntimeError("the sandbox's fork server did not start a worker")
        return key, ours

    def kill(self, key: str) -> None:
        self._request({"op": "kill", "id": key})
        self._hosts.pop(key, None)  # its pid may be reused: never read it again
        fd = self._status_fds.pop(key, None)
        if fd is not None:
            os.close(fd)
        if self.scratch_root is not None:
            shutil.rmtree(self.scratch_root / key, ignore_errors=True)

    def leftovers(self, key: str, wait: float = 5.0) -> str | None:
        """Why worker `key` must be retired, seen in /proc from outside it (threads, handlers), or None.

        Read by this process from the worker's host /proc entry when it can be found (no round trip),
        else asked of the fork server; env code can change neither.
        """
        pid, masks = self._host_pid(key), self._masks()
        if pid is not None and masks is not None:
            fd = self._status_fds.get(key)
            if fd is None:
                try:
                    fd = self._status_fds[key] = os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    return "the worker is gone"
            return outside_leftovers(pid, masks, fd)
        with self._cond:
            self._leftovers.pop(key, None)
        if not self._request({"op": "leftovers", "id": key}):
            return "the fork server is gone"
        with self._cond:
            self._cond.wait_for(lambda: key in self._leftovers or self._dead, wait)
            if key not in self._leftovers:
                return "the fork server did not answer the leftover check"
            return self._leftovers.pop(key)

    def _host_pids(self) -> dict[int, int]:
        """Pid inside the sandbox -> pid here, for every process of this sandbox (its /proc children, NSpid)."""
        found: dict[int, int] = {}
        stack = [self.process.pid]
        while stack:
            pid = stack.pop()
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
                with open(f"/proc/{pid}/status") as status:
                    inner = next(line.split()[-1] for line in status if line.startswith("NSpid:"))
            except (OSError, StopIteration, ValueError):
                continue
            found[int(inner)] = pid
        return found

    def _host_pid(self, key: str) -> int | None:
        """Worker `key`'s pid here, or None if it cannot be found (then the fork server is asked)."""
        if key not in self._hosts and key in self._inner:
            host = self._host_pids().get(self._inner[key])
            if host is not None:
                self._hosts[key] = host
        return self._hosts.get(key)

    def _masks(self) -> tuple[str, ...] | None:
        """The fork server's signal masks (what every worker starts with), read once from here."""
        if self._zygote_masks is None and self._zygote_inner is not None:
            host = self._host_pids().get(self._zygote_inner)
            try:
                self._zygote_masks = None if host is None else _signal_masks(host)
            except OSError:
                return None
        return self._zygote_masks

    def status(self, key: str, wait: float) -> int | None:
        """The worker's exit status (negative: the signal that killed it), or None if it is not known in time."""
        with self._cond:
            self._cond.wait_for(lambda: key in self._statuses or self._dead, wait)
            return self._statuses.get(key)

    def exited(self, key: str) -> bool:
        with self._cond:
            return key in self._statuses

    def close(self) -> None:
        while self._status_fds:
            os.close(self._status_fds.popitem()[1])
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        self.control.close()
        if self.scratch_root is not None:
            shutil.rmtree(self.scratch_root, ignore_errors=True)


def env_files(env_dir: Path) -> dict[str, str]:
    """Every file of an env folder, base64 (what a worker writes into its private scratch)."""
    files: dict[str, str] = {}
    size = 0
    for path in sorted(Path(env_dir).rglob("*")):  # rglob lists a linked folder but does not enter it
        if path.is_symlink():
            raise EnvHasSymlink(f"{path.relative_to(env_dir)} in {env_dir} is a symlink: env folders hold regular "
                                "files only")
        if "__pycache__" in path.parts or not path.is_file():
            continue
        data = path.read_bytes()
        size += len(data)
        if size * 4 // 3 > MAX_FRAME - 2**20:
            raise EnvTooLarge(f"the env folder is over {MAX_FRAME // 2**20 * 3 // 4} MB")
        files[str(path.relative_to(env_dir))] = base64.b64encode(data).decode()
    return files


class Worker:
    """One forked worker serving one env version."""

    def __init__(self, server: ForkServer, env_dir: Path, version: Any, memory_mb: int, scratch_mb: int, *,
                 allow_modules: list[str] | None = None) -> None:
        self.server, self.version = server, version
        self.jobs = 0
        self.initial_states: dict[tuple[str | None, bool], dict[str, Any]] = {}  # held by the pool (sandbox/pool.py)
        files = env_files(env_dir)
        self.key, self.sock = server.spawn(memory_mb, scratch_mb)
        self.reader = FrameReader(self.sock.fileno(), MAX_FRAME)
        self.send({"files": files, "allow_modules": list(allow_modules or [])})

    def alive(self) -> bool:
        return self.server.alive() and not self.server.exited(self.key)

    def send(self, message: dict[str, Any]) -> bool:
        try:
            self.sock.sendall(encode(message))
        except (OSError, ValueError):
            return False
        return True

    def leftovers(self) -> str | None:
        """Why this worker must not serve another job, seen from outside it (sandbox/_worker.py)."""
        return self.server.leftovers(self.key)


    def exit_status(self, wait: float = 2.0) -> int | None:
        return self.server.status(self.key, wait)

    def kill(self) -> None:
        self.server.kill(self.key)
        try:
            self.sock.close()
        except OSError:
            pass
