"""What `bench export` reports: per bucket wanted/found/envs/candidates/dropped, search and sandbox totals.

Typed so the exporter, the CLI and tests read fields, not string keys; `model_dump(mode="json")`
is the JSON `bench export --json` prints. The renderers sit here, beside the types they render.
"""

from __future__ import annotations

from pydantic import Field

from catalog.jsonmodel import JsonModel

__all__ = ["BucketReport", "ExportReport", "FailuresReport", "render_export_report", "render_written"]


class BucketReport(JsonModel):
    """One bucket of an export: how many samples it wanted and found, from how many envs and candidates."""

    wanted: int
    found: int
    distinct_envs: int
    dropped_non_reproducible: int
    candidates: int
    envs_with_candidates: int


class ExportReport(JsonModel):
    """How an export filled its composition (`export_samples`); `written` is filled by whoever writes the items."""

    composition: str
    seed: int
    wanted: int
    exported: int
    quotas_met: bool
    distinct_envs: int
    envs_searched: int
    envs_skipped: dict[str, str]
    buckets: dict[str, BucketReport]
    optional_shortfall: dict[str, int]
    dropped_non_reproducible: int
    drop_reasons: dict[str, int]
    search_rounds: int
    steps_executed: int
    sandbox_jobs: int
    sandbox_calls: int
    sandbox_events: dict[str, int]
    reexecuted: int
    seconds: float
    specs_seconds: float
    search_seconds: float
    written: dict[str, int] = Field(default_factory=dict)


class FailuresReport(JsonModel):
    """`bench export --from-audit DIR --failures`: how many wrong answers of that audit were exported."""

    from_audit: str
    failures: int
    quotas_met: bool = Field(default=True, exclude=True)  # no quotas: the exit status is 0 (not in the JSON form)
    written: dict[str, int] = Field(default_factory=dict)


def render_export_report(report: ExportReport) -> str:
    """The export report as Markdown: per bucket wanted/found/envs/candidates/dropped, then totals."""
    r = report
    status = "every quota met" if r.quotas_met else "**some quotas not met**"
    lines = [f"# Benchmark export: {r.composition} (seed {r.seed})", "",
             f"{r.exported} of {r.wanted} samples from {r.distinct_envs} distinct envs "
             f"({r.envs_searched} searched); {status}. Every sample was re-executed twice from its state "
             f"and matched ({r.dropped_non_reproducible} candidates dropped as non-reproducible).", "",
             "| bucket | wanted | found | distinct envs | candidates | envs with candidates | dropped |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in r.buckets.items():
        lines.append(f"| {name} | {row.wanted} | {row.found} | {row.distinct_envs} | {row.candidates} "
                     f"| {row.envs_with_candidates} | {row.dropped_non_reproducible} |")
    lines += ["", f"Search: {r.search_rounds} round(s), {r.sandbox_calls} sandboxed calls in "
              f"{r.sandbox_jobs} jobs, {r.reexecuted} re-executions; {r.seconds} s "
              f"(specs {r.specs_seconds} s, search {r.search_seconds} s)."]
    if r.optional_shortfall:
        lines.append(f"Optional buckets short, their share spread over the others: {r.optional_shortfall}.")
    if r.drop_reasons:
        lines += ["", "Drop reasons:", *(f"- {n} × {reason}" for reason, n in r.drop_reasons.items())]
    if r.envs_skipped:
        lines += ["", "Envs skipped:", *(f"- {env}: {reason}" for env, reason in r.envs_skipped.items())]
    return "\n".join(lines) + "\n"


def render_written(written: dict[str, int], fmt: str) -> str:
    """The lines `bench export` ends with: how many samples went to which file."""
    return "\n".join(f"wrote {count} samples to {target} ({fmt})" for target, count in written.items())
