"""Execute environments: `reset(state)`, then `call(action) -> StepResult`.

Two runtimes share one contract (the `Runtime` protocol):
- `SqlRuntime` for SQL-state envs (an `Env` subclass over SQLModel tables in in-memory SQLite);
  reset restores the main database from a per-state template with SQLite's backup API.
- `ClassRuntime` for class-based envs (state in instance attributes, EnvScaler/BFCL style).

`SqlRuntime` computes the delta from change tracking, so a call costs in proportion to what it
changed; `ClassRuntime` diffs the lossless encoding of the instance's attributes after a call
against the one before it (catalog/state/_tracking.py). An exception inside a tool never escapes: it
becomes a result; SQL envs roll the call back, class envs keep what the code wrote (faithful).
Runtimes hold no global state, so one can run inside a sandbox worker process.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, Literal, Protocol

from catalog.models import Action, Convention, FailureConvention, StepResult, ToolDescriptor
from catalog.runtime.calls import outcome_of
from catalog.runtime.classes import ClassRuntime, InitMode
from catalog.runtime.loading import EnvLoadError, find_entry, load_module, local_module_names
from catalog.runtime.sql import SqlRuntime, StateTemplate
from catalog.state import _sqlstate

__all__ = ["Runtime", "SqlRuntime", "ClassRuntime", "StateTemplate", "StateError", "EnvLoadError", "load_module",
           "find_entry", "runtime_for", "outcome_of", "local_module_names", "database_engine"]

StateError = _sqlstate.StateError
database_engine = _sqlstate.database_engine


class Runtime(Protocol):
    """What every runtime offers; verifier and simulators depend only on this."""

    tools: dict[str, ToolDescriptor]

    def reset(self, state: Any) -> None: ...

    def call(self, action: Action | dict[str, Any], *, snapshot: bool = False) -> StepResult: ...

    def snapshot(self, hidden: bool = False) -> dict[str, Any]: ...


def runtime_for(module: ModuleType, kind: Literal["sql", "class"], entry: str | None = None, *,
                init: InitMode = "auto", failure_exceptions: Sequence[str] = (), convention: Convention = "class",
                failure: FailureConvention | dict[str, Any] | None = None,
                strict_args: bool = True, engine: Any = None) -> SqlRuntime | ClassRuntime:
    """Build the runtime of an env module: SQL, or a class (an imported convention made one).

    `strict_args=False` (imported envs): ill-typed calls run as Python would run them, flagged
    `info["ill_typed"]`; strict (synthesized and reference envs): they are `invalid`. `engine`: see
    `SqlRuntime` (SQL envs only).
    """
    from catalog.importing.conventions import ConventionError, env_class

    if kind == "sql":
        return SqlRuntime(find_entry(module, entry), strict_args=strict_args, engine=engine)
    if isinstance(failure, dict):
        failure = FailureConvention.model_validate(failure)
    if convention == "class":
        target = find_entry(module, entry)
    else:
        try:
            target = env_class(module, convention, entry)
        except ConventionError as exc:
            raise EnvLoadError(str(exc)) from exc
    return ClassRuntime(target, init=init if convention == "class" else "load_scenario",
                        failure_exceptions=failure_exceptions, failure=failure, strict_args=strict_args)
