"""The audit report: scored records aggregated per stratum, with cost, latency and the worst cases.

The report is typed (`AuditReport`, `GroupStats`) so the runner, the renderers and the CLI read
fields, not string keys; `model_dump(mode="json")` gives the JSON written to `report.json` (field
order is the file's key order). Strata come from `catalog.bench.strata` (the same rungs `bench export` fills). The
EnvSimBench paper's published figures ride along, labelled as theirs: their numbers come from
their samples and their one-sided CM, so they orient, they do not compare like for like.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field

from catalog.bench.strata import GROUPS, RUNG_NAMES, rung_of_strata
from catalog.jsonmodel import JsonModel
from catalog.state.delta import DeltaOp
from catalog.state.jsonable import canonical_json
from catalog.usage import Usage
from verifier.audit.metrics import DeltaFormatError, parse_delta
from verifier.audit.results import Record, is_missed, is_verified

__all__ = ["AuditReport", "GroupStats", "build_report", "op_diff", "percentiles", "short", "ENVSIMBENCH_PUBLISHED",
           "WORST_COUNT"]

WORST_COUNT = 10

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

class GroupStats(JsonModel):
    """FM/CM rates (fractions 0..1, None without samples) and counts of one stratum or split."""

    samples: int
    fm: float | None
    cm_strict: float | None
    cm_compat: float | None
    op_f1: float | None
    verified: int
    abstained: int
    errors: int


class AuditReport(JsonModel):
    """What `report.json` holds: overall, per stratum, cost and latency, the paper beside us, worst cases."""

    model: str
    mode: str
    price_note: str | None
    samples: int
    expected: int
    envs: int
    sample_ids_sha256: str
    answered: int
    fm: float | None
    cm_strict: float | None
    cm_compat: float | None
    op_precision: float | None
    op_recall: float | None
    op_f1: float | None
    answered_only: dict[str, float | None]
    by_delta: dict[str, GroupStats]
    by_outcome: dict[str, GroupStats]
    by_args: dict[str, GroupStats]
    by_band: dict[str, GroupStats]
    by_group: dict[str, GroupStats]
    by_split: dict[str, GroupStats]
    abstained: int
    errors: int
    abstain_reasons: dict[str, int]
    error_messages: dict[str, int]
    violations: int
    samples_with_violations: int
    violation_examples: dict[str, int]
    repairs: int
    reasks: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_s: dict[str, float | None]
    prompt_tokens_per_sample: float | None
    completion_tokens_per_sample: float | None
    seconds_per_sample: float | None
    wall_seconds: float
    wall_seconds_per_sample: float | None
    sessions: int
    verified: int
    verified_yield: float | None
    cost_per_verified_step_usd: float | None
    paper_view: dict[str, list[Any]]
    worst: list[dict[str, Any]]
    published: dict[str, Any]
    plots: list[str] = Field(default_factory=list)


# --- aggregation --------------------------------------------------------------------------------
def _rate(values: Sequence[bool | float]) -> float | None:
    return round(sum(float(v) for v in values) / len(values), 4) if values else None


def _group_stats(records: Sequence[Record]) -> GroupStats:
    return GroupStats(
        samples=len(records),
        fm=_rate([r["fm"] for r in records]),
        cm_strict=_rate([r["cm_strict"] for r in records]),
        cm_compat=_rate([r["cm_compat"] for r in records]),
        op_f1=_rate([r["op_f1"] for r in records]),
        verified=sum(is_verified(r) for r in records),
        abstained=sum(bool(r["abstained"]) for r in records),
        errors=sum(r["error"] is not None and not r["abstained"] for r in records),
    )


def _by(records: Sequence[Record], key: Callable[[Record], str], order: Sequence[str] | None = None,
        ) -> dict[str, GroupStats]:
    buckets: dict[str, list[Record]] = {}
    for record in records:
        buckets.setdefault(key(record), []).append(record)
    names = [n for n in order if n in buckets] if order is not None else sorted(
        buckets, key=lambda n: (int(n.rstrip("+")), n))
    return {name: _group_stats(buckets[name]) for name in names}


def _strata(record: Record) -> dict[str, Any]:
    strata: dict[str, Any] = record["item"]["strata"]
    return strata


def _delta_key(size: int) -> str:
    return str(size) if size < 12 else "12+"


def _args_key(count: int) -> str:
    return str(count) if count < 4 else "4+"


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """p50, p90, p99, max and mean (nearest rank), rounded to 3 places; None for no values."""
    ordered = sorted(values)

    def rank(q: float) -> float | None:
        return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 3) if ordered else None

    return {"p50": rank(0.5), "p90": rank(0.9), "p99": rank(0.99), "max": rank(1.0),
            "mean": round(sum(ordered) / len(ordered), 3) if ordered else None}


def short(value: Any, width: int = 70) -> str:
    """One-line JSON of `value`, cut to `width` characters with an ellipsis."""
    text = canonical_json(value) if not isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def _op_line(sign: str, op: DeltaOp) -> str:
    path = json.dumps(list(op.path), ensure_ascii=False)
    return f"{sign} {op.op} {path}" + ("" if op.op == "delete" else f" = {short(op.value, 60)}")


def op_diff(predicted: Any, gold: Sequence[dict[str, Any]], limit: int = 6) -> tuple[list[str], int]:
    """Short diff of predicted vs gold ops: '-' gold ops missed, '+' predicted ops not in gold; and the gap size."""
    gold_ops = {(o.op, o.path, canonical_json(o.value)): o for o in (DeltaOp.model_validate(d) for d in gold)}
    try:
        predicted_ops = {(o.op, o.path, canonical_json(o.value)): o for o in parse_delta(predicted)}
        note: list[str] = []
    except DeltaFormatError as exc:
        predicted_ops, note = {}, [f"! predicted delta unusable: {short(str(exc), 100)}"]
    missing = sorted((gold_ops[k] for k in gold_ops.keys() - predicted_ops.keys()), key=lambda o: (o.path, o.op))
    extra = sorted((predicted_ops[k] for k in predicted_ops.keys() - gold_ops.keys()), key=lambda o: (o.path, o.op))
    lines = note + [_op_line("-", o) for o in missing[:limit]] + [_op_line("+", o) for o in extra[:limit]]
    hidden = max(0, len(missing) - limit) + max(0, len(extra) - limit)
    if hidden:
        lines.append(f"… {hidden} more")
    return lines, len(missing) + len(extra)


def _worst(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Wrong answers (not abstentions or errors) ranked by ops wrong, then by gold |Δ|."""
    ranked = []
    for record in records:
        if is_verified(record) or is_missed(record):
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
            entry["observation_predicted"] = short(prediction.get("observation"), 200)
            entry["observation_gold"] = short(item["observation"], 200)
        ranked.append(entry)
    ranked.sort(key=lambda e: (-e["op_gap"], -e["delta_size"], e["fm"], e["id"]))
    return ranked[:WORST_COUNT]


def _cm_at(records: Sequence[Record], low: int, high: int | None, key: str) -> tuple[float | None, int]:
    chosen = [r for r in records if _strata(r)["delta_size"] >= low and (high is None or _strata(r)["delta_size"] <= high)]
    return _rate([r[key] for r in chosen]), len(chosen)


def _paper_view(records: Sequence[Record]) -> dict[str, list[Any]]:
    """CM of this run on the paper's |Δ| columns (0..6, 7+), for the table and plot beside theirs."""
    spans = [(d, d) for d in range(7)] + [(7, None)]
    view: dict[str, list[Any]] = {key: [_cm_at(records, lo, hi, key)[0] for lo, hi in spans]
                                  for key in ("cm_strict", "cm_compat")}
    view["samples"] = [_cm_at(records, lo, hi, "cm_strict")[1] for lo, hi in spans]
    return view


def build_report(records: Sequence[Record], *, model: str, mode: str, price_note: str | None = None,
                 sessions: Sequence[dict[str, Any]] = (), expected: int | None = None) -> AuditReport:
    """Aggregate scored records into the report (rates are fractions 0..1; None when no samples)."""
    records = sorted(records, key=lambda r: r["id"])
    n = len(records)
    answered = [r for r in records if not is_missed(r)]
    predictions = [r["prediction"] for r in records]
    used = sum((Usage.model_validate(r) for r in records), Usage())  # a record's tokens_in, tokens_out, cost_usd
    tokens_in, tokens_out, cost = used.tokens_in, used.tokens_out, round(used.cost_usd, 6)
    verified = sum(is_verified(r) for r in records)
    wall = round(sum(float(s.get("seconds", 0.0)) for s in sessions), 3)
    asked = sum(int(s.get("answered", 0)) for s in sessions)
    violations = Counter(str(v) for p in predictions for v in p.get("violations") or [])
    abstain_reasons = Counter(str(r["prediction"].get("reason") or "no reason") for r in records if r["abstained"])
    errors = Counter(str(r["error"])[:160] for r in records if r["error"] is not None and not r["abstained"])
    rungs = {r["id"]: rung_of_strata(_strata(r)) for r in records}
    split = {
        "fail_no_change": [r for r in records if not rungs[r["id"]].changes_state],
        "state_change": [r for r in records if rungs[r["id"]].changes_state],
    }
    return AuditReport(
        model=model,
        mode=mode,
        price_note=price_note,
        samples=n,
        expected=expected if expected is not None else n,
        envs=len({r["item"]["env_id"] for r in records}),
        sample_ids_sha256=hashlib.sha256("\n".join(r["id"] for r in records).encode()).hexdigest()[:16],
        answered=len(answered),
        fm=_rate([r["fm"] for r in records]),
        cm_strict=_rate([r["cm_strict"] for r in records]),
        cm_compat=_rate([r["cm_compat"] for r in records]),
        op_precision=_rate([r["op_p"] for r in records]),
        op_recall=_rate([r["op_r"] for r in records]),
        op_f1=_rate([r["op_f1"] for r in records]),
        answered_only={key: _rate([r[key] for r in answered]) for key in ("fm", "cm_strict", "cm_compat", "op_f1")},
        by_delta=_by(records, lambda r: _delta_key(_strata(r)["delta_size"])),
        by_outcome=_by(records, lambda r: _strata(r)["outcome"], ("success", "failure")),
        by_args=_by(records, lambda r: _args_key(_strata(r)["arg_count"])),
        by_band=_by(records, lambda r: rungs[r["id"]].name, RUNG_NAMES),
        by_group=_by(records, lambda r: rungs[r["id"]].group, GROUPS),
        by_split={name: _group_stats(chosen) for name, chosen in split.items()},
        abstained=sum(bool(r["abstained"]) for r in records),
        errors=sum(r["error"] is not None and not r["abstained"] for r in records),
        abstain_reasons=dict(abstain_reasons.most_common(10)),
        error_messages=dict(errors.most_common(10)),
        violations=sum(violations.values()),
        samples_with_violations=sum(bool(p.get("violations")) for p in predictions),
        violation_examples=dict(violations.most_common(10)),
        repairs=sum(int(p.get("repairs") or 0) for p in predictions),
        reasks=sum(int(p.get("reasks") or 0) for p in predictions),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=cost,
        latency_s=percentiles([float(r["seconds"]) for r in records]),
        prompt_tokens_per_sample=round(tokens_in / n, 1) if n else None,
        completion_tokens_per_sample=round(tokens_out / n, 1) if n else None,
        seconds_per_sample=round(sum(float(r["seconds"]) for r in records) / n, 3) if n else None,
        wall_seconds=wall,
        wall_seconds_per_sample=round(wall / asked, 3) if asked else None,
        sessions=len(sessions),
        verified=verified,
        verified_yield=_rate([is_verified(r) for r in records]),
        cost_per_verified_step_usd=round(cost / verified, 6) if verified else None,
        paper_view=_paper_view(records),
        worst=_worst(records),
        published=ENVSIMBENCH_PUBLISHED,
    )
