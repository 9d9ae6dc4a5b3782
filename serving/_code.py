"""Env code loaded once per process and shared by every instance of that env.

Serving makes many instances of few envs (one per episode, per MCP session, per rollout). Loading
`env.py` and building a state's SQLite template are the slow parts of starting one, and both
depend only on the env's files, so they are done once per (env folder, content hash) and state:
each instance gets its own runtime (its own database or object), reset from the shared template
with SQLite's backup API (catalog/runtime.py). Only code that may run in this process comes here
(reference envs, or envs the caller vouches for); the caller decides that.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from catalog.runtime import ClassRuntime, SqlRuntime, StateTemplate, database_engine, load_module, runtime_for
from catalog.store import EnvHandle, runtime_options
from catalog.tasks import Task

__all__ = ["LoadedEnv", "loaded"]


class LoadedEnv:
    """One env's module and its state templates; `runtime()` builds an instance's own runtime."""

    def __init__(self, handle: EnvHandle) -> None:
        self.handle = handle
        name = f"envforge_served_{handle.id.replace('-', '_').replace('.', '_')}"
        self.module = load_module(handle.path / "env.py", name)
        self.tasks: Mapping[str, Task] = MappingProxyType({t.id: t for t in handle.tasks()})  # shared: read-only
        self.state_names: tuple[str, ...] = tuple(handle.state_names())
        m = handle.manifest
        # SQL envs: one engine for all instances, each its own database, compiled statements shared
        engine = database_engine() if m.kind == "sql" else None
        # owns the templates and is never handed out: instances are its siblings
        self._builder = runtime_for(self.module, m.kind, m.entry, **runtime_options(m), engine=engine)
        self._named: dict[str, StateTemplate | dict[str, Any]] = {}
        self._checkers: dict[tuple[str, str], Callable[[dict[str, Any], dict[str, Any]], bool]] = {}
        self.lock = threading.Lock()  # template building, and backups out of a shared template

    def runtime(self) -> SqlRuntime | ClassRuntime:
        """A new instance's own runtime (reset it first): a sibling of the builder, so cheap to make."""
        with self.lock:
            return self._builder.sibling()

    def start(self, state: str | dict[str, Any]) -> StateTemplate | dict[str, Any]:
        """What `runtime.reset` takes for `state` (a state name or a state): built once, then shared."""
        with self.lock:
            if isinstance(state, str):
                if state not in self._named:
                    self._named[state] = self._template(self.handle.state(state))
                return self._named[state]
            return self._template(state)

    def _template(self, state: dict[str, Any]) -> StateTemplate | dict[str, Any]:
        # SQL envs: a database copied page by page on reset; class envs decode the state afresh on
        # each reset (codec.decode builds new objects), so the dict itself is the template.
        return self._builder.template(state) if isinstance(self._builder, SqlRuntime) else state

    def checker(self, task: Task) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
        """`task`'s check compiled once for every instance (compiling costs more than judging)."""
        with self.lock:
            key = (task.id, task.check)
            if key not in self._checkers:
                self._checkers[key] = task.checker()
            return self._checkers[key]

    def reset(self, runtime: SqlRuntime | ClassRuntime, start: StateTemplate | dict[str, Any]) -> None:
        """Reset an instance's runtime to a template (the lock keeps concurrent backups of one template apart)."""
        with self.lock:
            if isinstance(runtime, SqlRuntime):
                runtime.reset(start)
            elif isinstance(start, dict):
                runtime.reset(start)
            else:  # template() gives a class env its state dict: a template here is a caller's mistake
                raise TypeError(f"a class env resets to a state dict, not a {type(start).__name__}")


_LOADED: dict[tuple[str, str | None], LoadedEnv] = {}
_LOADED_LOCK = threading.Lock()


def loaded(handle: EnvHandle) -> LoadedEnv:
    """The process-wide LoadedEnv of `handle`'s folder as it is now (an edited env loads afresh)."""
    key = (str(handle.path.resolve()), handle.manifest.content_hash)
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = LoadedEnv(handle)
        return _LOADED[key]
