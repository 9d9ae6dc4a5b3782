"""The audit hook: the second layer inside a sandbox worker (the OS sandbox is the wall).

It is armed once, before any env code is loaded, and stays armed for the worker's life, between
jobs too. A violation does not raise anything env code could catch: the hook writes one frame
naming it on the protocol descriptor and ends the process with VIOLATION_STATUS, so the
supervisor learns it from the exit status even if env code corrupted the channel.

The hook is hard to reach and to disarm: it is one function kept only by the interpreter's hook
list (no module global, no flag, no closure, no helper function whose cells or code could be
changed from a frame found by walking tracebacks), everything it uses is bound when it is made
(builtins and `os` functions included, so patching them later changes nothing), it never calls
a method of an object env code could have defined (paths are checked only when they are exact
`str`/`bytes`; other path objects are left to the read-only filesystem),
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
    """Build the hook; the caller passes it to sys.addaudithook and keeps no reference.

    The hook is one function with no closure and no helper functions: what it uses are default
    arguments holding only immutable objects (str, int, tuple, frozenset, builtin functions and
    types). Env code can reach its frame (the traceback of the ImportError it raises, or a signal
    handler that interrupts it) but finds nothing there to change: a helper function would give
    writable closure cells and `__code__`, which is how an earlier hook could be disarmed.
    """
    allowed_tops = frozenset(allowed)
    roots = tuple(sorted((r.rstrip("/") + "/" for r in module_roots if r), key=len, reverse=True))
    printable = frozenset(" !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`"
                          "abcdefghijklmnopqrstuvwxyz{|}~")

    def hook(event: str, args: tuple[Any, ...], _blocked: tuple[str, ...] = BLOCKED_EVENTS,
             _write_events: frozenset[str] = WRITE_EVENTS, _allowed: frozenset[str] = allowed_tops,
             _roots: tuple[str, ...] = roots, _scratch: str = scratch.rstrip("/") + "/", _fd: int = report_fd,
             _status: int = exit_status, _printable: frozenset[str] = printable, _type: Any = type, _str: Any = str,
             _bytes: Any = bytes, _int: Any = int, _len: Any = len, _getcwd: Any = os.getcwd, _write: Any = os.write,
             _exit: Any = os._exit, _encode: Any = str.encode, _decode: Any = bytes.decode,
             _to_bytes: Any = int.to_bytes, _import_error: Any = ImportError,
             _permission_error: Any = PermissionError, _write_flags: int = _WRITE_FLAGS,
             _suffixes: tuple[str, ...] = _MODULE_SUFFIXES) -> None:
        reason: str | None = None
        if event.startswith(_blocked):
            reason = event
        else:
            if event == "import":
                name: Any = args[0] if _len(args) > 0 else None
                if _type(name) is _bytes:
                    name = _decode(name, "utf-8", "replace")
                if _type(name) is _str and name.split(".")[0] not in _allowed:
                    raise _import_error("import of " + name + " is not allowed in the sandbox")
                return
            writing = True
            if event == "open":
                path: Any = args[0] if _len(args) > 0 else None
                if _type(path) is _bytes:
                    path = _decode(path, "utf-8", "replace")
                if _type(path) is not _str:
                    return  # other path objects are left to the read-only filesystem
                mode: Any = args[1] if _len(args) > 1 else None
                flags: Any = args[2] if _len(args) > 2 else 0
                writing = bool((_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode))
                               or (_type(flags) is _int and flags & _write_flags))
                candidates: tuple[Any, ...] = (path,)
                label = "write to " + path
            elif event in _write_events:
                candidates, label = args, event + " outside the scratch folder"
            elif event == "sqlite3.connect":
                database: Any = args[0] if _len(args) > 0 else None
                if _type(database) is _bytes:
                    database = _decode(database, "utf-8", "replace")
                if _type(database) is not _str or database == ":memory:" or database == "" or \
                        database.startswith("file::memory:"):
                    return
                label = "sqlite3.connect to " + database
                if database.startswith("file:"):  # a URI (uri=True): its path, without authority or query
                    database = database[5:].split("?")[0].split("#")[0]
                    if database.startswith("//"):
                        database = "/" + database[2:].partition("/")[2]
                candidates = (database,)
            else:
                return
            for path in candidates:
                if _type(path) is _bytes:
                    path = _decode(path, "utf-8", "replace")
                if _type(path) is not _str:
                    continue
                if not path.startswith("/"):  # lexical normalization (env code cannot make links out)
                    path = _getcwd() + "/" + path
                parts: list[str] = []
                for part in path.split("/"):
                    if part == "..":
                        if parts:
                            parts.pop()
                    elif part and part != ".":
                        parts.append(part)
                full = "/" + "/".join(parts)
                if writing:
                    if not (full + "/").startswith(_scratch):
                        reason = label
                        break
                elif full.endswith(_suffixes):  # reading a module's file: only an allowed module's
                    for root in _roots:
                        if full.startswith(root):
                            first = full[_len(root):].split("/")
                            name = first[1] if first[0] == "__pycache__" and _len(first) > 1 else first[0]
                            top = name.split(".")[0]
                            if top not in _allowed:
                                raise _permission_error("reading module " + top + " is not allowed in the sandbox")
                            break
            if reason is None:
                return
        safe = ""
        for char in (reason or "")[:300]:
            safe += char if char in _printable else "?"
        body = _encode('{"violation": "' + safe + '"}')
        try:
            _write(_fd, _to_bytes(_len(body), 4, "big") + body)
        finally:
            _exit(_status)

    return hook
