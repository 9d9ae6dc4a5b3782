"""The runtime of class-based envs: state in instance attributes, tools as public methods (faithful)."""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, Literal

from catalog import pyast
from catalog.models import Action, FailureConvention, Outcome, StepResult
from catalog.runtime.calls import _argument_problem, _as_action, _crash, _invalid, _signatures, outcome_of
from catalog.runtime.loading import EnvLoadError
from catalog.state import _tracking, codec
from catalog.state._sqlstate import StateError
from catalog.state.delta import Delta
from catalog.state.patches import patch, subtrees
from catalog.state.rewind import ClassTemplate, put_back, same_order
from catalog.state.touches import ToolTouches, tool_touches
from catalog.tools.schema import describe_tool

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
                 failure: FailureConvention | None = None, strict_args: bool = True, track: bool = True) -> None:
        """Prepare the runtime of a class env (it is instantiated at each reset).

        `strict_args`: an ill-typed call is `invalid` and does not run; False (imported envs): it
        runs as Python would, with `info["ill_typed"]`. `failure`: how the env signals failure.
        `track`: diff only what a tool is proven able to write (catalog/state/touches.py), else the whole state.
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
        self._methods = dict(_public_methods(env_class))
        self._touches: dict[str, ToolTouches | None] = {
            name: tool_touches(env_class, member) if track else None for name, member in self._methods.items()}
        self.types = _tracking.env_type_names(env_class)
        self._instance: Any = None
        self._encoded = _tracking.Encoded({}, {})
        self.tracked_calls = 0  # calls whose delta came from the tracked subtrees alone (bench/class_state.py)
        self.rewinds = 0  # resets done by putting back what tracked calls wrote (catalog/state/rewind.py)
        self.rewind = True  # False: every reset rebuilds (bench/bigstate.py compares)
        self._from: ClassTemplate | None = None  # the template of the last reset, if it was one
        # since that reset, what the calls may have written (attributes read, write paths); None: not all tracked
        self._since: list[tuple[frozenset[str], list[tuple[Any, ...]]]] | None = None
        self._subtrees: list[tuple[Any, ...]] | None = None  # what the last call rewrote, if it was tracked

    def sibling(self, *, track: bool = True) -> ClassRuntime:
        """Another runtime of this class with no instance yet (reset it before use).

        It reuses the tool descriptors, signatures and type names: serving makes one per env instance.
        `track=False`: the twin always encodes and diffs the whole state (bench/class_state.py compares).
        """
        twin = copy.copy(self)
        if not track:
            twin._touches = dict.fromkeys(self._touches)
        twin._instance, twin._encoded, twin.tracked_calls = None, _tracking.Encoded({}, {}), 0
        twin._from, twin._since, twin.rewinds = None, None, 0
        return twin

    @property
    def opaque(self) -> tuple[str, ...]:
        """Hidden attributes with no encoding (left out of hidden state: a lock, an open file)."""
        return self._encoded.opaque

    def template(self, state: dict[str, Any]) -> ClassTemplate:
        """`state` as a template: resetting to it again costs what the calls since wrote (catalog/state/rewind.py)."""
        return ClassTemplate(state)

    def reset(self, state: dict[str, Any] | ClassTemplate) -> None:
        """Build a fresh instance and load `state` into it.

        `state` is an init config, or a snapshot for classes loaded by `setattr`/`envscaler` (a
        `snapshot(hidden=True)` restores hidden state too), or a `template()` of one: reset to the
        template it was last reset to, with every call since tracked, the instance is rewound in
        place instead (the same state a fresh build gives, proven or not done).
        """
        if isinstance(state, ClassTemplate):
            if self._rewound(state):
                self.rewinds += 1
                return
            self._build(state.config)
            if self._encoded.refs or self._encoded.opaque:
                state.stable = False  # shared structure or values with no encoding: never rewound
            else:
                state.built(self._encoded.public, self._encoded.hidden)
                self._encoded.texts.update(state.texts if state.stable is not False else {})
            self._from, self._since = state, []
            return
        self._build(state)
        self._from, self._since = None, None

    def _rewound(self, template: ClassTemplate) -> bool:
        """Put back what the calls since the reset to `template` wrote; False (nothing proven) to rebuild."""
        if not self.rewind or template is not self._from or self._since is None or not template.stable \
                or self._instance is None:
            return False
        reads = frozenset(name for used, _ in self._since for name in used)
        paths = sorted({tuple(p) for _, written in self._since for p in written}, key=len)
        attributes = vars(self._instance)
        touched: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if not all(put_back(attributes, template, path, touched) for path in paths) or not same_order(touched):
            return False
        tracked = _tracking.tracked_encode(self._encoded, self._instance, self.types, reads | {p[0] for p in paths},
                                           list(paths)) if paths else (self._encoded, [], [])
        if tracked is None or tracked[0].public != template.public or tracked[0].hidden != template.hidden:
            return False
        self._encoded = tracked[0]
        self._encoded.texts.update({p[0]: template.texts[p[0]] for p in paths if p[0] in template.texts})
        self._since = []
        return True

    def _build(self, state: dict[str, Any]) -> None:
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
        self._subtrees = None
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
        touches = self._touches.get(action.name)
        if getattr(method, "__func__", None) is not self._methods[action.name]:
            touches = None  # not the method analysed: an instance attribute shadows it, or the class was patched
        writes = None if touches is None else touches.resolve(action.arguments, before.lookup)
        rewritten = None if writes is None else subtrees(writes, {**before.public, **before.hidden}, vars(self._instance))
        tracked = None if touches is None or writes is None else _tracking.tracked_encode(
            before, self._instance, self.types, touches.reads, writes)
        if tracked is not None and touches is not None and writes is not None:
            self._encoded, result.delta, hidden = tracked
            self._subtrees = rewritten
            self.tracked_calls += 1
            if self._since is not None:
                self._since.append((touches.reads, [tuple(p) for p in writes]))
        else:
            self._since = None  # the full diff decided: what the call wrote is not known by path
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
            result.state = self.snapshot()
        return result

    def patch(self) -> list[dict[str, Any]] | None:
        """The last call's change to the public state as subtree ops (catalog/state/patches.py); None if not tracked.

        The ops hold the runtime's own values: encode them (a frame) before the next call.
        """
        if self._subtrees is None or self._instance is None:
            return None
        return patch(self._encoded.public, [p for p in self._subtrees if p[0] in self._encoded.public])

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
