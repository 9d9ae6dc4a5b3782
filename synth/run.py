"""The synthesis run: proposes candidate slots until N envs are registered, resumably.

Layout of a run, under `<catalog>/.runs/<run_id>/`: `config.json` (what was asked), `run.sqlite`
(one row per slot: topic, status, summary; the source of truth for counting),
`checkpoints.sqlite` (LangGraph's SQLite checkpointer, one thread per slot), `staging/` (envs
being gated). Mining and dedup run in order in this process, so which topics survive does not
depend on worker timing; the rest of each slot's graph runs in a worker process.

Resuming (`--resume RUN_ID`) reads the slots table: finished slots are kept, interrupted ones
continue from their last checkpoint (the register step rewrites the same env id, so a crash
between writing and checkpointing cannot duplicate an env), and new slots are proposed until
exactly N are registered. At most N - registered slots are in flight, so a run never registers
more than asked.

A run never replaces an env it did not write: an id the catalog already has (another run's,
the same seed run again, an import, a hand-edited env) ends its slot as "existing" and the run
proposes another. A run holds the catalog's writer lock (`<catalog>/.lock`) throughout, so a
second run into the same catalog waits, then sees every env the first registered.

Where a slot's worker runs is the executor's choice (`executor=`, executors): spawned
processes here (default) or Ray actors. It is a keyword of `synthesize`, not part of the run's
config, so a run started locally may be resumed on a cluster and back. The driver is the only
writer of run.sqlite. A worker killed mid-slot is replaced and the slot continues from its last checkpoint,
so it is neither lost nor counted twice. On Ray no worker opens the run folder: checkpoints go
through an actor on the driver's node (synth/checkpoint_host.py: SQLite's WAL needs one host),
staging is in the worker's own scratch folder, and the worker stops before `register`, which the
driver runs, so other nodes need no shared filesystem (local workers register their envs
themselves: writing one is mostly fsync, which on one busy disk is the slow serial part). They
must reach the model endpoints: an embedded model is served by the driver on 127.0.0.1, which
only this node's workers reach, so a multi-node LLM run needs a server every node can reach (a
registry model with a base_url).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import json
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from catalog.runs.files import atomic_write
from catalog.runs.progress import Progress
from catalog.search.index import catalog_dedup_filter
from catalog.search.vectors import DedupFilter
from catalog.store import Catalog
from executors import LOCAL, ExecutorSpec, Recipe, WorkerPool, open_pool
from sandbox.isolation import default_isolation, require_isolation
from synth.backends import resolve_models
from synth.checkpoint_host import host_checkpoints, stop_host
from synth.pipeline import FINAL, SKIPPED, Context, build_graph
from synth.report import SynthesisReport, write_report
from synth.run_config import Endpoint, RunConfig, RunError, RunModels, read_run_config, runs_dir
from synth.shortfall import PROBE, default_max_proposals, probe_topics, shortfall

__all__ = ["RunConfig", "RunError", "RunModels", "resolve_models", "runs_dir", "schema_signature", "synthesize"]

# --- the slots table --------------------------------------------------------------------------------

def _db(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=60, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("""CREATE TABLE IF NOT EXISTS slots (slot INTEGER PRIMARY KEY, env_id TEXT, topic TEXT,
                          status TEXT, reason TEXT, summary TEXT)""")
    return connection


def _set_slot(db: sqlite3.Connection, slot: int, **values: Any) -> None:
    """Update one slot's row in one transaction (a kill never leaves a status without its summary)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("INSERT OR IGNORE INTO slots (slot, status) VALUES (?, 'proposed')", (slot,))
        for key, value in values.items():
            db.execute(f"UPDATE slots SET {key} = ? WHERE slot = ?",  # noqa: S608 - keys are ours
                       (json.dumps(value) if isinstance(value, (dict, list)) else value, slot))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _slots(db: sqlite3.Connection) -> dict[int, dict[str, Any]]:
    out = {}
    for slot, env_id, topic, status, reason, summary in db.execute("SELECT * FROM slots ORDER BY slot"):
        out[slot] = {"slot": slot, "env_id": env_id, "topic": topic, "status": status, "reason": reason,
                     "summary": json.loads(summary) if summary else None}
    return out


# --- workers ----------------------------------------------------------------------------------------

def _open_graph(run_dir: Path, config: RunConfig, models: RunModels, *, dedup: DedupFilter | None,
                checkpoints: Any = None) -> tuple[Any, Context, Any]:
    """The slot graph and its context; `checkpoints` (a Ray worker's `RemoteCheckpoints`) replaces the run's file.

    A worker given `checkpoints` works in a scratch folder of its own node (staging, static checks)
    and never touches the run folder: the driver registers its envs.
    """
    from synth.backends import make_generator
    from synth.checkpoint_host import open_saver

    connection = None
    if checkpoints is None:
        checkpoints, connection = open_saver(run_dir / "checkpoints.sqlite")
    else:
        run_dir = Path(tempfile.mkdtemp(prefix="envforge-slots-"))
    generator = make_generator(config, models.generator)
    ctx = Context(run_dir=run_dir, catalog=Catalog(config.catalog), generator=generator, dedup=dedup,
                  gate_examples=config.gate_examples, gate_effort=config.gate_effort)
    if models.judge is not None:
        from synth.llm.judge import RuleJudge

        ctx.judge = RuleJudge(models.judge.spec, base_url=models.judge.base_url, seed=config.seed)
    return build_graph(ctx, checkpointer=checkpoints), ctx, connection


class _SlotWorker:
    """A worker's slot graph, opened once: runs a slot from its last checkpoint to its end per unit."""

    def __init__(self, recipe: SlotWorkers) -> None:
        remote = None
        if recipe.checkpoint_host is not None:
            from synth.checkpoint_host import RemoteCheckpoints

            remote = RemoteCheckpoints(recipe.checkpoint_host)
        self.graph, self.ctx, self.connection = _open_graph(Path(recipe.run_dir), RunConfig(**recipe.config),
                                                            recipe.models, dedup=None, checkpoints=remote)

    def run(self, thread_id: str) -> None:
        """A slot's graph from its last checkpoint to its end (the executor's unit; safe to run again).

        A worker with the run's file registers the env itself; one that checkpoints through the
        host (no `connection`) stops before registering and the driver registers, so no other
        node needs the catalog.
        """
        remote = self.connection is None
        try:
            self.graph.invoke(None, {"configurable": {"thread_id": thread_id}},
                              interrupt_before=["register"] if remote else None)
        finally:
            if remote:  # a scratch folder of this worker's node: each node stages what it needs again
                for folder in ("staging", "static"):
                    shutil.rmtree(self.ctx.run_dir / folder, ignore_errors=True)


@dataclass(frozen=True)
class SlotWorkers(Recipe[str, None]):
    """The recipe of a synthesis worker: the run folder, its config and models, and the checkpoint host if any.

    `checkpoint_host` (the driver's `CheckpointHost` actor, for workers that may be on other
    nodes) replaces the run's checkpoints file; without it the worker opens that file itself.
    """

    run_dir: str
    config: dict[str, Any]
    models: RunModels
    checkpoint_host: Any = None

    def open(self) -> _SlotWorker:
        return _SlotWorker(self)


def _complete(graph: Any, thread: dict[str, Any]) -> dict[str, Any]:
    """The summary of a slot its worker finished, registering its env here if a Ray worker left that to the driver."""
    if graph.get_state(thread).next == ("register",):
        graph.invoke(None, thread)
    return _summary(graph.get_state(thread).values)


def _thread_id(config: RunConfig, slot: int) -> str:
    return f"{config.run_id}:{slot}"


def _thread(config: RunConfig, slot: int) -> dict[str, Any]:
    return {"configurable": {"thread_id": _thread_id(config, slot)}}


def _summary(values: dict[str, Any]) -> dict[str, Any]:
    """What the report needs from a finished slot (not the code or the states)."""
    bp = values.get("blueprint") or {}
    return {"slot": values.get("slot"), "env_id": values.get("env_id"), "status": values.get("status", "failed"),
            "reason": values.get("reason", ""), "topic": (values.get("topic") or {}).get("topic"),
            "domain": (values.get("topic") or {}).get("domain"), "stages": values.get("stages") or {},
            "quality": (values.get("gate") or {}).get("score"),
            "failing_checks": [c["name"] for c in (values.get("gate") or {}).get("checks", []) if not c["ok"]],
            "judge": (values.get("gate") or {}).get("judge"),
            "mining": (values.get("topic") or {}).get("mining"),
            "tools": len(bp.get("tools", [])), "tables": len(bp.get("entities", [])),
            "delta_sizes": values.get("delta_sizes") or {}, "realism": values.get("realism") or {},
            "schema_signature": schema_signature(bp)}


def schema_signature(bp: dict[str, Any]) -> str:
    """A blueprint's tables and typed fields as one text: two envs with the same one share a schema."""
    return json.dumps(sorted((e["table"], sorted((f["name"], f["kind"]) for f in e["fields"]))
                             for e in bp.get("entities", [])))


# --- the driver -------------------------------------------------------------------------------------

def _show(bar: Progress, counts: dict[str, int], in_flight: int) -> None:
    bar.update(counts.get("registered", 0), note=f"{counts.get('rejected', 0)} rejected, "
               f"{counts.get('deduplicated', 0)} duplicates, {counts.get('existing', 0)} existing, {in_flight} in flight")


class _StopFlag:
    """Ctrl-C sets a flag the driver checks between steps, instead of raising inside library code.

    A KeyboardInterrupt raised while LangGraph or the process pool is mid-call can be swallowed
    there; a flag is seen at the next check (within a quarter second), wherever the signal lands.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, lambda *_: self._event.set())

    def is_set(self) -> bool:
        return self._event.is_set()

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def _new_run_id(seed: int) -> str:
    return f"run-{dt.datetime.now(dt.UTC):%Y%m%d-%H%M%S}-s{seed}"


def _prepare(config: RunConfig, resume: str | None) -> tuple[RunConfig, Path]:
    root = Path(config.catalog)
    if resume:
        stored = read_run_config(root, resume)
        stored.workers = config.workers or stored.workers
        if config.max_proposals:  # a run that fell short at its cap may be resumed with a higher one
            stored.max_proposals = config.max_proposals
            atomic_write(runs_dir(root) / resume / "config.json", json.dumps(asdict(stored), indent=1))
        return stored, runs_dir(root) / resume
    config.run_id = config.run_id or _new_run_id(config.seed)
    config.max_proposals = config.max_proposals or default_max_proposals(config.n)
    if config.backend == "procedural" and not config.domain_order:
        from synth.mining import domain_order

        config.domain_order = domain_order(config.seed)
    run_dir = runs_dir(root) / config.run_id
    if run_dir.exists():
        raise RunError(f"run {config.run_id} exists already; resume it with --resume {config.run_id}")
    run_dir.mkdir(parents=True)
    atomic_write(run_dir / "config.json", json.dumps(asdict(config), indent=1))
    return config, run_dir


def synthesize(config: RunConfig, *, resume: str | None = None, progress: bool | None = None,
               report_dir: Path | None = None, models: RunModels | None = None,
               executor: ExecutorSpec = LOCAL) -> SynthesisReport:
    """Run (or resume) synthesis; returns the run report (also written as JSON, Markdown and PNG).

    `models` are the run's models resolved from the registry (the CLI resolves them once); when
    omitted they are resolved here. For the embedded model one server is started for the session
    on 127.0.0.1 and shared by all workers (on a Ray cluster: the workers of this node only).
    `executor` says where the slots' workers run (`config.workers` of them); the same seed
    registers the same envs on either.
    """
    with Catalog(config.catalog).lock(f"synthesize --resume {resume}" if resume else "synthesize"):
        return _locked(config, resume, progress, report_dir, models, executor)


def _locked(config: RunConfig, resume: str | None, progress: bool | None, report_dir: Path | None,
            models: RunModels | None, executor: ExecutorSpec) -> SynthesisReport:
    """The run under the catalog's writer lock: one run at a time registers into a catalog, so counts stay true."""
    started = time.monotonic()
    if models is None:  # before the run folder is made: an unknown model leaves nothing behind
        models = resolve_models(read_run_config(Path(config.catalog), resume) if resume else config)
    if default_isolation() == "os":  # one line with the fix, before the run folder, not a failed gate per slot
        require_isolation()
    config, run_dir = _prepare(config, resume)
    with contextlib.ExitStack() as servers:
        reached = RunModels(generator=_reach(models.generator, servers, config.seed),
                            judge=_reach(models.judge, servers, config.seed))
        return _drive(config, reached, run_dir, started, progress, report_dir, executor)


def _reach(end: Endpoint | None, servers: contextlib.ExitStack, seed: int) -> Endpoint | None:
    """`end` with the address this session reaches it at; an embedded model's server starts here, once."""
    from synth.llm.embedded import serving

    if end is None:
        return None
    return replace(end, base_url=servers.enter_context(serving(end.spec, end.base_url, seed=seed)))


def _drive(config: RunConfig, models: RunModels, run_dir: Path, started: float, progress: bool | None,
           report_dir: Path | None, executor: ExecutorSpec) -> SynthesisReport:
    db = _db(run_dir / "run.sqlite")
    slots = _slots(db)
    catalog = Catalog(config.catalog)
    dedup = catalog_dedup_filter(catalog, [(s["env_id"], s["topic"]) for s in slots.values()
                                           if s["status"] not in SKIPPED and s["topic"]])
    graph, ctx, connection = _open_graph(run_dir, config, models, dedup=dedup)
    ctx.claims = {}  # env id -> its first slot past dedup (resume: the slots table's), so ids go in slot order
    for s in slots.values():
        if s["env_id"] and s["status"] not in SKIPPED:
            ctx.claims.setdefault(s["env_id"], s["slot"])
    bar = Progress("synthesize", config.n, unit="registered",  # a terminal's, unless asked
                   enabled=sys.stderr.isatty() if progress is None else progress)
    recorded = {k: s for k, s in slots.items() if s["status"] in FINAL and s["summary"]}
    counts = {status: sum(s["status"] == status for s in recorded.values()) for status in FINAL}
    summaries = {k: s["summary"] for k, s in recorded.items()}
    host = host_checkpoints(run_dir / "checkpoints.sqlite", executor)  # None: the workers open the file
    pool: WorkerPool[str, None] = open_pool(executor, SlotWorkers(str(run_dir), asdict(config), models, host),
                                            max(1, config.workers), name=f"synthesize-{config.run_id}")
    in_flight: dict[cf.Future[None], int] = {}
    interrupted = False
    stop = _StopFlag()

    def finished(slot: int, summary: dict[str, Any]) -> None:
        summaries[slot] = summary
        counts[summary["status"]] = counts.get(summary["status"], 0) + 1
        _set_slot(db, slot, status=summary["status"], reason=summary["reason"], summary=summary,
                  env_id=summary.get("env_id"), topic=summary.get("topic"))

    try:
        leftovers = []  # interrupted slots: finished ones are recorded, the rest continue before new ones
        for s in (s for k, s in slots.items() if k not in recorded):
            snapshot = graph.get_state(_thread(config, s["slot"]))
            if snapshot.values and not snapshot.next and snapshot.values.get("status") in FINAL:
                finished(s["slot"], _summary(snapshot.values))
            elif snapshot.next == ("register",):  # its worker was done; the driver had not registered it yet
                finished(s["slot"], _complete(graph, _thread(config, s["slot"])))
            else:
                leftovers.append(s["slot"])
        next_slot = max(slots, default=-1) + 1
        _show(bar, counts, len(in_flight))
        while counts.get("registered", 0) < config.n and not stop.is_set():
            while (counts.get("registered", 0) + len(in_flight) < config.n and len(in_flight) < 2 * max(1, config.workers)
                   and (leftovers or next_slot < config.max_proposals) and not stop.is_set()):
                start: dict[str, Any] | None = {"run_id": config.run_id, "seed": config.seed}
                if leftovers:
                    slot = leftovers.pop(0)
                    snapshot = graph.get_state(_thread(config, slot))
                    values = snapshot.values or {}
                    if snapshot.next and "dedup" in (values.get("stages") or {}) and values.get("status") not in FINAL:
                        if values["env_id"] not in dedup.ids:  # past dedup: its topic counts as taken
                            dedup.add([values["env_id"]], [values["topic"]["topic"]])
                        _set_slot(db, slot, env_id=values["env_id"], topic=values["topic"]["topic"],
                                  status="running")
                        in_flight[pool.submit(_thread_id(config, slot))] = slot
                        continue
                    if snapshot.next:  # killed during mining or dedup: finish those here, in order
                        start = None
                else:
                    slot, next_slot = next_slot, next_slot + 1
                _set_slot(db, slot, status="proposed")
                graph.invoke(None if start is None else {**start, "slot": slot}, _thread(config, slot),
                             interrupt_after=["dedup"])
                values = graph.get_state(_thread(config, slot)).values
                _set_slot(db, slot, env_id=values.get("env_id"), topic=(values.get("topic") or {}).get("topic"))
                if values.get("status") in SKIPPED:
                    finished(slot, _summary(values))
                else:
                    _set_slot(db, slot, status="running")
                    in_flight[pool.submit(_thread_id(config, slot))] = slot
                _show(bar, counts, len(in_flight))
            if not in_flight or stop.is_set():
                break  # out of proposals, or Ctrl-C
            done, _ = cf.wait(in_flight, timeout=0.25, return_when=cf.FIRST_COMPLETED)
            for future in done:
                slot = in_flight.pop(future)
                try:
                    future.result()
                    finished(slot, _complete(graph, _thread(config, slot)))
                except Exception as exc:  # a worker died or a node raised: record, never lose the run
                    finished(slot, {"slot": slot, "status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:500],
                                    "env_id": None, "stages": {}, "topic": None})
            _show(bar, counts, len(in_flight))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        interrupted = interrupted or stop.is_set()
        stop.restore()
        bar.close()
        # interrupted (or failed): stop in-flight slots now; their checkpoints let --resume redo the unfinished step
        pool.close(cancel=interrupted or sys.exc_info()[0] is not None)
        ctx.close()
        connection.close()
        db.close()
        if host is not None:
            stop_host(host)
    if interrupted:
        raise KeyboardInterrupt(config.run_id)
    short = None
    if counts.get("registered", 0) < config.n:
        short = _shortfall(config, ctx, dedup, summaries, next_slot)
    return write_report(run_dir, config, summaries, catalog, wall_s=time.monotonic() - started,
                        report_dir=report_dir, executor={"kind": executor.kind, "workers": pool.workers},
                        shortfall=short)


def _shortfall(config: RunConfig, ctx: Context, dedup: DedupFilter, summaries: dict[int, dict[str, Any]],
               next_slot: int) -> Any:
    """Why the run stopped short; a procedural run also counts the distinct topics its next proposals hold.

    Looking ahead costs a design per proposal and no model call; a model backend's would cost
    calls, so its `topics_left` stays unknown.
    """
    probed, left = 0, None
    if not ctx.generator.model:
        probed = min(PROBE, config.max_proposals)
        left = probe_topics(ctx.generator, dedup, next_slot, config.seed, probed)
    run_ids = {s["env_id"] for s in summaries.values() if s.get("env_id") and s["status"] not in SKIPPED}
    return shortfall(summaries.values(), requested=config.n, max_proposals=config.max_proposals, run_ids=run_ids,
                     probed=probed, topics_left=left)
