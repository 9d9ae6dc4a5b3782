"""The runtime of SQL-state envs: an `Env` subclass over SQLModel tables in in-memory SQLite."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import sessionmaker
from sqlalchemy.types import TypeDecorator
from sqlmodel import Session, SQLModel

from catalog.envkit import Env, EnvMeta, ToolError
from catalog.models import Action, Outcome, StepResult
from catalog.runtime.calls import _argument_problem, _as_action, _crash, _invalid, _signatures, outcome_of
from catalog.runtime.loading import EnvLoadError
from catalog.state import _sqlstate
from catalog.state.jsonable import canonical_json, to_jsonable
from catalog.tools.schema import describe_tool


@dataclass(frozen=True)
class StateTemplate:
    """A database built once from a state; resets copy it page by page (SQLite backup API)."""

    key: str
    connection: sqlite3.Connection
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # collections read right after a reset to it


# --- SQL-state envs ---------------------------------------------------------------------------
class SqlRuntime:
    """Runs an `Env` subclass over an in-memory SQLite database."""

    def __init__(self, env_class: type[Env], *, strict_args: bool = True, engine: Any = None) -> None:
        """`strict_args`: an ill-typed call is `invalid` and does not run (False: it runs, flagged).

        `engine`: a `_sqlstate.database_engine()` this runtime takes its own database from, shared
        by the runtimes of one env so they share compiled statements (default: an engine of its own).
        """
        if not (isinstance(env_class, type) and issubclass(env_class, Env)):
            raise EnvLoadError(f"{env_class!r} is not an Env subclass")
        if not env_class.tables:
            raise EnvLoadError(f"{env_class.__name__}.tables is empty: list the env's SQLModel tables")
        self.env_class = env_class
        self.strict_args = strict_args
        self._metadatas = _metadatas([*env_class.tables, EnvMeta])
        self.codecs = {
            t.name: _sqlstate.TableCodec.of(t) for md in self._metadatas for t in md.sorted_tables
        }
        self.tools = {name: describe_tool(name, getattr(env_class, name), kind)
                      for name, kind in env_class.__tools__.items()}
        self._signatures = _signatures(env_class, self.tools)
        self._shared_engine = engine
        self._open(schema_from=None)

    def _open(self, schema_from: sqlite3.Connection | None) -> None:
        """Give this runtime its own database: schema (DDL, or copied), change tracking, sessions."""
        self._templates: dict[str, StateTemplate] = {}
        bind: Any
        if self._shared_engine is None:
            self._engine, self._raw = _sqlstate.memory_engine()
            bind = self._engine
        else:
            self._engine = self._shared_engine
            bind = self._connection = self._engine.connect()  # held for the runtime's life: its database
            self._raw = bind.connection.dbapi_connection
        if schema_from is not None:
            schema_from.backup(self._raw)  # the same schema by page copy (resets replace the rows anyway)
        else:
            self._create_schema(bind)
            if bind is not self._engine:
                bind.commit()
        self._tracker = _sqlstate.ChangeTracker(self._raw, self.codecs)
        self._sessions = sessionmaker(bind, class_=Session, expire_on_commit=False)
        event.listen(self._sessions, "loaded_as_persistent", _pin)
        event.listen(self._sessions, "pending_to_persistent", _pin)
        event.listen(self._sessions, "before_flush", _canonicalize_pending)
        self._session: Session | None = None
        self._env: Env | None = None
        # With `reuse_snapshots`, a snapshot reuses the collections of tables no call has touched
        # since they were last read (the sandbox worker, which only encodes them: callers that may
        # mutate a state keep the default, a fresh read every time).
        self.reuse_snapshots = False
        self._known: dict[str, dict[str, Any]] = {}
        self._pristine: StateTemplate | None = None  # the template just reset to, until the first call

    def sibling(self) -> SqlRuntime:
        """Another runtime of this env with a database of its own (reset it before use).

        It reuses what depends only on the env class (tool descriptors, signatures, codecs, the
        schema, copied rather than created) and, with a shared `engine`, the compiled statements:
        serving makes one per env instance. The two never share state.
        """
        twin = copy.copy(self)
        twin._open(schema_from=self._raw)
        return twin

    def _create_schema(self, engine: Any) -> None:
        for metadata in self._metadatas:
            metadata.create_all(engine)

    def template(self, state: dict[str, Any]) -> StateTemplate:
        """Build (or reuse) the template database of `state`; raises StateError if it does not fit."""
        key = hashlib.sha256(canonical_json(to_jsonable(state)).encode()).hexdigest()
        if key not in self._templates:
            engine, raw = _sqlstate.memory_engine()
            self._create_schema(engine)
            _sqlstate.load_rows(engine, self.codecs, state)
            self._templates[key] = StateTemplate(key, raw)
        return self._templates[key]

    def reset(self, state: dict[str, Any] | StateTemplate) -> None:
        """Make `state` the current state (a dict, or a template from `template()`)."""
        template = state if isinstance(state, StateTemplate) else self.template(state)
        if self._session is not None:
            self._session.close()
        self._raw.rollback()
        template.connection.backup(self._raw)
        self._known, self._pristine = dict(template.tables), template
        # Loaded rows stay in memory across calls (no reload after each commit, and pinned so the
        # identity map, which holds objects weakly, keeps them): every write goes through this one
        # session, and a rollback still expires everything, so nothing is served stale.
        self._session = self._sessions()
        self._env = self.env_class(self._session)

    def _require_reset(self) -> tuple[Session, Env]:
        if self._session is None or self._env is None:
            raise RuntimeError("Call reset(state) before call() or snapshot()")
        return self._session, self._env

    def call(self, action: Action | dict[str, Any], *, snapshot: bool = False) -> StepResult:
        """Execute one tool call; never raises for anything the tool does."""
        session, env = self._require_reset()
        action = _as_action(action)
        if action.name not in self.tools:
            return _invalid(f"Unknown tool {action.name!r}. Available: {', '.join(self.tools)}")
        method = getattr(env, action.name)
        problem, ill_typed = _argument_problem(self._signatures[action.name], action.arguments, self.strict_args)
        if problem:
            return _invalid(f"Bad arguments for {action.name}: {problem}", ill_typed)
        self._pristine = None
        try:
            observation = to_jsonable(method(**action.arguments))
            session.flush()
            delta = self._tracker.collect()
            self._forget(self._tracker.touched)
            session.commit()
            result = StepResult(observation=observation, delta=delta, outcome=outcome_of(observation))
        except ToolError as exc:
            session.rollback()
            self._forget(self._tracker.pending())
            result = StepResult(observation={"success": False, "error": str(exc)}, outcome=Outcome.FAILURE)
        except Exception as exc:
            session.rollback()
            self._forget(self._tracker.pending())
            result = _crash(exc)
        if ill_typed:
            result.info["ill_typed"] = ill_typed
        if snapshot:
            result.state = self.snapshot()
        return result

    def snapshot(self, hidden: bool = False) -> dict[str, Any]:
        """Return the full current state as canonical JSON (SQL envs have no hidden state)."""
        self._require_reset()
        if not self.reuse_snapshots:
            return _sqlstate.snapshot(self._raw, self.codecs)
        if not self._tracker.intact():  # the env dropped a tracking trigger: no table counts as unchanged
            self._known, self._pristine = {}, None
        state = _sqlstate.snapshot(self._raw, self.codecs, self._known)
        if self._pristine is not None:
            self._pristine.tables.update(self._known)
        return state

    def _forget(self, tables: list[str]) -> None:
        """Tables a call touched: read them again at the next snapshot."""
        for name in tables:
            self._known.pop(name, None)


def _pin(session: Session, obj: Any) -> None:
    """Keep a strong reference: the identity map holds objects weakly, and reloading is slow."""
    session.info.setdefault("pinned", []).append(obj)


_COERCIONS: dict[type, list[tuple[str, str]]] = {}


def _canonicalize_pending(session: Session, _context: Any, _instances: Any) -> None:
    """Before writing, give assigned values the type the database hands back.

    Objects stay loaded across calls, so an int assigned to a float column (or a +02:00 time to
    a UTC column) would otherwise be seen as such by later calls while the state holds 12.0 (or
    the UTC time).
    """
    for obj in (*session.new, *session.dirty):
        cls = type(obj)
        if cls not in _COERCIONS:
            plan = []
            for column in sa_inspect(cls).columns:
                base = column.type.impl_instance if isinstance(column.type, TypeDecorator) else column.type
                try:
                    python_type = base.python_type
                except NotImplementedError:
                    continue
                if python_type is float:
                    plan.append((column.key, "float"))
                elif python_type is int:
                    plan.append((column.key, "int"))
                elif python_type is dt.datetime and getattr(base, "timezone", False):
                    plan.append((column.key, "utc"))
            _COERCIONS[cls] = plan
        for name, kind in _COERCIONS[cls]:
            value = obj.__dict__.get(name)
            if value is None:
                continue
            if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
                setattr(obj, name, float(value))
            elif kind == "int" and isinstance(value, bool):
                setattr(obj, name, int(value))
            elif kind == "utc" and isinstance(value, dt.datetime) and value.utcoffset() not in (None, dt.timedelta(0)):
                setattr(obj, name, value.astimezone(dt.UTC))


def _metadatas(tables: Sequence[type[SQLModel]]) -> list[Any]:
    seen: list[Any] = []
    for table in tables:
        metadata = table.metadata
        if not any(m is metadata for m in seen):
            seen.append(metadata)
    return seen
