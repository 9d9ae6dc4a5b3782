"""The property audit's report, as JSON and Markdown.

Per property the inputs tried, violations and the minimal counterexample; per tool and per |Δ| band
the share of inputs breaking any property; calls, tokens and cost.

The report is typed (`PropertyAuditReport`); `report.json` is its JSON form (keys sorted) and
holds the figures `audit-sim --property-based --json` prints (`PropertySummary`: `model`, `calls`,
`properties: {NAME: {tried, violations}}`, `counterexamples`, `tokens_in`, `tokens_out`,
`cost_usd`); `report.md` says the same for people.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.bench.items import Simulator
from catalog.bench.strata import DELTA_BANDS
from catalog.jsonmodel import JsonModel
from verifier.simaudit.answers import AnswerBook
from verifier.simaudit.checks import PROPERTIES

if TYPE_CHECKING:
    from verifier.simaudit.search import EnvSearch
    from verifier.simaudit.settings import PropertyAudit

__all__ = ["PropertyAuditReport", "PropertySummary", "build_report", "property_summary", "render_markdown",
           "render_summary", "write_report"]

BAND_ORDER = ("failure", *DELTA_BANDS)  # the strata ladder's |Δ| bands, a failure first


class PropertyRow(JsonModel):
    """One property over every env: inputs tried, violations, who judges it, and its first counterexample."""

    tried: int
    violations: int
    judge: str
    summary: str
    counterexample: dict[str, Any] | None  # Counterexample.summary()


class BudgetUse(JsonModel):
    """The budget the audit was given and what became of it."""

    calls: int | None
    tokens: int | None
    exhausted: bool
    questions_refused: int


class FailureRate(JsonModel):
    """Inputs of one tool or |Δ| band, how many broke any property, and the share."""

    inputs: int
    failing: int
    failure_rate: float


class PropertyCount(JsonModel):
    tried: int
    violations: int


class PropertySummary(JsonModel):
    """What `audit-sim --property-based --json` prints: the headline figures, per property tried/violations."""

    model: str
    calls: int
    properties: dict[str, PropertyCount]
    counterexamples: list[dict[str, Any]]
    tokens_in: int
    tokens_out: int
    cost_usd: float


class PropertyAuditReport(JsonModel):
    """What `report.json` holds (see the module docstring)."""

    model: str
    mode: str
    calls: int
    properties: dict[str, PropertyRow]
    counterexamples: list[dict[str, Any]]
    tokens_in: int
    tokens_out: int
    cost_usd: float
    budget: BudgetUse
    asked_this_run: int
    sampling: dict[str, Any]
    seed: int
    examples_per_property: int
    envs: list[str]
    envs_skipped: dict[str, str]
    inputs: int
    abstained: int
    executions: int
    per_tool: dict[str, FailureRate]
    per_band: dict[str, FailureRate]


def _rates(rows: list[dict[str, Any]], key: str) -> dict[str, FailureRate]:
    inputs: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    for row in rows:
        inputs[row[key]] += 1
        failing[row[key]] += bool(row["violated"])
    order = sorted(inputs, key=lambda k: (BAND_ORDER.index(k) if k in BAND_ORDER else len(BAND_ORDER), k))
    return {k: FailureRate(inputs=inputs[k], failing=failing[k], failure_rate=round(failing[k] / inputs[k], 4))
            for k in order}


def build_report(simulator: Simulator, searches: list[EnvSearch], book: AnswerBook, audit: PropertyAudit,
                 examples: int, skipped: dict[str, str]) -> PropertyAuditReport:
    """The report of a finished (or budget-stopped) property audit."""
    properties: dict[str, PropertyRow] = {}
    for name, prop in PROPERTIES.items():
        found = [c for s in searches for c in s.counterexamples if c.property == name]
        properties[name] = PropertyRow(
            tried=sum(len(s.tallies[name].tried) for s in searches),
            violations=sum(len(s.tallies[name].violations) for s in searches),
            judge=prop.judge, summary=prop.summary, counterexample=found[0].summary() if found else None)
    rows = [{**row, "tool": f"{s.source.id}.{row['tool']}"} for s in searches for row in s.inputs.values()]
    usage = book.usage()
    return PropertyAuditReport(
        model=simulator.name, mode=simulator.mode, calls=usage["calls"], properties=properties,
        counterexamples=[c.summary() for s in searches for c in s.counterexamples],
        tokens_in=usage["tokens_in"], tokens_out=usage["tokens_out"], cost_usd=usage["cost_usd"],
        budget=BudgetUse(calls=audit.budget.calls, tokens=audit.budget.tokens, exhausted=book.exhausted,
                         questions_refused=book.refused),
        asked_this_run=book.asked_now,
        sampling={k: getattr(simulator, k) for k in ("seed", "temperature") if hasattr(simulator, k)},
        seed=audit.seed, examples_per_property=examples,
        envs=[s.source.id for s in searches], envs_skipped=skipped,
        inputs=len(rows), abstained=sum(len(s.abstained) for s in searches),
        executions=sum(s.source.executions for s in searches),
        per_tool=_rates(rows, "tool"), per_band=_rates(rows, "band"))


def render_markdown(report: PropertyAuditReport) -> str:
    """The report for people: the property table, counterexamples, failure rates, usage and budget."""
    r, budget = report, report.budget
    lines = [f"# Property-based audit: {r.model} ({r.mode})", "",
             f"{r.inputs} inputs over {len(r.envs)} envs (seed {r.seed}, up to "
             f"{r.examples_per_property} generated inputs per property and env, plus shrinking); "
             f"{r.abstained} unanswered (abstained or unusable).", "",
             "| property | judged by | tried | violations | minimal counterexample |", "|---|---|---:|---:|---|"]
    for name, row in r.properties.items():
        c = row.counterexample
        where = "-" if c is None else (f"{c['env']}.{c['tool']}({json.dumps(c['arguments'], ensure_ascii=False)}) "
                                        f"on {c['records']} records: {c['detail']}".replace("|", "\\|"))
        lines.append(f"| {name} | {row.judge} | {row.tried} | {row.violations} | {where} |")
    lines += ["", "## Failure rate per tool (inputs breaking any property)", "", "| tool | inputs | failing | rate |",
              "|---|---:|---:|---:|"]
    lines += [f"| {k} | {v.inputs} | {v.failing} | {v.failure_rate:.1%} |" for k, v in r.per_tool.items()]
    lines += ["", "## Failure rate per |Δ| band (executed)", "", "| band | inputs | failing | rate |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {v.inputs} | {v.failing} | {v.failure_rate:.1%} |" for k, v in r.per_band.items()]
    limit = "no call limit" if budget.calls is None else f"budget {budget.calls} calls"
    lines += ["", f"Usage: {r.calls} model calls ({limit}), {r.tokens_in} tokens in / "
              f"{r.tokens_out} out, {r.cost_usd:.4f} USD; sampling {r.sampling or 'not exposed'}."]
    if budget.exhausted:
        lines.append(f"The budget ran out: {budget.questions_refused} questions were not asked; searches and "
                     "shrinks stopped there (counterexamples marked `shrunk: false` may not be minimal).")
    if r.envs_skipped:
        lines += ["", "Envs skipped:", *(f"- {env}: {why}" for env, why in r.envs_skipped.items())]
    return "\n".join(lines) + "\n"


def property_summary(report: PropertyAuditReport) -> PropertySummary:
    """What `audit-sim --property-based --json` prints: the headline figures, per property tried/violations."""
    return PropertySummary(
        model=report.model, calls=report.calls,
        properties={name: PropertyCount(tried=row.tried, violations=row.violations)
                    for name, row in report.properties.items()},
        counterexamples=report.counterexamples, tokens_in=report.tokens_in, tokens_out=report.tokens_out,
        cost_usd=report.cost_usd)


def render_summary(report: PropertyAuditReport) -> str:
    """A few lines for the terminal: per property tried/violations, each counterexample, usage."""
    r = report
    lines = [f"{r.model} ({r.mode}): {r.inputs} inputs over {len(r.envs)} envs, "
             f"{r.calls} model calls, {r.tokens_in} tokens in / {r.tokens_out} out, "
             f"{r.cost_usd:.4f} USD" + (" (budget spent)" if r.budget.exhausted else "")]
    width = max(len(name) for name in r.properties)
    for name, row in r.properties.items():
        lines.append(f"  {name:<{width}}  tried {row.tried:>4}  violations {row.violations:>4}")
    for c in r.counterexamples:
        lines.append(f"  counterexample [{c['property']}] {c['env']}.{c['tool']}"
                     f"({json.dumps(c['arguments'], ensure_ascii=False)}) on {c['records']} records"
                     f"{'' if c['shrunk'] else ' (shrink stopped at the budget)'}: {c['detail']}")
    return "\n".join(lines)


def write_report(report: PropertyAuditReport, out: Path) -> None:
    """Write report.json and report.md into `out`."""
    data = report.model_dump()  # values a counterexample holds that JSON lacks are written as text (default=str)
    (out / "report.json").write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True, default=str)
                                     + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")
