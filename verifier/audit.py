"""Simulation audits: ask a simulator every benchmark item, score it against execution, report.

The audit takes any `catalog.bench.Simulator` (the CLI builds it; verifier/ never imports synth)
and scores each answer against the executed gold: Feedback Match, strict Config Match,
EnvSimBench-compatible CM and op precision/recall/F1 (all from `verifier.metrics`). An
abstention or an error scores as a miss on every metric and is also counted apart.

Why it is built the way it is:
- Results are appended to `results.jsonl` one line per answer as soon as it arrives, so an
  interrupted audit (Ctrl-C, crash, kill) resumes without paying for any answer twice. A torn
  last line (a crash mid-write) is cut off and its item asked again.
- Order is deterministic and independent of the input order: items are grouped by EnvSimBench
  group (failure, no-change by argument count, simple 1/2, medium 3-6, difficult 7-12, 13+),
  sorted by id inside a group (ids are content hashes, so this is a seed-free pseudo-random
  order), and the groups are interleaved round-robin. `limit=N` takes the first N of that order:
  a small audit still covers every stratum, and a larger limit extends a smaller one (a resumed
  audit with a larger limit asks only the new items). Note that a limited audit is then
  stratum-balanced, not weighted like the full set.
- An unreachable endpoint is not N misses: an exception whose class (or a base class) is named
  `EndpointUnreachable`, or that has a true `fatal` attribute, stops the audit with its message
  (`AuditAborted`); answers that already arrived are kept.
- Simulators are I/O bound (HTTP to a model server), so predictions run on daemon threads; a
  Ctrl-C in the caller stops at once without waiting for in-flight requests (they are re-asked
  on resume).

The report (`report.json`, `report.md`, `cm_vs_delta.png`) puts the EnvSimBench paper's
published figures beside envforge's own, labelled as theirs: their numbers come from their
samples and their one-sided CM, so they orient, they do not compare like for like.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fcntl
import hashlib
import json
import math
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from catalog.bench import BenchItem, SimResult, Simulator
from catalog.delta import DeltaOp
from catalog.errors import EnvforgeError
from catalog.jsonable import canonical_json, to_jsonable
from verifier.metrics import (
    DeltaFormatError,
    envsimbench_config_match,
    feedback_match,
    op_scores,
    parse_delta,
    strict_config_match,
)

__all__ = [
    "AuditError", "AuditAborted", "run_audit", "audit_order", "band_group", "score_prediction", "load_results",
    "build_report", "write_report", "render_markdown", "rebuild_report", "compare_reports", "op_diff",
    "ENVSIMBENCH_PUBLISHED",
    "RESULTS_FILE", "RECORD_KEYS",
]

RESULTS_FILE = "results.jsonl"
META_FILE = "audit.json"
LOCK_FILE = ".audit.lock"
RECORD_KEYS = ("id", "item", "prediction", "fm", "cm_strict", "cm_compat", "op_p", "op_r", "op_f1", "abstained",
               "error", "seconds", "tokens_in", "tokens_out", "cost_usd")
WORST_COUNT = 10

# EnvSimBench groups (reference/envsimbench.md §3); no_change_args2+ and beyond_13+ lie outside their groups.
BAND_ORDER = ("failure", "no_change_args0", "no_change_args1", "no_change_args2+", "simple_1", "simple_2", "medium_3",
              "medium_4", "medium_5", "medium_6", "difficult_7_12", "beyond_13+")
GROUP_ORDER = ("failure", "no_change", "simple", "medium", "difficult", "beyond_13+")

# The paper's published numbers (reference/envsimbench.md §5): their 400 samples, their one-sided CM, in %.
ENVSIMBENCH_PUBLISHED: dict[str, Any] = {
    "source": "EnvSimBench paper (arXiv 2605.07247): README table and Figs/Fig_SFT_vs_Frontier.tex",
    "note": "Their samples (EnvScaler envs, 100 fail/no-change + 300 state-change) and their one-sided CM "
            "(compare with envforge's cm_compat); not a re-run on envforge's samples.",
    "overall": [  # model, Fail+No-Chg CM, State-Change CM (None: not published), Overall CM
        ("DeepSeek-V3.2", 100.0, 10.0, 32.5),
        ("Qwen3.5-397B-A17B", 100.0, 23.0, 42.3),
        ("GPT-5.4", 100.0, 22.7, 42.0),
        ("Gemini-3.1-Pro-Preview", 100.0, 22.7, 42.0),
        ("Claude-Sonnet-4.6", 99.0, 17.3, 37.8),
        ("MiniMax-M2.7", 99.0, 22.7, 41.8),
        ("GLM-5", 100.0, 21.3, 41.0),
        ("4B Full-Balance2 (Qwen3-4B SFT)", 100.0, None, 45.3),
    ],
    "footnote": "4B State-Change CM is not in their table; their figure implies about 27%. Their figure shows "
                "99 (not 100) at |Δ|=0 for the 4B.",
    "per_delta_columns": ["0", "1", "2", "3", "4", "5", "6", "7+"],
    "per_delta": {
        "GPT-5.4": [100.0, 60.0, 20.0, 36.0, 24.0, 2.0, 8.0, 26.0],
        "4B Full-Balance2": [99.0, 80.0, 36.0, 44.0, 40.0, 2.0, 8.0, 12.0],
    },
}

ProgressFn = Callable[[int, int, "dict[str, Any] | None"], None]


class AuditError(RuntimeError, EnvforgeError):
    """The audit cannot run as asked (folder in use, or holding another simulator's results)."""


class AuditAborted(AuditError):
    """The simulator reported a fatal problem (e.g. endpoint unreachable); the audit stopped."""

    def __init__(self, message: str, *, recorded: int, total: int) -> None:
        super().__init__(message)
        self.recorded = recorded
        self.total = total


# --- order and strata -------------------------------------------------------------------------
def band_group(strata: Any) -> str:
    """EnvSimBench group of a sample (`strata` is a Strata or its dict): failure, no_change_args0, ..."""
    get = strata.get if isinstance(strata, dict) else lambda key: getattr(strata, key)
    size, args = int(get("delta_size")), int(get("arg_count"))
    if get("outcome") == "failure":
        return "failure"
    if size == 0:
        return f"no_change_args{args}" if args < 2 else "no_change_args2+"
    if size <= 2:
        return f"simple_{size}"
    if size <= 6:
        return f"medium_{size}"
    return "difficult_7_12" if size <= 12 else "beyond_13+"


def _coarse(band: str) -> str:
    """Coarse group of a band: failure, no_change, simple, medium, difficult, beyond_13+."""
    if band.startswith("no_change"):
        return "no_change"
    return band if band == "beyond_13+" else band.split("_")[0]


def audit_order(items: Iterable[BenchItem]) -> list[BenchItem]:
    """Deterministic audit order: groups interleaved round-robin, ids sorted within a group (see module doc).

    Duplicate ids keep their first item.
    """
    groups: dict[str, dict[str, BenchItem]] = {}
    for item in items:
        groups.setdefault(band_group(item.strata), {}).setdefault(item.id, item)
    queues = [[group[key] for key in sorted(group)] for name in BAND_ORDER if (group := groups.get(name))]
    ordered: list[BenchItem] = []
    for rank in range(max((len(q) for q in queues), default=0)):
        ordered.extend(q[rank] for q in queues if rank < len(q))
    return ordered


def _delta_key(size: int) -> str:
    return str(size) if size < 12 else "12+"


def _args_key(count: int) -> str:
    return str(count) if count < 4 else "4+"


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
    ops = op_scores(prediction.delta, [DeltaOp.from_dict(op) for op in item.delta])
    scores.update(cm_strict=strict_config_match(item.state, prediction.delta, item.next_state),
                  cm_compat=envsimbench_config_match(item.state, prediction.delta, item.next_state),
                  op_p=ops["precision"], op_r=ops["recall"], op_f1=ops["f1"])
    return scores


def _json_fallback(value: Any) -> Any:
    try:
        return to_jsonable(value)
    except (TypeError, ValueError):
        return repr(value)


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


def _is_fatal(exc: BaseException) -> bool:
    return getattr(exc, "fatal", False) is True or any(c.__name__ == "EndpointUnreachable" for c in type(exc).__mro__)


# --- results file -------------------------------------------------------------------------------
def _repair_tail(path: Path) -> None:
    """Cut a torn last line (a crash mid-write) so the next append starts on a fresh line."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            handle.truncate(start)
        else:
            handle.write(b"\n")


def load_results(out_dir: Path | str) -> dict[str, dict[str, Any]]:
    """Read results.jsonl: id -> record. Torn or malformed lines are skipped (their items are re-asked)."""
    path = Path(out_dir) / RESULTS_FILE
    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return records
    with path.open("rb") as handle:
        for raw in handle:
            try:
                record = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str) and all(k in record for k in RECORD_KEYS):
                records[record["id"]] = record
    return records


def _read_meta(out_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((out_dir / META_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=_json_fallback) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --- running ------------------------------------------------------------------------------------
def _worker(simulator: Simulator, jobs: queue.Queue[BenchItem], results: queue.Queue[tuple[Any, ...]],
            stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            item = jobs.get_nowait()
        except queue.Empty:
            return
        started = time.perf_counter()
        try:
            answer: Any = simulator.predict(item)
        except BaseException as exc:  # handed to the main thread, which decides what it means
            results.put((item, exc, time.perf_counter() - started))
            if _is_fatal(exc) or not isinstance(exc, Exception):
                return
            continue
        results.put((item, answer, time.perf_counter() - started))


def run_audit(items: Iterable[BenchItem], simulator: Simulator, out_dir: Path | str, *, workers: int = 2,
              limit: int | None = None, progress: ProgressFn | None = None, price_note: str | None = None,
              plots: bool = True) -> dict[str, Any]:
    """Audit `simulator` on `items`; append answers to out_dir/results.jsonl, write and return the report.

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
        meta = _read_meta(out)
        if meta and (meta.get("model"), meta.get("mode")) != (simulator.name, simulator.mode):
            raise AuditError(f"{out} holds results of {meta.get('model')} ({meta.get('mode')}), not "
                             f"{simulator.name} ({simulator.mode}); use another --out")
        meta = {"model": simulator.name, "mode": simulator.mode, "sessions": meta.get("sessions", [])}
        _repair_tail(out / RESULTS_FILE)
        done = load_results(out)
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
            _ask(todo, simulator, out, workers, progress, finished, len(selection))
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
            _write_json(out / META_FILE, meta)
        report = build_report([r for i, r in load_results(out).items() if i in selected_ids], model=simulator.name,
                              mode=simulator.mode, price_note=price_note, sessions=meta["sessions"],
                              expected=len(selection))
        write_report(report, out, plots=plots)
        return report
    finally:
        lock.close()


def _ask(todo: list[BenchItem], simulator: Simulator, out: Path, workers: int, progress: ProgressFn | None,
         finished: int, total: int) -> int:
    """Run predictions on daemon threads, appending each answer as it arrives; return how many were answered."""
    if not todo:
        return 0
    jobs: queue.Queue[BenchItem] = queue.Queue()
    for item in todo:
        jobs.put(item)
    results: queue.Queue[tuple[Any, ...]] = queue.Queue()
    stop = threading.Event()
    threads = [threading.Thread(target=_worker, args=(simulator, jobs, results, stop), daemon=True,
                                name=f"audit-{n}") for n in range(max(1, min(workers, len(todo))))]
    for thread in threads:
        thread.start()
    answered = 0
    failure: BaseException | None = None
    with (out / RESULTS_FILE).open("a", encoding="utf-8") as sink:
        try:
            while answered < len(todo):
                try:
                    item, answer, seconds = results.get(timeout=0.2)
                except queue.Empty:
                    if any(t.is_alive() for t in threads) or not results.empty():
                        continue
                    break  # every worker ended (stopped or out of items) and nothing is left to record
                if isinstance(answer, BaseException) and (_is_fatal(answer) or not isinstance(answer, Exception)):
                    # Stop taking new items; let in-flight ones land (they are paid for), then raise.
                    failure = failure or answer
                    stop.set()
                    continue
                if isinstance(answer, BaseException):
                    answer = SimResult(error=f"{type(answer).__name__}: {answer}")
                elif not isinstance(answer, SimResult):
                    answer = SimResult(error=f"simulator returned {type(answer).__name__}, not SimResult")
                record = _record(item, answer, seconds, simulator)
                sink.write(json.dumps(record, ensure_ascii=False, default=_json_fallback) + "\n")
                sink.flush()
                answered += 1
                if progress:
                    progress(finished + answered, total, record)
        except BaseException:
            stop.set()  # Ctrl-C on this thread: in-flight answers are dropped and re-asked on resume
            raise
    if failure is not None:
        if _is_fatal(failure):
            raise AuditAborted(f"Audit stopped: {failure} ({finished + answered}/{total} samples recorded in "
                               f"{out / RESULTS_FILE}; rerun to resume)", recorded=finished + answered,
                               total=total) from failure
        raise failure
    return answered


# --- the report ---------------------------------------------------------------------------------
def _rate(values: Sequence[bool | float]) -> float | None:
    return round(sum(float(v) for v in values) / len(values), 4) if values else None


def _verified(record: dict[str, Any]) -> bool:
    return bool(record["fm"] and record["cm_strict"])


def _missed(record: dict[str, Any]) -> bool:
    return bool(record["abstained"] or record["error"] is not None)


def _group_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "samples": len(records),
        "fm": _rate([r["fm"] for r in records]),
        "cm_strict": _rate([r["cm_strict"] for r in records]),
        "cm_compat": _rate([r["cm_compat"] for r in records]),
        "op_f1": _rate([r["op_f1"] for r in records]),
        "verified": sum(_verified(r) for r in records),
        "abstained": sum(bool(r["abstained"]) for r in records),
        "errors": sum(r["error"] is not None and not r["abstained"] for r in records),
    }


def _by(records: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], str],
        order: Sequence[str] | None = None) -> dict[str, Any]:
    buckets: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        buckets.setdefault(key(record), []).append(record)
    names = [n for n in order if n in buckets] if order is not None else sorted(
        buckets, key=lambda n: (int(n.rstrip("+")), n))
    return {name: _group_stats(buckets[name]) for name in names}


def _strata(record: dict[str, Any]) -> dict[str, Any]:
    return record["item"]["strata"]


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    ordered = sorted(values)

    def rank(q: float) -> float | None:
        return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 3) if ordered else None

    return {"p50": rank(0.5), "p90": rank(0.9), "p99": rank(0.99), "max": rank(1.0),
            "mean": round(sum(ordered) / len(ordered), 3) if ordered else None}


def _short(value: Any, width: int = 70) -> str:
    text = canonical_json(value) if not isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def _op_line(sign: str, op: DeltaOp) -> str:
    path = json.dumps(list(op.path), ensure_ascii=False)
    return f"{sign} {op.op} {path}" + ("" if op.op == "delete" else f" = {_short(op.value, 60)}")


def op_diff(predicted: Any, gold: Sequence[dict[str, Any]], limit: int = 6) -> tuple[list[str], int]:
    """Short diff of predicted vs gold ops: '-' gold ops missed, '+' predicted ops not in gold; and the gap size."""
    gold_ops = {(o.op, o.path, canonical_json(o.value)): o for o in (DeltaOp.from_dict(d) for d in gold)}
    try:
        predicted_ops = {(o.op, o.path, canonical_json(o.value)): o for o in parse_delta(predicted)}
        note: list[str] = []
    except DeltaFormatError as exc:
        predicted_ops, note = {}, [f"! predicted delta unusable: {_short(str(exc), 100)}"]
    missing = sorted((gold_ops[k] for k in gold_ops.keys() - predicted_ops.keys()), key=lambda o: (o.path, o.op))
    extra = sorted((predicted_ops[k] for k in predicted_ops.keys() - gold_ops.keys()), key=lambda o: (o.path, o.op))
    lines = note + [_op_line("-", o) for o in missing[:limit]] + [_op_line("+", o) for o in extra[:limit]]
    hidden = max(0, len(missing) - limit) + max(0, len(extra) - limit)
    if hidden:
        lines.append(f"… {hidden} more")
    return lines, len(missing) + len(extra)


def _worst(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Wrong answers (not abstentions or errors) ranked by ops wrong, then by gold |Δ|."""
    ranked = []
    for record in records:
        if _verified(record) or _missed(record):
            continue
        item, prediction = record["item"], record["prediction"]
        lines, gap = op_diff(prediction.get("delta"), item["delta"])
        entry = {
            "id": record["id"], "env_id": item["env_id"], "action": item["action"],
            "outcome": _strata(record)["outcome"], "delta_size": _strata(record)["delta_size"],
            "fm": record["fm"], "cm_strict": record["cm_strict"], "cm_compat": record["cm_compat"],
            "op_f1": record["op_f1"], "op_gap": gap, "diff": lines,
        }
        if not record["fm"]:
            entry["observation_predicted"] = _short(prediction.get("observation"), 200)
            entry["observation_gold"] = _short(item["observation"], 200)
        ranked.append(entry)
    ranked.sort(key=lambda e: (-e["op_gap"], -e["delta_size"], e["fm"], e["id"]))
    return ranked[:WORST_COUNT]


def _cm_at(records: Sequence[dict[str, Any]], low: int, high: int | None, key: str) -> tuple[float | None, int]:
    chosen = [r for r in records if _strata(r)["delta_size"] >= low and (high is None or _strata(r)["delta_size"] <= high)]
    return _rate([r[key] for r in chosen]), len(chosen)


def _paper_view(records: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """CM of this run on the paper's |Δ| columns (0..6, 7+), for the table and plot beside theirs."""
    spans = [(d, d) for d in range(7)] + [(7, None)]
    view: dict[str, list[Any]] = {key: [_cm_at(records, lo, hi, key)[0] for lo, hi in spans]
                                  for key in ("cm_strict", "cm_compat")}
    view["samples"] = [_cm_at(records, lo, hi, "cm_strict")[1] for lo, hi in spans]
    return view


def build_report(records: Sequence[dict[str, Any]], *, model: str, mode: str, price_note: str | None = None,
                 sessions: Sequence[dict[str, Any]] = (), expected: int | None = None) -> dict[str, Any]:
    """Aggregate scored records into the report dict (rates are fractions 0..1; None when no samples)."""
    records = sorted(records, key=lambda r: r["id"])
    n = len(records)
    answered = [r for r in records if not _missed(r)]
    predictions = [r["prediction"] for r in records]
    tokens_in = sum(r["tokens_in"] for r in records)
    tokens_out = sum(r["tokens_out"] for r in records)
    cost = round(sum(r["cost_usd"] for r in records), 6)
    verified = sum(_verified(r) for r in records)
    wall = round(sum(float(s.get("seconds", 0.0)) for s in sessions), 3)
    asked = sum(int(s.get("answered", 0)) for s in sessions)
    violations = Counter(str(v) for p in predictions for v in p.get("violations") or [])
    abstain_reasons = Counter(str(r["prediction"].get("reason") or "no reason") for r in records if r["abstained"])
    errors = Counter(str(r["error"])[:160] for r in records if r["error"] is not None and not r["abstained"])
    split = {
        "fail_no_change": [r for r in records
                           if _strata(r)["outcome"] == "failure" or _strata(r)["delta_size"] == 0],
        "state_change": [r for r in records
                         if _strata(r)["outcome"] == "success" and _strata(r)["delta_size"] > 0],
    }
    return {
        "model": model,
        "mode": mode,
        "price_note": price_note,
        "samples": n,
        "expected": expected if expected is not None else n,
        "envs": len({r["item"]["env_id"] for r in records}),
        "sample_ids_sha256": hashlib.sha256("\n".join(r["id"] for r in records).encode()).hexdigest()[:16],
        "answered": len(answered),
        "fm": _rate([r["fm"] for r in records]),
        "cm_strict": _rate([r["cm_strict"] for r in records]),
        "cm_compat": _rate([r["cm_compat"] for r in records]),
        "op_precision": _rate([r["op_p"] for r in records]),
        "op_recall": _rate([r["op_r"] for r in records]),
        "op_f1": _rate([r["op_f1"] for r in records]),
        "answered_only": {key: _rate([r[key] for r in answered]) for key in ("fm", "cm_strict", "cm_compat", "op_f1")},
        "by_delta": _by(records, lambda r: _delta_key(_strata(r)["delta_size"])),
        "by_outcome": _by(records, lambda r: _strata(r)["outcome"], ("success", "failure")),
        "by_args": _by(records, lambda r: _args_key(_strata(r)["arg_count"])),
        "by_band": _by(records, lambda r: band_group(_strata(r)), BAND_ORDER),
        "by_group": _by(records, lambda r: _coarse(band_group(_strata(r))), GROUP_ORDER),
        "by_split": {name: _group_stats(chosen) for name, chosen in split.items()},
        "abstained": sum(bool(r["abstained"]) for r in records),
        "errors": sum(r["error"] is not None and not r["abstained"] for r in records),
        "abstain_reasons": dict(abstain_reasons.most_common(10)),
        "error_messages": dict(errors.most_common(10)),
        "violations": sum(violations.values()),
        "samples_with_violations": sum(bool(p.get("violations")) for p in predictions),
        "violation_examples": dict(violations.most_common(10)),
        "repairs": sum(int(p.get("repairs") or 0) for p in predictions),
        "reasks": sum(int(p.get("reasks") or 0) for p in predictions),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost_usd": cost,
        "latency_s": _percentiles([float(r["seconds"]) for r in records]),
        "prompt_tokens_per_sample": round(tokens_in / n, 1) if n else None,
        "completion_tokens_per_sample": round(tokens_out / n, 1) if n else None,
        "seconds_per_sample": round(sum(float(r["seconds"]) for r in records) / n, 3) if n else None,
        "wall_seconds": wall,
        "wall_seconds_per_sample": round(wall / asked, 3) if asked else None,
        "sessions": len(sessions),
        "verified": verified,
        "verified_yield": _rate([_verified(r) for r in records]),
        "cost_per_verified_step_usd": round(cost / verified, 6) if verified else None,
        "paper_view": _paper_view(records),
        "worst": _worst(records),
        "published": ENVSIMBENCH_PUBLISHED,
    }


# --- rendering ----------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        text = f"{value:.4f}" if abs(value) < 1 else f"{value:,.2f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:,}" if isinstance(value, int) else str(value)


def _stratum_table(title: str, groups: dict[str, Any]) -> list[str]:
    lines = [f"### {title}", "", "| stratum | n | FM | CM strict | CM compat | op F1 | verified | abstained | errors |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, g in groups.items():
        lines.append(f"| {name} | {g['samples']} | {_pct(g['fm'])} | {_pct(g['cm_strict'])} | {_pct(g['cm_compat'])} "
                     f"| {_pct(g['op_f1'])} | {g['verified']} | {g['abstained']} | {g['errors']} |")
    return [*lines, ""]


def _paper_tables(report: dict[str, Any]) -> list[str]:
    pub = report["published"]
    split = report["by_split"]
    label = f"envforge (this run): {report['model']} / {report['mode']}"
    lines = ["## Beside the EnvSimBench paper (their published figures, not a re-run)", "",
             f"Rows marked **EnvSimBench paper** are theirs ({pub['source']}). {pub['note']} "
             "envforge rows are this audit on envforge's samples; their Overall weights 100 fail/no-change "
             "against 300 state-change samples, envforge's Overall is this run's own mix.", "",
             "| source | model | Fail+No-Chg CM | State-Change CM | Overall CM |", "|---|---|---:|---:|---:|"]
    for model, fail, change, overall in pub["overall"]:
        lines.append(f"| EnvSimBench paper | {model} | {fail:.1f}% | {'—' if change is None else f'{change:.1f}%'} "
                     f"| {overall:.1f}% |")
    for key, name in (("cm_compat", "CM compat (their rule)"), ("cm_strict", "CM strict")):
        lines.append(f"| {label} | {name} | {_pct(split['fail_no_change'][key])} | {_pct(split['state_change'][key])} "
                     f"| {_pct(report[key])} |")
    lines += ["", pub["footnote"]]
    columns = pub["per_delta_columns"]
    view = report["paper_view"]
    lines += ["", "CM by |Δ| (%; the paper's 7+ column pools 7-12):", "",
              "| source | series | " + " | ".join(columns) + " |", "|---|---|" + "---:|" * len(columns)]
    for model, values in pub["per_delta"].items():
        lines.append(f"| EnvSimBench paper | {model} | " + " | ".join(f"{v:.0f}" for v in values) + " |")
    for key, name in (("cm_compat", "CM compat"), ("cm_strict", "CM strict")):
        lines.append(f"| {label} | {name} | " + " | ".join(
            "—" if v is None else f"{100 * v:.0f}" for v in view[key]) + " |")
    lines.append(f"| {label} | samples | " + " | ".join(str(v) for v in view["samples"]) + " |")
    return [*lines, ""]


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: overall, cost and latency, strata, the paper's figures beside ours, worst cases."""
    r = report
    lat = r["latency_s"]
    incomplete = r["expected"] - r["samples"]
    lines = [f"# Simulation audit: {r['model']} ({r['mode']})", "",
             f"{r['samples']} samples from {r['envs']} env(s)"
             + (f" ({incomplete} of {r['expected']} not answered yet: rerun to resume)" if incomplete else "")
             + f"; {r['abstained']} abstained, {r['errors']} errors (both scored as misses).", ""]
    if r.get("price_note"):
        lines += [f"Price: {r['price_note']}", ""]
    lines += ["## Overall", "", "| metric | all samples | answered only |", "|---|---:|---:|"]
    for key, name in (("fm", "Feedback Match"), ("cm_strict", "Config Match (strict: s' exactly)"),
                      ("cm_compat", "Config Match (EnvSimBench-compatible)"), ("op_f1", "op F1")):
        lines.append(f"| {name} | {_pct(r[key])} | {_pct(r['answered_only'][key])} |")
    lines += [f"| op precision / recall | {_pct(r['op_precision'])} / {_pct(r['op_recall'])} | |",
              f"| verified yield (FM and strict CM) | {_pct(r['verified_yield'])} ({r['verified']}) | |", "",
              "## Cost and latency", "", "| | |", "|---|---:|",
              f"| tokens in / out | {_num(r['tokens_in'])} / {_num(r['tokens_out'])} |",
              f"| prompt tokens per sample | {_num(r['prompt_tokens_per_sample'])} |",
              f"| completion tokens per sample | {_num(r['completion_tokens_per_sample'])} |",
              f"| cost | ${r['cost_usd']:.4f} |",
              f"| cost per verified step | {'—' if r['cost_per_verified_step_usd'] is None else '$' + format(r['cost_per_verified_step_usd'], '.6f')} |",
              f"| latency p50 / p90 / p99 / max (s) | {_num(lat['p50'])} / {_num(lat['p90'])} / {_num(lat['p99'])} / {_num(lat['max'])} |",
              f"| seconds per sample (mean call) | {_num(r['seconds_per_sample'])} |",
              f"| wall seconds per sample ({r['sessions']} session(s)) | {_num(r['wall_seconds_per_sample'])} |", ""]
    if r["violations"] or r["repairs"] or r["reasks"]:
        lines += ["## Spec violations (constrained mode)", "",
                  f"{r['violations']} violations in {r['samples_with_violations']} samples; {r['repairs']} repairs, "
                  f"{r['reasks']} re-asks.", ""]
        lines += [f"- {n} × {_short(text, 120)}" for text, n in r["violation_examples"].items()] + [""]
    lines += ["## Per stratum", ""]
    lines += _stratum_table("EnvSimBench groups", r["by_band"])
    lines += _stratum_table("Coarse groups", r["by_group"])
    lines += _stratum_table("|Δ|", r["by_delta"])
    lines += _stratum_table("Outcome", r["by_outcome"])
    lines += _stratum_table("Argument count", r["by_args"])
    lines += _paper_tables(r)
    if r.get("plots"):
        lines += ["## CM vs |Δ|", ""] + [f"![{name}]({name})" for name in r["plots"]] + [""]
    if r["abstain_reasons"] or r["error_messages"]:
        lines += ["## Abstentions and errors", ""]
        lines += [f"- abstained {n} × {_short(text, 120)}" for text, n in r["abstain_reasons"].items()]
        lines += [f"- error {n} × {_short(text, 120)}" for text, n in r["error_messages"].items()] + [""]
    if r["worst"]:
        lines += ["## Worst cases", "", "`-` gold op the simulator missed, `+` predicted op that execution did not do.", ""]
        for w in r["worst"]:
            action = w["action"]
            lines += [f"### {w['env_id']} {action['name']}({_short(action.get('arguments', {}), 100)}) `{w['id']}`", "",
                      f"{w['outcome']}, |Δ|={w['delta_size']}; FM {w['fm']}, CM strict {w['cm_strict']}, "
                      f"CM compat {w['cm_compat']}, op F1 {w['op_f1']:.2f}", ""]
            if "observation_gold" in w:
                lines += [f"- observation predicted: `{w['observation_predicted']}`",
                          f"- observation gold: `{w['observation_gold']}`", ""]
            if w["diff"]:
                lines += ["```diff", *w["diff"], "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _plot(report: dict[str, Any], folder: Path) -> list[str]:
    """CM vs |Δ| (strict and compat), with the paper's curves dashed; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    by_delta = report["by_delta"]
    if not by_delta:
        return []
    xs = [int(k.rstrip("+")) for k in by_delta]
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, label, style in (("cm_strict", "envforge CM strict", "o-"), ("cm_compat", "envforge CM compat", "s-")):
        ys = [100 * g[key] if g[key] is not None else math.nan for g in by_delta.values()]
        ax.plot(xs, ys, style, label=f"{label} ({report['model']})")
    for (name, values), color in zip(report["published"]["per_delta"].items(), ("#888888", "#c44e52"), strict=False):
        ax.plot(range(7), values[:7], "--", color=color, alpha=0.8, label=f"EnvSimBench paper: {name} (their samples)")
        ax.hlines(values[7], 7, 12, colors=color, linestyles="dashed", alpha=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{k}\nn={g['samples']}" for k, g in by_delta.items()], fontsize=8)
    ax.set_xlabel("|Δ| (ops); the paper's 7+ point is drawn across 7-12")
    ax.set_ylabel("Config Match (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"CM vs |Δ|: {report['model']} ({report['mode']})")
    ax.set_xlim(-0.5, max(12, *xs) + 0.5)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "cm_vs_delta.png", dpi=100)
    plt.close(fig)
    return ["cm_vs_delta.png"]


def write_report(report: dict[str, Any], out_dir: Path | str, *, plots: bool = True) -> dict[str, Any]:
    """Write report.json, report.md and (if `plots` and matplotlib is there) cm_vs_delta.png into out_dir."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    report["plots"] = _plot(report, folder) if plots else []
    _write_json(folder / "report.json", report)
    (folder / "report.md").write_text(render_markdown(report), encoding="utf-8")
    return report


def rebuild_report(out_dir: Path | str, *, price_note: str | None = None, plots: bool = True) -> dict[str, Any]:
    """Re-render the report of an audit folder from its results.jsonl, asking nothing."""
    folder = Path(out_dir)
    meta = _read_meta(folder)
    records = list(load_results(folder).values())
    model = meta.get("model") or (records[0]["model"] if records else "unknown")
    mode = meta.get("mode") or (records[0]["mode"] if records else "unknown")
    report = build_report(records, model=model, mode=mode, price_note=price_note, sessions=meta.get("sessions", []))
    return write_report(report, folder, plots=plots)


def compare_reports(reports: Sequence[dict[str, Any]], labels: Sequence[str] | None = None) -> str:
    """Side-by-side Markdown of several audit reports (e.g. plain vs constrained on the same samples)."""
    names = list(labels) if labels is not None else [f"{r['model']} / {r['mode']}" for r in reports]
    lines = ["# Simulation audits side by side", ""]
    if len({r["sample_ids_sha256"] for r in reports}) > 1:
        lines += ["**Note:** the runs were not on the same samples; differences mix simulator and sample set.", ""]
    else:
        lines += [f"Same {reports[0]['samples'] if reports else 0} samples in every run.", ""]
    lines += ["| metric | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]

    def row(name: str, fn: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in reports) + " |")

    row("samples", lambda r: str(r["samples"]))
    for key, name in (("fm", "FM"), ("cm_strict", "CM strict"), ("cm_compat", "CM compat"), ("op_f1", "op F1"),
                      ("verified_yield", "verified yield")):
        row(name, lambda r, key=key: _pct(r[key]))
    for key in ("abstained", "errors", "violations", "repairs", "reasks", "tokens_in", "tokens_out"):
        row(key.replace("_", " "), lambda r, key=key: _num(r[key]))
    row("prompt tokens per sample", lambda r: _num(r["prompt_tokens_per_sample"]))
    row("completion tokens per sample", lambda r: _num(r["completion_tokens_per_sample"]))
    row("seconds per sample (mean call)", lambda r: _num(r["seconds_per_sample"]))
    row("wall seconds per sample", lambda r: _num(r["wall_seconds_per_sample"]))
    row("latency p50 / p90 (s)", lambda r: f"{_num(r['latency_s']['p50'])} / {_num(r['latency_s']['p90'])}")
    row("cost (USD)", lambda r: f"{r['cost_usd']:.4f}")
    row("cost per verified step (USD)", lambda r: _num(r["cost_per_verified_step_usd"]))
    groups = [g for g in GROUP_ORDER if any(g in r["by_group"] for r in reports)]
    for group in groups:
        for key, name in (("cm_strict", "CM strict"), ("cm_compat", "CM compat")):
            row(f"{group}: {name}", lambda r, group=group, key=key: _pct(r["by_group"][group][key])
                if group in r["by_group"] else "—")
    for split in ("fail_no_change", "state_change"):
        row(f"{split}: CM strict", lambda r, split=split: _pct(r["by_split"][split]["cm_strict"]))
    return "\n".join(lines) + "\n"
