r"""The synthesis graph: one LangGraph run per candidate environment ("slot").

    mine -> dedup -> plan -> schema -> code -> static_check -> states -> execute -> tasks -> gate -> register
                 \-> END (duplicate)          ^---- retry with feedback ----/          \-> END (rejected)

Initial states come before execution and tasks before the gate because both checks need them
(the gate runs every task's solution). Every node records its attempts, outcome, wall time and
LLM usage under `stages`, which the run report aggregates. The run driver (synth/run.py) runs
`mine` and `dedup` in order in the main process, so dedup decisions do not depend on timing,
then finishes each slot in a worker process from the same SQLite checkpoint.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from catalog.models import Action, Provenance, Quality
from catalog.plan import Plan
from catalog.store import Catalog, CatalogError, read_env
from catalog.tasks import Task
from catalog.vectors import DedupFilter
from constraints.extract import ExtractionError, extract_spec
from synth.assemble import entry_of, manifest_of, plan_of
from synth.blueprint import Blueprint
from synth.generators import Generator, Usage
from synth.procedural.states import initial_states
from synth.procedural.tasks import make_tasks, write_delta_sizes
from verifier.allowlist import check_imports
from verifier.gate import verify_env
from verifier.gate_settings import SYNTHESIS
from verifier.intent import static_mismatches
from verifier.properties import CheckResult
from verifier.sandbox import Job, SandboxPool

__all__ = ["SlotState", "Context", "build_graph", "STAGES", "MAX_CODE_ATTEMPTS", "FINAL", "SKIPPED"]

STAGES = ("mine", "dedup", "plan", "schema", "code", "static_check", "states", "execute", "tasks", "gate", "register")
MAX_CODE_ATTEMPTS = 5
FINAL = ("registered", "rejected", "deduplicated", "existing", "failed")
SKIPPED = ("deduplicated", "existing")  # ended at the dedup step: a taken topic, or an id the catalog has already


class SlotState(TypedDict, total=False):
    """The checkpointed state of one candidate environment."""

    run_id: str
    slot: int
    seed: int
    status: str  # running | deduplicated | existing | rejected | registered | failed
    reason: str
    topic: dict[str, Any]
    env_id: str
    blueprint: dict[str, Any]
    plan: dict[str, Any]
    schema: str
    code: str
    attempts: int
    feedback: list[str]
    problems: list[str]
    states: dict[str, Any]
    tasks: list[dict[str, Any]]
    gate: dict[str, Any]
    delta_sizes: dict[str, int]
    stages: dict[str, dict[str, Any]]


@dataclass
class Context:
    """What nodes need besides the state; one per process (the pool is opened lazily)."""

    run_dir: Path
    catalog: Catalog
    generator: Generator
    dedup: DedupFilter | None = None
    gate_examples: int = SYNTHESIS.examples
    gate_effort: float = SYNTHESIS.effort
    judge: Callable[[Any, SandboxPool], dict[str, Any]] | None = None  # synth.judge.RuleJudge
    _pool: SandboxPool | None = field(default=None, repr=False)

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            self._pool = SandboxPool(workers=1)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    @property
    def staging(self) -> Catalog:
        return Catalog(self.run_dir / "staging", include_reference=False)


def _record(state: SlotState, stage: str, *, ok: bool, seconds: float, usage: Usage | None = None,
            detail: str = "") -> dict[str, dict[str, Any]]:
    stages = {k: dict(v) for k, v in (state.get("stages") or {}).items()}
    entry = stages.setdefault(stage, {"attempts": 0, "first_ok": None, "ok": False, "seconds": 0.0,
                                      "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0, "calls": 0})
    entry["attempts"] += 1
    if entry["first_ok"] is None:
        entry["first_ok"] = ok
    entry["ok"] = ok
    entry["seconds"] = round(entry["seconds"] + seconds, 4)
    if usage is not None:
        entry["tokens_in"] += usage.tokens_in
        entry["tokens_out"] += usage.tokens_out
        entry["cost_usd"] = round(entry["cost_usd"] + usage.cost_usd, 8)
        entry["calls"] += usage.calls
    if detail:
        entry["detail"] = detail[:500]
    return stages


def build_graph(ctx: Context, checkpointer: Any = None) -> Any:
    """Compile the graph; nodes close over `ctx` (catalog, generator, sandbox pool)."""
    gen = ctx.generator

    def mine(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        topic, usage = gen.topic(state["slot"], state["seed"])
        topic = {**topic, "backend": gen.name, "model": gen.model}
        return {"topic": topic, "env_id": topic["env_id"], "status": "running", "attempts": 0, "feedback": [],
                "stages": _record(state, "mine", ok=True, seconds=time.monotonic() - started, usage=usage)}

    def dedup(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        topic = state["topic"]
        taken = _taken(ctx.catalog, state)
        if taken:
            return {"status": "existing", "reason": taken,
                    "stages": _record(state, "dedup", ok=False, seconds=time.monotonic() - started, detail=taken)}
        if ctx.dedup is None:
            accepted, nearest, similarity = True, None, 0.0
        else:
            accepted, nearest, similarity = ctx.dedup.accept(state["env_id"], topic["topic"])
        update: dict[str, Any] = {"stages": _record(state, "dedup", ok=bool(accepted),
                                                    seconds=time.monotonic() - started,
                                                    detail=f"nearest {nearest} at {similarity:.3f}")}
        if not accepted:
            update.update(status="deduplicated", reason=f"topic too close to {nearest} (cosine {similarity:.3f})")
        return update

    def plan(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        try:
            bp, usage = gen.blueprint(state["topic"])
            plan_obj, _intended = plan_of(bp)
        except Exception as exc:  # an LLM blueprint can be inconsistent: reject with the reason
            return {"status": "rejected", "reason": f"plan: {type(exc).__name__}: {exc}"[:400],
                    "stages": _record(state, "plan", ok=False, seconds=time.monotonic() - started,
                                      usage=Usage.of(getattr(exc, "record", None), str(exc)), detail=str(exc))}
        return {"blueprint": bp.model_dump(mode="json"), "plan": plan_obj.model_dump(mode="json"),
                "env_id": bp.env_id,
                "stages": _record(state, "plan", ok=True, seconds=time.monotonic() - started, usage=usage)}

    def schema(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        source, usage = gen.schema(Blueprint.model_validate(state["blueprint"]))
        return {"schema": source, "stages": _record(state, "schema", ok=True, seconds=time.monotonic() - started,
                                                    usage=usage)}

    def code(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        bp = Blueprint.model_validate(state["blueprint"])
        try:
            source, usage = gen.code(bp, state["plan"], state["schema"], state.get("feedback") or [])
            ok, detail = True, ""
        except Exception as exc:  # malformed model output etc.: counts as a failed attempt
            source, usage, ok, detail = "", Usage.of(getattr(exc, "record", None), str(exc)), False, f"{type(exc).__name__}: {exc}"
        return {"code": source, "attempts": state.get("attempts", 0) + 1,
                "problems": [detail] if not ok else [],
                "stages": _record(state, "code", ok=ok, seconds=time.monotonic() - started, usage=usage,
                                  detail=detail)}

    def static_check(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        problems = list(state.get("problems") or [])
        source = state.get("code") or ""
        if source and not problems:
            problems = _static_problems(ctx, state, source)
        return {"problems": problems, "feedback": problems,
                "stages": _record(state, "static_check", ok=not problems, seconds=time.monotonic() - started,
                                  detail="; ".join(problems))}

    def states(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        made = initial_states(Blueprint.model_validate(state["blueprint"]))
        return {"states": made, "stages": _record(state, "states", ok=True, seconds=time.monotonic() - started)}

    def execute(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        problems = _smoke(ctx, state)
        return {"problems": problems, "feedback": problems,
                "stages": _record(state, "execute", ok=not problems, seconds=time.monotonic() - started,
                                  detail="; ".join(problems))}

    def tasks(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        bp = Blueprint.model_validate(state["blueprint"])
        plan_obj = Plan.model_validate(state["plan"])
        made = make_tasks(bp, plan_obj, state["states"])
        update: dict[str, Any] = {"tasks": [t.model_dump(mode="json") for t in made],
                                  "delta_sizes": write_delta_sizes(bp, plan_obj, state["states"]["default"]),
                                  "stages": _record(state, "tasks", ok=bool(made), seconds=time.monotonic() - started,
                                                    detail=f"{len(made)} tasks")}
        if not made:
            update.update(status="rejected", reason="tasks: no task found whose check the initial state fails")
        return update

    def gate(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        handle = _stage_env(ctx, state)
        usage, judged, extra = None, None, []
        if ctx.judge is not None:
            judged = ctx.judge(handle, ctx.pool)
            usage = Usage(calls=judged["calls"], tokens_in=judged["tokens_in"], tokens_out=judged["tokens_out"],
                          cost_usd=judged["cost_usd"])
            extra.append(CheckResult("judge_agrees_with_execution", judged["ok"],
                                     {"disagreements": judged["listed"]} if judged["listed"] else None,
                                     judged["detail"]))
        report = verify_env(handle, ctx.pool, examples=ctx.gate_examples, seed=state["seed"], effort=ctx.gate_effort,
                            extra_checks=extra).to_dict()  # slot state is checkpointed as JSON
        if judged is not None:
            report["judge"] = judged
        failing = [c["name"] for c in report["checks"] if not c["ok"]]
        update: dict[str, Any] = {"gate": {k: report[k] for k in ("score", "passed", "critical_failures", "checks",
                                                                  "seconds") if k in report} | (
            {"judge": report["judge"]} if "judge" in report else {}),
            "stages": _record(state, "gate", ok=report["passed"], seconds=time.monotonic() - started, usage=usage,
                              detail=", ".join(failing))}
        if not report["passed"]:
            update.update(status="rejected", reason=f"gate: score {report['score']}, failing {failing}")
        return update

    def register(state: SlotState) -> dict[str, Any]:
        started = time.monotonic()
        taken = _taken(ctx.catalog, state)  # the id may have been taken since dedup (the plan can rename it)
        if not taken:
            _write(ctx.catalog, state, final=True)
        shutil.rmtree(ctx.run_dir / "staging" / state["env_id"], ignore_errors=True)
        return {"status": "existing" if taken else "registered", "reason": taken or "",
                "stages": _record(state, "register", ok=not taken, seconds=time.monotonic() - started,
                                  detail=taken or "")}

    def after_dedup(state: SlotState) -> str:
        return END if state.get("status") in SKIPPED else "plan"

    def after_plan(state: SlotState) -> str:
        return END if state.get("status") == "rejected" else "schema"

    def retry_or(next_node: str) -> Callable[[SlotState], str]:
        def route(state: SlotState) -> str:
            if not state.get("problems"):
                return next_node
            return "code" if gen.can_correct and state.get("attempts", 0) < MAX_CODE_ATTEMPTS else "reject"
        return route

    def reject(state: SlotState) -> dict[str, Any]:
        return {"status": "rejected", "reason": f"code: {state.get('attempts', 0)} attempts, last problems: "
                                                f"{'; '.join(state.get('problems') or [])}"[:600]}

    def after_stage(state: SlotState) -> str:
        return END if state.get("status") == "rejected" else "next"

    graph = StateGraph(SlotState)
    for name, node in (("mine", mine), ("dedup", dedup), ("plan", plan), ("schema", schema), ("code", code),
                       ("static_check", static_check), ("states", states), ("execute", execute), ("tasks", tasks),
                       ("gate", gate), ("register", register), ("reject", reject)):
        graph.add_node(name, node)
    graph.add_edge(START, "mine")
    graph.add_edge("mine", "dedup")
    graph.add_conditional_edges("dedup", after_dedup, ["plan", END])
    graph.add_conditional_edges("plan", after_plan, ["schema", END])
    graph.add_edge("schema", "code")
    graph.add_edge("code", "static_check")
    graph.add_conditional_edges("static_check", retry_or("states"), ["states", "code", "reject"])
    graph.add_edge("states", "execute")
    graph.add_conditional_edges("execute", retry_or("tasks"), ["tasks", "code", "reject"])
    graph.add_conditional_edges("tasks", after_stage, {"next": "gate", END: END})
    graph.add_conditional_edges("gate", after_stage, {"next": "register", END: END})
    graph.add_edge("register", END)
    graph.add_edge("reject", END)
    return graph.compile(checkpointer=checkpointer)


# --- helpers --------------------------------------------------------------------------------------

def _source(state: SlotState) -> str:
    """Who wrote an env, as its manifest's provenance says: the run and the slot."""
    return f"run {state['run_id']} slot {state['slot']}"


def _taken(catalog: Catalog, state: SlotState) -> str:
    """Why this slot may not write its env id into the catalog ("" if it may).

    Only the slot that wrote an env may rewrite it, and only unedited: a resumed run redoes a
    register step a crash interrupted. Anything else under that id (another run's env, an
    import, a hand-edited or unreadable folder) is kept, and the slot counts as "existing".
    """
    env_id = state["env_id"]
    folder = catalog.root / env_id
    if not folder.exists():
        return ""
    try:
        handle = read_env(folder)
    except CatalogError as exc:
        return f"{env_id} exists in the catalog as a folder that does not read ({exc}); kept, not replaced"
    if handle.edited():
        return f"{env_id} exists in the catalog, edited by hand since it was written; kept, not replaced"
    if handle.manifest.provenance.source != _source(state):
        writer = handle.manifest.provenance.source or handle.manifest.provenance.backend
        return f"{env_id} exists in the catalog (written by {writer}); kept, not replaced"
    return ""


def _static_problems(ctx: Context, state: SlotState, source: str) -> list[str]:
    """Parse, import allowlist, constraint extraction, declared vs inferred kinds, code vs plan."""
    try:
        entry = entry_of(source)
    except SyntaxError as exc:
        return [f"syntax error: line {exc.lineno}: {exc.msg}"]
    except ValueError as exc:
        return [str(exc)]
    scratch = ctx.run_dir / "static" / state["env_id"]
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "env.py").write_text(source, encoding="utf-8")
    problems = [f"import not allowed: {p}" for p in check_imports(scratch)]
    try:
        spec = extract_spec(source, "sql", entry)
    except ExtractionError as exc:
        return [*problems, f"constraint extraction failed: {exc}"]
    for name, tool in spec.tools.items():
        if tool.kind_mismatch:
            problems.append(f"tool {name}: declared {tool.declared_kind} but the code is {tool.inferred_kind}")
    missing = set(state["plan"]["tools"]) - set(spec.tools)
    if missing:
        problems.append(f"tools of the plan missing from the code: {sorted(missing)}")
    problems += [f"against the plan: {f}" for f in static_mismatches(Plan.model_validate(state["plan"]), spec)[:5]]
    return problems


def _env_parts(state: SlotState, quality: Quality | None) -> tuple[Any, dict[str, str]]:
    bp = Blueprint.model_validate(state["blueprint"])
    source = state["code"]
    spec = extract_spec(source, "sql", entry_of(source))
    usage = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    for entry in (state.get("stages") or {}).values():
        usage["input_tokens"] += entry.get("tokens_in", 0)
        usage["output_tokens"] += entry.get("tokens_out", 0)
        usage["cost_usd"] += entry.get("cost_usd", 0.0)
    provenance = Provenance(backend=f"synth:{state['topic'].get('backend', 'procedural')}",
                            model=state["topic"].get("model"), input_tokens=usage["input_tokens"],
                            output_tokens=usage["output_tokens"], cost_usd=round(usage["cost_usd"], 8),
                            source=_source(state))
    manifest = manifest_of(bp, source, spec, provenance=provenance, quality=quality)
    plan_text = json.dumps(state["plan"], indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return manifest, {"plan.json": plan_text}


def _write(catalog: Catalog, state: SlotState, *, final: bool) -> Any:
    """Write the slot's env (staging for the gate, or the catalog with its quality); same id: rewrite."""
    quality = None
    if final and state.get("gate"):
        quality = Quality(score=state["gate"]["score"], checks={c["name"]: c["ok"] for c in state["gate"]["checks"]})
    manifest, extra = _env_parts(state, quality)
    tasks = [Task.model_validate(t) for t in state.get("tasks") or []]
    return catalog.write_env(manifest, state["code"], state["states"], tasks, replace=True, extra_files=extra)


def _stage_env(ctx: Context, state: SlotState) -> Any:
    return _write(ctx.staging, state, final=False)


def _smoke(ctx: Context, state: SlotState) -> list[str]:
    """Run every tool once on the default state in the sandbox; crashes and sandbox events are problems."""
    try:
        handle = _stage_env(ctx, state)
    except Exception as exc:
        return [f"the env could not be written: {type(exc).__name__}: {exc}"]
    plan = Plan.model_validate(state["plan"])
    problems: list[str] = []
    default = state["states"]["default"]
    jobs = []
    for name, tool in sorted(plan.tools.items()):
        arguments = {p["name"]: _sample(p, default) for p in tool.params if p.get("required", True)}
        jobs.append(Job.for_env(handle, [Action(name=name, arguments=arguments).model_dump()], state_name="default"))
    for job, result in zip(jobs, ctx.pool.run_many(jobs), strict=True):
        name = job.actions[0]["name"]
        if result.event:
            problems.append(f"{name}: {result.event}")
        for call in result.calls:
            if call.outcome in ("crash", "invalid"):
                problems.append(f"{name}({json.dumps(job.actions[0]['arguments'])}) -> {call.outcome}: "
                                f"{str(call.observation)[:300]}")
    return problems


def _sample(param: dict[str, Any], state: dict[str, Any]) -> Any:
    """A plausible argument: a record id for `<x>_id`, else a typed default."""
    name = param["name"]
    if name.endswith("_id"):
        stem = name[: -3]
        for table, rows in sorted(state.items()):
            if table.startswith(stem) and rows:
                return sorted(rows)[0]
    if param.get("enum"):
        return param["enum"][0]
    return {"string": "sample", "integer": 1, "number": 1.0, "boolean": True}.get(param.get("json_type"), "sample")
