"""An envforge env as a verifiers (PrimeIntellect) `StatefulToolEnv` whose rubric is the task check.

    load_environment(env_id, *, tasks=None, catalog=None, trusted=None, max_turns=10, system_prompt=None)
        -> verifiers.StatefulToolEnv

verifiers' own rollout drives it (`evaluate`, `generate`, its trainers): the dataset has one row
per task (the task's instruction as the question, its id in `info["envforge_task"]`); each rollout
gets its own `serving.gym.ToolEnv`, reset to that task in `setup_state`, which the library's
`update_tool_args` hook hands to every tool call of the rollout (the model never sees it). The
tools are the schemas envforge serves. A call that solves the task ends the rollout (the tool
messages are the final env response). At the end the episode is scored by
`ToolEnv.evaluate(final_message, cut_off=)` (catalog.tasks.episode_passed: a rollout stopped by
`max_turns`, a timeout or an error, with no final answer of the agent's, is cut off) and its
instance closed; the rubric's one reward function, `task_check`, is that score, and
`state["envforge"]` keeps the check's details. Sandboxed envs run in their sandbox as ever.

Tested against verifiers 0.1.14, the last release with `StatefulToolEnv` (0.2 to 0.3 pin
`mcp<2`, 0.4 pins `mcp==2.0.0` and `openai<3` and has no StatefulToolEnv); install with
`pip install "envforge[verifiers]"`.
"""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.store import Catalog, CatalogError, EnvHandle
from catalog.tasks import Task
from serving.adapters._tools import final_answer
from serving.gym import ServingError, ToolEnv

__all__ = ["load_environment", "TASK_KEY"]

TASK_KEY = "envforge_task"  # the task id in a dataset row's `info`
_EPISODE, _ARGS = "__envforge_episode__", "__envforge_arguments__"  # what update_tool_args hands call_tool


@dataclass
class _Episode:
    env: ToolEnv
    over: bool = False  # terminated (solved) or truncated: further calls are refused


def _library() -> Any:
    try:
        import verifiers
    except ImportError as exc:
        raise ServingError(f"the verifiers adapter needs the verifiers library ({exc}): "
                           "pip install 'envforge[verifiers]'") from None
    return verifiers


def _final_answer(state: dict[str, Any]) -> str | None:
    """The agent's last message if it ended the episode itself (an answer, no tool calls), else None."""
    completion = [m if isinstance(m, dict) else vars(m) for m in state.get("completion") or []]  # or the library's messages
    answer, cut = final_answer(completion)
    return None if cut or not completion else answer or ""


@functools.cache
def _environment_class() -> type:
    """The StatefulToolEnv subclass, defined on first use: the library is imported only then."""
    vf = _library()
    from datasets import Dataset

    class EnvforgeToolEnv(vf.StatefulToolEnv):  # type: ignore[name-defined]  # vf is the module, typed Any
        """One envforge env; every rollout its own isolated instance (see the module docstring)."""

        def __init__(self, handle: EnvHandle, tasks: list[Task], trusted: bool | None, **kwargs: Any) -> None:
            self.envforge_handle, self.envforge_trusted = handle, trusted
            self.envforge_tasks = {t.id: t for t in tasks}
            self._episodes: dict[str, _Episode] = {}
            rows = [{"question": t.instruction, "answer": "", "info": {TASK_KEY: t.id}} for t in tasks]
            dataset = Dataset.from_list(rows)
            super().__init__(tools=[], dataset=dataset, eval_dataset=dataset,
                             rubric=vf.Rubric(funcs=[self.task_check], weights=[1.0]), **kwargs)
            schemas = [t.openai_schema()["function"] for t in handle.manifest.tools]  # what envforge serves
            self.tool_defs = [vf.Tool(name=s["name"], description=s.get("description") or "",
                                      parameters=s["parameters"]) for s in schemas]
            for tool in self.tool_defs:
                self.tool_monitor_rubric.add_tool_metric(tool.name)

        async def setup_state(self, state: Any) -> None:
            info = state.get("info")
            task = info.get(TASK_KEY) if isinstance(info, dict) else None
            if not isinstance(task, str) or task not in self.envforge_tasks:
                raise ServingError(f"a rollout of {self.envforge_handle.id!r} needs info[{TASK_KEY!r}] naming one of "
                                   f"its tasks, got {task!r}")
            env = await asyncio.to_thread(ToolEnv, self.envforge_handle, task=self.envforge_tasks[task],
                                          trusted=self.envforge_trusted)
            self._episodes[state["trajectory_id"]] = _Episode(env)
            await asyncio.to_thread(env.reset)

        def update_tool_args(self, tool_name: str, tool_args: dict[str, Any], messages: Any, state: Any,
                             **kwargs: Any) -> dict[str, Any]:
            return {_EPISODE: state["trajectory_id"], _ARGS: tool_args}

        async def call_tool(self, tool_name: str, tool_args: dict[str, Any], tool_call_id: str,
                            **kwargs: Any) -> Any:
            episode = self._episodes[tool_args[_EPISODE]]
            if episode.over:
                observation: Any = {"error": "the episode is over: the task was solved or the step limit reached"}
            else:
                call = {"name": tool_name, "arguments": tool_args[_ARGS]}
                observation, _, terminated, truncated, _ = await asyncio.to_thread(episode.env.step, call)
                episode.over = terminated or truncated
            return vf.ToolMessage(role="tool", content=json.dumps(observation), tool_call_id=tool_call_id)

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            replies = await super().env_response(messages, state, **kwargs)
            episode = self._episodes.get(state["trajectory_id"])
            if episode is not None and episode.over:
                state["final_env_response"] = replies  # the library's way to end a rollout from the env
            return replies

        @vf.cleanup
        async def score_episode(self, state: Any) -> None:
            """Score the episode (its final message rendered by then) and release its instance."""
            episode = self._episodes.pop(state["trajectory_id"], None)
            if episode is None:
                return
            try:
                final = _final_answer(state)
                cut_off = final is None and not episode.over
                reward, details = await asyncio.to_thread(episode.env.evaluate, final, cut_off=cut_off)
                state["envforge"] = {"reward": reward, **details}
            finally:
                await asyncio.to_thread(episode.env.close)

        @vf.teardown
        async def close_episodes(self) -> None:
            while self._episodes:
                _, episode = self._episodes.popitem()
                await asyncio.to_thread(episode.env.close)

        async def task_check(self, state: Any) -> float:
            """The reward: 1.0 if the episode passed the task's check (catalog.tasks.episode_passed)."""
            return float((state.get("envforge") or {}).get("reward", 0.0))

    return EnvforgeToolEnv


def load_environment(env_id: str, *, tasks: list[str | Task] | None = None, catalog: Catalog | Path | str | None = None,
                     trusted: bool | None = None, max_turns: int = 10, system_prompt: str | None = None,
                     **kwargs: Any) -> Any:
    """A verifiers environment over env `env_id`, one dataset row per task (default: all its tasks).

    `tasks` names the env's tasks by id, or gives `Task`s of your own (distinct ids). `trusted` as in `serving.make`; `max_turns` is verifiers' limit on model turns; other keyword
    arguments go to `StatefulToolEnv` (e.g. `timeout_seconds`).
    """
    if not isinstance(catalog, Catalog):
        catalog = Catalog(catalog)
    handle = catalog.get(env_id)
    known = {t.id: t for t in handle.tasks()}
    chosen = list(known.values()) if tasks is None else list(tasks)
    unknown = [t for t in chosen if not isinstance(t, Task) and t not in known]
    if unknown:
        raise CatalogError(f"env {env_id!r} has no task {unknown[0]!r}. Tasks: {', '.join(known) or 'none'}")
    resolved = [t if isinstance(t, Task) else known[t] for t in chosen]
    if not resolved:
        raise CatalogError(f"env {env_id!r} has no tasks to train on")
    if len({t.id for t in resolved}) != len(resolved):
        raise CatalogError("each task of a verifiers environment needs its own id")
    cls = _environment_class()
    return cls(handle, resolved, trusted, max_turns=max_turns, system_prompt=system_prompt, **kwargs)
