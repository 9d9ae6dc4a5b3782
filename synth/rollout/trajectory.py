"""A rollout's trajectory: OpenAI messages and tools, per-step outcome and delta, reward, usage, metadata.

One trajectory is one line of `trajectories.jsonl` (its pydantic `model_dump()`). The line is built for two readers: `json`
line by line (every field is plain JSON) and HF `datasets` as plain JSONL, whose Arrow columns
need one type per field on every line *and in every file*: a column that is null on every line
of one file is typed null, and a second file with values there no longer loads with it. So:

- the fields whose type varies from call to call (tool arguments, observations, deltas, the
  check's details, a simulator's prediction, the first divergence, model-call errors) are JSON
  text (`*_json`), exactly as OpenAI messages already carry tool arguments and tool results;
- nothing else is ever null: a run without a simulator has `simulator` "", `verified` false and
  every step's `sim` with `simulated` false, a step without an error has `error` "". Runs with
  and without `--simulator` therefore have one schema, and their files load together.

`messages` are the OpenAI chat format (what `datasets`, TRL and OpenAI fine-tuning read): system,
user, assistant (with `tool_calls`, `function.arguments` as JSON text) and tool (with
`tool_call_id` and the tool's `name`, which chat templates such as hermes' print) messages;
`tools` are the OpenAI function schemas the agent was given. HF chat templates want each call's
arguments as an object instead (`tojson` would encode the text twice): `template_messages`
decodes them for `tokenizer.apply_chat_template(template_messages(line), tools=line["tools"])`.
The tool schemas differ between envs, so files of runs over different envs are one Arrow schema
only where their tools are; over one catalog's envs they are.
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
           "load_trajectories", "template_messages", "trajectory_journal"]

TRAJECTORIES_FILE = "trajectories.jsonl"


def as_json_text(value: Any) -> str:
    """Canonical JSON text of a value of any JSON type (what `*_json` fields hold); repr of anything else."""
    return canonical_json(json_fallback(value))


class SimCheck(JsonModel):
    """How one simulated step compared with executing it on the real env from the same state.

    `verified`: the simulator's observation (FM) and next state (strict CM) both match execution.
    `answered_by` is what the agent saw: `simulator`, or `env` when the simulator gave no answer
    (abstained or failed), so the episode could go on. A run without a simulator records
    `not_simulated()` (`simulated` false) so the line keeps one shape.

    A hybrid run (`--trust`, synth/rollout/hybrid.py) also fills `cell` (the `tool/stratum` the
    spec predicted), `trust` (why the step was or was not the simulator's: `trusted`,
    `spot-check`, `spot-check failed: trust dropped`, `untrusted: ...`) and `executed`: false for a
    trusted step the simulator answered alone (then `verified`, `fm` and `cm_strict` are false:
    nothing was compared); `trust_seconds` is the step's hybrid overhead (the state read from
    the env after an executed call, the spec's prediction of the stratum, and loading the state of
    record into the env before this call runs).
    """

    simulated: bool = True
    executed: bool = True
    cell: str = ""
    trust: str = ""
    verified: bool
    fm: bool
    cm_strict: bool
    answered_by: str
    abstained: bool = False
    reason: str = ""
    predicted_observation_json: str = "null"
    predicted_delta_json: str = "null"
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    trust_seconds: float = 0.0

    @classmethod
    def not_simulated(cls) -> SimCheck:
        """The record of a step the env answered alone (the run had no simulator)."""
        return cls(simulated=False, verified=False, fm=False, cm_strict=False, answered_by="env")

    @property
    def diverged(self) -> bool:
        """A simulated step that execution contradicted (an unchecked trusted step has not diverged)."""
        return self.simulated and self.executed and not self.verified

    def divergence(self) -> str:
        """What differed, in a few words (for the first divergence of a trajectory)."""
        if self.abstained or self.answered_by == "env":
            return f"no answer ({self.reason or 'abstained'})"
        parts = [name for name, ok in (("observation", self.fm), ("state", self.cm_strict)) if not ok]
        return " and ".join(parts) + " differ"


class StepRecord(JsonModel):
    """One tool call of the agent and what answered it.

    `outcome` is the env's (success, failure, crash, invalid), or `malformed` when the call's
    arguments were not a JSON object: nothing ran and the agent was told what was wrong (`error`,
    "" otherwise).
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
    error: str = ""
    sim: SimCheck = Field(default_factory=SimCheck.not_simulated)


class Trajectory(JsonModel):
    """One episode of one agent on one (env, task); `id` is `env/task`, the resume key.

    `model_dump()` is its line. `usage` (the agent's model calls) is stored without seconds and
    with its errors as `errors_json`, `sim_usage` (the simulator's steps) without errors.
    `simulator` is "" and `verified` false without a simulator; `verified` is true when every
    simulated step that was also executed matched it (every step, without `--trust`). `first_divergence_json` is "null" or the first step that was not.
    """

    id: str
    env: str
    task: str
    state: str
    model: str
    simulator: str
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
    verified: bool
    first_divergence_json: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("usage")
    def _agent_usage(self, usage: Usage) -> dict[str, Any]:
        return {**usage.model_dump(exclude={"seconds", "errors"}), "errors_json": as_json_text(usage.errors)}

    @field_serializer("sim_usage")
    def _sim_usage(self, usage: Usage) -> dict[str, Any]:
        return usage.model_dump(exclude={"errors"})


def template_messages(line: dict[str, Any]) -> list[dict[str, Any]]:
    """A trajectory line's messages for HF chat templates: each tool call's arguments decoded to an object.

    The line itself keeps OpenAI's form (arguments as JSON text); templates render arguments with
    `tojson`, which would encode that text a second time. Arguments that are not a JSON object
    (a malformed call, kept as sent) stay text: a template prints them as the model wrote them.
    """
    out: list[dict[str, Any]] = []
    for message in line["messages"]:
        calls = message.get("tool_calls")
        if calls:
            message = {**message, "tool_calls": [
                {**call, "function": {**call["function"], "arguments": _decoded(call["function"]["arguments"])}}
                for call in calls]}
        out.append(message)
    return out


def _decoded(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


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
