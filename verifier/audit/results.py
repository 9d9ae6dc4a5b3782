"""An audit folder's files: the results records, the session log, and what a record says.

`results.jsonl` holds one record per answer, appended as it arrives (the runner writes it, the
report and `bench export --from-audit` read it): it is a catalog.runs.journal.Journal. Whether a
record is *verified* (FM and strict CM) or *missed* (abstained or errored) is defined here once,
for the report and the export.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ConfigDict

from catalog.bench.items import BenchItem
from catalog.jsonmodel import JsonModel
from catalog.runs.journal import Journal, Record, json_fallback

__all__ = ["AuditRecord", "RESULTS_FILE", "META_FILE", "LOCK_FILE", "RECORD_KEYS", "load_results", "results_journal", "is_record",
           "is_verified", "is_missed", "is_wrong"]

RESULTS_FILE = "results.jsonl"
META_FILE = "audit.json"
LOCK_FILE = ".audit.lock"
RECORD_KEYS = ("id", "item", "prediction", "fm", "cm_strict", "cm_compat", "op_p", "op_r", "op_f1", "abstained",
               "error", "seconds", "tokens_in", "tokens_out", "cost_usd")


class AuditRecord(JsonModel):
    """A record typed, for readers that take a folder as untrusted input (`rollout --trust`): its item and scores.

    The runner writes more keys (RECORD_KEYS, and the simulator's name and mode); extra keys are ignored.
    """

    model_config = ConfigDict(extra="ignore")

    id: str
    item: BenchItem
    fm: bool
    cm_strict: bool
    abstained: bool
    error: str | None
    model: str = ""
    mode: str = ""


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




def _encode(record: Record) -> str:
    return json.dumps(record, ensure_ascii=False, default=json_fallback)


def results_journal(out_dir: Path | str) -> Journal:
    """results.jsonl as the folder's journal: one record per answer (see catalog.runs.journal)."""
    return Journal(Path(out_dir) / RESULTS_FILE, is_record, encode=_encode)


def load_results(out_dir: Path | str) -> dict[str, Record]:
    """Read results.jsonl: id -> record (the last of an id wins). Torn or malformed lines are skipped."""
    return results_journal(out_dir).read()




