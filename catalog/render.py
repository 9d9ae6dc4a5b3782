"""How catalog objects read on the command line: env lists, one env, a call's result, an import.

The CLI only wires arguments to these; keeping the text here, beside the models it shows, means
a field added to a manifest or a report is rendered where it is defined, and tests can check
the text without running a subprocess. Text renderers return the lines without the final
newline (the caller prints them); `*_document` functions return the JSON the CLI prints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from catalog.models import FailureConvention, StepResult
from catalog.state.delta import Delta, DeltaOp
from catalog.state.jsonable import canonical_json, pretty_json
from catalog.store import EnvHandle, EnvSummary

if TYPE_CHECKING:
    from catalog.importing.importer import ImportReport

__all__ = ["format_op", "render_delta", "render_env_list", "env_document", "render_env", "render_failure",
           "call_document", "render_call", "render_search_hits", "import_document", "render_import"]


def format_op(op: DeltaOp) -> str:
    """One delta op as a line: the op, its key-list path and (unless deleted) its value.

    >>> format_op(DeltaOp("modify", ("books", "B1", "status"), "on_loan"))
    '  modify ["books", "B1", "status"] = "on_loan"'
    >>> format_op(DeltaOp("delete", ("holds", "H1")))
    '  delete ["holds", "H1"]'
    """
    path = json.dumps(list(op.path), ensure_ascii=False)
    return f"  {op.op:<6} {path}" + ("" if op.op == "delete" else f" = {canonical_json(op.value)}")


def render_delta(delta: Sequence[DeltaOp], *, indent: str = "") -> list[str]:
    """A delta, one op per line (see `format_op`), each prefixed with `indent`."""
    return [indent + format_op(op) for op in delta]


def render_env_list(summaries: Sequence[EnvSummary]) -> list[str]:
    """`catalog list`: a table of id, kind, tool and state counts and name."""
    if not summaries:
        return ["No environments."]
    width = max(len(s.id) for s in summaries)
    lines = [f"{'ID':<{width}}  KIND   TOOLS  STATES  NAME"]
    for s in summaries:
        lines.append(f"{s.id:<{width}}  {s.kind:<5}  {s.tools:>5}  {s.states:>6}  {s.name}"
                     f"{'  (reference)' if s.reference else ''}")
    return lines


def env_document(handle: EnvHandle) -> dict[str, Any]:
    """`catalog show --json`: the manifest, the env's folder and its tasks."""
    data: dict[str, Any] = handle.manifest.model_dump(mode="json")
    data["path"] = str(handle.path)
    data["tasks"] = [t.model_dump(mode="json", exclude_none=True) for t in handle.tasks()]
    return data


def render_failure(failure: FailureConvention | None) -> list[str]:
    """How an env signals failure, one line per kind (what `outcome` counts as a rule failure)."""
    if failure is None:
        return []
    lines = []
    if failure.exceptions:
        lines.append(f"  failure: raised exceptions: {', '.join(failure.exceptions)}")
    if failure.error_prefixes:
        lines.append(f"  failure: returned strings starting with: {', '.join(repr(p) for p in failure.error_prefixes)}")
    if failure.error_keys:
        lines.append(f"  failure: returned dicts with keys: {', '.join(failure.error_keys)}")
    return lines


def _schema_type(schema: dict[str, Any]) -> str:
    """A parameter's JSON type as one word; an optional one (`anyOf` with null) reads `integer|null`."""
    if "type" in schema:
        return str(schema["type"])
    options = [str(o["type"]) for o in schema.get("anyOf", []) if isinstance(o, dict) and "type" in o]
    return "|".join(options) or "any"


def render_env(handle: EnvHandle) -> list[str]:
    """`catalog show`: description, provenance, failure convention, rules, tools, states and tasks.

    Each task shows its reference solution, one numbered call a line, and for a refusal or a
    branch the wrong call its check rejects.
    """
    manifest = handle.manifest
    tasks = handle.tasks()
    lines = [f"{manifest.name} [{manifest.id}] - {manifest.kind} env, topic {manifest.topic or '-'}",
             f"  {manifest.description}",
             f"  folder: {handle.path}",
             f"  provenance: {manifest.provenance.backend}"
             + (f" / {manifest.provenance.model}" if manifest.provenance.model else "")]
    if manifest.convention != "class" or manifest.provenance.backend == "import":
        lines.append(f"  convention: {manifest.convention}, entry {manifest.entry or '-'}")
    lines += render_failure(manifest.failure)
    if manifest.allow_modules:
        lines.append(f"  allowed modules in the sandbox: {', '.join(manifest.allow_modules)}")
    if manifest.rules:
        lines.append("Rules:")
        lines += [f"  - {rule}" for rule in manifest.rules]
    lines.append(f"Tools ({len(manifest.tools)}):")
    for tool in manifest.tools:
        props = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", []))
        params = ", ".join(f"{n}{'' if n in required else '?'}: {_schema_type(p)}" for n, p in props.items())
        kind = tool.kind.value if tool.kind else "?"
        summary = tool.description.splitlines()[0] if tool.description else ""
        lines.append(f"  {tool.name}({params}) [{kind}] - {summary}")
    lines.append(f"States: {', '.join(manifest.states) or '-'}")
    lines.append(f"Tasks ({len(tasks)}):")
    for task in tasks:
        lines.append(f"  {task.id} [{task.state}{', refusal' if task.refusal else ''}]: {task.instruction}")
        lines += [f"    {n}. {action.name}({canonical_json(action.arguments)})"
                  for n, action in enumerate(task.solution or [], 1)]
        if task.forbidden:
            last = task.forbidden[-1]
            lines.append(f"    the check rejects the state after: {last.name}({canonical_json(last.arguments)})")
    return lines


def call_document(env_id: str, state: str, action: Mapping[str, Any], result: StepResult, *,
                  show_state: bool) -> dict[str, Any]:
    """`catalog run --json`: the call, its outcome, observation and delta (and the next state if asked)."""
    out: dict[str, Any] = {"env": env_id, "state": state, "action": dict(action), "outcome": result.outcome.value,
                           "observation": result.observation, "delta": Delta.dump_python(result.delta, mode="json")}
    if show_state:
        out["next_state"] = result.state
    return out


def render_call(env_id: str, state: str, action: Mapping[str, Any], result: StepResult, *,
                show_state: bool) -> list[str]:
    """`catalog run`: the call, its outcome, the observation, the delta (and the next state if asked)."""
    lines = [f"env {env_id}, state {state}: {action['name']}({canonical_json(action['arguments'])})",
             f"outcome: {result.outcome.value}",
             f"observation: {json.dumps(result.observation, ensure_ascii=False, indent=2, sort_keys=True)}",
             f"delta ({len(result.delta)} ops):",
             *render_delta(result.delta)]
    if show_state:
        lines += ["next state:", pretty_json(result.state)]
    return lines


def render_search_hits(hits: Sequence[Mapping[str, Any]]) -> list[str]:
    """`catalog search`: score, id and name of each hit, best first."""
    if not hits:
        return ["no environments match"]
    return [f"{hit['score']:.3f}  {hit['id']:<32} {hit['name']}" for hit in hits]


def import_document(report: ImportReport) -> dict[str, Any]:
    """`import --json`: where the env landed and what was read from its code."""
    handle = report.handle
    return {"id": handle.id, "path": str(handle.path), "files": report.files, "states": handle.state_names(),
            "tools": [t.name for t in handle.manifest.tools], "failure_exceptions": report.failure_exceptions,
            "convention": report.convention, "failure": report.failure.model_dump(),
            "allow_modules": handle.manifest.allow_modules, "optional_missing": report.optional_missing}


def render_import(report: ImportReport) -> list[str]:
    """`import`: where the env landed, its convention, files, tools, states, and what to run next."""
    handle = report.handle
    manifest = handle.manifest
    lines = [f"Imported {manifest.name} as {handle.id} into {handle.path}",
             f"  convention: {report.convention}" + (f", entry {manifest.entry}" if manifest.entry else ""),
             f"  files: {', '.join(report.files)}",
             f"  tools ({len(manifest.tools)}): {', '.join(t.name for t in manifest.tools)}",
             f"  states: {', '.join(handle.state_names())}",
             *render_failure(report.failure)]
    if manifest.allow_modules:
        lines.append(f"  allowed modules in the sandbox: {', '.join(manifest.allow_modules)}")
    lines.append(f"Next: python cli.py constraints --completeness --env {handle.id}")
    return lines
