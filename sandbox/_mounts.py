"""Linux calls a forked sandbox worker makes on itself before it runs env code (ctypes over libc).

The fork server (sandbox/_worker.py) runs inside the bubblewrap sandbox with CAP_SYS_ADMIN in the
sandbox's own user namespace, and nothing else. Each forked worker uses it once: a mount namespace
of its own with a private tmpfs scratch (siblings serving other envs cannot see or change its
files), its env's files made read-only there, then it drops every capability, so the seccomp
filter and the read-only mounts cannot be undone.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["private_scratch", "bind_read_only", "hide", "drop_capabilities", "set_dumpable"]

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 0x4000, 1 << 18
PR_SET_DUMPABLE, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 4, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: bytes | None, target: str, fstype: bytes | None, flags: int, data: bytes | None) -> None:
    _check(_libc.mount(source, target.encode(), fstype, flags, data), f"mount {target}")


def private_scratch(path: str, size_mb: int) -> None:
    """Enter a new mount namespace and mount a private, size-capped tmpfs at `path`."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(b"none", "/", None, MS_REC | MS_PRIVATE, None)
    _mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=0700".encode())


def bind_read_only(path: str) -> None:
    """Make the folder `path` read-only (a read-only bind mount of itself)."""
    _mount(path.encode(), path, None, MS_BIND | MS_REC, None)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def hide(path: str) -> None:
    """Cover the folder `path` (if there) with an empty, read-only tmpfs nobody may enter."""
    if os.path.isdir(path):
        _mount(b"none", path, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,mode=0")


def drop_capabilities() -> None:
    """Clear the effective, permitted, inheritable and ambient capability sets of this process."""
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def set_dumpable(on: bool) -> None:
    """Non-dumpable: other processes of the same user cannot open this one's /proc memory or fds."""
    _check(_libc.prctl(PR_SET_DUMPABLE, int(on), 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
