"""The rollout runner: units from the catalog, episodes on threads, trajectories appended, resume.

Why it is built the way it is:
- One unit per (env, task); each episode makes its own env instance (`serving.make`),
  so episodes never share state, and untrusted envs run in the sandbox as everywhere else.
- Model calls are I/O bound, so episodes run on `concurrency` threads; the calling thread alone
  appends each finished trajectory to `trajectories.jsonl` (one line, flushed) as it arrives.
- Episodes run on `concurrency` workers opened from one recipe (`Episodes`): threads here; with
  `executor=ExecutorSpec("ray")` Ray actors, which get the catalog by its root, the simulator
  as its recipe and the agent factory as it is (module-level `reference_agent`, or
  `ModelAgentFactory`, which opens its own client there). The driver still writes every line,
  so an episode rerun after a worker died is written once.
- Resume follows the audits' convention: a rerun skips the units whose trajectory is on file
  (never duplicating one), a torn last line or garbage anywhere is set aside in
  trajectories.rejected.jsonl (said in one line) and its unit run again, and a folder holding
  rollouts of another configuration (model, simulator, step and token limits, seed) is refused in one line.
  An episode that raised (the endpoint still rate limited or failing after the client's retries,
  an env that could not start) is not written but reported, so a rerun tries it again; an
  unreachable endpoint stops the run. A model reply that stays unusable is an outcome of the
  model, not an error: that episode is written (end `agent_failed`).
- The order of the file depends on timing; the report sorts by unit, so it does not.
"""

from __future__ import annotations

import concurrent.futures as cf
import fcntl
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from catalog.bench.items import Simulator
from catalog.errors import EnvforgeError
from catalog.jsonmodel import JsonModel
from catalog.runs.journal import read_session, write_json
from catalog.store import Catalog, EnvHandle
from executors import LOCAL, ExecutorSpec, Recipe, open_pool
from serving import make
from synth.llm import LLMClient, ModelSpec
from synth.rollout.agents import Agent, ModelAgent, reference_agent
from synth.rollout.episode import Unit, run_episode
from synth.rollout.hybrid import HybridSteps, RunTrust, spec_for
from synth.rollout.steps import EnvSteps, Steps, VerifiedSteps, bench_template
from synth.rollout.trajectory import Trajectory, trajectory_journal
from verifier.audit.run import is_fatal
from verifier.audit.trust import TrustPolicy, TrustTable
from verifier.samples.export import env_doc

__all__ = ["META_FILE", "ModelAgentFactory", "RolloutConfig", "RolloutError", "RunResult", "TrustSettings", "plan_units",
           "reference_agent", "run_rollouts"]

META_FILE = "rollout.json"
LOCK_FILE = ".rollout.lock"
AgentFactory = Callable[[Unit, EnvHandle], Agent]
ProgressFn = Callable[[int, int, "Trajectory | None"], None]


class RolloutError(RuntimeError, EnvforgeError):
    """The rollout cannot run as asked (no such env or task, folder in use or of another configuration)."""


class TrustSettings(JsonModel):
    """A hybrid run's trust (`--trust`): the audit folder (resolved) and the policy; part of the configuration."""

    model_config = ConfigDict(frozen=True)

    audit: str
    policy: TrustPolicy


class RolloutConfig(JsonModel):
    """What makes two rollouts comparable: a folder holds trajectories of one configuration only.

    Its `model_dump()` is the `config` of the folder's meta file, compared on resume.
    """

    model_config = ConfigDict(frozen=True)

    model: str
    simulator: str | None = None
    sim_mode: str | None = None
    max_steps: int = 20
    max_tokens: int | None = None
    seed: int = 0
    trust: TrustSettings | None = Field(default=None, exclude_if=lambda v: v is None)



@dataclass
class RunResult:
    """The trajectories of the selected units on file, and what this session could not run."""

    trajectories: list[dict[str, Any]]
    errors: dict[str, str]
    dropped: dict[str, str] = field(default_factory=dict)  # hybrid runs: cell -> the step whose spot check failed


def plan_units(catalog: Catalog, env_ids: Sequence[str] | None, task_id: str | None = None) -> tuple[list[Unit], list[str]]:
    """The units to roll out (env ids in order, tasks in file order) and the envs skipped for having no task.

    `env_ids` None means every env of the catalog. An unknown env, or a task no selected env has,
    is bad input.
    """
    if env_ids is None:
        summaries, _problems = catalog.list()
        env_ids = [s.id for s in summaries]
    units: list[Unit] = []
    skipped: list[str] = []
    for env_id in env_ids:
        handle = catalog.get(env_id)
        tasks = [t for t in handle.tasks() if task_id is None or t.id == task_id]
        if not tasks:
            skipped.append(env_id)
        units += [Unit(env_id, t.id, t.state, t.instruction, len(t.solution or [])) for t in tasks]
    if task_id is not None and not units:
        raise RolloutError(f"no task {task_id!r} in {', '.join(env_ids)}")
    return units, skipped


class ModelAgentFactory:
    """The agent factory of `--model NAME`, which can travel to a Ray worker: a registry entry and an address.

    Made `of` the driver's client, its episodes here share that client; pickled, it leaves the
    client behind, and the worker opens its own at `base_url` (the driver's endpoint, e.g. the embedded
    server it started; on a multi-node cluster an address every node reaches) on first use and
    shares it between its episodes, as the driver's threads share one client. API keys never
    travel: each worker reads the registry entry's `api_key_env` from its own environment (a
    local Ray instance inherits the driver's; on a cluster set it on every node).
    """

    def __init__(self, model: ModelSpec, base_url: str, *, max_tokens: int | None = None, seed: int = 0,
                 timeout: float = 120.0) -> None:
        self.model, self.base_url, self.max_tokens, self.seed, self.timeout = model, base_url, max_tokens, seed, timeout
        self._client: LLMClient | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, client: LLMClient, *, max_tokens: int | None = None) -> ModelAgentFactory:
        """The factory reaching the endpoint `client` (an opened one) talks to: `client` itself in this process."""
        factory = cls(client.spec, client.base_url, max_tokens=max_tokens, seed=client.seed, timeout=client.timeout)
        factory._client = client  # dropped when pickled: a worker elsewhere opens its own
        return factory

    def __call__(self, unit: Unit, handle: EnvHandle) -> Agent:
        with self._lock:
            if self._client is None:
                self._client = LLMClient(self.model, base_url=self.base_url, timeout=self.timeout, seed=self.seed)
        return ModelAgent(self._client, max_tokens=self.max_tokens)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_client", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _client=None, _lock=threading.Lock())


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    with (out / LOCK_FILE).open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise RolloutError(f"another rollout is writing to {out}; wait for it or use another --out") from exc
        yield


def _check_meta(out: Path, config: RolloutConfig) -> None:
    meta = read_session(out / META_FILE)
    asked = config.model_dump(mode="json")
    if meta and meta.get("config") != asked:
        theirs = meta.get("config", {})
        diff = ", ".join(f"{k} {theirs.get(k)!r} (asked: {v!r})" for k, v in asked.items()
                         if theirs.get(k) != v)
        raise RolloutError(f"{out} holds rollouts of another configuration: {diff}; use another --out")


def _episode(unit: Unit, catalog: Catalog, config: RolloutConfig, agent_factory: AgentFactory,
             simulator: Simulator | None, trust: RunTrust | None = None) -> Trajectory:
    """One unit on its own env instance; the agent decides when it is done (no termination on success)."""
    with make(unit.env_id, task=unit.task_id, catalog=catalog, terminate_on_success=False) as env:
        handle = env.handle
        doc = env_doc(handle)
        steps: Steps = EnvSteps(env)
        if simulator is not None:
            template = bench_template(handle.id, handle.manifest, handle.source(), doc)
            steps = VerifiedSteps(env, simulator, template) if trust is None else \
                HybridSteps(env, simulator, template, spec_for(template), trust, unit.id)
        return run_episode(env, agent_factory(unit, handle), unit, steps, env_doc=doc, env_kind=handle.manifest.kind,
                           seed=config.seed, max_steps=config.max_steps)


class _EpisodeWorker:
    """A worker's episodes: its catalog, the run's configuration, agent factory and simulator."""

    def __init__(self, episodes: Episodes) -> None:
        self.episodes = episodes

    def run(self, unit: Unit) -> Trajectory:
        e = self.episodes
        return _episode(unit, e.catalog, e.config, e.agent_factory, e.simulator, e.trust)


@dataclass(frozen=True)
class Episodes(Recipe[Unit, Trajectory]):
    """The recipe of a rollout's workers: everything an episode needs (on Ray it must pickle).

    The catalog pickles as its root (an absolute path), the agent factory as it is (the
    module-level `reference_agent`, or a `ModelAgentFactory`, which opens its own client), the
    simulator as its recipe (synth.simulation.recipe_for).
    """

    catalog: Catalog
    config: RolloutConfig
    agent_factory: AgentFactory
    simulator: Simulator | None = None
    trust: RunTrust | None = None
    threads = True  # an episode waits on model calls

    def open(self) -> _EpisodeWorker:
        return _EpisodeWorker(self)


def run_rollouts(catalog: Catalog, units: Sequence[Unit], config: RolloutConfig, out_dir: Path | str, *,
                 agent_factory: AgentFactory, simulator: Simulator | None = None, concurrency: int = 2,
                 progress: ProgressFn | None = None, executor: ExecutorSpec | None = None,
                 trust: TrustTable | None = None) -> RunResult:
    """Roll out every unit not yet on file in `out_dir`; return all selected units' trajectories.

    Episodes run on `concurrency` workers of `executor`: threads of this process by default, Ray
    actors with ray, where `agent_factory` and `simulator` must pickle (`ModelAgentFactory`, and
    the simulators of synth.simulation, do).

    With `trust` (the audit's table; `config.trust` holds its policy) the run is hybrid
    (synth/rollout/hybrid.py): the simulator answers alone where its audit earned trust, the env
    everywhere else; the result's `dropped` holds the cells a spot check dropped.

    Raises RolloutError for a folder in use or of another configuration, and the endpoint's error
    when it cannot be reached (finished trajectories are on disk); KeyboardInterrupt passes through.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        _check_meta(out, config)
        write_json(out / META_FILE, {"config": config.model_dump(mode="json")})
        done = trajectory_journal(out).resume()
        todo = [u for u in units if u.id not in done]
        finished = len(units) - len(todo)
        if progress:
            progress(finished, len(units), None)
        errors: dict[str, str] = {}
        run_trust = None
        if trust is not None:
            if simulator is None or config.trust is None:
                raise RolloutError("a hybrid rollout needs a simulator and the trust policy in its configuration")
            run_trust = RunTrust(trust, config.trust.policy, config.seed, RunTrust.dropped_in(done.values()))
        episodes = Episodes(Catalog(catalog.root.resolve(), include_reference=catalog.include_reference), config,
                            agent_factory, simulator, run_trust)
        pool = open_pool(executor or LOCAL, episodes, concurrency, name="rollout")
        try:
            futures = {pool.submit(u): u for u in todo}
            with trajectory_journal(out).appending(done) as append:
                for future in cf.as_completed(futures):
                    unit = futures[future]
                    try:
                        trajectory = future.result()
                    except Exception as exc:  # noqa: BLE001 - one unit's failure is reported, the run goes on
                        if is_fatal(exc):
                            raise
                        errors[unit.id] = f"{type(exc).__name__}: {exc}"
                        continue
                    if not append(trajectory.model_dump()):
                        continue  # already on file (never written twice)
                    finished += 1
                    if progress:
                        progress(finished, len(units), trajectory)
        finally:
            pool.close(cancel=True)
    selected = [done[u.id] for u in units if u.id in done]
    return RunResult(selected, errors, RunTrust.dropped_in(selected) if trust is not None else {})
