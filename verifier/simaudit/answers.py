"""The simulator's answers in a property audit: asked once per question, within a budget, kept on disk.

Why: hypothesis replays and shrinks inputs, and several properties look at the same input, so
without a cache one question would be paid for many times. Answers are keyed by (question id,
ask number): ask 0 is the answer every property reads, ask 1 the repeat the determinism property
compares with it. Every answer is appended to `answers.jsonl` when it arrives, so an interrupted
audit resumes without paying again (a torn last line is ignored and asked again).

The budget counts model calls (a re-asked prediction is two calls) and tokens over the whole
audit folder, earlier runs included: a resumed audit with the same budget asks nothing new once it
is spent. A question the budget cannot pay for gets no answer (None), and `refused` counts them,
so the report can say that a search or a shrink stopped at the budget.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, SimResult, Simulator
from catalog.state.jsonable import to_jsonable
from catalog.usage import Usage

__all__ = ["ANSWERS_FILE", "AnswerBook", "Budget"]

ANSWERS_FILE = "answers.jsonl"
_RESULT_FIELDS = {f.name for f in dataclasses.fields(SimResult)}


@dataclass(frozen=True)
class Budget:
    """Limits on model calls and tokens (in + out); None means no limit."""

    calls: int | None = None
    tokens: int | None = None


class AnswerBook:
    """Asks a simulator through a (question, ask) cache persisted in `folder`, within a budget."""

    def __init__(self, simulator: Simulator, folder: Path, budget: Budget) -> None:
        self.simulator, self.budget = simulator, budget
        self.path = folder / ANSWERS_FILE
        self.answers: dict[str, SimResult] = {}
        self.used = Usage()  # every answer on file, this run's and earlier runs'
        self.refused = 0
        self.asked_now = 0
        self.ceiling: int | None = None  # a lower call limit for now (one env's share of the budget)
        folder.mkdir(parents=True, exist_ok=True)
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        good: list[str] = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                result = SimResult(**{k: v for k, v in record["result"].items() if k in _RESULT_FIELDS})
                key = str(record["key"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line (a crash mid-write): asked again
            good.append(line)
            self._count(key, result)
        self.path.write_text("".join(f"{line}\n" for line in good), encoding="utf-8")

    def _count(self, key: str, result: SimResult) -> None:
        self.answers[key] = result
        self.used += Usage(calls=1 + result.reasks, tokens_in=result.tokens_in, tokens_out=result.tokens_out,
                           cost_usd=result.cost_usd)

    @property
    def calls(self) -> int:
        """Model calls paid for so far (re-asks included): what the call budget counts."""
        return self.used.calls

    @property
    def exhausted(self) -> bool:
        """True once the call or token budget is spent."""
        calls, tokens = self.budget.calls, self.budget.tokens
        if self.ceiling is not None:
            calls = self.ceiling if calls is None else min(calls, self.ceiling)
        return (calls is not None and self.used.calls >= calls) or (
            tokens is not None and self.used.tokens_in + self.used.tokens_out >= tokens)

    def ask(self, item: BenchItem, ask: int = 0) -> SimResult | None:
        """The simulator's answer to `item` (its `ask`-th asking); None if the budget cannot pay for it."""
        key = f"{item.id}:{ask}"
        if key in self.answers:
            return self.answers[key]
        if self.exhausted:
            self.refused += 1
            return None
        result = self.simulator.predict(item)
        self.asked_now += 1
        self._count(key, result)
        record = {"key": key, "result": to_jsonable(dataclasses.asdict(result))}
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        return result

    def usage(self) -> dict[str, Any]:
        return {**self.used.model_dump(include={"calls", "tokens_in", "tokens_out"}),
                "cost_usd": round(self.used.cost_usd, 6)}
