"""The spec-only simulator: predict `(observation, delta)` of a call from the constraint spec.

It runs the spec's normalized program with constraints.interpreter: guards in order, then the
effects, on a copy of the state. Where the spec is incomplete for a call (an unsupported
construct is reached, an unmodelled library is called, SQL semantics would diverge) it
abstains instead of guessing, so a prediction it does make is meant to be exact.

One simulator serves both uses: bound to a spec it predicts calls (`predict(state, action)`,
for completeness and soundness runs); given a benchmark item it is catalog.bench.items's Simulator
(`predict(item)`, for audits), with the item's spec taken from the one spec cache
(constraints.extract.shared_spec), so an audit extracts each env module once. An item says how its
env treats a call (`env_strict_args`, `env_failure_exceptions`, from the env's manifest by
catalog.bench.items.env_context): its answer is the one that env's runtime gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, overload

from catalog.bench.items import BenchItem, SimResult
from catalog.models import Action, Outcome
from catalog.state.delta import Delta, DeltaOp
from constraints.extract import ExtractionError, guess_entry, shared_spec
from constraints.interpreter import Abstain, Interpreter
from constraints.spec import ConstraintSpec

__all__ = ["Prediction", "SpecSimulator", "item_spec"]


@dataclass
class Prediction:
    """A simulator's answer for one call; `abstained` means no answer (see `reason`)."""

    observation: Any = None
    delta: list[DeltaOp] = field(default_factory=list)
    outcome: Outcome | None = None
    abstained: bool = False
    reason: str | None = None
    fired: list[tuple[str, int]] = field(default_factory=list)
    hidden_delta: list[DeltaOp] = field(default_factory=list)


def item_spec(item: BenchItem) -> ConstraintSpec:
    """The constraint spec of an item's env module (cached; shared: do not mutate); raises ExtractionError.

    Extracted with the env's failure exceptions, as completeness extracts the env's spec.
    """
    entry = item.env_entry or (guess_entry(item.env_code) if item.env_kind == "class" else None)
    return shared_spec(item.env_code, item.env_kind, entry, failure_exceptions=item.env_failure_exceptions)


class SpecSimulator:
    """Predicts from a spec alone (no env code is imported or executed); abstains where the spec is incomplete.

    Its agreement with execution measures how complete the extracted specs are, so an
    abstention is reported as such (never guessed).
    """

    name = "spec"
    mode = "spec"

    def __init__(self, spec: ConstraintSpec | None = None, *, strict_args: bool = True) -> None:
        """`spec`: the env whose calls `predict(state, action)` answers; items bring their own.

        `strict_args` (the env manifest's): ill-typed calls are invalid (envforge's runtimes in
        strict mode); without it they run as Python would run them (imported envs). Items bring
        their own (`BenchItem.env_strict_args`): this one is for `predict(state, action)` only.
        """
        self.spec = spec
        self.strict_args = strict_args

    @overload
    def predict(self, state: BenchItem, action: None = None) -> SimResult: ...

    @overload
    def predict(self, state: dict[str, Any], action: Action | dict[str, Any]) -> Prediction: ...

    def predict(self, state: dict[str, Any] | BenchItem,
                action: Action | dict[str, Any] | None = None) -> Prediction | SimResult:
        """Predict one call on `state`, or answer a benchmark item; never raises for an unmodelled call.

        A class env's state is in catalog.state.codec's encoding, with hidden attributes if the
        snapshot has them.
        """
        if isinstance(state, BenchItem):
            return self._answer(state)
        if self.spec is None or action is None:
            raise TypeError("predict(state, action) needs a simulator made with a spec: SpecSimulator(spec)")
        action = action if isinstance(action, Action) else Action.model_validate(action)
        interpreter = Interpreter(self.spec, state, strict_args=self.strict_args)
        try:
            observation, outcome, delta = interpreter.run(action.name, action.arguments)
        except Abstain as abstain:
            return Prediction(abstained=True, reason=abstain.reason, fired=interpreter.fired)
        except RecursionError:
            return Prediction(abstained=True, reason="recursion too deep")
        return Prediction(observation, delta, outcome, fired=interpreter.fired, hidden_delta=interpreter.hidden_delta)

    def _answer(self, item: BenchItem) -> SimResult:
        """Run the spec's program of the item's env for the item's action on the item's state, as the env would."""
        t0 = time.monotonic()
        try:
            spec = item_spec(item)
        except ExtractionError as exc:
            return SimResult(abstained=True, reason=f"no constraint spec: {exc}", seconds=time.monotonic() - t0)
        prediction = SpecSimulator(spec, strict_args=item.env_strict_args).predict(item.state, item.action)
        seconds = time.monotonic() - t0
        if prediction.abstained:
            return SimResult(abstained=True, reason=prediction.reason, seconds=seconds)
        return SimResult(observation=prediction.observation, delta=Delta.dump_python(prediction.delta, mode="json"),
                         seconds=seconds)
