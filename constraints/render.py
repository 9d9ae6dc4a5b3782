"""How constraint specs and completeness reports read on the command line.

The CLI only wires arguments to these. Keeping the text beside the spec types means a field added
to `ToolSpec` is shown where it is defined; text renderers return lines (no final newline), the
`*_document` functions the JSON the CLI prints. The completeness report and its summary are typed
in constraints/report.py (re-exported here, where the CLI reads them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from constraints.report import COMPLETENESS_TOTALS, CompletenessReport, completeness_summary
from constraints.spec import ConstraintSpec, ToolSpec

__all__ = ["spec_document", "render_spec", "completeness_summary", "render_completeness", "COMPLETENESS_TOTALS"]


def spec_document(spec: ConstraintSpec, env_id: str) -> dict[str, Any]:
    """`constraints ENV --json`: the env id with the spec's kind, entry, tables and tools."""
    return {"env": env_id, **spec.model_dump(mode="json", include={"kind", "entry", "tables", "tools"})}


def _kind_mismatch(tool: ToolSpec) -> str:
    """The warning for a tool whose declared kind disagrees with what its code does ("" if none)."""
    if not tool.kind_mismatch:
        return ""
    if tool.inferred_kind == "write":
        return f"  KIND MISMATCH: declared {tool.declared_kind} but it writes"
    return "  KIND MISMATCH: declared write but it writes nothing"


def _render_tool(tool: ToolSpec) -> list[str]:
    kind = tool.inferred_kind if tool.declared_kind is None else f"declared {tool.declared_kind}"
    params = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.json_type or 'any'}"
                       + (f" in {p.enum}" if p.enum else "") for p in tool.params)
    lines = ["", f"{tool.name} [{kind}, inferred {tool.inferred_kind}]{_kind_mismatch(tool)}",
             f"  params: {params or '-'}"]
    for pre in tool.preconditions:
        via = f" (via {pre.via})" if pre.via else ""
        lines.append(f"  guard L{pre.line}{via}: if {pre.condition.source} -> {pre.message.template!r}")
    for effect in tool.effects:
        path = "/".join(effect.path)
        value = f" = {effect.value.source}" if effect.value else ""
        notes = [n for n in (f"via {effect.via}" if effect.via else "", effect.note, effect.unfollowed) if n]
        lines.append(f"  effect L{effect.line}: {effect.op} {path}{value}" + (f"  [{'; '.join(notes)}]" if notes else ""))
    lines.append(f"  reads: {', '.join(tool.read_set) or '-'} | writes: {', '.join(tool.write_set) or '-'}")
    shape = tool.result_shape
    lines.append(f"  result: success {shape.success} / failure {shape.failure}"
                 + (f" / other {shape.other}" if shape.other else ""))
    lines += [f"  NOT FOLLOWED L{item.line}: {item.src} ({item.why})" for item in tool.unsupported]
    return lines


def render_spec(spec: ConstraintSpec, env_id: str) -> list[str]:
    """`constraints ENV`: per tool its kinds, params, guards, effects, read/write sets and result shape."""
    lines = [f"Constraint spec of {env_id} ({spec.kind} env, class {spec.entry})"]
    for tool in spec.tools.values():
        lines += _render_tool(tool)
    return lines


def render_completeness(reports: Sequence[CompletenessReport]) -> list[str]:
    """`constraints --completeness`: a row per env, then its untriggered guards and abstention reasons."""
    lines = [f"{'ENV':<12} {'STEPS':>6} {'EXACT':>6} {'ABST':>5} {'WRONG':>5} {'EXACT%':>7} {'GUARDS':>9} "
             f"{'EXPLAINED':>11}"]
    for r in reports:
        lines.append(f"{r.env:<12} {r.steps:>6} {r.exact:>6} {r.abstained:>5} {r.wrong:>5} "
                     f"{100 * r.exact_rate:>6.1f}% {r.guards_triggered:>4}/{r.guards_total:<4} "
                     f"{r.failures_explained:>5}/{r.failures:<5}")
        lines += [f"    never triggered: {guard}" for guard in r.untriggered_guards]
        lines += [f"    abstained {count}x: {reason}" for reason, count in r.top_abstain_reasons.items()]
    return lines
