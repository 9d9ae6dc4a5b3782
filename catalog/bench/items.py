"""Benchmark items and simulator answers: the data shared by sample export, simulators and audits.

A `BenchItem` is envforge's one sample type: a verified step `(env, s, a, o, s', Δ, strata)`
labelled by execution, plus what a simulator needs to answer it without the catalog: the env's
code, kind, entry class and documentation, and how the env runs calls (`env_context`: whether
ill-typed arguments are refused, which exceptions are failures), so a simulator answers an item
as the env it came from would (`from_step` builds one from an executed step).
Items written by envforge carry key-list Δ paths; items imported from EnvSimBench keep their
code (class-based) and get Δ recomputed from their before/after configs. `SimResult` is one simulator's answer to one item, with its cost.

The Simulator protocol lives here too, so the audit (verifier/) can take any simulator (the
spec-only one in constraints/, the LLM ones in synth/) without importing synth.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from catalog.manifest import runtime_options
from catalog.models import Action, EnvManifest, StepResult, Strata
from catalog.state.delta import Delta
from catalog.state.jsonable import canonical_json

__all__ = ["BenchItem", "SimResult", "Simulator", "item_id", "env_context"]


def item_id(env_id: str, state: dict[str, Any], action: Action) -> str:
    """A stable id: the same env, state and action always give the same id (resume and dedup key)."""
    text = canonical_json([env_id, state, action.model_dump(mode="json")])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def env_context(manifest: EnvManifest) -> dict[str, Any]:
    """The item fields read from an env's manifest: its kind and entry, and how it treats a call.

    Items take `strict_args` and the failure exceptions from catalog.manifest.runtime_options, as
    the env's runtimes and sandbox jobs do, so the spec-only
    simulator answering an item checks arguments as the env's runtime did (an imported env runs
    an ill-typed call as Python would; a strict one refuses it as invalid).
    """
    options = runtime_options(manifest)
    return {"env_kind": manifest.kind, "env_entry": manifest.entry or None, "env_strict_args": options["strict_args"],
            "env_failure_exceptions": options["failure_exceptions"]}


class BenchItem(BaseModel):
    """One verified benchmark sample with its environment context (a line of envforge's JSONL)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    env_id: str
    env_kind: Literal["sql", "class"]
    env_entry: str | None = None
    env_code: str = Field(description="The env module's source (what simulators read).")
    env_doc: str = Field("", description="Name, description and rules of the env, as an agent would see them.")
    env_strict_args: bool = Field(True, description="The env refuses ill-typed calls as invalid (its manifest's "
                                  "strict_args); false: they ran as Python runs them (imported envs).")
    env_failure_exceptions: list[str] = Field(default_factory=list, description="Exception names the env raises "
                                              "to refuse a call (a failure, not a crash), from its manifest.")
    state: dict[str, Any]
    action: Action
    observation: Any
    next_state: dict[str, Any]
    delta: list[dict[str, Any]] = Field(description="Ops with key-list paths, as catalog.state.delta counts them.")
    strata: Strata
    origin: Literal["envforge", "envsimbench"] = "envforge"
    task: str = Field("", description="The task text of the trajectory the step came from, when known.")

    @classmethod
    def from_step(cls, env_id: str, state: dict[str, Any], action: Action, result: StepResult, *,
                  env_kind: Literal["sql", "class"], env_code: str, env_entry: str | None = None,
                  env_doc: str = "", env_strict_args: bool = True,
                  env_failure_exceptions: Sequence[str] = ()) -> BenchItem:
        """The sample of an executed step from `state`; the result must carry its full state (snapshot=True).

        A catalog env's kind, entry and call handling come from `**env_context(manifest)`.
        """
        if result.state is None:
            raise ValueError("BenchItem.from_step needs a StepResult with its state (call with snapshot=True)")
        return cls(
            id=item_id(env_id, state, action), env_id=env_id, env_kind=env_kind, env_entry=env_entry,
            env_code=env_code, env_doc=env_doc, env_strict_args=env_strict_args,
            env_failure_exceptions=list(env_failure_exceptions), state=state, action=action, observation=result.observation,
            next_state=result.state, delta=Delta.dump_python(result.delta, mode="json"),
            strata=Strata.of(result.outcome, len(result.delta), len(action.arguments)), task="")


@dataclass
class SimResult:
    """A simulator's answer to one item: predicted observation and Δ (key-list paths), with costs.

    `abstained` means no answer (counted as a miss, reported apart). `violations` lists what the
    constrained mode's validator found; `repairs` and `reasks` count how they were fixed.
    """

    observation: Any = None
    delta: list[dict[str, Any]] | None = None
    abstained: bool = False
    reason: str | None = None
    violations: list[str] = field(default_factory=list)
    repairs: int = 0
    reasks: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    raw: str | None = None
    error: str | None = None


class Simulator(Protocol):
    """Anything that maps (state, action, code, spec) to a predicted (observation, Δ)."""

    name: str
    mode: str

    def predict(self, item: BenchItem) -> SimResult: ...
