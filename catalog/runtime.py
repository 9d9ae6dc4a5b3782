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

import ast
import copy
import datetime as dt
import hashlib
import importlib.util
import inspect
import sqlite3
import sys
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from sqlalchemy import event
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import sessionmaker
from sqlalchemy.types import TypeDecorator
from sqlmodel import Session, SQLModel

from catalog.state import _sqlstate, _tracking, codec

from catalog import pyast
from catalog.tools.argcheck import Form, compile_annotation, form_problem
from catalog.envkit import Env, EnvMeta, ToolError
from catalog.errors import EnvforgeError
from catalog.state.jsonable import canonical_json, to_jsonable
from catalog.models import Action, Convention, FailureConvention, Outcome, StepResult, ToolDescriptor
from catalog.tools.schema import describe_tool
from catalog.state.delta import Delta

__all__ = ["Runtime", "SqlRuntime", "ClassRuntime", "StateTemplate", "StateError", "EnvLoadError", "load_module",
           "find_entry", "runtime_for", "outcome_of", "local_module_names", "database_engine"]

StateError = _sqlstate.StateError
database_engine = _sqlstate.database_engine


class EnvLoadError(RuntimeError, EnvforgeError):
    """An environment module cannot be loaded or does not follow a known convention."""


class Runtime(Protocol):
    """What every runtime offers; verifier and simulators depend only on this."""

    tools: dict[str, ToolDescriptor]

    def reset(self, state: Any) -> None: ...

    def call(self, action: Action | dict[str, Any], *, snapshot: bool = False) -> StepResult: ...

    def snapshot(self, hidden: bool = False) -> dict[str, Any]: ...


def local_module_names(folder: Path) -> set[str]:
    """Top-level names of an env folder's own modules and packages (helpers beside env.py)."""
    return {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a Python file as a fresh module (its folder is importable for sibling modules)."""
    path = Path(path).resolve()
    name = name or f"envforge_env_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EnvLoadError(f"Cannot import {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = path.parent
    # Helper modules beside env.py are this env's own: hide same-named modules other envs loaded,
    # and forget this env's after loading (the env module keeps its references).
    local_names = local_module_names(folder) - {path.stem}
    stashed = {k: v for k, v in sys.modules.items() if k.split(".")[0] in local_names}
    for key in stashed:
        del sys.modules[key]
    sys.modules[name] = module
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise EnvLoadError(f"Importing {path} failed: {_failing_module(exc, path)}{type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(folder))
        for key in [k for k in sys.modules if k.split(".")[0] in local_names]:
            del sys.modules[key]
        sys.modules.update(stashed)
    return module


def _failing_module(exc: BaseException, path: Path) -> str:
    """`imports a module that fails (helper.py): ` when the error came from a module env.py imports."""
    frames = [f.filename for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).is_relative_to(path.parent)]
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).is_relative_to(path.parent):
        frames.append(exc.filename)
    if frames and Path(frames[-1]) != path:
        return f"it imports a module that fails ({Path(frames[-1]).relative_to(path.parent)}): "
    return ""


def find_entry(module: ModuleType, entry: str | None = None) -> type:
    """Return the env class of a module: `entry` by name, else its single `Env` subclass."""
    if entry:
        found = getattr(module, entry, None)
        if not isinstance(found, type):
            raise EnvLoadError(f"{module.__file__} has no class {entry!r}")
        return found
    candidates = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Env) and v is not Env
                  and v.__module__ == module.__name__]
    if len(candidates) != 1:
        names = [c.__name__ for c in candidates]
        raise EnvLoadError(f"{module.__file__}: expected exactly one Env subclass, found {names or 'none'}; name one")
    return candidates[0]


# --- shared call handling ---------------------------------------------------------------------
def _as_action(action: Action | dict[str, Any]) -> Action:
    return action if isinstance(action, Action) else Action.model_validate(action)


@dataclass(frozen=True)
class _ToolSignature:
    """A tool's signature, whether it takes `self`, and its parameters' compiled type hints."""

    signature: inspect.Signature
    takes_self: bool
    forms: dict[str, Form]


def _signatures(env_class: type, names: Any) -> dict[str, _ToolSignature]:
    """Each tool's signature and hints, computed once (inspect is slow).

    String hints (`from __future__ import annotations`) resolve in the tool's module globals.
    """
    signatures = {}
    for name in names:
        static = isinstance(inspect.getattr_static(env_class, name), (staticmethod, classmethod))
        function = getattr(env_class, name)
        signature = inspect.signature(function)
        namespace = getattr(inspect.unwrap(function), "__globals__", None)
        forms = {p.name: compile_annotation(p.annotation, namespace) for p in signature.parameters.values()
                 if p.annotation is not p.empty}
        signatures[name] = _ToolSignature(signature, not static, forms)
    return signatures


def _bind_error(signature: _ToolSignature, arguments: dict[str, Any]) -> str | None:
    """Why Python itself would refuse the call (a missing or unknown argument), or None.

    Python raises TypeError before the tool's body runs, so this is `invalid` in every mode.
    """
    try:
        if signature.takes_self:
            signature.signature.bind(None, **arguments)
        else:
            signature.signature.bind(**arguments)
    except TypeError as exc:
        return str(exc)
    return None


def _ill_typed(signature: _ToolSignature, arguments: dict[str, Any]) -> str | None:
    """The first argument that does not fit its parameter's type hint, or None."""
    for name, value in arguments.items():
        form = signature.forms.get(name)
        problem = form_problem(name, form, value) if form is not None else None
        if problem:
            return problem
    return None


def _argument_problem(signature: _ToolSignature, arguments: dict[str, Any], strict: bool) -> tuple[str | None, str | None]:
    """(why the call is invalid, why it is ill-typed) for strict or faithful checking.

    Strict: an ill-typed call is invalid too. Faithful: it is only flagged, and runs.
    """
    problem = _bind_error(signature, arguments)
    if problem:
        return problem, None
    ill_typed = _ill_typed(signature, arguments)
    return (ill_typed if strict else None), ill_typed


def outcome_of(observation: Any, failure: FailureConvention | None = None) -> Outcome:
    """A dict with `success: False`, or an `error` key and no `success: True`, is a failure.

    An env's declared failure convention adds its error keys (dict keys that mean failure) and
    error prefixes (a str result starting with one is a failure: `"Error: no such order"`).
    """
    if isinstance(observation, dict):
        if observation.get("success") is False:
            return Outcome.FAILURE
        keys = {"error", *(failure.error_keys if failure else ())} - {"success"}
        if any(key in observation for key in keys) and observation.get("success") is not True:
            return Outcome.FAILURE
    elif isinstance(observation, str) and failure is not None and \
            any(observation.startswith(prefix) for prefix in failure.error_prefixes):
        return Outcome.FAILURE
    return Outcome.SUCCESS


def _crash(exc: BaseException) -> StepResult:
    return StepResult(
        observation={"error": f"{type(exc).__name__}: {exc}"},
        delta=[],
        outcome=Outcome.CRASH,
        info={"exception": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc(limit=8)},
    )


def _invalid(message: str, ill_typed: str | None = None) -> StepResult:
    return StepResult(observation={"error": message}, delta=[], outcome=Outcome.INVALID,
                      info={"ill_typed": ill_typed} if ill_typed else {})


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


# --- class-based envs -------------------------------------------------------------------------
InitMode = Literal["auto", "constructor", "envscaler", "setattr", "load_scenario"]


class ClassRuntime:
    """Runs a class whose instance attributes are the state and whose public methods are tools.

    Execution is faithful: the tools run on exactly the values the class built (no wrapped
    containers), and a tool that raises keeps whatever it wrote before raising, as the class
    does outside envforge. That call's result is a crash (or a failure for a declared failure
    exception) and its delta is what the code changed. (SQL envs instead roll the call's
    transaction back.) State and results are encoded losslessly (catalog/state/codec.py); private
    attributes are hidden state: `snapshot(hidden=True)`, `StepResult.info["hidden_delta"]`.
    """

    def __init__(self, env_class: type, *, init: InitMode = "auto", failure_exceptions: Sequence[str] = (),
                 failure: FailureConvention | None = None, strict_args: bool = True) -> None:
        """Prepare the runtime of a class env (it is instantiated at each reset).

        `strict_args`: an ill-typed call is `invalid` and does not run; False (imported envs): it
        runs as Python would, with `info["ill_typed"]`. `failure`: how the env signals failure.
        """
        self.env_class = env_class
        self.strict_args = strict_args
        self.init = _init_mode(env_class) if init == "auto" else init
        self.failure = failure
        self.failure_exceptions = frozenset(failure_exceptions) | frozenset(failure.exceptions if failure else ()) | \
            {"ToolError"}
        self.tools = {name: describe_tool(name, member, None) for name, member in _public_methods(env_class)}
        if not self.tools:
            raise EnvLoadError(f"{env_class.__name__} has no public methods to use as tools")
        self._signatures = _signatures(env_class, self.tools)
        self.types = _tracking.env_type_names(env_class)
        self._instance: Any = None
        self._encoded = _tracking.Encoded({}, {})

    def sibling(self) -> ClassRuntime:
        """Another runtime of this class with no instance yet (reset it before use).

        It reuses the tool descriptors, signatures and type names: serving makes one per env instance.
        """
        twin = copy.copy(self)
        twin._instance, twin._encoded = None, _tracking.Encoded({}, {})
        return twin

    @property
    def opaque(self) -> tuple[str, ...]:
        """Hidden attributes with no encoding (left out of hidden state: a lock, an open file)."""
        return self._encoded.opaque

    def reset(self, state: dict[str, Any]) -> None:
        """Build a fresh instance and load `state` into it.

        `state` is an init config, or a snapshot for classes loaded by `setattr`/`envscaler` (a
        `snapshot(hidden=True)` restores hidden state too).
        """
        if not isinstance(state, dict):
            raise StateError(f"An init config must be an object, got {type(state).__name__}")
        try:
            config = codec.decode(state, self.types)
        except ValueError as exc:
            raise StateError(f"The state of {self.env_class.__name__} does not decode: {exc}") from exc
        try:
            if self.init == "load_scenario":
                instance = self.env_class()
                instance._load_scenario(config)
            elif self.init == "constructor":
                instance = self.env_class(config)
            elif self.init == "envscaler":
                # EnvScaler's loader: construct with the config, then set every key as an attribute
                # (a copy of its own, so an attribute is not the config object the constructor kept).
                instance = self.env_class(config)
                for key, value in codec.decode(state, self.types).items():
                    setattr(instance, key, value)
            else:
                instance = self.env_class()
                for key, value in config.items():
                    setattr(instance, key, value)
        except Exception as exc:
            raise StateError(f"{self.env_class.__name__} rejected the init config ({self.init}): "
                             f"{type(exc).__name__}: {exc}") from exc
        self._encoded = self._encode(instance)
        self._instance = instance

    def _encode(self, instance: Any) -> _tracking.Encoded:
        try:
            return _tracking.encode_state(instance, self.types)
        except codec.UnencodableValue as exc:
            raise StateError(f"{self.env_class.__name__} keeps a value with no encoding in its state: {exc}") from exc

    def call(self, action: Action | dict[str, Any], *, snapshot: bool = False) -> StepResult:
        """Execute one tool call; never raises for anything the tool does."""
        if self._instance is None:
            raise RuntimeError("Call reset(state) before call() or snapshot()")
        action = _as_action(action)
        if action.name not in self.tools:
            return _invalid(f"Unknown tool {action.name!r}. Available: {', '.join(self.tools)}")
        method = getattr(self._instance, action.name)
        problem, ill_typed = _argument_problem(self._signatures[action.name], action.arguments, self.strict_args)
        if problem:
            return _invalid(f"Bad arguments for {action.name}: {problem}", ill_typed)
        try:
            observation = codec.encode(method(**action.arguments), self.types)
            result = StepResult(observation=observation, outcome=outcome_of(observation, self.failure))
        except Exception as exc:
            if type(exc).__name__ in self.failure_exceptions:
                result = StepResult(observation={"success": False, "error": str(exc)}, outcome=Outcome.FAILURE,
                                    info={"exception": type(exc).__name__})
            else:
                result = _crash(exc)
        before = self._encoded
        try:
            self._encoded = self._encode(self._instance)
        except StateError as exc:
            result = _crash(exc)
            result.info["state_unencodable"] = True
        result.delta, hidden = _tracking.state_delta(before, self._encoded)
        if hidden:
            result.info["hidden_delta"] = Delta.dump_python(hidden, mode="json")
        if ill_typed:
            result.info["ill_typed"] = ill_typed
        if snapshot:
            result.state = self._encoded.public if self._encoded is not before else self.snapshot()
        return result

    def snapshot(self, hidden: bool = False) -> dict[str, Any]:
        """The encoded public state (attributes in the order the instance set them).

        With `hidden`, the hidden attributes follow them. The caller owns the returned object.
        """
        if self._instance is None:
            raise RuntimeError("Call reset(state) before call() or snapshot()")
        return self._encoded.state(hidden)


def _public_methods(env_class: type) -> list[tuple[str, Callable[..., Any]]]:
    methods = []
    for name, member in inspect.getmembers(env_class, inspect.isfunction):
        if not name.startswith("_"):
            methods.append((name, member))
    order = {name: i for i, name in enumerate(_definition_order(env_class))}
    return sorted(methods, key=lambda item: order.get(item[0], len(order)))


def _definition_order(env_class: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(env_class.__mro__):
        names.extend(n for n in vars(klass) if n not in names)
    return names


def _init_mode(env_class: type[Any]) -> InitMode:
    """Pick how a class loads its init config.

    `_load_scenario` if defined; for a constructor that takes the config, `constructor` if it
    reads the config and `envscaler` if it ignores it or only stores it (EnvScaler classes);
    `setattr` when the constructor takes no config.
    """
    if callable(getattr(env_class, "_load_scenario", None)):
        return "load_scenario"
    try:
        params = list(inspect.signature(env_class).parameters.values())
    except (TypeError, ValueError):
        return "setattr"
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not required:
        return "setattr"
    return "constructor" if _reads_parameter(env_class.__init__, required[0].name) else "envscaler"


def _reads_parameter(function: Callable[..., Any], name: str) -> bool:
    """True if `function` uses parameter `name` other than storing it as-is (`self.x = name`)."""
    try:
        tree = pyast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return True
    stored = {id(node.value) for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name}
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in stored
               for node in ast.walk(tree))


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

