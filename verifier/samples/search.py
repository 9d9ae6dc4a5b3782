"""The search for benchmark samples: walks over an env's spec-typed calls in the sandbox, by stratum.

See verifier/samples/export.py for how the search's candidates become verified samples.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from catalog.bench.strata import rung, rung_of
from catalog.models import Action, Outcome
from catalog.state.delta import Delta, DeltaConflict, apply_delta
from catalog.state.jsonable import canonical_json
from catalog.store import EnvHandle
from constraints.completeness import CompletenessRun
from constraints.normalize import env_modules
from constraints.spec import ConstraintSpec, ToolSpec
from executors import LOCAL, WorkerLost, open_pool
from sandbox.pool import Job, JobResult
from verifier.samples._spec_worker import SpecExtraction, extract
from verifier.samples.compositions import BUCKETS

ProgressFn = Callable[[str, int, int], None]
"""progress(stage, done, total): stages are `specs`, `search N` (rounds) and `verify`."""

LOOP_POTENTIAL = 10**6  # a write inside a loop can change any number of records


def sample_bucket(outcome: str, delta_size: int, arg_count: int) -> str | None:
    """The bucket of a step that can be a sample, or None: crashes, invalid calls and refusals that wrote.

    >>> [sample_bucket("success", n, 1) for n in (0, 2, 5, 9, 20)]
    ['no_change_args1', 'simple_2', 'medium_5', 'difficult_7_12', 'beyond_13+']
    >>> sample_bucket("failure", 0, 2), sample_bucket("failure", 3, 2), sample_bucket("crash", 0, 0)
    ('failure', None, None)
    """
    if outcome not in (Outcome.SUCCESS.value, Outcome.FAILURE.value):
        return None
    if outcome == Outcome.FAILURE.value and delta_size > 0:
        return None
    return rung_of(outcome, delta_size, arg_count).name


# --- search -----------------------------------------------------------------------------------------
@dataclass
class Candidate:
    """An executed step: enough to rebuild the item (its state is rebuilt, shared with its neighbours)."""

    env: str
    bucket: str
    key: str
    state: dict[str, Any]
    action: dict[str, Any]
    observation: Any
    delta: list[dict[str, Any]]
    outcome: str


@dataclass
class _Node:
    """A state to start walks from: an initial state, or one reached by a prefix of successful writes."""

    state_name: str
    prefix: list[dict[str, Any]]
    state: dict[str, Any]
    expansions: int = 0


def _potential(tool: ToolSpec) -> int:
    """How many state paths a tool can change at most, by its spec (distinct effect paths, or a loop)."""
    effects = [e for e in tool.effects if not e.unfollowed]
    if any(e.in_loop for e in effects):
        return LOOP_POTENTIAL
    return len({tuple(e.path) for e in effects})


def _derived_seed(seed: int, env_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{env_id}".encode()).digest()[:8], "big")


class EnvSearch:
    """The search state of one env: its argument generator, walk start nodes and candidates per bucket."""

    PROBE_WALKS = 4
    TARGET_WALKS = 5
    WALK_LENGTH = 5
    MAX_PREFIX = 3
    MAX_NODES = 60
    MAX_PER_BUCKET = 60

    def __init__(self, handle: EnvHandle, spec: ConstraintSpec, seed: int) -> None:
        self.handle = handle
        self.id = handle.id
        self.run = _Calls(handle, spec, _derived_seed(seed, handle.id))
        self.rng = self.run.rng
        tools = self.run.spec.tools
        self.tools = sorted(tools)
        self.write = {t: "write" in (tools[t].inferred_kind, tools[t].declared_kind) for t in self.tools}
        self.params = {t: len(tools[t].params) for t in self.tools}
        self.reach = {t: _potential(tools[t]) for t in self.tools}
        self.initial: dict[str, dict[str, Any]] = {}
        self.nodes: list[_Node] = []
        self.node_keys: set[str] = set()
        self.candidates: dict[str, list[Candidate]] = {b: [] for b in BUCKETS}
        self.keys: set[str] = set()
        self.steps = 0
        self.events: Counter[str] = Counter()

    # --- capabilities -----------------------------------------------------------------------------
    def can_reach(self, bucket: str) -> bool:
        """Whether some tool could land a step in `bucket` (by spec, or seen doing so)."""
        if self.candidates[bucket]:
            return True
        if bucket == "failure":
            return True
        step = rung(bucket)
        if step.group == "no_change":
            return any(not self.write[t] and self.params[t] >= step.args[0] for t in self.tools)
        need = step.min_delta or 0
        return any(self.write[t] and self.reach[t] >= need for t in self.tools)

    def observe_reach(self, tool: str, size: int) -> None:
        self.reach[tool] = max(self.reach.get(tool, 0), size)

    # --- generation -------------------------------------------------------------------------------
    def action(self, tool: str, state: dict[str, Any], boundary: bool) -> dict[str, Any]:
        return Action(name=tool, arguments=self.run.arguments(tool, state, boundary)).model_dump(mode="json")

    def probe_jobs(self) -> list[Job]:
        """Round 1: a snapshot job per initial state, then walks that call every tool once in random order."""
        jobs = []
        for name in self.handle.state_names():
            jobs.append(Job.for_env(self.handle, [], state_name=name, snapshot=True))
            state = self.run.states[name]
            for _ in range(self.PROBE_WALKS):
                order = list(self.tools)
                self.rng.shuffle(order)
                actions = [self.action(t, state, self.rng.random() < 0.2) for t in order]
                jobs.append(Job.for_env(self.handle, actions, state_name=name))
        return jobs

    def target_jobs(self, wanted: list[str]) -> list[Job]:
        """A later round: walks from reached states, tools weighted toward the wanted buckets."""
        weights = []
        for tool in self.tools:
            weight = 1.0
            for bucket in wanted:
                step = rung(bucket)
                need = step.min_delta or 0
                if bucket == "failure":
                    weight += 1.0
                elif need == 0:
                    reads = not self.write[tool] and step.holds("success", 0, self.params[tool])
                    weight += 6.0 if reads else 0.0
                elif self.write[tool] and self.reach[tool] >= need:
                    weight += 8.0
            weights.append(weight)
        boundary = 0.5 if "failure" in wanted else 0.1
        jobs = []
        for _ in range(self.TARGET_WALKS):
            node = self.pick_node()
            node.expansions += 1
            walk = [self.action(tool, node.state, self.rng.random() < boundary)
                    for tool in self.rng.choices(self.tools, weights=weights, k=self.WALK_LENGTH)]
            jobs.append(Job.for_env(self.handle, [*node.prefix, *walk], state_name=node.state_name))
        return jobs

    def pick_node(self) -> _Node:
        """A start node among those expanded least, so walks start from every reached state in turn."""
        fewest = min(n.expansions for n in self.nodes)
        fresh = [n for n in self.nodes if n.expansions == fewest]
        return self.rng.choice(fresh)

    # --- results ----------------------------------------------------------------------------------
    def absorb(self, job: Job, result: JobResult) -> None:
        """Turn a job's executed steps into candidates and new start nodes."""
        if job.state_name is None:
            return
        if not job.actions:
            if result.initial_state is not None:
                self.initial[job.state_name] = result.initial_state
                self.add_node(_Node(job.state_name, [], result.initial_state))
            else:
                self.events[f"state {job.state_name} does not load: {result.event}"] += 1
            return
        if result.event:
            self.events[result.event.split(":")[0]] += 1
        state = self.initial.get(job.state_name)
        if state is None:
            return
        writes: list[dict[str, Any]] = []
        for action, call in zip(job.actions, result.calls, strict=False):
            self.steps += 1
            if call.event is not None or call.outcome not in (Outcome.SUCCESS.value, Outcome.FAILURE.value):
                if call.delta:
                    return  # a crash that changed something: later states cannot be trusted
                continue
            arity = len(action.get("arguments", {}))
            bucket = sample_bucket(call.outcome, len(call.delta), arity)
            key = canonical_json([job.state_name, writes, action])
            if call.outcome == Outcome.SUCCESS.value:
                self.observe_reach(action["name"], len(call.delta))
            if bucket is not None and key not in self.keys and len(self.candidates[bucket]) < self.MAX_PER_BUCKET:
                self.keys.add(key)
                self.candidates[bucket].append(Candidate(self.id, bucket, key, state, action, call.observation,
                                                          Delta.dump_python(call.delta, mode="json"), call.outcome.value))
            if call.delta:
                try:
                    state = apply_delta(state, call.delta)
                except (DeltaConflict, ValueError):
                    return
                writes = [*writes, action]
                if call.outcome == Outcome.SUCCESS.value and len(writes) <= self.MAX_PREFIX:
                    self.add_node(_Node(job.state_name, writes, state))

    def add_node(self, node: _Node) -> None:
        key = canonical_json([node.state_name, node.prefix])
        if key in self.node_keys or len(self.nodes) >= self.MAX_NODES:
            return
        self.node_keys.add(key)
        self.nodes.append(node)


class _Calls(CompletenessRun):
    """CompletenessRun's call generation (typed candidates from the state, boundary values) on a given spec.

    The spec is extracted beforehand, in parallel processes (extraction is most of an export's
    CPU time), and handed in; only `arguments()` is used, so nothing runs env code here.
    """

    def __init__(self, handle: EnvHandle, spec: ConstraintSpec, seed: int) -> None:
        super().__init__(handle, seed=seed, spec=spec)


def extract_specs(handles: list[EnvHandle], workers: int, progress: ProgressFn, *,
                 min_parallel: int = 16) -> list[ConstraintSpec | str]:
    """Specs of all envs, in order; on `workers` worker processes when there are enough envs to pay for them.

    Extraction parses trusted source and runs no env code, so it runs on this machine's
    processes (`executors.open_pool` with the `SpecExtraction` recipe), whatever executor runs
    the export's sandbox jobs: it is cheap next to them, and the search that needs it is here.
    An env whose worker was lost is extracted here instead.
    """
    args = [[h.source(), h.manifest.kind, h.manifest.entry, list(h.manifest.failure_exceptions),
             h.manifest.convention or "class",
             env_modules(h.path) if (h.manifest.convention or "class") != "class" else None] for h in handles]
    specs: list[ConstraintSpec | str | None] = [None] * len(args)
    if workers > 1 and len(args) >= max(min_parallel, 2):
        with open_pool(LOCAL, SpecExtraction(), workers, name="specs") as pool:
            futures = {pool.submit(unit): index for index, unit in enumerate(args)}
            for done, future in enumerate(cf.as_completed(futures), start=1):
                with contextlib.suppress(WorkerLost):
                    specs[futures[future]] = future.result()
                progress("specs", done, len(args))
    for index, spec in enumerate(specs):
        if spec is None:
            progress("specs", index, len(args))
            specs[index] = extract(args[index])
    progress("specs", len(args), len(args))
    return [s if s is not None else "spec extraction failed" for s in specs]
