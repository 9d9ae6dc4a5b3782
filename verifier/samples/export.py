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

import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, env_context, item_id
from catalog.models import Action, Outcome, StepResult
from catalog.state.delta import Delta, DeltaConflict, apply_delta, diff
from catalog.state.jsonable import json_equal
from catalog.store import Catalog, CatalogError, EnvHandle
from executors import ExecutorSpec
from executors.sandbox_jobs import JobPool, open_sandbox_pool
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult
from verifier.audit.results import RESULTS_FILE, is_wrong, load_results
from verifier.samples.compositions import BUCKETS, Composition, CompositionError
from verifier.samples.report import BucketReport, ExportReport, render_export_report
from verifier.samples.search import Candidate, EnvSearch, ProgressFn, extract_specs, sample_bucket

__all__ = ["BUCKETS", "Composition", "CompositionError", "ExportResult", "export_samples",
           "export_failures", "render_export_report", "ExportReport", "ProgressFn"]




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
        self.searches: list[EnvSearch] = []
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
        for handle, spec in zip(handles, extract_specs(handles, self.workers, self.progress), strict=True):
            if isinstance(spec, str):
                self.skipped[handle.id] = spec  # an env without a spec gives no samples, not a failed export
                continue
            search = EnvSearch(handle, spec, self.seed)
            if not search.tools:
                self.skipped[handle.id] = "no tools"
                continue
            self.searches.append(search)

    # --- search -----------------------------------------------------------------------------------
    def run_jobs(self, pool: JobPool, jobs: list[Job], stage: str) -> list[JobResult]:
        """Run jobs in the sandbox (results in input order), counting jobs and calls for the report.

        `progress(stage, done, total)` counts the jobs of `stage` as they finish.
        """
        self.sandbox_jobs += len(jobs)
        self.sandbox_calls += sum(len(job.actions) for job in jobs)
        self.progress(stage, 0, len(jobs))
        return pool.run_many(jobs, progress=lambda done, total: self.progress(stage, done, total))

    def execute(self, pool: JobPool, planned: list[tuple[EnvSearch, Job]], stage: str) -> None:
        results = self.run_jobs(pool, [job for _, job in planned], stage)
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
        self.execute(pool, [(s, job) for s in self.searches for job in s.probe_jobs()], "search 1")
        for search in self.searches:
            if not search.initial:
                problem = next(iter(search.events), "no state loads")
                self.skipped[search.id] = f"no initial state loads in the sandbox ({problem})"
        counts = self.composition.counts
        for round_number in range(2, self.MAX_ROUNDS + 1):
            short = self.wanted(counts)
            planned: list[tuple[EnvSearch, Job]] = []
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
            self.execute(pool, planned, f"search {round_number}")

    # --- selection --------------------------------------------------------------------------------
    def select(self, counts: dict[str, int]) -> dict[str, list[Candidate]]:
        """Fill quotas round-robin over envs (scarcest bucket first, unused envs first); skips bad candidates."""
        rng = random.Random(self.seed)
        pools: dict[str, dict[str, list[Candidate]]] = {}
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
        chosen: dict[str, list[Candidate]] = {}
        for bucket in order:
            quota = counts[bucket]
            envs = sorted(pools[bucket])
            rng.shuffle(envs)
            envs.sort(key=lambda env: used[env])  # stable: unused envs first, seeded order within
            queues = {env: list(pools[bucket][env]) for env in envs}
            tools: dict[str, Counter[str]] = {env: Counter() for env in envs}
            picks: list[Candidate] = []
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

    def identity(self, candidate: Candidate) -> str:
        """The item id a candidate would get (cached: hashing a full state is not free)."""
        if candidate.key not in self.identities:
            action = Action.model_validate(candidate.action)
            self.identities[candidate.key] = item_id(candidate.env, candidate.state, action)
        return self.identities[candidate.key]

    # --- verification -----------------------------------------------------------------------------
    def verify(self, pool: JobPool, candidates: list[Candidate], stage: str = "verify") -> None:
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
        results = self.run_jobs(pool, jobs, stage)
        for index, candidate in enumerate(todo):
            ok, reason, item = self.check(candidate, results[2 * index: 2 * index + 2], handles[candidate.env])
            self.verified[candidate.key] = (ok, reason)
            if item is not None:
                self.items[candidate.key] = item

    def check(self, c: Candidate, reruns: list[JobResult], handle: EnvHandle) -> tuple[bool, str, BenchItem | None]:
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
        state = _own(c.state)
        action = Action.model_validate(c.action)
        arity = len(action.arguments)
        step = StepResult(observation=_own(c.observation), delta=ops, outcome=Outcome(c.outcome), state=_own(expected))
        item = BenchItem.from_step(c.env, state, action, step, **env_context(handle.manifest),
                                   env_code=handle.source(), env_doc=env_doc(handle))
        if sample_bucket(c.outcome, len(ops), arity) != c.bucket:
            return False, "bucket changed on re-execution", None
        return True, "", item

    def fill(self, pool: JobPool, counts: dict[str, int]) -> dict[str, list[Candidate]]:
        """Select, verify, replace the dropped, until the selection is verified (or candidates run out)."""
        chosen: dict[str, list[Candidate]] = {}
        for passes in range(1, self.VERIFY_PASSES + 1):
            chosen = self.select(counts)
            pending = [c for picks in chosen.values() for c in picks if c.key not in self.verified]
            if not pending:
                break
            self.verify(pool, pending, f"verify {passes}")
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

    def report(self, composition: Composition, moved: dict[str, int], chosen: dict[str, list[Candidate]],
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


def _own(value: object) -> Any:
    """A copy of JSON data of its own, in its key order: the order the step ran in.

    A class env iterates its dicts in insertion order, which the state's JSON keeps: sorting the
    keys of a sample's state would hand a simulator another state than the one that gave its answer.
    """
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


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
