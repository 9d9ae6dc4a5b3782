"""The spec-only simulator: predict `(observation, delta)` of a call from the constraint spec.

It runs the spec's normalized program with constraints.interpreter: guards in order, then the
effects, on a copy of the state. Where the spec is incomplete for a call (an unsupported
construct is reached, an unmodelled library is called, SQL semantics would diverge) it
abstains instead of guessing, so a prediction it does make is meant to be exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catalog.delta import DeltaOp
from catalog.models import Action, Outcome
from constraints.interpreter import Abstain, Interpreter

__all__ = ["Prediction", "SpecSimulator"]


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


class SpecSimulator:
    """Predicts from a spec alone (no env code is imported or executed)."""

    name = "spec"

    def __init__(self, spec: dict[str, Any], *, strict_args: bool = True) -> None:
        self.spec = spec
        self.strict_args = strict_args

    def predict(self, state: dict[str, Any], action: Action | dict[str, Any]) -> Prediction:
        """Predict one call on `state`; never raises for an unmodelled call.

        A class env's state is in catalog.codec's encoding, with hidden attributes if the
        snapshot has them.
        """
        action = action if isinstance(action, Action) else Action.model_validate(action)
        interpreter = Interpreter(self.spec, state, strict_args=self.strict_args)
        try:
            observation, outcome, delta = interpreter.run(action.name, action.arguments)
        except Abstain as abstain:
            return Prediction(abstained=True, reason=abstain.reason, fired=interpreter.fired)
        except RecursionError:
            return Prediction(abstained=True, reason="recursion too deep")
        return Prediction(observation, delta, outcome, fired=interpreter.fired, hidden_delta=interpreter.hidden_delta)
