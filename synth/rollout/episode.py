"""One episode: an agent on one (env, task), from reset to the task's check, as a Trajectory.

The task instruction is the user message, after a system message with the env's name,
description and rules. Each assistant turn's tool calls are answered in order (by the env, or by
a simulator checked against it: synth/rollout/steps.py), each result a `tool` message. The
episode ends when the agent answers without a tool call (`final`), at `max_steps` calls
(`max_steps`; calls past the limit are answered "not run"), when the env ends it (`env_done`) or
when the model's reply is unusable after a re-ask (`agent_failed`). A call whose arguments are
not a JSON object is answered with what was wrong (outcome `malformed`, counted) and the episode
goes on. The reward is the env's (`ToolEnv.evaluate`): the task's check on (initial, final)
state, given the agent's final answer (a refusal task is passed only by a decline) and 0.0 for an
episode cut off at `max_steps` (catalog.tasks.episode_passed).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from catalog.models import Action
from synth.llm import Usage
from synth.rollout.agents import Agent, AgentFailed, system_prompt
from synth.rollout.steps import Steps
from synth.rollout.trajectory import StepRecord, Trajectory, as_json_text

__all__ = ["EpisodeEnv", "Unit", "observation_text", "run_episode"]


@dataclass(frozen=True)
class Unit:
    """One (env, task) to roll out; its id `env/task` is the resume key."""

    env_id: str
    task_id: str
    state: str
    instruction: str
    solution_length: int

    @property
    def id(self) -> str:
        return f"{self.env_id}/{self.task_id}"


class EpisodeEnv(Protocol):
    """What an episode needs of an env instance (serving's ToolEnv has it)."""

    @property
    def tools(self) -> Sequence[dict[str, Any]]: ...

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]: ...

    def evaluate(self, final_message: str | None = None, *, cut_off: bool = False) -> tuple[float, Any]: ...


def observation_text(value: Any) -> str:
    """A tool message's content: a string result as it is, anything else as JSON text."""
    return value if isinstance(value, str) else as_json_text(value)


def run_episode(env: EpisodeEnv, agent: Agent, unit: Unit, steps: Steps, *, env_doc: str,
                env_kind: str, seed: int, max_steps: int) -> Trajectory:
    """Roll `agent` out on `env` (already made for the unit's task) and score it; see the module doc."""
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    env.reset(seed=seed)
    tools = [dict(tool) for tool in env.tools]
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(env_doc)},
                                      {"role": "user", "content": unit.instruction}]
    usage = Usage()
    records: list[StepRecord] = []
    malformed = turns = 0
    env_seconds = 0.0
    end = ""
    while not end:
        if len(records) >= max_steps:
            end = "max_steps"
            break
        try:
            turn = agent.act(messages, tools, seed=seed)
        except AgentFailed as exc:
            usage.add(exc.record, str(exc))
            end = "agent_failed"
            break
        usage.add(turn.record)
        turns += 1
        messages.append(turn.message)
        if not turn.calls:
            end = "final"
        for call in turn.calls:
            if len(records) >= max_steps or end:
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": json.dumps(
                    {"error": f"not run: the episode ended ({end or 'step limit of ' + str(max_steps) + ' reached'})"})})
                end = end or "max_steps"
                continue
            if call.arguments is None:
                malformed += 1
                error = f"{call.error}; call {call.name} again with its arguments as one JSON object"
                records.append(StepRecord(index=len(records), call_id=call.id, name=call.name,
                                          arguments_json=as_json_text(call.arguments_text), outcome="malformed",
                                          observation_json=as_json_text({"error": error}), delta_json="[]",
                                          delta_size=0, seconds=0.0, error=call.error or "malformed arguments"))
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": json.dumps({"error": error})})
                continue
            answer = steps.answer(Action(name=call.name, arguments=call.arguments))
            env_seconds += answer.seconds
            content = observation_text(answer.observation)
            records.append(StepRecord(index=len(records), call_id=call.id, name=call.name,
                                      arguments_json=as_json_text(call.arguments), outcome=answer.outcome,
                                      observation_json=as_json_text(answer.observation),
                                      delta_json=as_json_text(answer.delta), delta_size=len(answer.delta),
                                      seconds=round(answer.seconds, 6), sim=answer.sim))
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content})
            if answer.done:
                end = "env_done"
    final = messages[-1].get("content") if end == "final" else None
    settle = time.perf_counter()
    steps.settle()  # a hybrid episode's env catches up with its simulated steps before the check
    settle = time.perf_counter() - settle
    reward, details = env.evaluate(final if isinstance(final, str) else None, cut_off=end == "max_steps")
    checks = [r.sim for r in records if r.sim.simulated]
    diverged = next(((r.index, r.name, r.sim) for r in records if r.sim.diverged), None)
    simulator = steps.simulator_name
    sim_usage = Usage()
    for check in checks:
        sim_usage.add(check)
    return Trajectory(
        id=unit.id, env=unit.env_id, task=unit.task_id, state=unit.state, model=agent.name,
        simulator=simulator, seed=seed, messages=messages, tools=tools,
        steps=records, reward=float(reward), success=float(reward) >= 1.0, check_json=as_json_text(details),
        end=end, usage=usage, sim_usage=sim_usage, cost_usd=round(usage.cost_usd + round(sim_usage.cost_usd, 8), 8),
        verified=bool(simulator) and diverged is None,
        first_divergence_json=as_json_text(None if diverged is None else {
            "step": diverged[0], "tool": diverged[1], "what": diverged[2].divergence()}),
        metadata={"env_kind": env_kind, "solution_length": unit.solution_length, "started_at": started,
                  "seconds": round(time.perf_counter() - t0, 6), "model_seconds": round(usage.seconds, 6),
                  "env_seconds": round(env_seconds, 6), "turns": turns, "malformed_calls": malformed,
                  "max_steps": max_steps, "settle_seconds": round(settle, 6)})
