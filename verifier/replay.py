"""Replay: run a recorded sequence of tool calls from one initial state and keep every step's result.

This is how a user checks a trajectory (an agent's calls, a scripted test) against what the env
really does. The env's code runs where `catalog run` runs it (`sandbox.session.open_runtime`): in
the sandbox, except the shipped reference envs and `trusted=True` (code you vouch for), which run
in this process. Calls run in order on one live state: a call that fails, crashes or is invalid
leaves the state as it was and the replay goes on, so every call gets a recorded step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, model_serializer

from catalog.calls import Call, as_call
from catalog.errors import EnvforgeError
from catalog.jsonmodel import JsonModel
from catalog.models import Outcome, StepResult
from catalog.render import format_op, render_delta
from catalog.runtime import StateError
from catalog.state.delta import DeltaOp
from catalog.state.jsonable import canonical_json, pretty_json
from catalog.store import Catalog, CatalogError, EnvHandle
from sandbox.pool import DEFAULT_TIMEOUT
from sandbox.session import SandboxRuntime, open_runtime

__all__ = ["ReplayError", "ReplayStep", "ReplayResult", "replay", "resolve_state", "render_replay"]


class ReplayError(EnvforgeError):
    """The replay could not start or go on (the env would not reset, the sandbox could not restore it).

    `partial` holds the steps recorded before that, so nothing already run is lost.
    """

    def __init__(self, message: str, partial: ReplayResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


class ReplayStep(JsonModel):
    """One replayed call and what execution made of it (`result.state` only when states were asked).

    Its wire form (`model_dump(mode="json")`, a line of `replay --json`): the call, then its
    step's wire form, keys in the file's order.
    """

    index: int
    call: Call
    result: StepResult

    @model_serializer(mode="plain")
    def _wire(self) -> dict[str, Any]:
        step = self.result.model_dump(mode="json")
        data: dict[str, Any] = {"index": self.index, "name": self.call.name, "arguments": self.call.shown_arguments(),
                                **{key: step[key] for key in ("outcome", "observation", "delta", "info")}}
        if step["state"] is not None:
            data["state"] = step["state"]
        return data


class ReplayResult(JsonModel):
    """A whole replay: the env, the initial state's label, the steps in order, the final state if asked.

    Its wire form (`model_dump(mode="json")`) is what `replay --json` prints.
    """

    env: str
    state: str
    steps: list[ReplayStep] = Field(default_factory=list)
    final_state: dict[str, Any] | None = None

    @property
    def clean(self) -> bool:
        """True when every call was a behaviour of the env (success or rule failure), none crashed or was invalid."""
        return all(s.result.outcome in (Outcome.SUCCESS, Outcome.FAILURE) for s in self.steps)

    @model_serializer(mode="plain")
    def _wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"env": self.env, "state": self.state,
                                "steps": [s.model_dump(mode="json") for s in self.steps]}
        if self.final_state is not None:
            data["final_state"] = self.final_state
        return data


def _looks_like_path(text: str) -> bool:
    return text.endswith(".json") or "/" in text or "\\" in text


def resolve_state(handle: EnvHandle, state: str | dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The initial state and its label: a state name, a path to a state JSON file, or the data itself.

    No state means the env's default state (`EnvHandle.default_state`, as `catalog run` does).
    """
    if isinstance(state, dict):
        return "<given>", state
    names = handle.state_names()
    if state is None:
        state = handle.default_state()
    if state in names or not _looks_like_path(state):
        return state, handle.state(state)
    path = Path(state)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogError(f"state file {path} does not exist (states of {handle.id!r}: {', '.join(names)})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError(f"state file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"state file {path} must hold a JSON object, got {type(data).__name__}")
    return str(path), data


def _unusable(call: Call) -> StepResult:
    """The step of a call whose arguments cannot even be read: invalid, nothing runs (as the runtimes do)."""
    return StepResult(observation={"error": f"Bad arguments for {call.name}: {call.problem}"}, outcome=Outcome.INVALID)


def replay(env: EnvHandle | str, state: str | dict[str, Any] | None, calls: Sequence[Call | dict[str, Any]], *,
           catalog: Catalog | None = None, trusted: bool = False, timeout: float = DEFAULT_TIMEOUT,
           states: bool = False, final_state: bool = False) -> ReplayResult:
    """Run `calls` in order from `state` of `env`; see the module docstring.

    `env` is a handle or an env id (looked up in `catalog`, default: the default catalog).
    `states=True` records the full state after every call; `final_state=True` the state at the end.
    `calls` are Calls or `{"name", "arguments"}` dicts (CallFileError for a malformed one, before anything runs).
    Raises ReplayError when the env cannot be reset to the state, CatalogError for an unknown env or state.
    """
    handle = env if isinstance(env, EnvHandle) else (catalog or Catalog()).get(env)
    label, initial = resolve_state(handle, state)
    todo = [c if isinstance(c, Call) else as_call(c, f"call {i}") for i, c in enumerate(calls)]
    runtime = open_runtime(handle, trusted=trusted, timeout=timeout)
    result = ReplayResult(env=handle.id, state=label)
    try:
        try:
            runtime.reset(initial)
        except (RuntimeError, StateError) as exc:
            raise ReplayError(f"{handle.id}: cannot start from state {label}: {exc}") from None
        try:
            for index, call in enumerate(todo):
                step = _unusable(call) if call.problem else runtime.call(call.to_action(), snapshot=states)
                if states and step.state is None:  # invalid calls return before any snapshot
                    step.state = runtime.snapshot()
                result.steps.append(ReplayStep(index=index, call=call, result=step))
            if final_state:
                result.final_state = runtime.snapshot()
        except RuntimeError as exc:  # the sandbox lost the session and could not bring it back
            raise ReplayError(f"{handle.id}: replay stopped after {len(result.steps)} of {len(todo)} calls: {exc}",
                              result) from None
    finally:
        if isinstance(runtime, SandboxRuntime):
            runtime.close()
    return result


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def _render_info(info: dict[str, Any]) -> list[str]:
    """A step's diagnostics (exception type, hidden delta, ill-typed arguments, ...), never the traceback."""
    lines = []
    for key, value in info.items():
        if key == "traceback":
            continue
        if key == "hidden_delta" and isinstance(value, list):
            lines.append(f"  hidden delta ({len(value)} ops):")
            lines += ["  " + format_op(DeltaOp.model_validate(raw)) if isinstance(raw, dict) else f"    {raw}"
                      for raw in value]
        else:
            lines.append(f"  {key.replace('_', ' ')}: {value if isinstance(value, str) else canonical_json(value)}")
    return lines


def render_replay(result: ReplayResult, *, final_state: bool) -> list[str]:
    """`replay` as text: per call its index, call, outcome, observation, delta and diagnostics, then a tally."""
    lines = [f"env {result.env}, state {result.state}: {_calls(len(result.steps))}"]
    for step in result.steps:
        call, res = step.call, step.result
        lines.append(f"[{step.index}] {call.name}({json.dumps(call.shown_arguments(), ensure_ascii=False)})"
                     f"{f'  ({call.source})' if call.source else ''}")
        lines.append(f"  outcome: {res.outcome.value}")
        lines.append(f"  observation: {json.dumps(res.observation, ensure_ascii=False)}")
        lines.append(f"  delta ({len(res.delta)} ops):" if res.delta else "  delta: none")
        lines += render_delta(res.delta, indent="  ")
        lines += _render_info(res.info)
    counts: dict[str, int] = {}
    for step in result.steps:
        counts[step.result.outcome.value] = counts.get(step.result.outcome.value, 0) + 1
    lines.append(f"{_calls(len(result.steps))}: " + ", ".join(f"{n} {outcome}" for outcome, n in counts.items()))
    if final_state:
        lines += ["final state:", pretty_json(result.final_state)]
    return lines
