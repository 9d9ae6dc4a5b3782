"""An audit folder's files: the results records, the session log, and what a record says.

`results.jsonl` holds one record per answer, appended as it arrives (the runner writes it, the
report and `bench export --from-audit` read it). Whether a record is *verified* (FM and strict
CM) or *missed* (abstained or errored) is defined here once, for the report and the export.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from catalog.files import atomic_write
from catalog.state.jsonable import to_jsonable

__all__ = ["RESULTS_FILE", "META_FILE", "LOCK_FILE", "RECORD_KEYS", "load_results", "read_meta", "set_aside_garbage",
           "rejected_path", "write_json", "json_fallback", "json_lines", "is_record", "is_verified", "is_missed", "is_wrong"]

RESULTS_FILE = "results.jsonl"
META_FILE = "audit.json"
LOCK_FILE = ".audit.lock"
RECORD_KEYS = ("id", "item", "prediction", "fm", "cm_strict", "cm_compat", "op_p", "op_r", "op_f1", "abstained",
               "error", "seconds", "tokens_in", "tokens_out", "cost_usd")

Record = dict[str, Any]


def is_record(record: Record) -> bool:
    """A results.jsonl line the audit wrote: an id and every key of a record (anything else is set aside)."""
    return isinstance(record.get("id"), str) and all(k in record for k in RECORD_KEYS)


def is_verified(record: Record) -> bool:
    """The simulator got the step right: observation (FM) and next state (strict CM) both match."""
    return bool(record["fm"] is True and record["cm_strict"] is True)


def is_missed(record: Record) -> bool:
    """The simulator gave no answer (abstained) or failed (error); scored as a miss, counted apart."""
    return bool(record["abstained"] or record["error"] is not None)


def is_wrong(record: Record) -> bool:
    """Not a verified answer: what `bench export --from-audit DIR --failures` exports."""
    return not is_verified(record) or is_missed(record)


def json_fallback(value: Any) -> Any:
    """`json.dumps(default=...)`: JSON form of envforge values, repr of anything else."""
    try:
        return to_jsonable(value)
    except (TypeError, ValueError):
        return repr(value)


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


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
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


def load_results(out_dir: Path | str) -> dict[str, Record]:
    """Read results.jsonl: id -> record (the last of an id wins). Torn or malformed lines are skipped."""
    records: dict[str, Record] = {}
    for record in json_lines(Path(out_dir) / RESULTS_FILE):
        if is_record(record):
            records[record["id"]] = record
    return records


def read_meta(out_dir: Path, name: str = META_FILE) -> dict[str, Any]:
    """audit.json (or the folder's other session file `name`): its object; {} when absent or unreadable."""
    try:
        data = json.loads((out_dir / name).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp + rename): a crash leaves the old file or the new one."""
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False, default=json_fallback) + "\n")
