"""The yield/cost report of a synthesis run: JSON, Markdown and PNG plots.

Per stage: attempts, first-attempt pass rate, final pass rate, tokens, cost and wall time
(summed over slots). Per run: proposed, deduplicated, existing (ids the catalog already had,
kept and skipped), rejected (with the failing checks), registered, yield = registered / (proposed
- existing), per-env quality, and the distributions of tools and tables per env and |Δ| per
write tool; `realism` (synth.realism): tools, tables and seed rows per env, calls per reference
solution, refusal tasks, unnatural parameters and value-constraint violations, with a plot.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from catalog.jsonmodel import JsonModel
from catalog.runs.files import atomic_write
from catalog.store import Catalog
from catalog.usage import Usage
from synth.realism import Realism, realism_totals
from synth.shortfall import Shortfall
from synth.slot import STAGES

__all__ = ["SynthesisReport", "StageRow", "build_report", "render_markdown", "render_skipped", "render_summary", "write_report"]


class StageRow(JsonModel):
    """One stage summed over the slots that reached it."""

    slots: int
    attempts: int
    first_attempt_pass_rate: float
    final_pass_rate: float
    tokens_in: int
    tokens_out: int
    cost_usd: float
    llm_calls: int
    wall_s: float


class Rejection(JsonModel):
    slot: int
    env_id: str | None
    reason: str | None
    failing_checks: list[str]


class Skipped(JsonModel):
    """A slot whose env id the catalog already had (kept, not replaced)."""

    slot: int
    env_id: str | None
    reason: str | None


class EnvRow(JsonModel):
    """A registered env."""

    env_id: str
    domain: str | None
    topic: str | None
    quality: int | float | None
    tools: int | None
    tables: int | None
    failing_checks: list[str]


class Distributions(JsonModel):
    tools_per_env: dict[int, int]
    tables_per_env: dict[int, int]
    delta_per_write_tool: dict[int, int]
    quality: dict[int | float, int]  # a registered env's gate score -> how many


class JudgeTotals(JsonModel):
    envs: int
    probes: int
    disagreements: int
    tokens_in: int
    tokens_out: int
    cost_usd: float


class MiningTotals(JsonModel):
    statements: int
    stateful_agreement: float
    domain_agreement: float | None
    domain_labelled: int
    fell_back: int


class SynthesisReport(JsonModel):
    """A run's yield/cost report; `model_dump(mode="json")` is report.json (fields in file order).

    `yield_` is `yield` in the JSON (a Python keyword). `sessions_wall_s`, `plots`, `catalog` and
    `executor` are filled when the report is written; `executor` is where the last session's
    workers ran (`{"kind", "workers"}`): a run resumed on another executor says so, and
    registers the same envs.
    """

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    run_id: str
    backend: str | None
    model: str | None
    mode: str | None
    seed: int | None
    requested: int | None
    proposed: int
    deduplicated: int
    existing: int
    rejected: int
    failed: int
    registered: int
    yield_: float = Field(alias="yield")
    tokens_in: int
    tokens_out: int
    cost_usd: int | float  # 0 when no stage ran
    cost_per_registered_env_usd: float | None
    wall_s: int | float
    stages: dict[str, StageRow]
    rejections: list[Rejection]
    rejection_checks: dict[str, int]
    skipped_existing: list[Skipped]
    envs: list[EnvRow]
    distinct_schemas: int
    distributions: Distributions
    judge: JudgeTotals | None
    mining: MiningTotals | None
    realism: Realism | None = None
    shortfall: Shortfall | None = None  # why fewer than requested were registered (synth.shortfall)
    sessions_wall_s: list[int | float] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)
    catalog: str = ""
    executor: dict[str, Any] | None = None


def _stage_table(summaries: list[dict[str, Any]]) -> dict[str, StageRow]:
    table: dict[str, StageRow] = {}
    for stage in STAGES:
        rows = [s["stages"][stage] for s in summaries if stage in (s.get("stages") or {})]
        if not rows:
            continue
        used = sum((Usage.model_validate(r) for r in rows), Usage())  # a stage entry's counts (synth.slot)
        table[stage] = StageRow(
            slots=len(rows), attempts=sum(r["attempts"] for r in rows),
            first_attempt_pass_rate=round(sum(bool(r["first_ok"]) for r in rows) / len(rows), 4),
            final_pass_rate=round(sum(bool(r["ok"]) for r in rows) / len(rows), 4),
            tokens_in=used.tokens_in, tokens_out=used.tokens_out, cost_usd=round(used.cost_usd, 6),
            llm_calls=used.calls, wall_s=round(used.seconds, 2),
        )
    return table


def build_report(run_id: str, config: dict[str, Any], summaries: list[dict[str, Any]],
                 wall_s: float) -> SynthesisReport:
    """The report's data (pure: no files)."""
    by_status = Counter(s["status"] for s in summaries)
    registered = [s for s in summaries if s["status"] == "registered"]
    stages = _stage_table(summaries)
    failing = Counter(c for s in summaries if s["status"] == "rejected" for c in s.get("failing_checks", []))
    deltas = [n for s in registered for n in (s.get("delta_sizes") or {}).values()]
    proposed = len(summaries)
    new = proposed - by_status.get("existing", 0)  # an id the catalog already had is no verdict on the generator
    cost = round(sum(t.cost_usd for t in stages.values()), 6)
    return SynthesisReport(
        run_id=run_id, backend=config.get("backend"), model=config.get("model"), mode=config.get("mode"),
        seed=config.get("seed"), requested=config.get("n"), proposed=proposed,
        deduplicated=by_status.get("deduplicated", 0), existing=by_status.get("existing", 0),
        rejected=by_status.get("rejected", 0), failed=by_status.get("failed", 0), registered=len(registered),
        yield_=round(len(registered) / new, 4) if new else 0.0,
        tokens_in=sum(t.tokens_in for t in stages.values()), tokens_out=sum(t.tokens_out for t in stages.values()),
        cost_usd=cost,
        cost_per_registered_env_usd=round(sum(t.cost_usd for t in stages.values()) / len(registered), 6)
        if registered else None,
        wall_s=round(wall_s, 1),
        stages=stages,
        rejections=[Rejection(slot=s["slot"], env_id=s.get("env_id"), reason=s.get("reason"),
                              failing_checks=s.get("failing_checks", []))
                    for s in summaries if s["status"] in ("rejected", "failed")],
        rejection_checks=dict(failing.most_common()),
        skipped_existing=[Skipped(slot=s["slot"], env_id=s.get("env_id"), reason=s.get("reason"))
                          for s in summaries if s["status"] == "existing"],
        envs=[EnvRow(env_id=s["env_id"], domain=s.get("domain"), topic=s.get("topic"), quality=s.get("quality"),
                     tools=s.get("tools"), tables=s.get("tables"), failing_checks=s.get("failing_checks", []))
              for s in registered],
        distinct_schemas=len({s.get("schema_signature") for s in registered}),
        distributions=Distributions(
            tools_per_env=dict(sorted(Counter(s["tools"] for s in registered).items())),
            tables_per_env=dict(sorted(Counter(s["tables"] for s in registered).items())),
            delta_per_write_tool=dict(sorted(Counter(deltas).items())),
            quality=dict(sorted(Counter(s["quality"] for s in registered).items())),
        ),
        judge=_judge_totals(summaries),
        mining=_mining_totals(summaries),
        realism=realism_totals([s.get("realism") or {} for s in registered]),
    )


def _mining_totals(summaries: list[dict[str, Any]]) -> MiningTotals | None:
    """How the model's mining answers compare with the corpus labels (LLM backend only)."""
    from synth.procedural.ontology import load_domains

    mined = [s["mining"] for s in summaries if s.get("mining")]
    if not mined:
        return None
    known = {d.id for d in load_domains()}
    labelled = [m for m in mined if m.get("corpus_domain") in known]
    return MiningTotals(
        statements=len(mined),
        stateful_agreement=round(sum(m.get("model_stateful") == m.get("corpus_stateful") for m in mined)
                                 / len(mined), 4),
        domain_agreement=round(sum(m.get("model_domain") == m["corpus_domain"] for m in labelled)
                               / len(labelled), 4) if labelled else None,
        domain_labelled=len(labelled),
        fell_back=sum(bool(m.get("note")) for m in mined))


def _judge_totals(summaries: list[dict[str, Any]]) -> JudgeTotals | None:
    judged = [s["judge"] for s in summaries if s.get("judge")]
    if not judged:
        return None
    used = sum((Usage.model_validate({k: j[k] for k in ("tokens_in", "tokens_out", "cost_usd") if k in j})
                for j in judged), Usage())  # a judge's "errors" is a count, not Usage's list
    return JudgeTotals(envs=len(judged), probes=sum(j.get("probes", 0) for j in judged),
                       disagreements=sum(j.get("disagreements", 0) for j in judged),
                       tokens_in=used.tokens_in, tokens_out=used.tokens_out, cost_usd=round(used.cost_usd, 6))


def render_markdown(report: SynthesisReport) -> str:
    """report.md."""
    r = report
    lines = [f"# Synthesis run {r.run_id}", "",
             f"Backend **{r.backend}**" + (f", model **{r.model}** ({r.mode} mode)" if r.model else "")
             + f", seed {r.seed}.", "",
             "| requested | proposed | deduplicated | existing | rejected | failed | registered | yield | tokens in | tokens out | cost (USD) | wall (s) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             f"| {r.requested} | {r.proposed} | {r.deduplicated} | {r.existing} | {r.rejected} | "
             f"{r.failed} | {r.registered} | {r.yield_:.1%} | {r.tokens_in} | "
             f"{r.tokens_out} | {r.cost_usd:.4f} | {r.wall_s} |", "",
             *([f"**Short of the request.** {r.shortfall.reason}.", ""] if r.shortfall else []),
             "## Stages", "",
             "| stage | slots | attempts | first-attempt pass | final pass | LLM calls | tokens in | tokens out | cost (USD) | wall (s, summed) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in r.stages.items():
        lines.append(f"| {name} | {s.slots} | {s.attempts} | {s.first_attempt_pass_rate:.1%} | "
                     f"{s.final_pass_rate:.1%} | {s.llm_calls} | {s.tokens_in} | {s.tokens_out} | "
                     f"{s.cost_usd:.4f} | {s.wall_s} |")
    lines += ["", f"Distinct table schemas among registered envs: **{r.distinct_schemas}**.", "",
              "## Distributions", ""]
    for key, values in r.distributions.model_dump().items():
        lines.append(f"- {key.replace('_', ' ')}: " + ", ".join(f"{k}: {v}" for k, v in values.items()))
    if r.realism:
        lines += ["", *_realism_lines(r.realism)]
    if r.rejection_checks:
        lines += ["", "## Why candidates were rejected", ""]
        lines += [f"- {name}: {count}" for name, count in r.rejection_checks.items()]
    if r.rejections:
        lines += ["", "| slot | env | reason |", "|---:|---|---|"]
        lines += [f"| {x.slot} | {x.env_id} | {str(x.reason)[:160]} |" for x in r.rejections[:40]]
    if r.skipped_existing:
        lines += ["", "## Ids the catalog already had (kept, not replaced)", "", "| slot | env | reason |", "|---:|---|---|"]
        lines += [f"| {x.slot} | {x.env_id} | {x.reason} |" for x in r.skipped_existing]
    if r.mining:
        m = r.mining
        lines += ["", "## Topic mining by the model", "",
                  f"{m.statements} corpus statements read; the model's stateful/not answer agrees with the corpus "
                  f"label in {m.stateful_agreement:.0%}; it named the statement's own domain in "
                  + (f"{m.domain_agreement:.0%} of {m.domain_labelled}" if m.domain_agreement is not None
                     else "- (no statement's domain is in the ontology)")
                  + f"; {m.fell_back} fell back to the ontology order."]
    if r.judge:
        j = r.judge
        lines += ["", "## Rule-conformance judge", "",
                  f"{j.probes} probed calls over {j.envs} envs, {j.disagreements} disagreements with execution; "
                  f"{j.tokens_in} tokens in, {j.tokens_out} out, {j.cost_usd:.4f} USD."]
    return "\n".join(lines) + "\n"


def _realism_lines(x: Realism) -> list[str]:
    def spread(name: str, sp: Any) -> str:
        return (f"| {name} | {sp.min} | {sp.median} | {sp.max} | "
                + ", ".join(f"{k}: {v}" for k, v in sp.histogram.items()) + " |")

    lines = ["## Realism", "",
             f"Over {x.envs} registered envs: {x.tasks} tasks, {x.refusal_tasks} refusal tasks in "
             f"{x.envs_with_refusal} envs ({x.envs_with_refusal / x.envs:.0%}); unnatural parameters "
             f"**{x.unnatural_parameters}**; value-constraint violations **{x.value_constraint_violations}** "
             "(every initial state and every reference solution's final state).", "",
             "| figure | min | median | max | histogram |", "|---|---:|---:|---:|---|",
             spread("tools per env", x.tools_per_env), spread("tables per env", x.tables_per_env),
             spread("seed rows per state (bins of 10)", x.seed_rows_per_state),
             spread("calls per reference solution", x.solution_calls)]
    for kind, found in x.examples.items():
        if found:
            lines += ["", f"First {kind}: " + "; ".join(found)]
    return lines


def render_summary(report: SynthesisReport, where: Path) -> str:
    """What `synthesize` prints when done (without --json): the counts, then where the report is."""
    r = report
    return (f"run {r.run_id}: {r.registered}/{r.requested} registered "
            f"({r.proposed} proposed, {r.deduplicated} duplicates, {r.existing} existing ids "
            f"skipped, {r.rejected} rejected, "
            f"{r.failed} failed; yield {r.yield_:.1%}) in {r.wall_s} s; "
            f"tokens {r.tokens_in} in / {r.tokens_out} out, {r.cost_usd:.4f} USD\n"
            f"report: {where / 'report.md'} (+ report.json, {', '.join(r.plots)})")


def render_skipped(report: SynthesisReport) -> str | None:
    """The stderr note on ids the catalog already had (None if there were none)."""
    skipped = [str(s.env_id) for s in report.skipped_existing]
    if not skipped:
        return None
    return (f"kept {len(skipped)} env(s) the catalog already had, not replaced (not written by this run, or "
            f"edited by hand): {', '.join(skipped[:10])}" + (f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""))


def _plots(report: SynthesisReport, folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.6))
    distributions = report.distributions.model_dump()
    for ax, (key, title) in zip(axes, (("tools_per_env", "tools per env"), ("tables_per_env", "tables per env"),
                                       ("delta_per_write_tool", "|Δ| per write tool")), strict=True):
        values = distributions[key]
        ax.bar([str(k) for k in values], list(values.values()), color="#4c72b0")
        ax.set_title(title)
        ax.set_ylabel("count")
    fig.tight_layout()
    fig.savefig(folder / "distributions.png", dpi=100)
    plt.close(fig)
    written.append("distributions.png")
    if report.realism:
        written.append(_realism_plot(report.realism, folder, plt))
    stages = report.stages
    if stages:
        fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
        names = list(stages)
        axes[0].bar(names, [stages[n].first_attempt_pass_rate for n in names], label="first attempt", alpha=0.6)
        axes[0].plot(names, [stages[n].final_pass_rate for n in names], "o-", color="black", label="final")
        axes[0].set_title("pass rate per stage")
        axes[0].legend()
        axes[1].bar(names, [stages[n].wall_s for n in names], color="#dd8452")
        axes[1].set_title("wall time per stage (s, summed over slots)")
        for ax in axes:
            ax.tick_params(axis="x", rotation=45)
        fig.tight_layout()
        fig.savefig(folder / "stages.png", dpi=100)
        plt.close(fig)
        written.append("stages.png")
    return written


def _realism_plot(x: Realism, folder: Path, plt: Any) -> str:
    """realism.png: tools, tables, seed rows per state and calls per reference solution."""
    fig, axes = plt.subplots(1, 4, figsize=(18, 3.6))
    panels = ((x.tools_per_env, "tools per env"), (x.tables_per_env, "tables per env"),
              (x.seed_rows_per_state, "seed rows per state (bins of 10)"), (x.solution_calls, "calls per solution"))
    for ax, (spread, title) in zip(axes, panels, strict=True):
        ax.bar([str(k) for k in spread.histogram], list(spread.histogram.values()), color="#55a868")
        ax.set_title(f"{title}, median {spread.median}")
        ax.set_ylabel("count")
        ax.tick_params(axis="x", rotation=45)
    fig.suptitle(f"{x.envs} envs: {x.refusal_tasks} refusal tasks, {x.unnatural_parameters} unnatural parameters, "
                 f"{x.value_constraint_violations} value-constraint violations")
    fig.tight_layout()
    fig.savefig(folder / "realism.png", dpi=100)
    plt.close(fig)
    return "realism.png"


def write_report(run_dir: Path, config: Any, summaries: dict[int, dict[str, Any]], catalog: Catalog, *,
                 wall_s: float, report_dir: Path | None = None,
                 executor: dict[str, Any] | None = None, shortfall: Shortfall | None = None) -> SynthesisReport:
    """Write report.json, report.md and the plots (into `report_dir`, default the run folder)."""
    folder = Path(report_dir) if report_dir else run_dir
    folder.mkdir(parents=True, exist_ok=True)
    wall_file = run_dir / "wall_s.json"
    previous = json.loads(wall_file.read_text()) if wall_file.is_file() else []
    walls = [*previous, round(wall_s, 2)]
    atomic_write(wall_file, json.dumps(walls))  # a crash mid-write must not lose earlier sessions' walls
    report = build_report(config.run_id, asdict(config), [summaries[k] for k in sorted(summaries)], sum(walls))
    report.sessions_wall_s = walls
    report.shortfall = shortfall
    report.plots = _plots(report, folder)
    report.catalog = str(catalog.root)
    report.executor = executor
    for name, text in (("report.json", json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"),
                       ("report.md", render_markdown(report))):
        atomic_write(folder / name, text)
    return report
