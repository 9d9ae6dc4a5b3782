"""Usage and cost accounting: one CallRecord per LLM call, summed as a Usage, aggregated per pipeline stage.

`Usage` itself is catalog.usage's (the one usage total of envforge), re-exported here.

The yield/cost report needs tokens, cost, wall time and errors per stage, taken from the API's
``usage`` fields rather than estimated. Worker threads share one ledger, so it is locked.
Costs are summed as Decimals so many tiny per-call costs add up exactly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from catalog.jsonmodel import JsonModel
from catalog.usage import Usage

__all__ = ["CallRecord", "LedgerFile", "Usage", "UsageLedger"]


class CallRecord(JsonModel):
    """One logical call (retries and re-asks included) of one stage to one model.

    ``attempts`` counts HTTP tries, ``requests`` the replies received (the first answer plus
    re-asks); tokens and cost sum over every reply. ``repaired`` means the JSON syntax had to be
    fixed; ``usage_reported`` is False if the server sent no ``usage`` (tokens then read 0).
    Summed by :class:`catalog.usage.Usage` (``Usage.of(record)``).
    """

    model_config = ConfigDict(extra="ignore")  # a ledger file of a later version may carry more

    stage: str
    model: str
    model_id: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    attempts: int = 0
    requests: int = 0
    reasks: int = 0
    repaired: bool = False
    ok: bool = False
    error: str | None = None
    finish_reason: str | None = None
    usage_reported: bool = True
    started_at: float = Field(default_factory=time.time)


def _empty() -> dict[str, Any]:
    return {"calls": 0, "tokens_in": 0, "tokens_out": 0, "cost_usd": Decimal(0), "seconds": 0.0,
            "errors": 0, "attempts": 0, "reasks": 0, "repaired": 0}


def _add(acc: dict[str, Any], r: CallRecord) -> None:
    acc["calls"] += 1
    acc["tokens_in"] += r.tokens_in
    acc["tokens_out"] += r.tokens_out
    acc["cost_usd"] += Decimal(repr(r.cost_usd))
    acc["seconds"] += r.seconds
    acc["errors"] += 0 if r.ok else 1
    acc["attempts"] += r.attempts
    acc["reasks"] += r.reasks
    acc["repaired"] += int(r.repaired)


def _finish(acc: dict[str, Any]) -> dict[str, Any]:
    return {**acc, "cost_usd": float(acc["cost_usd"]), "seconds": round(acc["seconds"], 6)}


class UsageLedger:
    """Thread-safe list of CallRecords with totals and per-stage / per-model aggregates."""

    def __init__(self, records: Iterable[CallRecord] = ()) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = list(records)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def _group(self, key: str | None) -> dict[str, dict[str, Any]]:
        groups: dict[str, dict[str, Any]] = {}
        for r in self.records:
            _add(groups.setdefault(getattr(r, key) if key else "total", _empty()), r)
        return {k: _finish(v) for k, v in sorted(groups.items())}

    def totals(self) -> dict[str, Any]:
        """``{calls, tokens_in, tokens_out, cost_usd, seconds, errors, attempts, reasks, repaired}``."""
        return self._group(None).get("total", _finish(_empty()))

    def by_stage(self) -> dict[str, dict[str, Any]]:
        """``{stage: {calls, tokens_in, tokens_out, cost_usd, seconds, errors, ...}}``."""
        return self._group("stage")

    def by_model(self) -> dict[str, dict[str, Any]]:
        return self._group("model")

    @property
    def cost_usd(self) -> float:
        return self.totals()["cost_usd"]

    def merge(self, other: UsageLedger) -> None:
        """Append another ledger's records (e.g. a resumed run's earlier calls)."""
        for r in other.records:
            self.add(r)

    def file(self) -> LedgerFile:
        """What the ledger's JSON file holds: the aggregates (for readers) and the records (the truth)."""
        return LedgerFile(totals=self.totals(), by_stage=self.by_stage(), by_model=self.by_model(),
                          records=self.records)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.file().model_dump(), indent=indent, sort_keys=True)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, text: str | bytes) -> UsageLedger:
        """The ledger of a file written by `to_json`; only the records are read (the aggregates follow from them)."""
        return cls(LedgerFile.model_validate_json(text).records)

    @classmethod
    def load(cls, path: str | Path) -> UsageLedger:
        return cls.from_json(Path(path).read_bytes())


class LedgerFile(JsonModel):
    """A saved ledger: ``{totals, by_stage, by_model, records}`` (the records are what a reader rebuilds from)."""

    totals: dict[str, Any] = Field(default_factory=dict)
    by_stage: dict[str, dict[str, Any]] = Field(default_factory=dict)
    by_model: dict[str, dict[str, Any]] = Field(default_factory=dict)
    records: list[CallRecord] = Field(default_factory=list)
