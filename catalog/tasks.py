"""Tasks: an instruction for an agent, the initial state it starts from, and a check.

A task is solved when its check holds on the final state. A refusal task (the stated policy
forbids what the user asks) is solved by changing nothing forbidden *and* saying so: its check
often holds on the initial state, so the check alone would pay an agent that does nothing; its
`forbidden` calls show what its check must reject. `episode_passed` is the one definition of a
passed episode (serving's reward, rollouts' success, the gate's empty-episode check): the check
holds, the episode was not cut off at its step limit, and for a refusal the agent's final
message declines (`declines`). A check is the source of a function `check(initial, final) -> bool` over canonical states,
stored as text in `tasks.jsonl` (data, not code in env.py). Checks come from synthesis, so
they are untrusted like env code: compile them only where env code may run (the verifier's
sandbox; in-process for the hand-written reference envs and tests).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from catalog import pyast
from catalog.errors import EnvforgeError
from catalog.models import Action
from catalog.names import check_state_name, check_task_id

__all__ = ["Task", "CheckError", "compile_check", "declines", "episode_passed"]


class CheckError(ValueError, EnvforgeError):
    """A task's check is not a valid `check(initial, final)` function, or it failed to run."""


class Task(BaseModel):
    """One line of `tasks.jsonl`."""

    model_config = ConfigDict(extra="forbid")

    id: str
    instruction: str
    state: str = Field(description="Name of the initial state under states/.")
    check: str = Field(description="Source of `def check(initial, final) -> bool`.")
    solution: list[Action] | None = Field(None, description="A reference sequence of actions that solves the task.")
    refusal: bool = Field(False, description=(
        "The request is one the stated policy forbids: the solution only reads (or does the allowed part), so the "
        "initial state may already satisfy the check."))
    forbidden: list[Action] | None = Field(None, description=(
        "Calls that, run from the initial state instead of the solution, reach a state the check must reject (the "
        "forbidden write, the other branch): the gate runs them to confirm the check can tell."))

    @field_validator("id")
    @classmethod
    def _id_is_name(cls, value: str) -> str:
        return check_task_id(value)

    @field_validator("state")
    @classmethod
    def _state_is_name(cls, value: str) -> str:
        return check_state_name(value)  # joined into states/<name>.json: a name, never a path

    @field_validator("check")
    @classmethod
    def _defines_check(cls, source: str) -> str:
        try:
            tree = pyast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"check does not parse: {exc}") from exc
        if not any(isinstance(n, ast.FunctionDef) and n.name == "check" and len(n.args.args) == 2 for n in tree.body):
            raise ValueError("check must define `def check(initial, final)`")
        return source

    def evaluate(self, initial: dict[str, Any], final: dict[str, Any]) -> bool:
        """Run the check; raises CheckError if it crashes or returns a non-bool."""
        return self.checker()(initial, final)

    def checker(self) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
        """The check compiled once, judging as `evaluate` does (for callers that judge many states)."""
        function = compile_check(self.check)

        def judge(initial: dict[str, Any], final: dict[str, Any]) -> bool:
            try:
                verdict = function(initial, final)
            except Exception as exc:
                raise CheckError(f"Check of task {self.id!r} raised {type(exc).__name__}: {exc}") from exc
            if not isinstance(verdict, bool):
                raise CheckError(f"Check of task {self.id!r} returned {type(verdict).__name__}, not bool")
            return verdict

        return judge


@functools.lru_cache(maxsize=512)
def _check_code(source: str) -> Any:
    """A check's code object, compiled once per source (immutable: each `compile_check` runs it afresh)."""
    return compile(source, "<task check>", "exec")


def compile_check(source: str) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    """Compile a check's source into its function (a new one, with globals of its own, every time)."""
    namespace: dict[str, Any] = {}
    try:
        exec(_check_code(source), namespace)  # noqa: S102 - see module docstring
    except Exception as exc:
        raise CheckError(f"Check source failed to load: {type(exc).__name__}: {exc}") from exc
    function = namespace.get("check")
    if not callable(function):
        raise CheckError("Check source defines no `check` function")
    return function


# A decline in plain words, as an agent following a policy phrases one. Deterministic and
# documented rather than judged by a model: a reward must be the same for the same episode.
_DECLINE = re.compile(
    r"\b(?:can ?not|can't|can’t|unable|not able|won't|won’t|will not|decline[sd]?|declining|refuse[sd]?|"
    r"refusing|not (?:allowed|permitted)|(?:isn't|is not|isn’t) (?:allowed|permitted|possible)|"
    r"against (?:the |our )?polic(?:y|ies)|(?:policy|policies) (?:forbids?|prohibits?|does not allow|doesn't allow))\b",
    re.IGNORECASE)


def declines(message: str | None) -> bool:
    """Whether an agent's final message says it will not do what was asked (see `_DECLINE`)."""
    return bool(message) and _DECLINE.search(message or "") is not None


def episode_passed(task: Task, check_passed: bool, *, final_message: str | None = None,
                   cut_off: bool = False) -> bool:
    """Whether an episode on `task` earns its reward; see the module docstring."""
    if cut_off or not check_passed:
        return False
    return declines(final_message) if task.refusal else True
