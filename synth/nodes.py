"""The graph's nodes: one function per stage, `(state, ctx) -> the keys it changes`.

Each node can run alone on a SlotState and a Context (tests do), never mutates the state, and
records its attempt with `record_stage`. The order and the routing between them live in
synth/pipeline.py; the stages are listed in synth/slot.py (STAGES).
"""

from __future__ import annotations

import json
import shutil
import time
from typing import Any

from catalog.models import Action, Provenance, Quality
from catalog.plan import Plan
from catalog.store import Catalog, CatalogError, read_env
from catalog.tasks import Task
from constraints.extract import ExtractionError, shared_spec
from sandbox.allowlist import check_imports
from sandbox.pool import Job
from synth.assemble import entry_of, manifest_of, plan_of
from synth.llm.ledger import Usage
from synth.procedural.blueprint import Blueprint
from synth.procedural.states import initial_states
from synth.procedural.tasks import make_tasks, write_delta_sizes
from synth.realism import env_realism
from synth.slot import Context, SlotState, record_stage
from verifier.gate.checks import CheckResult
from verifier.gate.intent import static_mismatches
from verifier.gate.run import verify_env

__all__ = ["NODES", "code", "dedup", "execute", "gate", "mine", "plan", "register", "reject", "schema", "states",
           "static_check", "tasks"]


def mine(state: SlotState, ctx: Context) -> dict[str, Any]:
    """Ask the generator for the slot's topic (a domain and a seed, or a mined statement)."""
    started = time.monotonic()
    topic, usage = ctx.generator.topic(state["slot"], state["seed"])
    topic = {**topic, "backend": ctx.generator.name, "model": ctx.generator.model}
    return {"topic": topic, "env_id": topic["env_id"], "status": "running", "attempts": 0, "feedback": [],
            "stages": record_stage(state, "mine", ok=True, seconds=time.monotonic() - started, usage=usage)}


def dedup(state: SlotState, ctx: Context) -> dict[str, Any]:
    """End the slot if its id is taken (in the catalog, or by an earlier slot of the run) or its topic is too close to one.

    Two slots of a run can come with one env id (a hash collision, a model naming its env); both
    would pass the topic filter, and whichever worker registered first would own the id. The
    driver's `claims` give the id to the earlier slot instead, whatever the timing.
    """
    started = time.monotonic()
    topic = state["topic"]
    taken = _taken(ctx.catalog, state)
    if taken:
        return {"status": "existing", "reason": taken,
                "stages": record_stage(state, "dedup", ok=False, seconds=time.monotonic() - started, detail=taken)}
    owner = (ctx.claims or {}).get(state["env_id"], state["slot"])
    if owner != state["slot"]:  # decided here, in slot order: not by which of the two would register first
        reason = f"env id {state['env_id']} is slot {owner}'s, earlier in this run"
        return {"status": "deduplicated", "reason": reason,
                "stages": record_stage(state, "dedup", ok=False, seconds=time.monotonic() - started, detail=reason)}
    if ctx.dedup is None:
        accepted, nearest, similarity = True, None, 0.0
    else:
        accepted, nearest, similarity = ctx.dedup.accept(state["env_id"], topic["topic"])
    update: dict[str, Any] = {"stages": record_stage(state, "dedup", ok=bool(accepted),
                                                     seconds=time.monotonic() - started,
                                                     detail=f"nearest {nearest} at {similarity:.3f}")}
    if not accepted:
        update.update(status="deduplicated", reason=f"topic too close to {nearest} (cosine {similarity:.3f})")
    elif ctx.claims is not None:
        ctx.claims[state["env_id"]] = state["slot"]
    return update


def plan(state: SlotState, ctx: Context) -> dict[str, Any]:
    """The blueprint and its plan (tools, rules, effects); an inconsistent one rejects the slot."""
    started = time.monotonic()
    try:
        bp, usage = ctx.generator.blueprint(state["topic"])
        plan_obj, _intended = plan_of(bp)
    except Exception as exc:  # an LLM blueprint can be inconsistent: reject with the reason
        return {"status": "rejected", "reason": f"plan: {type(exc).__name__}: {exc}"[:400],
                "stages": record_stage(state, "plan", ok=False, seconds=time.monotonic() - started,
                                       usage=Usage.of(getattr(exc, "record", None), str(exc)), detail=str(exc))}
    return {"blueprint": bp.model_dump(mode="json"), "plan": plan_obj.model_dump(mode="json"),
            "env_id": bp.env_id,
            "stages": record_stage(state, "plan", ok=True, seconds=time.monotonic() - started, usage=usage)}


def schema(state: SlotState, ctx: Context) -> dict[str, Any]:
    """The tables' source, which code mode shows the model."""
    started = time.monotonic()
    source, usage = ctx.generator.schema(Blueprint.model_validate(state["blueprint"]))
    return {"schema": source, "stages": record_stage(state, "schema", ok=True, seconds=time.monotonic() - started,
                                                     usage=usage)}


def code(state: SlotState, ctx: Context) -> dict[str, Any]:
    """The env module (one attempt; a failure becomes feedback for the next)."""
    started = time.monotonic()
    bp = Blueprint.model_validate(state["blueprint"])
    try:
        source, usage = ctx.generator.code(bp, state["plan"], state["schema"], state.get("feedback") or [])
        ok, detail = True, ""
    except Exception as exc:  # malformed model output etc.: counts as a failed attempt
        source, usage, ok, detail = "", Usage.of(getattr(exc, "record", None), str(exc)), False, f"{type(exc).__name__}: {exc}"
    return {"code": source, "attempts": state.get("attempts", 0) + 1,
            "problems": [detail] if not ok else [],
            "stages": record_stage(state, "code", ok=ok, seconds=time.monotonic() - started, usage=usage,
                                   detail=detail)}


def static_check(state: SlotState, ctx: Context) -> dict[str, Any]:
    """Parse, import allowlist, constraint extraction and code vs plan, without running anything."""
    started = time.monotonic()
    problems = list(state.get("problems") or [])
    source = state.get("code") or ""
    if source and not problems:
        problems = _static_problems(ctx, state, source)
    return {"problems": problems, "feedback": problems,
            "stages": record_stage(state, "static_check", ok=not problems, seconds=time.monotonic() - started,
                                   detail="; ".join(problems))}


def states(state: SlotState, ctx: Context) -> dict[str, Any]:
    """The initial states, before execution and tasks, which both need them."""
    started = time.monotonic()
    made = initial_states(Blueprint.model_validate(state["blueprint"]))
    return {"states": made, "stages": record_stage(state, "states", ok=True, seconds=time.monotonic() - started)}


def execute(state: SlotState, ctx: Context) -> dict[str, Any]:
    """Every tool once on the default state, in the sandbox: crashes are problems to fix."""
    started = time.monotonic()
    problems = _smoke(ctx, state)
    return {"problems": problems, "feedback": problems,
            "stages": record_stage(state, "execute", ok=not problems, seconds=time.monotonic() - started,
                                   detail="; ".join(problems))}


def tasks(state: SlotState, ctx: Context) -> dict[str, Any]:
    """Tasks whose check the initial state fails; none rejects the slot."""
    started = time.monotonic()
    bp = Blueprint.model_validate(state["blueprint"])
    plan_obj = Plan.model_validate(state["plan"])
    made = make_tasks(bp, plan_obj, state["states"])
    update: dict[str, Any] = {"tasks": [t.model_dump(mode="json") for t in made],
                              "delta_sizes": write_delta_sizes(bp, plan_obj, state["states"]["default"]),
                              "realism": env_realism(bp, plan_obj, state["states"], made),
                              "stages": record_stage(state, "tasks", ok=bool(made), seconds=time.monotonic() - started,
                                                     detail=f"{len(made)} tasks")}
    if not made:
        update.update(status="rejected", reason="tasks: no task found whose check the initial state fails")
    return update


def gate(state: SlotState, ctx: Context) -> dict[str, Any]:
    """The quality gate (and the optional judge) on the staged env; below the threshold rejects it."""
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
    # seed 0, `verify gate`'s default: verify repeats this gate's searches, so the manifest's score is the one it prints
    report = verify_env(handle, ctx.pool, examples=ctx.gate_examples, seed=0, effort=ctx.gate_effort,
                        extra_checks=extra).model_dump(mode="json")  # slot state is checkpointed as JSON
    if judged is not None:
        report["judge"] = judged
    failing = [c["name"] for c in report["checks"] if not c["ok"]]
    update: dict[str, Any] = {"gate": {k: report[k] for k in ("score", "passed", "critical_failures", "checks",
                                                              "seconds") if k in report} | (
        {"judge": report["judge"]} if "judge" in report else {}),
        "stages": record_stage(state, "gate", ok=report["passed"], seconds=time.monotonic() - started, usage=usage,
                               detail=", ".join(failing))}
    if not report["passed"]:
        update.update(status="rejected", reason=f"gate: score {report['score']}, failing {failing}")
    return update


def register(state: SlotState, ctx: Context) -> dict[str, Any]:
    """Write the env into the catalog unless its id was taken meanwhile."""
    started = time.monotonic()
    taken = _taken(ctx.catalog, state)  # the id may have been taken since dedup (the plan can rename it)
    if not taken:
        _write(ctx.catalog, state, final=True)
    shutil.rmtree(ctx.run_dir / "staging" / state["env_id"], ignore_errors=True)
    return {"status": "existing" if taken else "registered", "reason": taken or "",
            "stages": record_stage(state, "register", ok=not taken, seconds=time.monotonic() - started,
                                   detail=taken or "")}


def reject(state: SlotState) -> dict[str, Any]:
    """End the slot after the last failed code attempt, with its problems."""
    return {"status": "rejected", "reason": f"code: {state.get('attempts', 0)} attempts, last problems: "
                                            f"{'; '.join(state.get('problems') or [])}"[:600]}


NODES = {"mine": mine, "dedup": dedup, "plan": plan, "schema": schema, "code": code, "static_check": static_check,
         "states": states, "execute": execute, "tasks": tasks, "gate": gate, "register": register}


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
        spec = shared_spec(source, "sql", entry)  # read only here: the cached spec, not a copy
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
    spec = shared_spec(source, "sql", entry_of(source))  # read only (tool descriptors)
    stages = list((state.get("stages") or {}).values())
    provenance = Provenance(backend=f"synth:{state['topic'].get('backend', 'procedural')}",
                            model=state["topic"].get("model"),
                            input_tokens=sum(int(e.get("tokens_in", 0)) for e in stages),
                            output_tokens=sum(int(e.get("tokens_out", 0)) for e in stages),
                            cost_usd=round(sum((float(e.get("cost_usd", 0.0)) for e in stages), 0.0), 8),
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
    return {"string": "sample", "integer": 1, "number": 1.0, "boolean": True}.get(str(param.get("json_type")), "sample")
