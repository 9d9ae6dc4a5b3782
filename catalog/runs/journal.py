"""The journal of a resumable run folder: one JSON line per finished unit, appended as it finishes.

An audit's `results.jsonl` and a rollout's `trajectories.jsonl` are journals. What they share is
defined here once: a unit's record is appended once (one line, flushed: a crash loses at most the
line being written, never an earlier one); on resume the lines that are not records (a torn last
line, garbage anywhere) are set aside in `*.rejected.jsonl` first, never dropped, and the file is
rewritten atomically (catalog/runs/files.py) without them; reading gives what is done, by unit id, so
a rerun skips it and no record is written twice. Which lines are records, and whether the first or
the last line of an id wins, is the folder's own choice.

Beside its journal a run folder keeps a session file (`audit.json`, a rollout's meta file: what
the run was asked, compared on resume), read with `read_session` ({} when absent or unreadable)
and written with `write_json`, atomically.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from catalog.runs.files import atomic_write
from catalog.state.jsonable import to_jsonable

__all__ = ["Journal", "Record", "json_lines", "rejected_path", "set_aside_garbage", "read_session", "write_json",
           "json_fallback"]

Record = dict[str, Any]


def _plain_json(record: Record) -> str:
    return json.dumps(record, ensure_ascii=False)


class Journal:
    """One appended JSONL file of unit records keyed by `key` (the unit id).

    `is_record` tells a record from anything else (set aside on resume, skipped on read);
    `first_wins` picks which line of an id reading keeps (the runner writes one per id, so this
    only matters for files edited by hand); `encode` writes a record as its one line of JSON.
    """

    def __init__(self, path: Path, is_record: Callable[[Record], bool], *, key: str = "id",
                 first_wins: bool = False, encode: Callable[[Record], str] = _plain_json) -> None:
        self.path = Path(path)
        self.is_record = is_record
        self.key = key
        self.first_wins = first_wins
        self.encode = encode

    def read(self) -> dict[str, Record]:
        """Every record on file by id; torn or malformed lines are skipped."""
        found: dict[str, Record] = {}
        for record in json_lines(self.path):
            if self.is_record(record):
                if self.first_wins:
                    found.setdefault(record[self.key], record)
                else:
                    found[record[self.key]] = record
        return found

    def resume(self) -> dict[str, Record]:
        """Set aside what is not a record, then read what is done (call it under the folder's lock)."""
        set_aside_garbage(self.path, self.is_record)
        return self.read()

    @contextmanager
    def appending(self, done: dict[str, Record] | None = None) -> Iterator[Callable[[Record], bool]]:
        """An `append(record)` writing one flushed line per new unit; False (nothing written) for an id in `done`.

        `done` (what `resume` returned) is kept up to date with each record appended.
        """
        written = done if done is not None else {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as sink:
            def append(record: Record) -> bool:
                unit = record[self.key]
                if unit in written:
                    return False
                sink.write(self.encode(record) + "\n")
                sink.flush()
                written[unit] = record
                return True
            yield append


def rejected_path(path: Path) -> Path:
    """Where `set_aside_garbage` keeps the lines it took out of `path`: results.jsonl -> results.rejected.jsonl."""
    return path.with_name(f"{path.stem}.rejected{path.suffix}")


def set_aside_garbage(path: Path, keep: Callable[[Record], bool] = lambda record: True) -> int:
    """Move every line of an appended JSONL file that is not a record (`keep`) to its rejected file; return how many.

    Called on resume, under the folder's lock, before the file is read and appended to: a torn
    last line (a crash mid-write) or garbage anywhere (an edit, a disk error) would otherwise stay
    and be skipped on every read. Nothing is dropped: the lines go to `rejected_path(path)` first
    (appended, so earlier set-asides stay), then the file is rewritten atomically without them, and
    one stderr line says so. Blank lines carry nothing and are only removed. The work those lines
    held is done again, since their ids are no longer on file.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return 0
    data = path.read_bytes()
    kept: list[bytes] = []
    rejected: list[bytes] = []
    for raw in data.splitlines(keepends=True):
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            record = None
        (kept if isinstance(record, dict) and keep(record) else rejected).append(line + b"\n")
    if not rejected:
        if not data.endswith(b"\n") or len(kept) != data.count(b"\n"):
            atomic_write(path, b"".join(kept))  # a valid last line without its newline, or blank lines
        return 0
    aside = rejected_path(path)
    with aside.open("ab") as sink:
        sink.writelines(rejected)
        sink.flush()
        os.fsync(sink.fileno())
    atomic_write(path, b"".join(kept), fsync=True)
    sys.stderr.write(f"warning: {path}: set aside {len(rejected)} unreadable line(s) in {aside}; "
                     "their work is done again\n")
    return len(rejected)


def json_lines(path: Path) -> Iterator[Record]:
    """The JSON objects of a JSONL file that is appended to as work finishes; torn or malformed lines are skipped."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for raw in handle:
            try:
                record = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                yield record


def json_fallback(value: Any) -> Any:
    """`json.dumps(default=...)`: JSON form of envforge values, repr of anything else."""
    try:
        return to_jsonable(value)
    except (TypeError, ValueError):
        return repr(value)


def read_session(path: Path) -> dict[str, Any]:
    """A run folder's session file: its object; {} when absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp + rename): a crash leaves the old file or the new one."""
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False, default=json_fallback) + "\n")
