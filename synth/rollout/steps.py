"""How an agent's call is answered: by the env, or by a simulator checked against the env.

`EnvSteps` executes each call on the episode's env (a `serving` ToolEnv). `VerifiedSteps`
answers each call with a simulator (catalog.bench.items's `Simulator`: the spec-only one, or an LLM)
and ALSO executes it on the real env from the same state, then scores the answer with the
audit's own scoring (`verifier.audit.run.score_prediction`: FM and strict CM from verifier.audit.metrics),
so a simulated step is marked verified exactly when an audit would count it verified.

The simulator is asked before the env runs, with an item that carries the state and the action
but no gold answer (observation None, next state = state, empty delta), so it cannot see the
truth. After a divergence the episode continues on the real state: the env is the state of
record, so the simulator is asked every later step from the state the env really has, each
step is still judged from one shared state, and the reward comes from the real check. Up to
the first divergence this is exactly a purely simulated rollout (every earlier predicted state
equalled the real one); the trajectory is marked diverged with that first step. When the
simulator gives no answer (it abstained or failed), the agent is shown the env's answer so the
episode can go on, and the step counts as not verified.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from catalog.bench.items import BenchItem, SimResult, Simulator, env_context, item_id
from catalog.models import Action, EnvManifest, Outcome, Strata
from synth.rollout.trajectory import SimCheck, as_json_text
from verifier.audit.results import is_verified
from verifier.audit.run import is_fatal, score_prediction

__all__ = ["Answer", "EnvSteps", "StepEnv", "Steps", "execute", "VerifiedSteps", "ask", "bench_template", "gave_answer", "scored",
           "sim_check"]


class StepEnv(Protocol):
    """What answering a call needs of an env instance (serving's ToolEnv has it)."""

    def step(self, tool_call: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]: ...

    def state(self) -> dict[str, Any]: ...


class Steps(Protocol):
    """How an episode's calls are answered (EnvSteps, VerifiedSteps, synth.rollout.hybrid.HybridSteps)."""

    @property
    def simulator_name(self) -> str:
        """The simulator's name, "" when the env answers alone."""
        ...

    def answer(self, action: Action) -> Answer: ...

    def settle(self) -> None:
        """Bring the env to the episode's state of record before its task is checked."""
        ...


@dataclass
class Answer:
    """The answer to one call: what the agent is shown, and what really happened."""

    observation: Any
    outcome: str
    delta: list[dict[str, Any]]
    done: bool
    seconds: float
    sim: SimCheck = field(default_factory=SimCheck.not_simulated)


def execute(env: StepEnv, action: Action) -> tuple[Any, str, list[dict[str, Any]], bool]:
    """The env's step: its observation, and its outcome and delta in the step's wire form (serving's `info`)."""
    observation, _reward, terminated, truncated, info = env.step(action)
    return observation, str(info.get("outcome", "success")), list(info.get("delta", [])), terminated or truncated


class EnvSteps:
    """Every call executed on the env."""

    simulator_name = ""

    def __init__(self, env: StepEnv) -> None:
        self.env = env

    def answer(self, action: Action) -> Answer:
        t0 = time.perf_counter()
        observation, outcome, delta, done = execute(self.env, action)
        return Answer(observation, outcome, delta, done, time.perf_counter() - t0)

    def settle(self) -> None:
        """Nothing is pending: every call ran on the env."""


def bench_template(env_id: str, manifest: EnvManifest, code: str, doc: str) -> BenchItem:
    """The env context of every item a simulator is asked during an episode (state and action filled per step)."""
    return BenchItem(id="", env_id=env_id, **env_context(manifest), env_code=code, env_doc=doc, state={},
                     action=Action(name="_"), observation=None, next_state={}, delta=[],
                     strata=Strata.of(Outcome.SUCCESS, 0, 0), task="")


def ask(simulator: Simulator, template: BenchItem, state: dict[str, Any], action: Action,
        ) -> tuple[BenchItem, SimResult, float]:
    """The simulator's answer for `action` on `state`, asked with no gold answer in the item; and its seconds.

    An exception it raises is its error (a miss), unless it is fatal (the endpoint is down).
    """
    asked = template.model_copy(update={
        "id": item_id(template.env_id, state, action), "state": state, "action": action,
        "next_state": state, "strata": Strata.of(Outcome.SUCCESS, 0, len(action.arguments))})
    t0 = time.perf_counter()
    try:
        prediction = simulator.predict(asked)
    except Exception as exc:
        if is_fatal(exc):
            raise
        prediction = SimResult(error=f"{type(exc).__name__}: {exc}")
    return asked, prediction, time.perf_counter() - t0


def gave_answer(prediction: SimResult) -> bool:
    """The simulator answered (did not abstain or fail): the agent can be shown its answer."""
    return not (prediction.abstained or prediction.error is not None)


def sim_check(prediction: SimResult, seconds: float, **fields: Any) -> SimCheck:
    """The record of a simulator's answer; `fields` say how it compared with execution (or that it did not run)."""
    return SimCheck(**{
        "verified": False, "fm": False, "cm_strict": False,
        "answered_by": "simulator" if gave_answer(prediction) else "env", "abstained": bool(prediction.abstained),
        "reason": prediction.reason or prediction.error or "",
        "predicted_observation_json": as_json_text(prediction.observation),
        "predicted_delta_json": as_json_text(prediction.delta), "tokens_in": int(prediction.tokens_in or 0),
        "tokens_out": int(prediction.tokens_out or 0), "cost_usd": float(prediction.cost_usd or 0.0),
        "seconds": round(seconds, 6), **fields})


def scored(asked: BenchItem, prediction: SimResult, seconds: float, env: StepEnv, action: Action,
           **fields: Any) -> tuple[Answer, SimCheck]:
    """Execute `action` on the env (in the asked item's state) and score the prediction as an audit would."""
    t1 = time.perf_counter()
    observation, outcome, delta, done = execute(env, action)
    env_seconds = time.perf_counter() - t1
    gold = asked.model_copy(update={
        "observation": observation, "next_state": env.state(), "delta": delta,
        "strata": Strata.of(Outcome(outcome), len(delta), len(action.arguments))})
    scores = score_prediction(gold, prediction)
    check = sim_check(prediction, seconds, verified=is_verified(scores), fm=bool(scores["fm"]),
                      cm_strict=bool(scores["cm_strict"]), **fields)
    return Answer(observation, outcome, delta, done, env_seconds, check), check


class VerifiedSteps:
    """Every call answered by the simulator and checked against the env from the same state (module doc)."""

    def __init__(self, env: StepEnv, simulator: Simulator, template: BenchItem) -> None:
        self.env, self.simulator, self.template = env, simulator, template

    @property
    def simulator_name(self) -> str:
        return self.simulator.name

    def answer(self, action: Action) -> Answer:
        asked, prediction, sim_seconds = ask(self.simulator, self.template, self.env.state(), action)
        answer, _check = scored(asked, prediction, sim_seconds, self.env, action)
        if gave_answer(prediction):
            answer.observation = prediction.observation
        return answer

    def settle(self) -> None:
        """Nothing is pending: every call ran on the env."""
