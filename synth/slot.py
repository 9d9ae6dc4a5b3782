"""One candidate environment ("slot") as the graph sees it: its checkpointed state and the context.

`SlotState` is what LangGraph checkpoints (JSON-able, one thread per slot); `Context` is what the
nodes need besides the state (catalog, generator, sandbox pool), one per process. Every node
records its attempt of a stage with `record_stage`, which the run report aggregates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from catalog.search.vectors import DedupFilter
from catalog.store import Catalog
from sandbox.pool import SandboxPool
from synth.generators import Generator
from synth.llm.ledger import Usage

__all__ = ["FINAL", "MAX_CODE_ATTEMPTS", "SKIPPED", "STAGES", "Context", "SlotState", "record_stage"]

STAGES = ("mine", "dedup", "plan", "schema", "code", "static_check", "states", "execute", "tasks", "gate", "register")
MAX_CODE_ATTEMPTS = 5
FINAL = ("registered", "rejected", "deduplicated", "existing", "failed")
SKIPPED = ("deduplicated", "existing")  # ended at the dedup step: a taken topic, or an id the catalog has already


class SlotState(TypedDict, total=False):
    """The checkpointed state of one candidate environment."""

    run_id: str
    slot: int
    seed: int
    status: str  # running | deduplicated | existing | rejected | registered | failed
    reason: str
    topic: dict[str, Any]
    env_id: str
    blueprint: dict[str, Any]
    plan: dict[str, Any]
    schema: str
    code: str
    attempts: int
    feedback: list[str]
    problems: list[str]
    states: dict[str, Any]
    tasks: list[dict[str, Any]]
    gate: dict[str, Any]
    delta_sizes: dict[str, int]
    realism: dict[str, Any]  # synth.realism.env_realism
    stages: dict[str, dict[str, Any]]


@dataclass
class Context:
    """What nodes need besides the state; one per process (the pool is opened lazily)."""

    run_dir: Path
    catalog: Catalog
    generator: Generator
    gate_examples: int  # the gate's effort: RunConfig holds the defaults, once
    gate_effort: float
    dedup: DedupFilter | None = None
    claims: dict[str, int] | None = None  # the driver's: env id -> the first slot of the run that passed dedup with it
    judge: Callable[[Any, SandboxPool], dict[str, Any]] | None = None  # synth.llm.judge.RuleJudge
    _pool: SandboxPool | None = field(default=None, repr=False)

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            self._pool = SandboxPool(workers=1)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    @property
    def staging(self) -> Catalog:
        return Catalog(self.run_dir / "staging", include_reference=False)


def record_stage(state: SlotState, stage: str, *, ok: bool, seconds: float, usage: Usage | None = None,
                 detail: str = "") -> dict[str, dict[str, Any]]:
    """The slot's `stages` with this attempt of `stage` added (a node returns it; state is never mutated)."""
    stages = {k: dict(v) for k, v in (state.get("stages") or {}).items()}
    entry = stages.setdefault(stage, {"attempts": 0, "first_ok": None, "ok": False, "seconds": 0.0,
                                      "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0, "calls": 0})
    entry["attempts"] += 1
    if entry["first_ok"] is None:
        entry["first_ok"] = ok
    entry["ok"] = ok
    entry["seconds"] = round(entry["seconds"] + seconds, 4)
    if usage is not None:
        entry["tokens_in"] += usage.tokens_in
        entry["tokens_out"] += usage.tokens_out
        entry["cost_usd"] = round(entry["cost_usd"] + usage.cost_usd, 8)
        entry["calls"] += usage.calls
    if detail:
        entry["detail"] = detail[:500]
    return stages
