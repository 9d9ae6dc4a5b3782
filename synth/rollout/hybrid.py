"""Hybrid steps: a simulator answers a call alone only in the cells its audit earned; every other call executes.

Before a call runs, the constraint spec predicts its stratum from the state and the call
(verifier.audit.trust.predicted_stratum: failure, read, or a write's |Δ| band), which with the
tool names its cell. The simulator answers alone only when the audit's strict CM in that cell is
at least `min_cm` over at least `min_samples` audited samples and no spot check failed there this
run; every other call executes on the env (so does a call the spec cannot place, or that the
simulator does not answer). A share `spot_check` of trusted steps, chosen by a hash of (seed,
episode, step) so the same run checks the same steps, is also executed from the same state
and scored as an audit scores (FM and strict CM): one that fails drops trust in its cell for the
rest of the run (recorded on the step, `spot-check failed: trust dropped`), and the agent is
shown the env's answer. Each step records its cell, why it was or was not trusted, and whether
the env ran it (`SimCheck.executed`); a step the simulator answered alone records the outcome the
spec predicted and the simulator's delta.

What "answered by the simulator" means for the episode's state: the env does not run that call
(that is the saving). The episode keeps a state of record; a trusted step's next state is the
simulator's predicted Δ applied to it, and the env is brought to that state (`ToolEnv.load`, which
keeps the reset's state for the task's check) only when a later call executes or the task is
checked (`settle`), so a run of trusted steps never touches the env (a predicted state the env
refuses to load ends the episode with a `HybridStateError`, reported, and drops the cell that
predicted it). A wrong trusted answer
therefore carries into the episode, as it would in a purely simulated env: that is why trust is
per cell and spot-checked. With the spec simulator, whose answers in a trusted cell are exact, the
states, and so the rewards, are those of a fully executed run.

`HybridToolEnv` is the same behind the gym-style API of serving's `ToolEnv` (reset / step /
evaluate), for a trainer's own loop: serving itself has no simulated mode (it sits below the
audits and the simulators in the layers). Its steps reward 0.0, since judging a step the simulator
answered would need the env brought to its state; the episode's reward is `evaluate()`'s, after
the env caught up.

Dropped cells are shared by the episodes of one process (the threads of a local run, guarded by a
lock); with concurrency above 1 which later steps a drop reaches depends on timing, and on Ray
each actor drops on its own. A resumed run starts with the cells its trajectories on file dropped.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from catalog.bench.items import BenchItem, Simulator
from catalog.calls import CallFileError, as_tool_call
from catalog.errors import EnvforgeError
from catalog.models import Action
from catalog.state.delta import Delta, DeltaConflict, apply_delta
from constraints.extract import ExtractionError
from constraints.simulate import item_spec
from constraints.spec import ConstraintSpec
from serving import BadToolCall, EpisodeOver, ToolEnv
from synth.rollout.steps import Answer, StepEnv, ask, bench_template, execute, gave_answer, scored, sim_check
from synth.rollout.trajectory import SimCheck
from verifier.audit.metrics import DeltaFormatError, parse_delta
from verifier.audit.run import is_fatal
from verifier.audit.trust import TrustPolicy, TrustTable, cell_name, predicted_stratum
from verifier.samples.export import env_doc

__all__ = ["DROPPED", "HybridEnv", "HybridStateError", "HybridSteps", "HybridToolEnv", "RunTrust", "spec_for"]

DROPPED = "spot-check failed: trust dropped"


class HybridStateError(RuntimeError, EnvforgeError):
    """A state the simulator predicted does not load into the env: the episode cannot go on (its cell is dropped)."""


class HybridEnv(StepEnv, Protocol):
    """What hybrid steps need of an env instance: a step, its state, and going on from a state (ToolEnv has them)."""

    def load(self, state: dict[str, Any]) -> None: ...


class RunTrust:
    """A run's trust: the audit's table, the policy, the seed of spot checks, and the cells dropped so far."""

    def __init__(self, table: TrustTable, policy: TrustPolicy, seed: int,
                 dropped: Mapping[str, str] | None = None) -> None:
        self.table, self.policy, self.seed = table, policy, seed
        self._dropped: dict[str, str] = dict(dropped or {})  # "env: tool/stratum" -> where a spot check failed
        self._lock = threading.Lock()

    def verdict(self, env_id: str, tool: str, stratum: str) -> tuple[bool, str]:
        """Whether a step in this cell is the simulator's, and why (a drop this run overrides the audit)."""
        with self._lock:
            where = self._dropped.get(f"{env_id}: {cell_name(tool, stratum)}")
        if where is not None:
            return False, f"untrusted: a spot check failed ({where})"
        return self.table.verdict(env_id, tool, stratum, self.policy)

    def drop(self, env_id: str, cell: str, where: str) -> None:
        with self._lock:
            self._dropped.setdefault(f"{env_id}: {cell}", where)

    @property
    def dropped(self) -> dict[str, str]:
        with self._lock:
            return dict(self._dropped)

    def spot_checked(self, unit_id: str, index: int) -> bool:
        """Whether step `index` of episode `unit_id` is checked by execution: a share `spot_check`, fixed by the seed."""
        digest = hashlib.sha256(f"{self.seed}\0{unit_id}\0{index}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.policy.spot_check

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    @staticmethod
    def dropped_in(trajectories: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """The cells that trajectories on file dropped (a resumed run keeps them dropped)."""
        found: dict[str, str] = {}
        for t in sorted(trajectories, key=lambda t: str(t.get("id"))):
            for step in t.get("steps", []):
                sim = step.get("sim", {})
                if sim.get("trust") == DROPPED:
                    found.setdefault(f"{t['env']}: {sim['cell']}", f"{t['id']} step {step['index']}")
        return found


class HybridSteps:
    """Each call answered by the simulator where the run trusts its cell, else by the env (module doc)."""

    def __init__(self, env: HybridEnv, simulator: Simulator, template: BenchItem, spec: ConstraintSpec | None,
                 trust: RunTrust, unit_id: str) -> None:
        self.env, self.simulator, self.template, self.spec = env, simulator, template, spec
        self.trust, self.unit_id = trust, unit_id
        self._state: dict[str, Any] | None = None  # the state of record when the env lags behind it
        self._last_trusted = (0, "")  # the step whose prediction the state of record is
        self._index = 0

    @property
    def simulator_name(self) -> str:
        return self.simulator.name

    def answer(self, action: Action) -> Answer:
        index, self._index = self._index, self._index + 1
        t0 = time.perf_counter()
        before = self._state if self._state is not None else self.env.state()
        stratum, why = predicted_stratum(self.spec, before, action) if self.spec is not None else (
            None, "the env has no constraint spec to place the call in a cell")
        trusted, reason = self.trust.verdict(self.template.env_id, action.name, stratum) if stratum else (
            False, f"untrusted: {why}")
        cell = cell_name(action.name, stratum) if stratum else ""
        decided = time.perf_counter() - t0
        if not trusted:
            return self._executed(action, SimCheck.not_simulated().model_copy(update={
                "cell": cell, "trust": reason, "trust_seconds": round(decided, 6)}))
        asked, prediction, sim_seconds = ask(self.simulator, self.template, before, action)
        fields: dict[str, Any] = {"cell": cell, "trust_seconds": round(decided, 6)}
        predicted = _next_state(before, prediction.delta) if gave_answer(prediction) else None
        if predicted is None:  # no answer, or a delta that does not apply: the env answers
            why = prediction.reason or prediction.error or "its delta does not apply to the state"
            return self._executed(action, sim_check(prediction, sim_seconds, answered_by="env",
                                                    trust=f"trusted, but the simulator gave no usable answer: {why}",
                                                    **fields))
        if self.trust.spot_checked(self.unit_id, index):
            fields["trust_seconds"] = round(decided + self._catch_up(), 6)
            answer, check = scored(asked, prediction, sim_seconds, self.env, action, trust="spot-check", **fields)
            if check.verified:
                answer.observation = prediction.observation
            else:  # the agent is shown the truth, and this cell is the env's from now on
                self.trust.drop(self.template.env_id, cell, f"{self.unit_id} step {index}")
                answer.sim = check.model_copy(update={"trust": DROPPED, "answered_by": "env"})
            return answer
        self._state, delta = predicted
        self._last_trusted = (index, cell)
        check = sim_check(prediction, sim_seconds, executed=False, trust=reason, **fields)
        outcome = "failure" if stratum == "failure" else "success"  # as the spec predicted: nothing ran
        return Answer(prediction.observation, outcome, delta, False, 0.0, check)

    def settle(self) -> None:
        """Load the state of record into the env (before the task's check, or a call that executes)."""
        self._catch_up()

    def _catch_up(self) -> float:
        """Load the state of record into the env if it lags behind; the seconds it took (hybrid overhead)."""
        if self._state is None:
            return 0.0
        t0 = time.perf_counter()
        try:
            self.env.load(self._state)
        except Exception as exc:
            if is_fatal(exc):
                raise
            index, cell = self._last_trusted
            self.trust.drop(self.template.env_id, cell, f"{self.unit_id} step {index}")
            raise HybridStateError(f"{self.unit_id}: the state the simulator predicted at step {index} ({cell}) does "
                                   f"not load into the env ({type(exc).__name__}: {exc}); the cell is dropped") from exc
        self._state = None
        return time.perf_counter() - t0

    def _executed(self, action: Action, check: SimCheck) -> Answer:
        """The env answers; catching up counts as the step's hybrid overhead, not as its execution."""
        check = check.model_copy(update={"trust_seconds": round(check.trust_seconds + self._catch_up(), 6)})
        t0 = time.perf_counter()
        observation, outcome, delta, done = execute(self.env, action)
        return Answer(observation, outcome, delta, done, time.perf_counter() - t0, check)


def _next_state(state: dict[str, Any], delta: Any) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The state a predicted delta leads to and the delta in wire form, or None when it is not a delta of this state."""
    try:
        ops = parse_delta(delta)
        return apply_delta(state, ops), Delta.dump_python(ops, mode="json")
    except (DeltaFormatError, DeltaConflict, ValueError):
        return None


def spec_for(template: BenchItem) -> ConstraintSpec | None:
    """The env's constraint spec, which places a hybrid step in its cell; None (every call executes) without one."""
    try:
        return item_spec(template)
    except ExtractionError:
        return None


class HybridToolEnv:
    """A hybrid env behind the gym-style API of `serving.ToolEnv` (module doc): step rewards 0.0, `evaluate` scores."""

    def __init__(self, env: ToolEnv, simulator: Simulator, trust: RunTrust) -> None:
        handle = env.handle
        self.env, self.simulator, self.trust = env, simulator, trust
        self.template = bench_template(handle.id, handle.manifest, handle.source(),
                                       env_doc(handle))
        self.spec = spec_for(self.template)
        self.episodes = 0
        self._steps: HybridSteps | None = None

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.env.tools

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """`ToolEnv.reset`; each episode gets its own id (`env/task#n`), which fixes its spot checks with the seed."""
        observation, info = self.env.reset(seed=seed, options=options)
        self.episodes += 1
        episode = f"{self.env.env_id}/{info.get('task') or ''}#{self.episodes}"
        self._steps = HybridSteps(self.env, self.simulator, self.template, self.spec, self.trust, episode)
        return observation, info

    def step(self, tool_call: dict[str, Any] | Action) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One call, answered by the simulator or the env; `info` has its outcome, delta and `sim` record."""
        if self._steps is None:
            raise EpisodeOver("call reset() before step()")
        action = tool_call if isinstance(tool_call, Action) else _action(tool_call)
        if action is None:  # not a JSON object of arguments: the env says what was wrong (nothing runs)
            observation, _reward, terminated, truncated, info = self.env.step(tool_call)
            return observation, 0.0, terminated, truncated, info
        answer = self._steps.answer(action)
        info = {"outcome": answer.outcome, "delta": answer.delta, "sim": answer.sim.model_dump(mode="json")}
        return answer.observation, 0.0, answer.done, False, info

    def evaluate(self, final_message: str | None = None, *, cut_off: bool = False) -> tuple[float, dict[str, Any]]:
        """The episode's reward and details (`ToolEnv.evaluate`), once the env caught up with the simulated steps."""
        if self._steps is not None:
            self._steps.settle()
        return self.env.evaluate(final_message, cut_off=cut_off)

    def state(self) -> dict[str, Any]:
        """The episode's state of record (the env's, once it caught up)."""
        if self._steps is not None:
            self._steps.settle()
        return self.env.state()

    def close(self) -> None:
        self.env.close()

    def __enter__(self) -> HybridToolEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _action(tool_call: dict[str, Any]) -> Action | None:
    """A tool call's action; None for arguments that are not a JSON object (the env answers those as invalid)."""
    try:
        call = as_tool_call(tool_call)
    except CallFileError as exc:
        raise BadToolCall(str(exc)) from None
    return None if call.problem else Action(name=call.name, arguments=call.arguments)
