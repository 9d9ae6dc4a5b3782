"""Atomic file writes whose result looks like any other file the user makes (mode from the umask).

`tempfile.mkstemp` and `mkdtemp` create 0600 files and 0700 folders so that nobody can race
into a half-written temporary; once the content is complete and renamed into place, it is the
user's output and should carry the mode `open()` would have given it (0644/0755 under umask 022).
One definition here, used by every writer that renames a temporary into place.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "current_umask", "file_mode", "dir_mode", "as_normal_dir", "unwritable_folder"]


def current_umask() -> int:
    """The process umask, read without changing it (os.umask sets it, racing other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it the only other way, and put it back at once
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new regular file gets from open() under the current umask."""
    return 0o666 & ~current_umask()


def dir_mode() -> int:
    """The mode a new folder gets from mkdir() under the current umask."""
    return 0o777 & ~current_umask()


def as_normal_dir(path: Path) -> Path:
    """Give a folder made by tempfile.mkdtemp (0700) the mode mkdir() would have; returns `path`."""
    os.chmod(path, dir_mode())
    return path


def atomic_write(path: Path, data: str | bytes, *, fsync: bool = False) -> None:
    """Write `data` to `path` via a temporary beside it and a rename: a crash leaves the old file or the new one.

    The file gets the umask's mode, like a file written in place; `fsync` makes the content
    durable before the rename (for files that must survive a power cut, not just a crash).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(descriptor, file_mode())
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def unwritable_folder(path: Path) -> str | None:
    """Why files cannot be written into the folder `path` (made if missing), or None if they can.

    Commands check their output folders with it before any work, so a bad `--report`/`--out`
    is said at once instead of after the work it was to hold. Tried, not read from the mode
    bits (chmod does not stop root; read-only mounts stop everyone); nothing is left behind.
    """
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        return f"{path} cannot be made: {existing} is a file, not a folder"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        return f"{path} is not writable ({existing}: {exc.strerror or exc})"
    return None
