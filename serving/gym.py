"""A gym-style API over catalog envs: `make`, then `reset` / `step`, for agents and rollouts.

    make(env_id, *, state=None, task=None, catalog=None, trusted=None, max_steps=None,
         terminate_on_success=True) -> ToolEnv
    ToolEnv.reset(seed=None, options=None) -> (observation: str, info: dict)
    ToolEnv.step(tool_call) -> (observation, reward: float, terminated: bool, truncated: bool, info: dict)
    ToolEnv.evaluate(final_message=None, cut_off=False) -> (reward: float, details: dict)
    ToolEnv.tools -> list of OpenAI function schemas; ToolEnv.state() -> canonical snapshot
    ToolEnv.load(state) -> None: go on mid-episode from a state (a simulated step's next state)
    ToolEnv.instruction, .task, .tasks (id -> Task, read-only), .state_names, .initial_state,
    .steps, .env_id, .handle, .in_process
    ToolEnv.close(); ToolEnv is a context manager

The episode: `reset` starts from the task's state (or `state`, or the env's default) and returns
the task's instruction (the env's description without a task). `step` takes a tool call as
`{"name", "arguments"}` (arguments a dict or JSON text), an OpenAI tool call
(`{"id", "type", "function": {"name", "arguments"}}`) or an `Action`, and returns the tool's
JSON-safe return value. Arguments that are not a JSON object are the agent's mistake, not bad
input: that step is `invalid` and changes nothing. `info` carries the outcome, the delta (op
dicts), the step number, the runtime's diagnostics and, with a task, the check's verdict.

Reward and termination: a step's reward is 1.0 when the task's check holds on (initial state,
current state), else 0.0 (always 0.0 without a task); a refusal task's steps always reward 0.0,
since its check often holds before anything is done and only the agent's decline earns it
(`evaluate(final_message)`; catalog.tasks.episode_passed is the rule). `terminated` is True when
the check holds on a task that is not a refusal (`terminate_on_success=False` never terminates,
for servers whose agent decides when it is done). `truncated` is True on the `max_steps`-th step,
and that step rewards 0.0: a cut-off episode is not a success. After either, `step` raises
`EpisodeOver` until `reset`. An agent that ends the episode itself (a final answer) scores it
with `evaluate(final_message)`, which scores a truncated episode 0.0 too. The check runs only
after a step that changed state: it is a function of the two states, so a step that changed
nothing keeps the last verdict.

Isolation: each ToolEnv owns its runtime (its own SQLite database or object); two instances never
share state. Reference envs (and `trusted=True`) run in this process and share the loaded code and
per-state templates (serving/_code.py), so a reset is a page copy; every other env runs
in the sandbox (sandbox/session.py), checks included: an instance on a worker shared with other
instances of its env version, each its own state reset from the worker's template (sandbox/dense.py). One ToolEnv is not thread-safe:
use one per concurrent episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from catalog.calls import CallFileError, as_tool_call
from catalog.errors import EnvforgeError
from catalog.models import Action, Outcome, StepResult
from catalog.names import is_name
from catalog.runtime import ClassRuntime, SqlRuntime, StateTemplate
from catalog.store import Catalog, CatalogError, EnvHandle
from catalog.tasks import CheckError, Task, episode_passed
from sandbox.session import SandboxRuntime
from serving._code import loaded

__all__ = ["ToolEnv", "ServingError", "EpisodeOver", "BadToolCall", "make"]


class ServingError(ValueError, EnvforgeError):
    """A serving request that cannot be met as asked (bad options, a step out of turn, a non-call)."""


class EpisodeOver(ServingError):
    """`step` after the episode ended (terminated or truncated): call `reset` first."""


class BadToolCall(ServingError):
    """A tool call that is not a call at all (no name, not an object)."""


def _invalid_arguments(name: str, problem: str) -> StepResult:
    return StepResult(observation={"error": f"Bad arguments for {name}: {problem}"}, outcome=Outcome.INVALID)


class ToolEnv:
    """One isolated instance of a catalog env; see the module docstring for the contract."""

    def __init__(self, handle: EnvHandle, *, state: str | dict[str, Any] | None = None, task: str | Task | None = None,
                 trusted: bool | None = None, max_steps: int | None = None,
                 terminate_on_success: bool = True) -> None:
        if max_steps is not None and max_steps < 1:
            raise ServingError(f"max_steps must be at least 1, got {max_steps}")
        self.handle = handle
        self.max_steps = max_steps
        self.terminate_on_success = terminate_on_success
        self.in_process = handle.reference if trusted is None else trusted
        self._loaded = loaded(handle) if self.in_process else None
        # an env's tasks and state names, read once (per process for in-process envs)
        self.tasks: Mapping[str, Task] = self._loaded.tasks if self._loaded is not None else \
            MappingProxyType({t.id: t for t in handle.tasks()})
        self.state_names: tuple[str, ...] = self._loaded.state_names if self._loaded is not None else \
            tuple(handle.state_names())
        self.task = self._task(task) if task is not None else None
        if isinstance(state, str) and not is_name(state):
            handle.state(state)  # raises: a path is refused here, not at the first reset
        self._state_choice = state
        self.tool_descriptors = {t.name: t for t in handle.manifest.tools}
        self._runtime: SqlRuntime | ClassRuntime | SandboxRuntime = \
            self._loaded.runtime() if self._loaded is not None else SandboxRuntime(handle)
        self._initial: dict[str, Any] | None = None  # in-process: the reset's snapshot (sandboxed: the worker keeps it)
        self._started = False
        self._verdict: dict[str, Any] | None = None
        self.steps = 0
        self._over: str | None = "call reset() before step()"
        self.state_name: str | None = None

    # --- the gym contract ---------------------------------------------------------------------
    @property
    def env_id(self) -> str:
        return self.handle.id

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The env's tools as OpenAI function schemas (what a chat completion's `tools` takes)."""
        return [t.openai_schema() for t in self.tool_descriptors.values()]

    @property
    def instruction(self) -> str:
        """What the agent is asked: the task's instruction, or the env's description without a task."""
        m = self.handle.manifest
        return self.task.instruction if self.task is not None else (m.description or m.name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode; `options` may name `{"task": id}` and/or `{"state": name}`.

        `seed` is recorded, not used: envs are deterministic (same call on same state, same result).
        """
        options = dict(options or {})
        unknown = sorted(set(options) - {"task", "state"})
        if unknown:
            raise ServingError(f"unknown reset options {unknown}: expected 'task' and/or 'state'")
        task = self._task(options["task"]) if "task" in options else self.task
        choice = options["state"] if "state" in options else (None if "task" in options else self._state_choice)
        state = choice if choice is not None else (task.state if task is not None else self.handle.default_state())
        if isinstance(self._runtime, SandboxRuntime):
            if isinstance(state, str) and state not in self.state_names:
                self.handle.state(state)  # raises, saying which states there are
            self._runtime.reset(state)  # a name resets from the worker's template of it
        else:
            assert self._loaded is not None
            start: StateTemplate | dict[str, Any] = self._loaded.start(state)
            self._loaded.reset(self._runtime, start)
        # only a reset that worked changes the episode's task and state
        self.task, self._state_choice = task, choice
        self.state_name = state if isinstance(state, str) else None
        # a sandboxed reset's state stays in the worker, which judges against it (`initial_state` asks for it)
        in_process = not isinstance(self._runtime, SandboxRuntime)
        self._initial = self._runtime.snapshot() if self.task is not None and in_process else None
        self._started, self._verdict = True, None
        self.steps, self._over = 0, None
        return self.instruction, {"env_id": self.env_id, "state": self.state_name,
                                  "task": self.task.id if self.task is not None else None,
                                  "instruction": self.instruction, "tools": self.tools, "seed": seed,
                                  "sandboxed": not self.in_process}

    def step(self, tool_call: dict[str, Any] | Action) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Execute one tool call; see the module docstring for reward, terminated and truncated."""
        if self._over is not None:
            raise EpisodeOver(f"the episode is over ({self._over}): call reset()")
        result = self._execute(tool_call)
        self.steps += 1
        wire = result.model_dump(mode="json", include={"outcome", "delta", "info"})  # the step's wire form
        info: dict[str, Any] = {"outcome": wire["outcome"], "delta": wire["delta"], "step": self.steps,
                                "diagnostics": {k: v for k, v in wire["info"].items() if k != "traceback"}}
        reward, terminated = 0.0, False
        at_limit = self.max_steps is not None and self.steps >= self.max_steps
        if self.task is not None:
            if result.delta or self._verdict is None:
                self._verdict = self._check()
            info["check"] = dict(self._verdict)
            solved = not self.task.refusal and episode_passed(self.task, self._verdict["passed"])
            terminated = self.terminate_on_success and solved
            reward = 1.0 if solved and (terminated or not at_limit) else 0.0
        truncated = not terminated and at_limit
        if terminated:
            self._over = "task solved"
        elif truncated:
            self._over = f"max_steps {self.max_steps} reached"
        return result.observation, reward, terminated, truncated, info

    def evaluate(self, final_message: str | None = None, *, cut_off: bool = False) -> tuple[float, dict[str, Any]]:
        """Score the episode now: 1.0 if it passed (catalog.tasks.episode_passed), else 0.0, and the details.

        `final_message` is the agent's last answer (a refusal task needs its decline); `cut_off`
        says the caller stopped the episode at its step limit (a truncated ToolEnv counts as cut off).
        `details["check"]` is the check's own verdict; `details["passed"]` the episode's.
        """
        if self.task is None:
            return 0.0, {"task": None, "passed": None, "error": "no task: nothing to check"}
        if not self._started:
            raise EpisodeOver("call reset() before evaluate()")
        if self._verdict is None:
            self._verdict = self._check()
        cut_off = cut_off or (self._over or "").startswith("max_steps")
        passed = episode_passed(self.task, self._verdict["passed"], final_message=final_message, cut_off=cut_off)
        details = {**self._verdict, "check": self._verdict["passed"], "passed": passed, "cut_off": cut_off,
                   "refusal": self.task.refusal}
        return (1.0 if passed else 0.0), details

    def state(self) -> dict[str, Any]:
        """The current state as a canonical snapshot (public state)."""
        return self._runtime.snapshot()

    def load(self, state: dict[str, Any]) -> None:
        """Go on from `state` mid-episode, as if the calls so far had led there (hybrid envs: a simulated step).

        Unlike `reset`, the episode does not start over: its task, step count and initial state stay,
        so the task's check still judges (reset's state, current state). A class env is rebuilt from
        `state` as a reset from it would build it (hidden attributes included).
        """
        if self._over is not None:
            raise EpisodeOver(f"the episode is over ({self._over}): call reset()")
        if not isinstance(state, dict):
            raise ServingError(f"a state is an object, got {type(state).__name__}")
        if isinstance(self._runtime, SandboxRuntime):
            self._runtime.load(state)
        else:
            assert self._loaded is not None
            self._loaded.reset(self._runtime, self._loaded.start(state))
        self._verdict = None

    @property
    def initial_state(self) -> dict[str, Any] | None:
        """The snapshot the episode started from (kept only with a task: the check needs it)."""
        if self.task is not None and self._started and isinstance(self._runtime, SandboxRuntime):
            return self._runtime.initial_state()  # asked of the worker once
        return self._initial

    def close(self) -> None:
        if isinstance(self._runtime, SandboxRuntime):
            self._runtime.close()
        self._over = "closed"

    def __enter__(self) -> ToolEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals ----------------------------------------------------------------------------
    def _task(self, task: str | Task) -> Task:
        if isinstance(task, Task):
            return task
        if task not in self.tasks:
            raise CatalogError(f"env {self.env_id!r} has no task {task!r}. Tasks: {', '.join(self.tasks) or 'none'}")
        return self.tasks[task]

    def _execute(self, tool_call: dict[str, Any] | Action) -> StepResult:
        if isinstance(tool_call, Action):
            return self._runtime.call(tool_call)
        try:
            call = as_tool_call(tool_call)
        except CallFileError as exc:
            raise BadToolCall(str(exc)) from None
        if call.problem:
            return _invalid_arguments(call.name, call.problem)
        return self._runtime.call(call.to_action())

    def _check(self) -> dict[str, Any]:
        """The task's verdict on (initial, current): where the env's code runs (checks are code too)."""
        assert self.task is not None and self._started
        verdict: dict[str, Any] = {"task": self.task.id, "passed": False, "error": None}
        if isinstance(self._runtime, SandboxRuntime):
            answer = self._runtime.judge(self.task)  # against the reset's state, kept in the worker
            verdict["passed"], verdict["error"] = answer.get("final") is True, answer.get("error")
            return verdict
        assert self._loaded is not None and self._initial is not None
        try:
            verdict["passed"] = self._loaded.checker(self.task)(self._initial, self._runtime.snapshot())
        except CheckError as exc:
            verdict["error"] = str(exc)
        return verdict


def make(env_id: str, *, state: str | dict[str, Any] | None = None, task: str | Task | None = None,
         catalog: Catalog | Path | str | None = None, trusted: bool | None = None, max_steps: int | None = None,
         terminate_on_success: bool = True) -> ToolEnv:
    """A new, isolated instance of env `env_id` (reset it before stepping).

    `state`: an initial state's name or a state (default: the task's state, else the env's
    default). `task`: a task id or a `Task`. `catalog`: a Catalog or its folder (default: the
    usual one, reference envs included). `trusted`: None runs reference envs in this process and
    every other env in the sandbox; True runs in this process code you vouch for; False
    sandboxes even a reference env.
    """
    if not isinstance(catalog, Catalog):
        catalog = Catalog(catalog)
    handle = catalog.get(env_id)
    return ToolEnv(handle, state=state, task=task, trusted=trusted, max_steps=max_steps,
                   terminate_on_success=terminate_on_success)
