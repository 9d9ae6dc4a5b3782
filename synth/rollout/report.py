"""The rollout report: success per env and per solution length, steps, tokens, cost, latency, verified yield.

Built from the trajectories on file (so a resumed run reports every unit, and the same file always
gives the same report), written as `report.json`, `report.md` and `rollouts.png`. With a
simulator it adds the verified yield (trajectories whose every simulated step matched execution,
over all trajectories), the share of simulated steps verified, the cost per verified trajectory
and the first divergences.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from catalog.jsonmodel import JsonModel
from catalog.runs.journal import write_json
from catalog.usage import Usage
from synth.rollout.hybrid import DROPPED
from verifier.audit.report import percentiles

__all__ = ["HybridSummary", "RolloutSummary", "build_report", "hybrid_section", "json_summary", "render_markdown", "render_summary", "write_report"]

DIVERGENCES_LISTED = 20


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _group(trajectories: Sequence[dict[str, Any]], key: Any) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for t in trajectories:
        groups.setdefault(str(key(t)), []).append(t)
    out = {}
    for name in sorted(groups, key=lambda k: (int(k), "") if k.isdigit() else (0, k)):
        members = groups[name]
        wins = sum(1 for t in members if t["success"])
        out[name] = {"trajectories": len(members), "successes": wins, "success_rate": _rate(wins, len(members)),
                     "mean_steps": round(sum(len(t["steps"]) for t in members) / len(members), 2)}
    return out


def build_report(trajectories: Sequence[dict[str, Any]], *, model: str, simulator: str | None,
                 errors: dict[str, str] | None = None, trust: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report of these trajectories (any order: sorted by id here).

    `trust` (a hybrid run: verifier.audit.trust.TrustTable.summary) adds the `hybrid` section.
    """
    ts = sorted(trajectories, key=lambda t: t["id"])
    n = len(ts)
    wins = sum(1 for t in ts if t["success"])
    ends: dict[str, int] = {}
    for t in ts:
        ends[t["end"]] = ends.get(t["end"], 0) + 1
    cost = round(sum(t["cost_usd"] for t in ts), 8)
    agent = sum((Usage.model_validate(t["usage"]) for t in ts), Usage())
    sim = sum((Usage.model_validate(t["sim_usage"]) for t in ts), Usage())
    report: dict[str, Any] = {
        "model": model, "simulator": simulator, "trajectories": n, "successes": wins,
        "success_rate": _rate(wins, n) if n else 0.0,
        "by_env": _group(ts, lambda t: t["env"]),
        "by_solution_length": _group(ts, lambda t: t["metadata"]["solution_length"]),
        "steps": {"total": sum(len(t["steps"]) for t in ts), **percentiles([len(t["steps"]) for t in ts])},
        "turns": sum(t["metadata"]["turns"] for t in ts),
        "malformed_calls": sum(t["metadata"]["malformed_calls"] for t in ts),
        "ends": dict(sorted(ends.items())),
        "tokens_in": agent.tokens_in + sim.tokens_in,
        "tokens_out": agent.tokens_out + sim.tokens_out,
        "agent_tokens": {"in": agent.tokens_in, "out": agent.tokens_out},
        "cost_usd": cost,
        "latency_s": {"episode": percentiles([t["metadata"]["seconds"] for t in ts]),
                      "model_per_episode": percentiles([t["metadata"]["model_seconds"] for t in ts]),
                      "env_per_episode": percentiles([t["metadata"]["env_seconds"] for t in ts])},
        "errors": dict(sorted((errors or {}).items())),
    }
    if simulator is not None:
        verified = sum(1 for t in ts if t["verified"])
        sim_steps = [s for t in ts for s in t["steps"] if s["sim"]["simulated"] and s["sim"].get("executed", True)]
        report.update({
            "verified": verified, "verified_yield": _rate(verified, n),
            "simulated_steps": len(sim_steps), "steps_verified": sum(1 for s in sim_steps if s["sim"]["verified"]),
            "step_verified_rate": _rate(sum(1 for s in sim_steps if s["sim"]["verified"]), len(sim_steps)),
            "abstained_steps": sum(1 for s in sim_steps if s["sim"]["abstained"]),
            "simulator_cost_usd": round(sim.cost_usd, 8),
            "cost_per_verified_usd": round(cost / verified, 8) if verified else None,
            "divergences": [{"id": t["id"], **json.loads(t["first_divergence_json"])} for t in ts
                            if t["first_divergence_json"] != "null"][:DIVERGENCES_LISTED],
        })
    if trust is not None:
        report["hybrid"] = hybrid_section(ts, trust)
    return report


def hybrid_section(ts: Sequence[dict[str, Any]], trust: dict[str, Any]) -> dict[str, Any]:
    """A hybrid run's figures: who answered, the spot checks, and the time and model usage it cost and saved.

    Execution time a simulated step saved is estimated by the mean seconds of the same tool's
    executed steps in this run (of every executed step where that tool never executed); what the
    simulator and the hybrid overhead (trust decisions, state reads and loads: `trust_seconds`) took
    is subtracted, so `saved_est` is net; so is each episode's last catch-up, before its check
    (`settle_seconds`).
    """
    steps = [(t, s) for t in ts for s in t["steps"] if s["outcome"] != "malformed"]
    executed = [s for _t, s in steps if s["sim"].get("executed", True)]
    alone = [s for _t, s in steps if not s["sim"].get("executed", True)]
    checks = [s for _t, s in steps if s["sim"].get("trust") in ("spot-check", DROPPED)]
    verified = sum(1 for s in checks if s["sim"]["verified"])
    per_tool: dict[str, list[float]] = {}
    for s in executed:
        per_tool.setdefault(s["name"], []).append(float(s["seconds"]))
    mean_all = sum(map(sum, per_tool.values())) / len(executed) if executed else 0.0
    avoided = sum(sum(per_tool[s["name"]]) / len(per_tool[s["name"]]) if s["name"] in per_tool else mean_all
                  for s in alone)
    sim_seconds = sum(float(s["sim"]["seconds"]) for _t, s in steps if s["sim"]["simulated"])
    trust_seconds = sum(float(s["sim"].get("trust_seconds", 0.0)) for _t, s in steps) + sum(
        float(t["metadata"].get("settle_seconds", 0.0)) for t in ts)
    reasons = Counter(s["sim"].get("trust", "") for s in executed if s not in checks)
    dropped = [{"cell": f"{t['env']}: {s['sim']['cell']}", "trajectory": t["id"], "step": s["index"]}
               for t, s in steps if s["sim"].get("trust") == DROPPED]
    return {
        **trust,
        "steps": len(steps), "executed_steps": len(executed), "simulated_steps": len(alone),
        "spot_checks": len(checks), "spot_checks_verified": verified,
        "executed_share": _rate(len(executed), len(steps)), "simulated_share": _rate(len(alone), len(steps)),
        "trusted_verified_share": _rate(verified, len(checks)),
        "untrusted_reasons": dict(reasons.most_common(10)),
        "dropped": dropped,
        "seconds": {"executed": round(sum(float(s["seconds"]) for s in executed), 6),
                    "simulator": round(sim_seconds, 6), "hybrid_overhead": round(trust_seconds, 6),
                    "execution_avoided_est": round(avoided, 6),
                    "saved_est": round(avoided - sim_seconds - trust_seconds, 6)},
        "simulator_usage": {"tokens_in": sum(int(s["sim"]["tokens_in"]) for _t, s in steps),
                            "tokens_out": sum(int(s["sim"]["tokens_out"]) for _t, s in steps),
                            "cost_usd": round(sum(float(s["sim"]["cost_usd"]) for _t, s in steps), 8)},
    }


class RolloutSummary(JsonModel):
    """What `rollout --json` prints: model, trajectories, success rate, verified (with a simulator only), tokens, cost."""

    model: str
    trajectories: int
    success_rate: float | None
    verified: int | None = Field(default=None, exclude_if=lambda v: v is None)
    tokens_in: int
    tokens_out: int
    cost_usd: int | float  # 0 with no trajectory


class HybridSummary(RolloutSummary):
    """`rollout --trust ... --json`: the summary, with the share of steps executed and of spot checks verified."""

    executed_share: float | None
    trusted_verified_share: float | None


def json_summary(report: dict[str, Any]) -> RolloutSummary:
    """The summary of a rollout report (`verified` only when it had a simulator, the shares only when hybrid)."""
    fields = {"model": report["model"], "trajectories": report["trajectories"], "success_rate": report["success_rate"],
              "verified": report["verified"] if report["simulator"] else None, "tokens_in": report["tokens_in"],
              "tokens_out": report["tokens_out"], "cost_usd": report["cost_usd"]}
    hybrid = report.get("hybrid")
    if hybrid is None:
        return RolloutSummary(**fields)
    return HybridSummary(**fields, executed_share=hybrid["executed_share"],
                         trusted_verified_share=hybrid["trusted_verified_share"])


def render_summary(report: dict[str, Any]) -> str:
    """A few lines for the terminal."""
    lines = [f"{report['model']}: {report['successes']}/{report['trajectories']} tasks solved "
             f"(success rate {report['success_rate']}), {report['steps']['total']} steps, "
             f"{report['malformed_calls']} malformed calls; tokens {report['tokens_in']} in / "
             f"{report['tokens_out']} out, {report['cost_usd']:.4f} USD"]
    if report["simulator"]:
        lines.append(f"simulator {report['simulator']}: {report['verified']}/{report['trajectories']} trajectories "
                     f"verified (yield {report['verified_yield']}), {report['steps_verified']}/"
                     f"{report['simulated_steps']} steps; cost per verified trajectory "
                     f"{report['cost_per_verified_usd']} USD")
    if "hybrid" in report:
        h = report["hybrid"]
        lines.append(f"hybrid ({h['cells_trusted']}/{h['cells_audited']} audited cells trusted): executed "
                     f"{h['executed_steps']}/{h['steps']} steps (share {h['executed_share']}), simulated alone "
                     f"{h['simulated_steps']}; spot checks verified {h['spot_checks_verified']}/{h['spot_checks']}"
                     f" (share {h['trusted_verified_share']}); {len(h['dropped'])} cell(s) dropped; est. seconds "
                     f"saved {h['seconds']['saved_est']} (simulator {h['seconds']['simulator']} s, "
                     f"{h['simulator_usage']['cost_usd']} USD)")
    if report["errors"]:
        lines.append(f"{len(report['errors'])} episode(s) could not run (rerun to retry): "
                     + "; ".join(f"{k}: {v}" for k, v in list(report["errors"].items())[:3]))
    return "\n".join(lines)


def _table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"## {title}", "", "| | trajectories | solved | success rate | mean steps |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {g['trajectories']} | {g['successes']} | {g['success_rate']} | {g['mean_steps']} |"
              for k, g in groups.items()]
    return [*lines, ""]


def render_markdown(report: dict[str, Any]) -> str:
    """report.md."""
    lat = report["latency_s"]
    lines = [f"# Rollouts: {report['model']}" + (f" with simulator {report['simulator']}" if report["simulator"] else ""),
             "", render_summary(report).replace("\n", "\n\n"), "",
             f"Ends: {', '.join(f'{k} {v}' for k, v in report['ends'].items())}. Episode seconds p50 "
             f"{lat['episode']['p50']}, p90 {lat['episode']['p90']}, max {lat['episode']['max']}; model seconds "
             f"per episode p50 {lat['model_per_episode']['p50']}; env seconds per episode p50 "
             f"{lat['env_per_episode']['p50']}.", "",
             *_table("Success per env", report["by_env"]),
             *_table("Success per solution length (calls in the reference solution)", report["by_solution_length"])]
    if report["simulator"]:
        lines += ["## Verified simulated rollouts", "",
                  f"Verified yield {report['verified_yield']} ({report['verified']} of {report['trajectories']}); "
                  f"simulated steps verified {report['steps_verified']}/{report['simulated_steps']} "
                  f"({report['abstained_steps']} abstained); simulator cost {report['simulator_cost_usd']} USD; "
                  f"cost per verified trajectory {report['cost_per_verified_usd']} USD.", ""]
        if report["divergences"]:
            lines += ["| trajectory | first divergent step | tool | what |", "|---|---|---|---|"]
            lines += [f"| {d['id']} | {d['step']} | {d['tool']} | {d['what']} |" for d in report["divergences"]]
            lines.append("")
    if "hybrid" in report:
        lines += _hybrid_markdown(report["hybrid"])
    if report["errors"]:
        lines += ["## Not run (rerun to retry)", "", *(f"- {k}: {v}" for k, v in report["errors"].items()), ""]
    return "\n".join(lines)


def _hybrid_markdown(h: dict[str, Any]) -> list[str]:
    sec = h["seconds"]
    lines = ["## Hybrid: trust where the audit earned it", "",
             f"Audit {h['audit']} ({h['simulator']}, {h['mode']}): {h['cells_trusted']} of {h['cells_audited']} "
             f"audited cells trusted (strict CM >= {h['min_cm']} over >= {h['min_samples']} samples); spot checks "
             f"on a share {h['spot_check']} of trusted steps.", "",
             "| steps | executed | simulated alone | spot checks | verified | executed share | trusted verified share |",
             "|---|---|---|---|---|---|---|",
             f"| {h['steps']} | {h['executed_steps']} | {h['simulated_steps']} | {h['spot_checks']} | "
             f"{h['spot_checks_verified']} | {h['executed_share']} | {h['trusted_verified_share']} |", "",
             f"Seconds: executed steps {sec['executed']}, simulator {sec['simulator']}, hybrid overhead (trust "
             f"decisions, state reads and loads) {sec['hybrid_overhead']}; execution avoided (est.) {sec['execution_avoided_est']}, net saved (est.) "
             f"{sec['saved_est']}. Simulator usage: {h['simulator_usage']['tokens_in']} tokens in, "
             f"{h['simulator_usage']['tokens_out']} out, {h['simulator_usage']['cost_usd']} USD.", ""]
    if h["foreign_records"]:
        lines += ["Audit records that give no trust: " + ", ".join(f"{k} ({v})" for k, v in h["foreign_records"].items())
                  + ".", ""]
    if h["dropped"]:
        lines += ["| cell dropped | trajectory | step |", "|---|---|---|",
                  *(f"| {d['cell']} | {d['trajectory']} | {d['step']} |" for d in h["dropped"]), ""]
    if h["untrusted_reasons"]:
        lines += ["| why a step executed | steps |", "|---|---|",
                  *(f"| {k} | {v} |" for k, v in h["untrusted_reasons"].items()), ""]
    return lines


MAX_BARS = 20
"""Past this many groups a panel aggregates: one bar per group would give labels no one can read."""


@dataclass(frozen=True)
class Panel:
    """What one plot panel draws: a bar per label, and what its axes say."""

    labels: list[str]
    heights: list[float]
    xlabel: str
    ylabel: str
    counts: list[int] | None = None  # trajectories behind each bar, printed above it


def env_panel(groups: dict[str, dict[str, Any]]) -> Panel:
    r"""Success per env: a bar per env up to MAX_BARS envs, else how many envs fall in each band of success rate.

    >>> many = {f"env-{i}": {"trajectories": 2, "success_rate": (i % 3) / 2} for i in range(30)}
    >>> panel = env_panel(many)
    >>> len(panel.labels), sum(panel.heights), panel.heights[0], panel.heights[5], panel.heights[9]
    (10, 30.0, 10.0, 10.0, 10.0)
    >>> env_panel({"bank": {"trajectories": 3, "success_rate": 1.0}})
    Panel(labels=['bank'], heights=[100.0], xlabel='env', ylabel='success rate (%)', counts=[3])
    """
    if len(groups) <= MAX_BARS:
        return Panel(list(groups), [100 * (g["success_rate"] or 0) for g in groups.values()], "env",
                     "success rate (%)", [g["trajectories"] for g in groups.values()])
    counts = [0] * 10
    for g in groups.values():
        counts[min(9, int(10 * (g["success_rate"] or 0)))] += 1
    labels = [f"{10 * b}-{10 * b + 10}%" for b in range(10)]
    return Panel(labels, [float(c) for c in counts], f"success rate per env ({len(groups)} envs; each env in "
                 "report.md)", "envs")


def length_panel(groups: dict[str, dict[str, Any]]) -> Panel:
    r"""Success per reference solution length: a bar per length up to MAX_BARS, else per range of lengths.

    >>> lengths = {str(n): {"trajectories": 2, "successes": 1, "success_rate": 0.5} for n in range(1, 46)}
    >>> panel = length_panel(lengths)
    >>> len(panel.labels) <= 20, panel.labels[0], panel.labels[-1], set(panel.heights)
    (True, '1-3', '43-45', {50.0})
    """
    label = "reference solution length"
    if len(groups) <= MAX_BARS or not all(k.isdigit() for k in groups):
        return Panel(list(groups), [100 * (g["success_rate"] or 0) for g in groups.values()], label,
                     "success rate (%)", [g["trajectories"] for g in groups.values()])
    lengths = sorted(int(k) for k in groups)
    width = -(-(lengths[-1] - lengths[0] + 1) // MAX_BARS)
    ranges: dict[int, list[dict[str, Any]]] = {}
    for n in lengths:
        ranges.setdefault((n - lengths[0]) // width, []).append(groups[str(n)])
    labels, heights, counts = [], [], []
    for band, members in sorted(ranges.items()):
        low = lengths[0] + band * width
        runs, wins = sum(g["trajectories"] for g in members), sum(g["successes"] for g in members)
        labels.append(f"{low}-{low + width - 1}")
        heights.append(100 * wins / runs)
        counts.append(runs)
    return Panel(labels, heights, f"{label} (ranges of {width})", "success rate (%)", counts)


def _plot(report: dict[str, Any], folder: Path) -> list[str]:
    """Success per env and per solution length, side by side (aggregated past MAX_BARS); skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    if not report["trajectories"]:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, panel in ((axes[0], env_panel(report["by_env"])), (axes[1], length_panel(report["by_solution_length"]))):
        bars = ax.bar(range(len(panel.labels)), panel.heights, color="#4c72b0")
        if panel.counts is not None:
            ax.bar_label(bars, [f"n={c}" for c in panel.counts], fontsize=6, padding=1)
        slanted = len(panel.labels) > 6 or max(map(len, panel.labels)) > 8
        ax.set_xticks(range(len(panel.labels)), panel.labels, fontsize=7, rotation=40 if slanted else 0,
                      ha="right" if slanted else "center", rotation_mode="anchor")
        if panel.ylabel.startswith("success"):
            ax.set_ylim(0, 110)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"Rollouts: {report['model']}" + (f" (simulator {report['simulator']}, verified yield "
                                                    f"{report['verified_yield']})" if report["simulator"] else ""))
    fig.tight_layout()
    fig.savefig(folder / "rollouts.png", dpi=100)
    plt.close(fig)
    return ["rollouts.png"]


def write_report(report: dict[str, Any], out_dir: Path | str, *, plots: bool = True) -> dict[str, Any]:
    """Write report.json, report.md and (if `plots`) rollouts.png into out_dir; returns the report."""
    folder = Path(out_dir)
    report["plots"] = _plot(report, folder) if plots else []
    write_json(folder / "report.json", report)
    (folder / "report.md").write_text(render_markdown(report), encoding="utf-8")
    return report
