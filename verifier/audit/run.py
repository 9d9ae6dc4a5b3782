"""Simulation audits: ask a simulator every benchmark item, score it against execution, record it.

The audit takes any `catalog.bench.items.Simulator` (the CLI builds it; verifier/ never imports synth)
and scores each answer against the executed gold: Feedback Match, strict Config Match,
EnvSimBench-compatible CM and op precision/recall/F1 (all from `verifier.audit.metrics`). An
abstention or an error scores as a miss on every metric and is also counted apart. This module
runs the audit; the folder's files are verifier/audit/results.py, the report is
verifier/audit/report.py (aggregation) and verifier/audit/render.py (Markdown, plot, JSON).

Why it is built the way it is:
- Results are appended to `results.jsonl` one line per answer as soon as it arrives, so an
  interrupted audit (Ctrl-C, crash, kill) resumes without paying for any answer twice. A torn
  last line (a crash mid-write) or garbage anywhere is set aside in results.rejected.jsonl
  (said in one line, nothing lost) and its item asked again.
- Order is deterministic and independent of the input order: items are grouped by stratum
  (`catalog.bench.strata`: failure, no-change by argument count, simple 1/2, medium 3-6, difficult
  7-12, 13+), sorted by id inside a stratum (ids are content hashes, so this is a seed-free
  pseudo-random order), and the strata are interleaved round-robin. `limit=N` takes the first N
  of that order: a small audit still covers every stratum, and a larger limit extends a smaller
  one (a resumed audit with a larger limit asks only the new items). Note that a limited audit
  is then stratum-balanced, not weighted like the full set.
- An unreachable endpoint is not N misses: an exception whose class (or a base class) is named
  `EndpointUnreachable`, or that has a true `fatal` attribute, stops the audit with its message
  (`AuditAborted`); answers that already arrived are kept.
- A unit is one item's prediction, on the executor's workers (`executors.open_pool` with the
  `Predictions` recipe of verifier/audit/feed.py). Simulators are I/O bound (HTTP to a model
  server), so locally the units run on daemon threads sharing the simulator; a Ctrl-C in the
  caller stops at once without waiting for in-flight requests (they are re-asked on resume).
  With `executor=ExecutorSpec("ray")` each Ray actor asks its own copy of the simulator (it
  pickles: an LLM simulator as the same model at the same endpoint). Either way the driver
  keeps `workers` items in flight, records each answer as it lands and stops feeding on a
  fatal error; it stays the only writer of results.jsonl, so a unit rerun after a worker died
  is recorded once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fcntl
import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, SimResult, Simulator
from catalog.bench.strata import RUNG_NAMES, rung_of_strata
from catalog.errors import EnvforgeError
from catalog.runs.journal import read_session, write_json
from catalog.state.delta import Delta
from executors import LOCAL, ExecutorSpec, open_pool
from verifier.audit.feed import PoolFeed, Predictions, is_fatal
from verifier.audit.metrics import envsimbench_config_match, feedback_match, op_scores, strict_config_match
from verifier.audit.render import compare_reports, rebuild_report, render_markdown, render_summary, write_report
from verifier.audit.report import ENVSIMBENCH_PUBLISHED, AuditReport, GroupStats, build_report, op_diff
from verifier.audit.results import (
    LOCK_FILE,
    META_FILE,
    RECORD_KEYS,
    RESULTS_FILE,
    is_missed,
    is_verified,
    is_wrong,
    load_results,
    results_journal,
)

__all__ = [
    "AuditError", "AuditAborted", "run_audit", "audit_order", "score_prediction", "is_fatal",
    # the folder's files and the report, re-exported: one import for an audit's public API
    "load_results", "is_verified", "is_missed", "is_wrong", "RESULTS_FILE", "RECORD_KEYS",
    "AuditReport", "GroupStats", "build_report", "write_report", "render_markdown", "render_summary",
    "rebuild_report", "compare_reports", "op_diff", "ENVSIMBENCH_PUBLISHED",
]

ProgressFn = Callable[[int, int, "dict[str, Any] | None"], None]


class AuditError(RuntimeError, EnvforgeError):
    """The audit cannot run as asked (folder in use, or holding another simulator's results)."""




class AuditAborted(AuditError):
    """The simulator reported a fatal problem (e.g. endpoint unreachable); the audit stopped."""

    def __init__(self, message: str, *, recorded: int, total: int) -> None:
        super().__init__(message)
        self.recorded = recorded
        self.total = total



# --- order --------------------------------------------------------------------------------------
def audit_order(items: Iterable[BenchItem]) -> list[BenchItem]:
    """Deterministic audit order: strata interleaved round-robin, ids sorted within a stratum (see module doc).

    Duplicate ids keep their first item.
    """
    strata: dict[str, dict[str, BenchItem]] = {}
    for item in items:
        strata.setdefault(rung_of_strata(item.strata).name, {}).setdefault(item.id, item)
    queues = [[group[key] for key in sorted(group)] for name in RUNG_NAMES if (group := strata.get(name))]
    ordered: list[BenchItem] = []
    for rank in range(max((len(q) for q in queues), default=0)):
        ordered.extend(q[rank] for q in queues if rank < len(q))
    return ordered


# --- scoring ------------------------------------------------------------------------------------
def score_prediction(item: BenchItem, prediction: SimResult) -> dict[str, Any]:
    """Score one answer: fm, cm_strict, cm_compat, op_p/op_r/op_f1; misses for abstentions and errors.

    A missing delta (None) is no answer about the state: CM and op scores are 0, not "empty Δ".
    """
    missed = {"fm": False, "cm_strict": False, "cm_compat": False, "op_p": 0.0, "op_r": 0.0, "op_f1": 0.0}
    if prediction.abstained or prediction.error is not None:
        return missed
    scores = dict(missed, fm=feedback_match(prediction.observation, item.observation))
    if prediction.delta is None:
        return scores
    ops = op_scores(prediction.delta, Delta.validate_python(item.delta))
    scores.update(cm_strict=strict_config_match(item.state, prediction.delta, item.next_state),
                  cm_compat=envsimbench_config_match(item.state, prediction.delta, item.next_state),
                  op_p=ops["precision"], op_r=ops["recall"], op_f1=ops["f1"])
    return scores


def _record(item: BenchItem, prediction: SimResult, seconds: float, simulator: Simulator) -> dict[str, Any]:
    """One results.jsonl line (keys in RECORD_KEYS; `bench export --from-audit` reads them)."""
    scores = score_prediction(item, prediction)
    return {
        "id": item.id,
        "item": item.model_dump(mode="json"),
        "prediction": dataclasses.asdict(prediction),
        **scores,
        "abstained": bool(prediction.abstained),
        "error": prediction.error,
        "seconds": round(seconds, 4),
        "tokens_in": int(prediction.tokens_in or 0),
        "tokens_out": int(prediction.tokens_out or 0),
        "cost_usd": float(prediction.cost_usd or 0.0),
        "model": simulator.name,
        "mode": simulator.mode,
    }


def run_audit(items: Iterable[BenchItem], simulator: Simulator, out_dir: Path | str, *, workers: int = 2,
              limit: int | None = None, progress: ProgressFn | None = None, price_note: str | None = None,
              plots: bool = True, executor: ExecutorSpec | None = None) -> AuditReport:
    """Audit `simulator` on `items`; append answers to out_dir/results.jsonl, write and return the report.

    `executor` (default local) runs predictions on `workers` threads of this process; ray on `workers` Ray
    actors, each with `simulator` pickled (it must pickle then: an LLM simulator pickles as its
    recipe). Everything else is the same: files, resume, fatal errors.

    Resumes from an existing results.jsonl of the same simulator (name and mode). `progress(done,
    total, record)` is called once after resuming (record None) and after each answer, on the
    calling thread. Raises AuditAborted on a fatal simulator error, AuditError if the folder holds
    another simulator's results or another audit is writing to it; KeyboardInterrupt passes
    through (everything answered so far is on disk).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    selection = audit_order(items)
    if limit is not None:
        selection = selection[:max(0, limit)]
    lock = (out / LOCK_FILE).open("w")
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise AuditError(f"Another audit is writing to {out}; wait for it or use another --out") from exc
        meta = read_session(out / META_FILE)
        if meta and (meta.get("model"), meta.get("mode")) != (simulator.name, simulator.mode):
            raise AuditError(f"{out} holds results of {meta.get('model')} ({meta.get('mode')}), not "
                             f"{simulator.name} ({simulator.mode}); use another --out")
        meta = {"model": simulator.name, "mode": simulator.mode, "sessions": meta.get("sessions", [])}
        done = results_journal(out).resume()
        foreign = {(r.get("model"), r.get("mode")) for r in done.values()} - {(simulator.name, simulator.mode)}
        if foreign:
            raise AuditError(f"{out / RESULTS_FILE} holds answers of {sorted(map(str, foreign))}, not "
                             f"{simulator.name} ({simulator.mode}); use another --out")
        selected_ids = {item.id for item in selection}
        todo = [item for item in selection if item.id not in done]
        finished = len(selected_ids & done.keys())
        if progress:
            progress(finished, len(selection), None)
        session = {"started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "asked": len(todo),
                   "answered": 0, "end": "running"}
        clock = time.perf_counter()
        try:
            _ask(todo, simulator, out, workers, progress, finished, len(selection), executor or LOCAL)
            session["end"] = "done"
        except AuditAborted as exc:
            session["end"] = f"aborted: {exc}"
            raise
        except BaseException as exc:
            session["end"] = f"interrupted: {type(exc).__name__}"
            raise
        finally:
            session["seconds"] = round(time.perf_counter() - clock, 3)
            session["answered"] = len(load_results(out).keys() & selected_ids) - finished  # also when interrupted
            meta["sessions"].append(session)
            write_json(out / META_FILE, meta)
        report = build_report([r for i, r in load_results(out).items() if i in selected_ids], model=simulator.name,
                              mode=simulator.mode, price_note=price_note, sessions=meta["sessions"],
                              expected=len(selection))
        write_report(report, out, plots=plots)
        return report
    finally:
        lock.close()


def _ask(todo: list[BenchItem], simulator: Simulator, out: Path, workers: int, progress: ProgressFn | None,
         finished: int, total: int, executor: ExecutorSpec = LOCAL) -> int:
    """Run predictions on the executor's workers, appending each answer as it arrives; return how many."""
    if not todo:
        return 0
    results: queue.Queue[tuple[Any, ...]] = queue.Queue()
    stop = threading.Event()
    size = max(1, min(workers, len(todo)))
    pool = open_pool(executor, Predictions(simulator), size, name="audit")
    try:
        alive = PoolFeed(pool, todo, results, stop, size).alive
        return _record_answers(todo, simulator, out, progress, finished, total, results, stop, alive)
    finally:
        pool.close(cancel=True)  # nothing is left in flight unless interrupted: those are re-asked on resume


def _record_answers(todo: list[BenchItem], simulator: Simulator, out: Path, progress: ProgressFn | None,
                    finished: int, total: int, results: queue.Queue[tuple[Any, ...]], stop: threading.Event,
                    alive: Callable[[], bool]) -> int:
    """The driver's loop: append each answer to results.jsonl as it arrives; raise on a fatal one."""
    answered = 0
    failure: BaseException | None = None
    with results_journal(out).appending() as append:
        try:
            while answered < len(todo):
                try:
                    item, answer, seconds = results.get(timeout=0.2)
                except queue.Empty:
                    if alive() or not results.empty():
                        continue
                    break  # every worker ended (stopped or out of items) and nothing is left to record
                if isinstance(answer, BaseException) and (is_fatal(answer) or not isinstance(answer, Exception)):
                    # Stop taking new items; let in-flight ones land (they are paid for), then raise.
                    failure = failure or answer
                    stop.set()
                    continue
                if isinstance(answer, BaseException):
                    answer = SimResult(error=f"{type(answer).__name__}: {answer}")
                elif not isinstance(answer, SimResult):
                    answer = SimResult(error=f"simulator returned {type(answer).__name__}, not SimResult")
                record = _record(item, answer, seconds, simulator)
                append(record)
                answered += 1
                if progress:
                    progress(finished + answered, total, record)
        except BaseException:
            stop.set()  # Ctrl-C on this thread: in-flight answers are dropped and re-asked on resume
            raise
    if failure is not None:
        if is_fatal(failure):
            raise AuditAborted(f"Audit stopped: {failure} ({finished + answered}/{total} samples recorded in "
                               f"{out / RESULTS_FILE}; rerun to resume)", recorded=finished + answered,
                               total=total) from failure
        raise failure
    return answered


