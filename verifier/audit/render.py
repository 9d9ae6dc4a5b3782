"""The audit report's files and text: report.md, report.json, the CM-vs-|Δ| plot, comparisons, summary line.

Everything here reads an `AuditReport` (verifier/audit/report.py) and writes or returns text; the
runner (verifier/audit/run.py) and `cli.py audit-sim` call it, nothing here asks a simulator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from catalog.bench.strata import GROUPS
from catalog.runs.journal import read_session, write_json
from verifier.audit.report import AuditReport, GroupStats, build_report, short
from verifier.audit.results import META_FILE, load_results

__all__ = ["render_markdown", "render_summary", "write_report", "rebuild_report", "compare_reports"]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        text = f"{value:.4f}" if abs(value) < 1 else f"{value:,.2f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:,}" if isinstance(value, int) else str(value)


def _stratum_table(title: str, groups: dict[str, GroupStats]) -> list[str]:
    lines = [f"### {title}", "", "| stratum | n | FM | CM strict | CM compat | op F1 | verified | abstained | errors |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, g in groups.items():
        lines.append(f"| {name} | {g.samples} | {_pct(g.fm)} | {_pct(g.cm_strict)} | {_pct(g.cm_compat)} "
                     f"| {_pct(g.op_f1)} | {g.verified} | {g.abstained} | {g.errors} |")
    return [*lines, ""]


def _paper_tables(report: AuditReport) -> list[str]:
    pub = report.published
    split = report.by_split
    label = f"envforge (this run): {report.model} / {report.mode}"
    lines = ["## Beside the EnvSimBench paper (their published figures, not a re-run)", "",
             f"Rows marked **EnvSimBench paper** are theirs ({pub['source']}). {pub['note']} "
             "envforge rows are this audit on envforge's samples; their Overall weights 100 fail/no-change "
             "against 300 state-change samples, envforge's Overall is this run's own mix.", "",
             "| source | model | Fail+No-Chg CM | State-Change CM | Overall CM |", "|---|---|---:|---:|---:|"]
    for model, fail, change, overall in pub["overall"]:
        lines.append(f"| EnvSimBench paper | {model} | {fail:.1f}% | {'—' if change is None else f'{change:.1f}%'} "
                     f"| {overall:.1f}% |")
    for key, name in (("cm_compat", "CM compat (their rule)"), ("cm_strict", "CM strict")):
        lines.append(f"| {label} | {name} | {_pct(getattr(split['fail_no_change'], key))} "
                     f"| {_pct(getattr(split['state_change'], key))} | {_pct(getattr(report, key))} |")
    lines += ["", pub["footnote"]]
    columns = pub["per_delta_columns"]
    view = report.paper_view
    lines += ["", "CM by |Δ| (%; the paper's 7+ column pools 7-12):", "",
              "| source | series | " + " | ".join(columns) + " |", "|---|---|" + "---:|" * len(columns)]
    for model, values in pub["per_delta"].items():
        lines.append(f"| EnvSimBench paper | {model} | " + " | ".join(f"{v:.0f}" for v in values) + " |")
    for key, name in (("cm_compat", "CM compat"), ("cm_strict", "CM strict")):
        lines.append(f"| {label} | {name} | " + " | ".join(
            "—" if v is None else f"{100 * v:.0f}" for v in view[key]) + " |")
    lines.append(f"| {label} | samples | " + " | ".join(str(v) for v in view["samples"]) + " |")
    return [*lines, ""]


def render_markdown(report: AuditReport) -> str:
    """The report as Markdown: overall, cost and latency, strata, the paper's figures beside ours, worst cases."""
    r = report
    lat = r.latency_s
    incomplete = r.expected - r.samples
    lines = [f"# Simulation audit: {r.model} ({r.mode})", "",
             f"{r.samples} samples from {r.envs} env(s)"
             + (f" ({incomplete} of {r.expected} not answered yet: rerun to resume)" if incomplete else "")
             + f"; {r.abstained} abstained, {r.errors} errors (both scored as misses).", ""]
    if r.price_note:
        lines += [f"Price: {r.price_note}", ""]
    lines += ["## Overall", "", "| metric | all samples | answered only |", "|---|---:|---:|"]
    for key, name in (("fm", "Feedback Match"), ("cm_strict", "Config Match (strict: s' exactly)"),
                      ("cm_compat", "Config Match (EnvSimBench-compatible)"), ("op_f1", "op F1")):
        lines.append(f"| {name} | {_pct(getattr(r, key))} | {_pct(r.answered_only[key])} |")
    per_verified = r.cost_per_verified_step_usd
    lines += [f"| op precision / recall | {_pct(r.op_precision)} / {_pct(r.op_recall)} | |",
              f"| verified yield (FM and strict CM) | {_pct(r.verified_yield)} ({r.verified}) | |", "",
              "## Cost and latency", "", "| | |", "|---|---:|",
              f"| tokens in / out | {_num(r.tokens_in)} / {_num(r.tokens_out)} |",
              f"| prompt tokens per sample | {_num(r.prompt_tokens_per_sample)} |",
              f"| completion tokens per sample | {_num(r.completion_tokens_per_sample)} |",
              f"| cost | ${r.cost_usd:.4f} |",
              f"| cost per verified step | {'—' if per_verified is None else '$' + format(per_verified, '.6f')} |",
              f"| latency p50 / p90 / p99 / max (s) | {_num(lat['p50'])} / {_num(lat['p90'])} / {_num(lat['p99'])} "
              f"/ {_num(lat['max'])} |",
              f"| seconds per sample (mean call) | {_num(r.seconds_per_sample)} |",
              f"| wall seconds per sample ({r.sessions} session(s)) | {_num(r.wall_seconds_per_sample)} |", ""]
    if r.violations or r.repairs or r.reasks:
        lines += ["## Spec violations (constrained mode)", "",
                  f"{r.violations} violations in {r.samples_with_violations} samples; {r.repairs} repairs, "
                  f"{r.reasks} re-asks.", ""]
        lines += [f"- {n} × {short(text, 120)}" for text, n in r.violation_examples.items()] + [""]
    lines += ["## Per stratum", ""]
    lines += _stratum_table("EnvSimBench groups", r.by_band)
    lines += _stratum_table("Coarse groups", r.by_group)
    lines += _stratum_table("|Δ|", r.by_delta)
    lines += _stratum_table("Outcome", r.by_outcome)
    lines += _stratum_table("Argument count", r.by_args)
    lines += _paper_tables(r)
    if r.plots:
        lines += ["## CM vs |Δ|", ""] + [f"![{name}]({name})" for name in r.plots] + [""]
    if r.abstain_reasons or r.error_messages:
        lines += ["## Abstentions and errors", ""]
        lines += [f"- abstained {n} × {short(text, 120)}" for text, n in r.abstain_reasons.items()]
        lines += [f"- error {n} × {short(text, 120)}" for text, n in r.error_messages.items()] + [""]
    if r.worst:
        lines += ["## Worst cases", "", "`-` gold op the simulator missed, `+` predicted op that execution did not do.", ""]
        for w in r.worst:
            action = w["action"]
            lines += [f"### {w['env_id']} {action['name']}({short(action.get('arguments', {}), 100)}) `{w['id']}`", "",
                      f"{w['outcome']}, |Δ|={w['delta_size']}; FM {w['fm']}, CM strict {w['cm_strict']}, "
                      f"CM compat {w['cm_compat']}, op F1 {w['op_f1']:.2f}", ""]
            if "observation_gold" in w:
                lines += [f"- observation predicted: `{w['observation_predicted']}`",
                          f"- observation gold: `{w['observation_gold']}`", ""]
            if w["diff"]:
                lines += ["```diff", *w["diff"], "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def render_summary(report: AuditReport) -> str:
    """The one line `audit-sim` prints: FM, both CMs, op F1, misses and cost."""

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.1%}"

    return (f"{report.model} ({report.mode}) on {report.samples} samples: FM {fmt(report.fm)}, "
            f"strict CM {fmt(report.cm_strict)}, EnvSimBench CM {fmt(report.cm_compat)}, op F1 "
            f"{fmt(report.op_f1)}; abstained {report.abstained}, errors {report.errors}; tokens "
            f"{report.tokens_in} in / {report.tokens_out} out, {report.cost_usd:.4f} USD")


def _plot(report: AuditReport, folder: Path) -> list[str]:
    """CM vs |Δ| (strict and compat), with the paper's curves dashed; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    by_delta = report.by_delta
    if not by_delta:
        return []
    xs = [int(k.rstrip("+")) for k in by_delta]
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, label, style in (("cm_strict", "envforge CM strict", "o-"), ("cm_compat", "envforge CM compat", "s-")):
        ys = [100 * value if (value := getattr(g, key)) is not None else math.nan for g in by_delta.values()]
        ax.plot(xs, ys, style, label=f"{label} ({report.model})")
    for (name, values), color in zip(report.published["per_delta"].items(), ("#888888", "#c44e52"), strict=False):
        ax.plot(range(7), values[:7], "--", color=color, alpha=0.8, label=f"EnvSimBench paper: {name} (their samples)")
        ax.hlines(values[7], 7, 12, colors=color, linestyles="dashed", alpha=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{k}\nn={g.samples}" for k, g in by_delta.items()], fontsize=8)
    ax.set_xlabel("|Δ| (ops); the paper's 7+ point is drawn across 7-12")
    ax.set_ylabel("Config Match (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(f"CM vs |Δ|: {report.model} ({report.mode})")
    ax.set_xlim(-0.5, max(12, *xs) + 0.5)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "cm_vs_delta.png", dpi=100)
    plt.close(fig)
    return ["cm_vs_delta.png"]


def write_report(report: AuditReport, out_dir: Path | str, *, plots: bool = True) -> AuditReport:
    """Write report.json, report.md and (if `plots` and matplotlib is there) cm_vs_delta.png into out_dir."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    report.plots = _plot(report, folder) if plots else []
    write_json(folder / "report.json", report.model_dump(mode="json"))
    (folder / "report.md").write_text(render_markdown(report), encoding="utf-8")
    return report


def rebuild_report(out_dir: Path | str, *, price_note: str | None = None, plots: bool = True) -> AuditReport:
    """Re-render the report of an audit folder from its results.jsonl, asking nothing."""
    folder = Path(out_dir)
    meta = read_session(folder / META_FILE)
    records = list(load_results(folder).values())
    model = meta.get("model") or (records[0]["model"] if records else "unknown")
    mode = meta.get("mode") or (records[0]["mode"] if records else "unknown")
    report = build_report(records, model=model, mode=mode, price_note=price_note, sessions=meta.get("sessions", []))
    return write_report(report, folder, plots=plots)


def compare_reports(reports: Sequence[AuditReport], labels: Sequence[str] | None = None) -> str:
    """Side-by-side Markdown of several audit reports (e.g. plain vs constrained on the same samples)."""
    names = list(labels) if labels is not None else [f"{r.model} / {r.mode}" for r in reports]
    lines = ["# Simulation audits side by side", ""]
    if len({r.sample_ids_sha256 for r in reports}) > 1:
        lines += ["**Note:** the runs were not on the same samples; differences mix simulator and sample set.", ""]
    else:
        lines += [f"Same {reports[0].samples if reports else 0} samples in every run.", ""]
    lines += ["| metric | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]

    def row(name: str, fn: Callable[[AuditReport], str]) -> None:
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in reports) + " |")

    def rate(key: str) -> Callable[[AuditReport], str]:
        return lambda r: _pct(getattr(r, key))

    def count(key: str) -> Callable[[AuditReport], str]:
        return lambda r: _num(getattr(r, key))

    def group_rate(group: str, key: str) -> Callable[[AuditReport], str]:
        return lambda r: _pct(getattr(r.by_group[group], key)) if group in r.by_group else "—"

    def split_rate(split: str) -> Callable[[AuditReport], str]:
        return lambda r: _pct(r.by_split[split].cm_strict)

    row("samples", lambda r: str(r.samples))
    for key, name in (("fm", "FM"), ("cm_strict", "CM strict"), ("cm_compat", "CM compat"), ("op_f1", "op F1"),
                      ("verified_yield", "verified yield")):
        row(name, rate(key))
    for key in ("abstained", "errors", "violations", "repairs", "reasks", "tokens_in", "tokens_out"):
        row(key.replace("_", " "), count(key))
    row("prompt tokens per sample", count("prompt_tokens_per_sample"))
    row("completion tokens per sample", count("completion_tokens_per_sample"))
    row("seconds per sample (mean call)", count("seconds_per_sample"))
    row("wall seconds per sample", count("wall_seconds_per_sample"))
    row("latency p50 / p90 (s)", lambda r: f"{_num(r.latency_s['p50'])} / {_num(r.latency_s['p90'])}")
    row("cost (USD)", lambda r: f"{r.cost_usd:.4f}")
    row("cost per verified step (USD)", count("cost_per_verified_step_usd"))
    for group in (g for g in GROUPS if any(g in r.by_group for r in reports)):
        for key, name in (("cm_strict", "CM strict"), ("cm_compat", "CM compat")):
            row(f"{group}: {name}", group_rate(group, key))
    for split in ("fail_no_change", "state_change"):
        row(f"{split}: CM strict", split_rate(split))
    return "\n".join(lines) + "\n"
