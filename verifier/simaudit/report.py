"""The property audit's report, as JSON and Markdown.

Per property the inputs tried, violations and the minimal counterexample; per tool and per |Δ| band
the share of inputs breaking any property; calls, tokens and cost.

`report.json` starts with the figures `audit-sim --property-based --json` promises (`model`,
`calls`, `properties: {NAME: {tried, violations}}`, `counterexamples`, `tokens_in`, `tokens_out`,
`cost_usd`); `report.md` says the same for people.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.bench.items import Simulator
from catalog.bench.strata import DELTA_BANDS
from verifier.simaudit.answers import AnswerBook
from verifier.simaudit.checks import PROPERTIES

if TYPE_CHECKING:
    from verifier.simaudit.search import EnvSearch
    from verifier.simaudit.settings import PropertyAudit

__all__ = ["build_report", "property_summary", "render_markdown", "render_summary", "write_report"]

BAND_ORDER = ("failure", *DELTA_BANDS)  # the strata ladder's |Δ| bands, a failure first


def _rates(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    inputs: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    for row in rows:
        inputs[row[key]] += 1
        failing[row[key]] += bool(row["violated"])
    order = sorted(inputs, key=lambda k: (BAND_ORDER.index(k) if k in BAND_ORDER else len(BAND_ORDER), k))
    return {k: {"inputs": inputs[k], "failing": failing[k], "failure_rate": round(failing[k] / inputs[k], 4)}
            for k in order}


def build_report(simulator: Simulator, searches: list[EnvSearch], book: AnswerBook, audit: PropertyAudit,
                 examples: int, skipped: dict[str, str]) -> dict[str, Any]:
    """The report as JSON-ready data (see the module docstring)."""
    properties: dict[str, dict[str, Any]] = {}
    for name, prop in PROPERTIES.items():
        found = [c for s in searches for c in s.counterexamples if c.property == name]
        properties[name] = {
            "tried": sum(len(s.tallies[name].tried) for s in searches),
            "violations": sum(len(s.tallies[name].violations) for s in searches),
            "judge": prop.judge, "summary": prop.summary,
            "counterexample": found[0].summary() if found else None,
        }
    rows = [{**row, "tool": f"{s.source.id}.{row['tool']}"} for s in searches for row in s.inputs.values()]
    usage = book.usage()
    return {
        "model": simulator.name, "mode": simulator.mode, "calls": usage["calls"], "properties": properties,
        "counterexamples": [c.summary() for s in searches for c in s.counterexamples],
        "tokens_in": usage["tokens_in"], "tokens_out": usage["tokens_out"], "cost_usd": usage["cost_usd"],
        "budget": {"calls": audit.budget.calls, "tokens": audit.budget.tokens, "exhausted": book.exhausted,
                   "questions_refused": book.refused},
        "asked_this_run": book.asked_now,
        "sampling": {k: getattr(simulator, k) for k in ("seed", "temperature") if hasattr(simulator, k)},
        "seed": audit.seed, "examples_per_property": examples,
        "envs": [s.source.id for s in searches], "envs_skipped": skipped,
        "inputs": len(rows), "abstained": sum(len(s.abstained) for s in searches),
        "executions": sum(s.source.executions for s in searches),
        "per_tool": _rates(rows, "tool"), "per_band": _rates(rows, "band"),
    }


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people: the property table, counterexamples, failure rates, usage and budget."""
    budget = report["budget"]
    lines = [f"# Property-based audit: {report['model']} ({report['mode']})", "",
             f"{report['inputs']} inputs over {len(report['envs'])} envs (seed {report['seed']}, up to "
             f"{report['examples_per_property']} generated inputs per property and env, plus shrinking); "
             f"{report['abstained']} unanswered (abstained or unusable).", "",
             "| property | judged by | tried | violations | minimal counterexample |", "|---|---|---:|---:|---|"]
    for name, row in report["properties"].items():
        c = row["counterexample"]
        where = "-" if c is None else (f"{c['env']}.{c['tool']}({json.dumps(c['arguments'], ensure_ascii=False)}) "
                                        f"on {c['records']} records: {c['detail']}".replace("|", "\\|"))
        lines.append(f"| {name} | {row['judge']} | {row['tried']} | {row['violations']} | {where} |")
    lines += ["", "## Failure rate per tool (inputs breaking any property)", "", "| tool | inputs | failing | rate |",
              "|---|---:|---:|---:|"]
    lines += [f"| {k} | {v['inputs']} | {v['failing']} | {v['failure_rate']:.1%} |" for k, v in report["per_tool"].items()]
    lines += ["", "## Failure rate per |Δ| band (executed)", "", "| band | inputs | failing | rate |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {v['inputs']} | {v['failing']} | {v['failure_rate']:.1%} |" for k, v in report["per_band"].items()]
    limit = "no call limit" if budget["calls"] is None else f"budget {budget['calls']} calls"
    lines += ["", f"Usage: {report['calls']} model calls ({limit}), {report['tokens_in']} tokens in / "
              f"{report['tokens_out']} out, {report['cost_usd']:.4f} USD; sampling {report['sampling'] or 'not exposed'}."]
    if budget["exhausted"]:
        lines.append(f"The budget ran out: {budget['questions_refused']} questions were not asked; searches and "
                     "shrinks stopped there (counterexamples marked `shrunk: false` may not be minimal).")
    if report["envs_skipped"]:
        lines += ["", "Envs skipped:", *(f"- {env}: {why}" for env, why in report["envs_skipped"].items())]
    return "\n".join(lines) + "\n"


def property_summary(report: dict[str, Any]) -> dict[str, Any]:
    """What `audit-sim --property-based --json` prints: the headline figures, per property tried/violations."""
    return {"model": report["model"], "calls": report["calls"],
            "properties": {name: {"tried": row["tried"], "violations": row["violations"]}
                           for name, row in report["properties"].items()},
            "counterexamples": report["counterexamples"], "tokens_in": report["tokens_in"],
            "tokens_out": report["tokens_out"], "cost_usd": report["cost_usd"]}


def render_summary(report: dict[str, Any]) -> str:
    """A few lines for the terminal: per property tried/violations, each counterexample, usage."""
    lines = [f"{report['model']} ({report['mode']}): {report['inputs']} inputs over {len(report['envs'])} envs, "
             f"{report['calls']} model calls, {report['tokens_in']} tokens in / {report['tokens_out']} out, "
             f"{report['cost_usd']:.4f} USD" + (" (budget spent)" if report["budget"]["exhausted"] else "")]
    width = max(len(name) for name in report["properties"])
    for name, row in report["properties"].items():
        lines.append(f"  {name:<{width}}  tried {row['tried']:>4}  violations {row['violations']:>4}")
    for c in report["counterexamples"]:
        lines.append(f"  counterexample [{c['property']}] {c['env']}.{c['tool']}"
                     f"({json.dumps(c['arguments'], ensure_ascii=False)}) on {c['records']} records"
                     f"{'' if c['shrunk'] else ' (shrink stopped at the budget)'}: {c['detail']}")
    return "\n".join(lines)


def write_report(report: dict[str, Any], out: Path) -> None:
    """Write report.json and report.md into `out`."""
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True, default=str)
                                     + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")
