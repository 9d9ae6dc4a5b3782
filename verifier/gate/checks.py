"""The gate's checks by name: a registry, so adding a check is one decorated function.

A check is a function of the property suite returning a `Verdict` (or None where it does not
apply, e.g. intent checks on an env without a plan). `@check(Severity.X)` registers it under the
function's own name, which is also the name in reports, with its severity declared right there.
Checks run in the order they are registered. A few checks are decided outside the suite (the
spec must extract before a suite exists; a folder that does not read; a judge run by the
synthesis pipeline): `declare` gives them a name and severity too, so every name a report can
carry is in `CHECKS` and `verify --help` lists them all.

This module imports nothing heavy: the CLI reads it to build its help.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

from catalog.jsonmodel import JsonModel

__all__ = ["CHECKS", "CheckResult", "CheckSpec", "Severity", "Verdict", "check", "declare", "describe", "runnable"]


class Severity(enum.StrEnum):
    """What a failing check does to an env.

    critical: rejects the env whatever its score (wrong training signal: a crash, a leaky failure,
    a wrong write, a pre-solved task, code against its plan). minor: lowers the score only
    (coverage: unreachable guards, a kind label). informational: reported, never scored.
    """

    CRITICAL = "critical"
    MINOR = "minor"
    INFORMATIONAL = "informational"


@dataclass(frozen=True)
class Verdict:
    """What a check found; the registry adds its name and severity.

    `not_run`: the check had nothing to look at (no call of it ran: the sandbox refused them all),
    so it proves nothing and is not passed (`nothing_ran`).
    """

    ok: bool
    counterexample: dict[str, Any] | None = None
    detail: str = ""
    not_run: bool = False

    @classmethod
    def nothing_ran(cls, why: str) -> Verdict:
        """The verdict of a check that ran nothing: not passed, and said so."""
        return cls(False, None, f"not run: {why}", not_run=True)


Subject = Any  # the verifier.gate.properties.PropertySuite a check runs on (not imported: it is heavy)
CheckFn = Callable[[Subject], Verdict | None]


@dataclass(frozen=True)
class CheckSpec:
    """One registered check: its name, severity, one-line meaning and, if the suite runs it, how."""

    name: str
    severity: Severity
    about: str
    run: CheckFn | None = None


CHECKS: dict[str, CheckSpec] = {}


def _register(spec: CheckSpec) -> None:
    if spec.name in CHECKS:
        raise ValueError(f"check {spec.name!r} is registered twice")
    CHECKS[spec.name] = spec


def declare(name: str, severity: Severity, about: str) -> None:
    """Register a check decided outside the suite (by the gate itself or by its caller)."""
    _register(CheckSpec(name, severity, about))


F = TypeVar("F", bound=CheckFn)


def check(severity: Severity = Severity.CRITICAL) -> Callable[[F], F]:
    """Register the decorated function as a check named after it; its docstring's first line says what it means."""
    def register(function: F) -> F:
        about = (function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else function.__name__
        _register(CheckSpec(function.__name__, severity, about, function))
        return function
    return register


def runnable() -> Iterator[CheckSpec]:
    """The checks the suite runs, in registration order."""
    return (spec for spec in CHECKS.values() if spec.run is not None)


class CheckResult(JsonModel):
    """One check's verdict on one env; `counterexample` is the minimal failing input, if any.

    The severity is the registered one, so a result cannot carry a name the registry lacks;
    `critical` and `informational` are read from the registry too (whatever a JSON form says),
    and sit where the JSON form has always had them. Built as `CheckResult(name, ok,
    counterexample, detail)`; `model_dump(mode="json")` is its entry in a report. `not_run` (the
    check ran nothing) always comes with `ok` false.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    ok: bool
    critical: bool = False
    counterexample: dict[str, Any] | None = None
    detail: str = ""
    informational: bool = False
    not_run: bool = False  # it ran nothing (Verdict.nothing_ran): never passed

    def __init__(self, name: str, ok: bool, counterexample: dict[str, Any] | None = None, detail: str = "",
                 **registered: Any) -> None:
        BaseModel.__init__(self, name=name, ok=ok, counterexample=counterexample, detail=detail, **registered)

    @model_validator(mode="before")
    @classmethod
    def _registered(cls, data: Any) -> Any:
        if isinstance(data, dict):
            name = data.get("name")
            if name not in CHECKS:
                raise KeyError(f"unregistered check {name!r}: register it with verifier.gate.checks.check or declare")
            severity = CHECKS[name].severity
            data = {**data, "critical": severity is Severity.CRITICAL,
                    "informational": severity is Severity.INFORMATIONAL}
            if data.get("not_run"):
                data["ok"] = False  # a check that ran nothing is not passed, whatever a JSON form says
        return data

    @property
    def severity(self) -> Severity:
        return CHECKS[self.name].severity

    @classmethod
    def of(cls, name: str, verdict: Verdict) -> CheckResult:
        return cls(name, verdict.ok, verdict.counterexample, verdict.detail, not_run=verdict.not_run)


def describe(width: int = 100) -> str:
    """The registered checks with severity and meaning, wrapped to `width` columns (for `verify --help`)."""
    name_width = max(len(name) for name in CHECKS)
    indent = " " * (2 + name_width + 2 + 13 + 2)
    return "\n".join(textwrap.fill(spec.about, width, initial_indent=f"  {spec.name:<{name_width}}  "
                                   f"{spec.severity.value:<13}  ", subsequent_indent=indent)
                     for spec in CHECKS.values())


# Checks decided outside the property suite. Registered first: reports list them first.
declare("env_folder_reads", Severity.CRITICAL, "The env folder reads as an env (verify --all counts one that does not).")
declare("constraint_spec_extracts", Severity.CRITICAL, "The tools' source yields a constraint spec.")
declare("judge_agrees_with_execution", Severity.MINOR, "A model judging calls from the rules alone agrees with "
        "execution (synthesis with --judge-model).")
