"""An audit folder's files: the results records, the session log, and what a record says.

`results.jsonl` holds one record per answer, appended as it arrives (the runner writes it, the
report and `bench export --from-audit` read it). Whether a record is *verified* (FM and strict
CM) or *missed* (abstained or errored) is defined here once, for the report and the export.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from catalog.jsonable import to_jsonable

__all__ = ["RESULTS_FILE", "META_FILE", "LOCK_FILE", "RECORD_KEYS", "load_results", "read_meta", "repair_tail",
           "write_json", "json_fallback", "json_lines", "is_verified", "is_missed", "is_wrong"]

RESULTS_FILE = "results.jsonl"
META_FILE = "audit.json"
LOCK_FILE = ".audit.lock"
RECORD_KEYS = ("id", "item", "prediction", "fm", "cm_strict", "cm_compat", "op_p", "op_r", "op_f1", "abstained",
               "error", "seconds", "tokens_in", "tokens_out", "cost_usd")

Record = dict[str, Any]


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


def repair_tail(path: Path) -> None:
    """Cut a torn last line (a crash mid-write) so the next append starts on a fresh line."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            handle.truncate(start)
        else:
            handle.write(b"\n")


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
        if isinstance(record.get("id"), str) and all(k in record for k in RECORD_KEYS):
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
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=json_fallback) + "\n", encoding="utf-8")
    os.replace(tmp, path)
