"""A rollout's trajectory: OpenAI messages and tools, per-step outcome and delta, reward, usage, metadata.

One trajectory is one line of `trajectories.jsonl` (its pydantic `model_dump()`). The line is built for two readers: `json`
line by line (every field is plain JSON) and HF `datasets` as plain JSONL, whose Arrow columns
need one type per field on every line. So the fields whose type varies from call to call (tool
arguments, observations, deltas, the check's details, a simulator's prediction) are stored as
JSON text (`*_json`), exactly as OpenAI messages already carry tool arguments and tool results;
everything else keeps one type (null where it does not apply). `messages` follow the OpenAI chat
format: system, user, assistant (with `tool_calls`, `function.arguments` as JSON text) and tool
(with `tool_call_id`) messages; `tools` are the OpenAI function schemas the agent was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, field_serializer

from catalog.jsonmodel import JsonModel
from catalog.runs.journal import Journal, json_fallback
from catalog.state.jsonable import canonical_json
from catalog.usage import Usage

__all__ = ["TRAJECTORIES_FILE", "SimCheck", "StepRecord", "Trajectory", "as_json_text", "is_trajectory",
           "load_trajectories", "trajectory_journal"]

TRAJECTORIES_FILE = "trajectories.jsonl"


def as_json_text(value: Any) -> str:
    """Canonical JSON text of a value of any JSON type (what `*_json` fields hold); repr of anything else."""
    return canonical_json(json_fallback(value))


class SimCheck(JsonModel):
    """How one simulated step compared with executing it on the real env from the same state.

    `verified`: the simulator's observation (FM) and next state (strict CM) both match execution.
    `answered_by` is what the agent saw: `simulator`, or `env` when the simulator gave no answer
    (abstained or failed), so the episode could go on.
    """

    verified: bool
    fm: bool
    cm_strict: bool
    answered_by: str
    abstained: bool = False
    reason: str | None = None
    predicted_observation_json: str = "null"
    predicted_delta_json: str = "null"
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def divergence(self) -> str:
        """What differed, in a few words (for the first divergence of a trajectory)."""
        if self.abstained or self.answered_by == "env":
            return f"no answer ({self.reason or 'abstained'})"
        parts = [name for name, ok in (("observation", self.fm), ("state", self.cm_strict)) if not ok]
        return " and ".join(parts) + " differ"


class StepRecord(JsonModel):
    """One tool call of the agent and what answered it.

    `outcome` is the env's (success, failure, crash, invalid), or `malformed` when the call's
    arguments were not a JSON object: nothing ran and the agent was told what was wrong.
    """

    index: int
    call_id: str
    name: str
    arguments_json: str
    outcome: str
    observation_json: str
    delta_json: str
    delta_size: int
    seconds: float
    error: str | None = None
    sim: SimCheck | None = None


class Trajectory(JsonModel):
    """One episode of one agent on one (env, task); `id` is `env/task`, the resume key.

    `model_dump()` is its line. `usage` (the agent's model calls) is stored without seconds and
    `sim_usage` (the simulator's steps) without errors: the keys the file has always had.
    """

    id: str
    env: str
    task: str
    state: str
    model: str
    simulator: str | None
    seed: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    steps: list[StepRecord]
    reward: float
    success: bool
    check_json: str
    end: str
    usage: Usage
    sim_usage: Usage
    cost_usd: float
    verified: bool | None
    first_divergence: dict[str, Any] | None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("usage")
    def _agent_usage(self, usage: Usage) -> dict[str, Any]:
        return usage.model_dump(exclude={"seconds"})

    @field_serializer("sim_usage")
    def _sim_usage(self, usage: Usage) -> dict[str, Any]:
        return usage.model_dump(exclude={"errors"})


def is_trajectory(line: dict[str, Any]) -> bool:
    """A trajectories.jsonl line the runner wrote (it has a unit id); anything else is set aside on resume."""
    return isinstance(line.get("id"), str)


def _encode(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, allow_nan=False)


def trajectory_journal(out_dir: Path) -> Journal:
    """trajectories.jsonl as the folder's journal: one trajectory per unit, the first of an id wins."""
    return Journal(Path(out_dir) / TRAJECTORIES_FILE, is_trajectory, first_wins=True, encode=_encode)


def load_trajectories(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Read trajectories.jsonl: id -> line (the first of an id wins). Torn or malformed lines are skipped."""
    return trajectory_journal(out_dir).read()
