"""What both runtimes do around a tool call: bind and check the arguments, classify the outcome."""

from __future__ import annotations

import inspect
import traceback
from dataclasses import dataclass
from typing import Any

from catalog.models import Action, FailureConvention, Outcome, StepResult
from catalog.tools.argcheck import Form, compile_annotation, form_problem


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
