"""The audit hook: the second layer inside a sandbox worker (the OS sandbox is the wall).

It is armed once, before any env code is loaded, and stays armed for the worker's life, between
jobs too. A violation does not raise anything env code could catch: the hook writes one frame
naming it on the protocol descriptor and ends the process with VIOLATION_STATUS, so the
supervisor learns it from the exit status even if env code corrupted the channel.

The hook is hard to reach and to disarm: it is a closure kept only by the interpreter's hook
list (no module global, no flag, no object to find by walking frames), everything it uses is
captured when it is made (builtins and `os` functions included, so patching them later changes
nothing), it never calls a method of an object env code could have defined (paths are checked
only when they are exact `str`/`bytes`; other path objects are left to the read-only filesystem),
and the ways to find it or to watch the worker's frames are themselves violations: `gc`
introspection, `sys.settrace`/`setprofile`, `sys._current_frames`, new audit hooks.
Imports outside the allowlist raise ImportError (so optional imports fall back); reading the
source of a disallowed module through `importlib` (which skips the import event) raises
PermissionError.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["make_hook", "BLOCKED_EVENTS", "WRITE_EVENTS"]

BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "subprocess.Popen", "socket.", "ctypes.", "pty.spawn", "os.startfile", "webbrowser.open", "urllib.Request",
    "http.client.connect", "ftplib.", "smtplib.", "sys.remote_exec", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys._current_frames", "sys.addaudithook",
    "sqlite3.enable_load_extension", "sqlite3.load_extension", "os.setxattr", "os.removexattr", "os.chroot",
)
WRITE_EVENTS = frozenset({
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.truncate", "os.chmod", "os.chown", "os.link", "os.symlink",
    "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.utime", "os.unlink", "os.mkfifo", "os.mknod",
})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


def make_hook(scratch: str, allowed: Iterable[str], module_roots: Iterable[str], report_fd: int,
              exit_status: int) -> Callable[[str, tuple[Any, ...]], None]:
    """Build the hook; the caller passes it to sys.addaudithook and keeps no reference."""
    allowed_tops = frozenset(allowed)
    roots = tuple(sorted((r.rstrip("/") + "/" for r in module_roots if r), key=len, reverse=True))
    scratch_prefix = scratch.rstrip("/") + "/"
    blocked, write_events = BLOCKED_EVENTS, WRITE_EVENTS
    _type, _str, _bytes, _int, _len = type, str, bytes, int, len
    _getcwd, _write, _exit, _encode = os.getcwd, os.write, os._exit, str.encode
    _to_bytes = int.to_bytes
    import_error, permission_error = ImportError, PermissionError
    printable = frozenset(" !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`"
                          "abcdefghijklmnopqrstuvwxyz{|}~")

    def text(value: Any) -> str | None:
        kind = _type(value)
        if kind is _str:
            return value  # type: ignore[no-any-return]
        if kind is _bytes:
            return value.decode("utf-8", "replace")  # type: ignore[no-any-return]
        return None

    def absolute(path: str) -> str:
        """Lexical normalization (no symlink lookups: env code cannot make links out of the scratch)."""
        if not path.startswith("/"):
            path = _getcwd() + "/" + path
        parts: list[str] = []
        for part in path.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part and part != ".":
                parts.append(part)
        return "/" + "/".join(parts)

    def inside_scratch(path: str) -> bool:
        full = absolute(path) + "/"
        return full.startswith(scratch_prefix)

    def stop(reason: str) -> None:
        safe = "".join(c if c in printable else "?" for c in reason[:300])
        body = _encode('{"violation": "' + safe + '"}')
        try:
            _write(report_fd, _to_bytes(_len(body), 4, "big") + body)
        finally:
            _exit(exit_status)

    def module_top(path: str) -> str | None:
        """The top-level module a file under a module root belongs to, if it is a module file."""
        if not path.endswith(_MODULE_SUFFIXES):
            return None
        for root in roots:
            if path.startswith(root):
                first = path[_len(root):].split("/")
                name = first[1] if first[0] == "__pycache__" and _len(first) > 1 else first[0]
                return name.split(".")[0]
        return None

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(blocked):
            stop(event)
        elif event == "open":
            path = text(args[0]) if _len(args) > 0 else None
            if path is None:
                return
            mode, flags = (args[1] if _len(args) > 1 else None), (args[2] if _len(args) > 2 else 0)
            writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or \
                (_type(flags) is _int and flags & _WRITE_FLAGS)
            if writing:
                if not inside_scratch(path):
                    stop("write to " + path)
                return
            top = module_top(absolute(path))
            if top is not None and top not in allowed_tops:
                raise permission_error("reading module " + top + " is not allowed in the sandbox")
        elif event in write_events:
            for arg in args:
                path = text(arg)
                if path is not None and not inside_scratch(path):
                    stop(event + " outside the scratch folder")
        elif event == "sqlite3.connect":
            database = text(args[0]) if _len(args) > 0 else None
            if database is not None and database != ":memory:" and database != "" and \
                    not database.startswith("file::memory:") and not inside_scratch(database):
                stop("sqlite3.connect to " + database)
        elif event == "import":
            name = text(args[0]) if _len(args) > 0 else None
            if name is not None:
                top = name.split(".")[0]
                if top not in allowed_tops:
                    raise import_error("import of " + name + " is not allowed in the sandbox")

    return hook
