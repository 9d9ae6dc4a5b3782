"""Run a property-based simulator audit over catalog envs and write its report.

The CLI builds the simulator (verifier/ never imports synth) and hands it in with the catalog,
the envs, the budget and a folder. The folder holds `answers.jsonl` (every answer, so a rerun
resumes without paying again), `counterexamples.jsonl` (each minimal counterexample with the
simulator's answer, the executed truth and the benchmark item `bench export --from-audit DIR
--failures` writes), and `report.json` / `report.md`. A folder holds one simulator's answers:
`property_audit.json` names it, and another simulator is refused there.

The call budget is shared over the envs in turn: each env may spend what is left divided by the
envs still to search, so one env whose properties all break cannot starve the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from catalog.bench.items import Simulator
from catalog.store import Catalog
from catalog.usage import Usage
from constraints.completeness import spec_of
from constraints.extract import ExtractionError
from sandbox.pool import DEFAULT_TIMEOUT, SandboxPool
from verifier.audit.run import AuditError
from verifier.simaudit.answers import AnswerBook
from verifier.simaudit.cases import CaseSource
from verifier.simaudit.checks import PROPERTIES
from verifier.simaudit.report import PropertyAuditReport, build_report, write_report
from verifier.simaudit.search import EnvSearch
from verifier.simaudit.settings import COUNTEREXAMPLES_FILE, META_FILE, PropertyAudit, examples_for

__all__ = ["COUNTEREXAMPLES_FILE", "META_FILE", "PropertyAudit", "examples_for", "run_property_audit"]

ProgressFn = Callable[[str, int, int, Usage], None]
"""`progress(env, envs done, envs, model usage so far)`, before each env and once at the end."""


def _claim(out: Path, simulator: Simulator) -> None:
    """Refuse a folder holding another simulator's answers; name this one otherwise."""
    meta = out / META_FILE
    mine = {"model": simulator.name, "mode": simulator.mode}
    if meta.is_file():
        theirs = json.loads(meta.read_text(encoding="utf-8"))
        if {k: theirs.get(k) for k in mine} != mine:
            raise AuditError(f"{out} holds the property audit of {theirs.get('model')} ({theirs.get('mode')}), "
                             f"not {mine['model']} ({mine['mode']}): use another --out")
    out.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(mine, sort_keys=True) + "\n", encoding="utf-8")


def run_property_audit(catalog: Catalog, simulator: Simulator, out: Path, audit: PropertyAudit, *,
                       progress: ProgressFn | None = None, timeout: float = DEFAULT_TIMEOUT) -> PropertyAuditReport:
    """Search every env for minimal inputs breaking each simulator property; write and return the report.

    Raises CatalogError for an unknown env id and AuditError for a folder of another simulator;
    an env whose spec cannot be extracted or whose states do not load is skipped and listed.
    """
    out = Path(out)
    _claim(out, simulator)
    tell = progress or (lambda env, done, total, used: None)
    if audit.env_ids is None:
        summaries, _ = catalog.list()
        ids = sorted(s.id for s in summaries)
    else:
        ids = list(dict.fromkeys(audit.env_ids))
    handles = [catalog.get(env_id) for env_id in ids]  # CatalogError names an unknown id
    unknown = sorted(set(audit.properties or ()) - set(PROPERTIES))
    if unknown:
        raise ValueError(f"unknown simulator properties {unknown}. Known: {', '.join(PROPERTIES)}")
    chosen = [PROPERTIES[name] for name in (audit.properties or list(PROPERTIES))]
    book = AnswerBook(simulator, out, audit.budget)
    examples = audit.examples or examples_for(audit.budget, len(handles))
    searches: list[EnvSearch] = []
    skipped: dict[str, str] = {}
    pool = SandboxPool(1, timeout=timeout)
    try:
        for index, handle in enumerate(handles):
            tell(handle.id, index, len(handles), book.used)
            try:
                spec = spec_of(handle)
            except (ExtractionError, SyntaxError, ValueError) as exc:
                skipped[handle.id] = f"no constraint spec: {exc}"
                continue
            source = CaseSource(handle, spec, pool)
            if not source.initial:
                skipped[handle.id] = f"no initial state loads: {source.load_problems}"
                continue
            if audit.budget.calls is not None:  # this env's share of what is left
                left = max(0, audit.budget.calls - book.calls)
                book.ceiling = book.calls + left // (len(handles) - index)
            search = EnvSearch(source, spec, book, examples=examples, seed_value=audit.seed)
            search.run(chosen)
            searches.append(search)
        tell("", len(handles), len(handles), book.used)
    finally:
        pool.close()
    book.ceiling = None
    with (out / COUNTEREXAMPLES_FILE).open("w", encoding="utf-8") as lines:
        for search in searches:
            for example in search.counterexamples:
                record = {**example.summary(), "state": example.case.state, "answer": {
                    "observation": example.answer.observation, "delta": example.answer.delta},
                    "truth": {"outcome": example.case.outcome, "observation": example.case.observation,
                              "delta": example.case.delta},
                    "item": search.source.sample(example.case).model_dump(mode="json")}
                lines.write(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n")
    report = build_report(simulator, searches, book, audit, examples, skipped)
    write_report(report, out)
    return report

