"""Verified benchmark samples: search catalog envs for steps in every stratum, fill quotas, re-execute.

EnvSimBench harvested its samples from agent rollouts, so hard strata (|Δ| 7-12) are scarce and a
few envs dominate them. Here the strata are searched for directly:

- Calls come from each env's constraint spec and states (`CompletenessRun.arguments`: typed
  candidates drawn from the state, boundary values) and run in the sandbox as walks from every
  initial state; later rounds start from states reached by short prefixes of successful writes
  and favour the tools whose spec says they can write enough fields for the buckets still short
  (how many distinct effect paths a tool has, or a loop). A step's state is the full state before
  it, so every item is self-contained (no prefix needed to replay it).
- Search jobs ship no snapshots: the state before each step is rebuilt from the initial snapshot
  and the executed deltas (structurally shared, so thousands of candidates stay cheap). The
  re-execution below checks that rebuilt states are real.
- Quotas are filled round-robin over envs, scarcest bucket first, preferring envs no bucket has
  used yet, so a bucket takes at most ceil(quota / envs) from one env while others still have
  candidates (EnvSimBench's rule, which spreads samples over as many envs as possible).
- Every chosen step is re-executed twice from its state in fresh inline-state jobs; it is kept
  only if observation, next state and Δ agree all three times and the state loads back as
  itself. A dropped step is replaced from the remaining candidates. Crashes and invalid calls
  are never samples.
- Buckets are the rungs of `catalog.bench.strata` (the audit's strata, same names). A refused call
  that changed state is not a sample (a correct env refuses without writing): the ladder puts it
  under `failure`, the export leaves it out, as it leaves out crashes and invalid calls.
- Spec extraction is static analysis of trusted code (no env code runs), so it runs on this
  machine's worker processes (verifier/samples/_spec_worker.py's recipe); every env call runs in
  the sandbox, on the executor's sandbox-job workers (`executors.sandbox_jobs`: threads here,
  Ray actors with `executor=ExecutorSpec("ray")`), each holding a one-worker sandbox pool that
  stays on one env while it has jobs. Everything is deterministic for a seed.
- The search, the quotas and spec extraction stay on this machine whatever the executor
  (extraction is cheap static analysis, a few seconds for hundreds of envs), so the export is
  the same item for item on either.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, item_id
from catalog.bench.strata import rung, rung_of
from catalog.models import Action, Outcome, StepResult
from catalog.state.delta import Delta, DeltaConflict, apply_delta, diff
from catalog.state.jsonable import canonical_json, json_equal
from catalog.store import Catalog, CatalogError, EnvHandle
from constraints.completeness import CompletenessRun
from constraints.normalize import env_modules
from constraints.spec import ConstraintSpec, ToolSpec
from executors import LOCAL, ExecutorSpec, WorkerLost, open_pool
from executors.sandbox_jobs import JobPool, open_sandbox_pool
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult
from verifier.audit.results import RESULTS_FILE, is_wrong, load_results
from verifier.samples._spec_worker import SpecExtraction, extract
from verifier.samples.compositions import BUCKETS, Composition, CompositionError
from verifier.samples.report import BucketReport, ExportReport, render_export_report

__all__ = ["BUCKETS", "Composition", "CompositionError", "ExportResult", "export_samples",
           "export_failures", "render_export_report", "ExportReport", "ProgressFn"]

LOOP_POTENTIAL = 10**6  # a write inside a loop can change any number of records

ProgressFn = Callable[[str, int, int], None]
"""progress(stage, done, total): stages are `specs`, `search N` (rounds) and `verify`."""


def _sample_bucket(outcome: str, delta_size: int, arg_count: int) -> str | None:
    """The bucket of a step that can be a sample, or None: crashes, invalid calls and refusals that wrote.

    >>> [_sample_bucket("success", n, 1) for n in (0, 2, 5, 9, 20)]
    ['no_change_args1', 'simple_2', 'medium_5', 'difficult_7_12', 'beyond_13+']
    >>> _sample_bucket("failure", 0, 2), _sample_bucket("failure", 3, 2), _sample_bucket("crash", 0, 0)
    ('failure', None, None)
    """
    if outcome not in (Outcome.SUCCESS.value, Outcome.FAILURE.value):
        return None
    if outcome == Outcome.FAILURE.value and delta_size > 0:
        return None
    return rung_of(outcome, delta_size, arg_count).name


# --- search -----------------------------------------------------------------------------------------
@dataclass
class _Candidate:
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


class _EnvSearch:
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
        self.candidates: dict[str, list[_Candidate]] = {b: [] for b in BUCKETS}
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
            bucket = _sample_bucket(call.outcome, len(call.delta), arity)
            key = canonical_json([job.state_name, writes, action])
            if call.outcome == Outcome.SUCCESS.value:
                self.observe_reach(action["name"], len(call.delta))
            if bucket is not None and key not in self.keys and len(self.candidates[bucket]) < self.MAX_PER_BUCKET:
                self.keys.add(key)
                self.candidates[bucket].append(_Candidate(self.id, bucket, key, state, action, call.observation,
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


def _extract_all(handles: list[EnvHandle], workers: int, progress: ProgressFn, *,
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


# --- export -----------------------------------------------------------------------------------------
@dataclass
class ExportResult:
    """The verified items (bucket order, deterministic) and the report of how they were found."""

    items: list[BenchItem]
    report: ExportReport


def env_doc(handle: EnvHandle) -> str:
    m = handle.manifest
    lines = [m.name, m.description]
    if m.rules:
        lines += ["Rules:", *(f"- {rule}" for rule in m.rules)]
    return "\n".join(line for line in lines if line)


class _Exporter:
    MAX_ROUNDS = 6
    VERIFY_PASSES = 6

    def __init__(self, catalog: Catalog, composition: Composition, seed: int, workers: int,
                 env_ids: list[str] | None, progress: ProgressFn | None, timeout: float,
                 executor: ExecutorSpec | None = None) -> None:
        self.catalog, self.composition, self.seed = catalog, composition, seed
        self.executor = executor or ExecutorSpec()
        self.progress = progress or (lambda stage, done, total: None)
        self.env_ids = env_ids
        self.workers, self.timeout = workers, timeout
        self.searches: list[_EnvSearch] = []
        self.sandbox_jobs = 0
        self.sandbox_calls = 0
        self.skipped: dict[str, str] = {}
        self.verified: dict[str, tuple[bool, str]] = {}
        self.items: dict[str, BenchItem] = {}
        self.identities: dict[str, str] = {}
        self.rounds = 0
        self.specs_seconds = 0.0

    # --- setup ------------------------------------------------------------------------------------
    def load(self) -> None:
        if self.env_ids is None:
            summaries, problems = self.catalog.list()
            ids = [s.id for s in summaries]
            self.skipped.update({p.path.name: f"broken: {p.reason}" for p in problems})
        else:
            ids = list(dict.fromkeys(self.env_ids))
        handles = []
        for env_id in sorted(ids):
            try:
                handle = self.catalog.get(env_id)
            except CatalogError as exc:
                if self.env_ids is not None:
                    raise
                self.skipped[env_id] = str(exc)
                continue
            if not handle.state_names():
                self.skipped[env_id] = "no initial states"
                continue
            handles.append(handle)
        for handle, spec in zip(handles, _extract_all(handles, self.workers, self.progress), strict=True):
            if isinstance(spec, str):
                self.skipped[handle.id] = spec  # an env without a spec gives no samples, not a failed export
                continue
            search = _EnvSearch(handle, spec, self.seed)
            if not search.tools:
                self.skipped[handle.id] = "no tools"
                continue
            self.searches.append(search)

    # --- search -----------------------------------------------------------------------------------
    def run_jobs(self, pool: JobPool, jobs: list[Job]) -> list[JobResult]:
        """Run jobs in the sandbox (results in input order), counting jobs and calls for the report."""
        self.sandbox_jobs += len(jobs)
        self.sandbox_calls += sum(len(job.actions) for job in jobs)
        return pool.run_many(jobs)

    def execute(self, pool: JobPool, planned: list[tuple[_EnvSearch, Job]]) -> None:
        results = self.run_jobs(pool, [job for _, job in planned])
        for (search, job), result in zip(planned, results, strict=True):
            search.absorb(job, result)

    def wanted(self, counts: dict[str, int]) -> dict[str, int]:
        """Per short bucket, how many candidates each env that can reach it should find."""
        short = {}
        for bucket, quota in counts.items():
            if quota <= 0:
                continue
            reachers = [s for s in self.searches if s.nodes and s.can_reach(bucket)]
            with_some = sum(bool(s.candidates[bucket]) for s in reachers)
            total = sum(len(s.candidates[bucket]) for s in reachers)
            if with_some >= quota and total >= quota + max(3, quota // 4):
                continue
            short[bucket] = max(2, math.ceil(1.5 * quota / max(1, len(reachers))))
        return short

    def search(self, pool: JobPool) -> None:
        self.rounds = 1
        self.progress("search 1", 0, 1)
        self.execute(pool, [(s, job) for s in self.searches for job in s.probe_jobs()])
        for search in self.searches:
            if not search.initial:
                problem = next(iter(search.events), "no state loads")
                self.skipped[search.id] = f"no initial state loads in the sandbox ({problem})"
        counts = self.composition.counts
        for round_number in range(2, self.MAX_ROUNDS + 1):
            short = self.wanted(counts)
            planned: list[tuple[_EnvSearch, Job]] = []
            for search in self.searches:
                if not search.nodes:  # no initial state loaded
                    continue
                wanted = [b for b, target in short.items() if search.can_reach(b)
                          and len(search.candidates[b]) < target]
                if wanted:
                    planned.extend((search, job) for job in search.target_jobs(wanted))
            if not planned:
                break
            self.rounds = round_number
            self.progress(f"search {round_number}", 0, 1)
            self.execute(pool, planned)

    # --- selection --------------------------------------------------------------------------------
    def select(self, counts: dict[str, int]) -> dict[str, list[_Candidate]]:
        """Fill quotas round-robin over envs (scarcest bucket first, unused envs first); skips bad candidates."""
        rng = random.Random(self.seed)
        pools: dict[str, dict[str, list[_Candidate]]] = {}
        for bucket in counts:
            pools[bucket] = {}
            for search in self.searches:
                good = [c for c in search.candidates[bucket] if self.verified.get(c.key, (True, ""))[0]]
                if good:
                    rng.shuffle(good)
                    pools[bucket][search.id] = good
        order = sorted(counts, key=lambda b: (len(pools[b]), sum(map(len, pools[b].values())), BUCKETS.index(b)))
        used: Counter[str] = Counter()
        taken: set[str] = set()
        chosen: dict[str, list[_Candidate]] = {}
        for bucket in order:
            quota = counts[bucket]
            envs = sorted(pools[bucket])
            rng.shuffle(envs)
            envs.sort(key=lambda env: used[env])  # stable: unused envs first, seeded order within
            queues = {env: list(pools[bucket][env]) for env in envs}
            tools: dict[str, Counter[str]] = {env: Counter() for env in envs}
            picks: list[_Candidate] = []
            while len(picks) < quota and any(queues.values()):
                for env in envs:
                    while len(picks) < quota and queues[env]:
                        queue = queues[env]
                        best = min(range(len(queue)), key=lambda i: (tools[env][queue[i].action["name"]], i))
                        pick = queue.pop(best)
                        identity = self.identity(pick)
                        if identity in taken:  # the same state and action reached by another prefix
                            continue
                        taken.add(identity)
                        tools[env][pick.action["name"]] += 1
                        picks.append(pick)
                        break
            for pick in picks:
                used[pick.env] += 1
            chosen[bucket] = picks
        return {b: chosen[b] for b in counts}

    def identity(self, candidate: _Candidate) -> str:
        """The item id a candidate would get (cached: hashing a full state is not free)."""
        if candidate.key not in self.identities:
            action = Action.model_validate(candidate.action)
            self.identities[candidate.key] = item_id(candidate.env, candidate.state, action)
        return self.identities[candidate.key]

    # --- verification -----------------------------------------------------------------------------
    def verify(self, pool: JobPool, candidates: list[_Candidate]) -> None:
        """Re-execute each new candidate twice from its state; record whether all three runs agree."""
        todo = [c for c in candidates if c.key not in self.verified]
        if not todo:
            return
        handles = {s.id: s.handle for s in self.searches}
        jobs = []
        for candidate in todo:
            for _ in range(2):
                job = Job.for_env(handles[candidate.env], [candidate.action], state=candidate.state, snapshot=True)
                jobs.append(job)
        results = self.run_jobs(pool, jobs)
        for index, candidate in enumerate(todo):
            ok, reason, item = self.check(candidate, results[2 * index: 2 * index + 2], handles[candidate.env])
            self.verified[candidate.key] = (ok, reason)
            if item is not None:
                self.items[candidate.key] = item

    def check(self, c: _Candidate, reruns: list[JobResult], handle: EnvHandle) -> tuple[bool, str, BenchItem | None]:
        try:
            expected = apply_delta(c.state, Delta.validate_python(c.delta))
        except (DeltaConflict, ValueError) as exc:
            return False, f"delta does not apply to its state: {exc}", None
        for run in reruns:
            if run.event or len(run.calls) != 1 or run.calls[0].event:
                return False, f"re-execution event: {run.event or (run.calls[0].event if run.calls else 'no call')}", None
            call = run.calls[0]
            if run.initial_state is None or not json_equal(run.initial_state, c.state):
                return False, "state does not load back as itself", None
            if call.outcome != c.outcome:
                return False, f"outcome {call.outcome} on re-execution, was {c.outcome}", None
            if not json_equal(call.observation, c.observation):
                return False, "observation differs on re-execution", None
            if call.state is None or not json_equal(call.state, expected):
                return False, "next state differs on re-execution", None
            if not json_equal(Delta.dump_python(call.delta, mode="json"), c.delta):
                return False, "delta differs on re-execution", None
        ops = diff(c.state, expected)
        if not json_equal(Delta.dump_python(ops, mode="json"), c.delta):
            return False, "tracked delta disagrees with the state diff", None
        state = json.loads(canonical_json(c.state))
        action = Action.model_validate(c.action)
        arity = len(action.arguments)
        step = StepResult(observation=json.loads(canonical_json(c.observation)), delta=ops,
                          outcome=Outcome(c.outcome), state=json.loads(canonical_json(expected)))
        item = BenchItem.from_step(c.env, state, action, step, env_kind=handle.manifest.kind,
                                   env_entry=handle.manifest.entry, env_code=handle.source(), env_doc=env_doc(handle))
        if _sample_bucket(c.outcome, len(ops), arity) != c.bucket:
            return False, "bucket changed on re-execution", None
        return True, "", item

    def fill(self, pool: JobPool, counts: dict[str, int]) -> dict[str, list[_Candidate]]:
        """Select, verify, replace the dropped, until the selection is verified (or candidates run out)."""
        chosen: dict[str, list[_Candidate]] = {}
        for passes in range(1, self.VERIFY_PASSES + 1):
            chosen = self.select(counts)
            pending = [c for picks in chosen.values() for c in picks if c.key not in self.verified]
            self.progress("verify", passes, self.VERIFY_PASSES)
            if not pending:
                break
            self.verify(pool, pending)
        return {b: [c for c in picks if self.verified.get(c.key, (False, ""))[0]] for b, picks in chosen.items()}

    # --- the whole export --------------------------------------------------------------------------
    def run(self) -> ExportResult:
        started = time.perf_counter()
        self.load()
        self.specs_seconds = time.perf_counter() - started
        with open_sandbox_pool(self.executor, self.workers, timeout=self.timeout) as pool:
            self.search(pool)
            searched = time.perf_counter()
            composition = self.composition
            chosen = self.fill(pool, composition.counts)
            composition, moved = composition.redistribute({b: len(p) for b, p in chosen.items()})
            if moved:  # an optional bucket (13+) came up short: the others make up the total
                chosen = self.fill(pool, composition.counts)
        items: list[BenchItem] = []
        seen: set[str] = set()
        for bucket in composition.counts:
            for candidate in chosen.get(bucket, []):
                item = self.items[candidate.key]
                if item.id not in seen:
                    seen.add(item.id)
                    items.append(item)
        report = self.report(composition, moved, chosen, items, started, searched)
        return ExportResult(items, report)

    def report(self, composition: Composition, moved: dict[str, int], chosen: dict[str, list[_Candidate]],
               items: list[BenchItem], started: float, searched: float) -> ExportReport:
        buckets = {}
        drops_by_bucket: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for search in self.searches:
            for bucket, candidates in search.candidates.items():
                for c in candidates:
                    ok, reason = self.verified.get(c.key, (True, ""))
                    if not ok:
                        drops_by_bucket[bucket] += 1
                        reasons[reason] += 1
        for bucket, wanted in composition.counts.items():
            picks = chosen.get(bucket, [])
            buckets[bucket] = BucketReport(
                wanted=wanted,
                found=len(picks),
                distinct_envs=len({c.env for c in picks}),
                dropped_non_reproducible=drops_by_bucket[bucket],
                candidates=sum(len(s.candidates[bucket]) for s in self.searches),
                envs_with_candidates=sum(bool(s.candidates[bucket]) for s in self.searches),
            )
        events: Counter[str] = Counter()
        for search in self.searches:
            events.update(search.events)
        return ExportReport(
            composition=composition.name,
            seed=self.seed,
            wanted=composition.total,
            exported=len(items),
            quotas_met=all(b.found == b.wanted for b in buckets.values()),
            distinct_envs=len({item.env_id for item in items}),
            envs_searched=sum(bool(s.initial) for s in self.searches),
            envs_skipped=dict(sorted(self.skipped.items())),
            buckets=buckets,
            optional_shortfall=moved,
            dropped_non_reproducible=sum(drops_by_bucket.values()),
            drop_reasons=dict(reasons.most_common()),
            search_rounds=self.rounds,
            steps_executed=sum(s.steps for s in self.searches),
            sandbox_jobs=self.sandbox_jobs,
            sandbox_calls=self.sandbox_calls,
            sandbox_events=dict(events.most_common(10)),
            reexecuted=2 * len(self.verified),
            seconds=round(time.perf_counter() - started, 2),
            specs_seconds=round(self.specs_seconds, 2),
            search_seconds=round(searched - started - self.specs_seconds, 2),
        )


def export_samples(catalog: Catalog, composition: Composition, *, seed: int = 0, workers: int = 2,
                   env_ids: list[str] | None = None, progress: ProgressFn | None = None,
                   timeout: float = DEFAULT_TIMEOUT, executor: ExecutorSpec | None = None) -> ExportResult:
    """Search catalog envs for verified samples filling `composition` (deterministic for a seed).

    `env_ids` restricts the search (unknown ids raise CatalogError); `workers` sandbox workers run
    the env code; `progress(stage, done, total)` reports specs, search rounds and verification.
    The report says per bucket: wanted, found, distinct envs, candidates, dropped as
    non-reproducible; and overall: distinct envs, re-executions, timings, sandbox use. `executor`
    ray runs the sandbox jobs on `workers` Ray actors instead (same items).
    """
    return _Exporter(catalog, composition, seed, workers, env_ids, progress, timeout, executor).run()


# --- failures of an audit ---------------------------------------------------------------------------
def export_failures(audit_dir: Path | str) -> list[BenchItem]:
    """The items an audited simulator got wrong (the audit's `is_wrong`: not verified, abstained or errored).

    Reads `results.jsonl` of an audit folder with the audit's own reader (the last record of an id
    wins, torn lines are skipped). Order: as first seen in the file.
    """
    path = Path(audit_dir) / RESULTS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: is {audit_dir} an audit folder (audit-sim --out)?")
    return [BenchItem.model_validate(record["item"]) for record in load_results(audit_dir).values()
            if is_wrong(record)]
