"""envforge command line: `python cli.py --help`."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from catalog.delta import DeltaOp
from catalog.jsonable import canonical_json
from catalog.runtime import EnvLoadError, StateError
from catalog.store import ENV_VAR, Catalog, CatalogError, EnvExists
from catalog.tasks import CheckError
from verifier.isolation import IsolationUnavailable, set_default_isolation

if TYPE_CHECKING:
    from constraints.spec import ConstraintSpec


class UserError(Exception):
    """An error caused by input; printed without a traceback, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors are bad input like any other: one line and exit status 1 (argparse prints usage, exits 2)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see: {self.prog} --help)")


def _count(low: int) -> Callable[[str], int]:
    """Parse a whole number >= `low` (0 examples or workers, a negative limit: nothing sensible to do)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def _number(low: float, high: float = math.inf, *, inclusive: bool) -> Callable[[str], float]:
    """Parse a number in [low, high] (`inclusive`) or in (low, high); NaN is never inside."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value <= high if inclusive else low < value < high):
            bounds = (f"from {low:g} to {high:g}" if inclusive else
                      f"more than {low:g}" if high == math.inf else f"between {low:g} and {high:g}, exclusive")
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {text}")
        return value
    return parse


_POSITIVE = _count(1)
_SECONDS = _number(0, inclusive=False)
_SHARE = _number(0, 1, inclusive=True)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def _catalog(args: argparse.Namespace, *, write: bool = False) -> Catalog:
    """The catalog of --catalog / $ENVFORGE_CATALOG; a file there (or, for writers, a read-only folder) is bad input."""
    catalog = Catalog(args.catalog)
    catalog.check_root(write=write)
    return catalog


def cmd_catalog_list(args: argparse.Namespace) -> int:
    summaries, problems = _catalog(args).list()
    for problem in problems:
        print(f"warning: skipped {problem.path}: {problem.reason}", file=sys.stderr)
    if args.json:
        _print_json([s.to_dict() for s in summaries])
        return 0
    if not summaries:
        print("No environments.")
        return 0
    width = max(len(s.id) for s in summaries)
    print(f"{'ID':<{width}}  KIND   TOOLS  STATES  NAME")
    for s in summaries:
        print(f"{s.id:<{width}}  {s.kind:<5}  {s.tools:>5}  {s.states:>6}  {s.name}{'  (reference)' if s.reference else ''}")
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    handle = _catalog(args).get(args.env_id)
    manifest = handle.manifest
    tasks = handle.tasks()
    if args.json:
        data = manifest.model_dump(mode="json")
        data["path"] = str(handle.path)
        data["tasks"] = [t.model_dump(mode="json", exclude_none=True) for t in tasks]
        _print_json(data)
        return 0
    print(f"{manifest.name} [{manifest.id}] - {manifest.kind} env, topic {manifest.topic or '-'}")
    print(f"  {manifest.description}")
    print(f"  folder: {handle.path}")
    print(f"  provenance: {manifest.provenance.backend}" + (f" / {manifest.provenance.model}" if manifest.provenance.model else ""))
    if manifest.convention != "class" or manifest.provenance.backend == "import":
        print(f"  convention: {manifest.convention}, entry {manifest.entry or '-'}")
    _print_failure(manifest.failure)
    if manifest.allow_modules:
        print(f"  allowed modules in the sandbox: {', '.join(manifest.allow_modules)}")
    if manifest.rules:
        print("Rules:")
        for rule in manifest.rules:
            print(f"  - {rule}")
    print(f"Tools ({len(manifest.tools)}):")
    for tool in manifest.tools:
        props = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", []))
        params = ", ".join(f"{n}{'' if n in required else '?'}: {p.get('type', 'any')}" for n, p in props.items())
        kind = tool.kind.value if tool.kind else "?"
        print(f"  {tool.name}({params}) [{kind}] - {tool.description.splitlines()[0] if tool.description else ''}")
    print(f"States: {', '.join(manifest.states) or '-'}")
    print(f"Tasks ({len(tasks)}):")
    for task in tasks:
        print(f"  {task.id} [{task.state}]: {task.instruction}")
    return 0


def _format_op(op: DeltaOp) -> str:
    path = json.dumps(list(op.path), ensure_ascii=False)
    return f"  {op.op:<6} {path}" + ("" if op.op == "delete" else f" = {canonical_json(op.value)}")


def cmd_catalog_run(args: argparse.Namespace) -> int:
    handle = _catalog(args).get(args.env_id)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise UserError(f"--args is not valid JSON ({exc}); example: --args '{{\"book_id\": \"B001\"}}'") from exc
    if not isinstance(arguments, dict):
        raise UserError("--args must be a JSON object of argument names to values")
    state_name = args.state or (handle.manifest.states[0] if "default" not in handle.manifest.states else "default")
    from verifier.session import SandboxRuntime, open_runtime

    runtime = open_runtime(handle, trusted=args.trusted)
    try:
        runtime.reset(handle.state(state_name))
        result = runtime.call({"name": args.tool, "arguments": arguments}, snapshot=args.show_state)
    except RuntimeError as exc:  # the sandbox could not load or reset the env
        raise UserError(f"{handle.id}: {exc}") from None
    finally:
        if isinstance(runtime, SandboxRuntime):
            runtime.close()
    if args.json:
        out: dict[str, Any] = {"env": handle.id, "state": state_name, "action": {"name": args.tool, "arguments": arguments},
                               "outcome": result.outcome.value, "observation": result.observation,
                               "delta": [op.to_dict() for op in result.delta]}
        if args.show_state:
            out["next_state"] = result.state
        _print_json(out)
    else:
        print(f"env {handle.id}, state {state_name}: {args.tool}({canonical_json(arguments)})")
        print(f"outcome: {result.outcome.value}")
        print(f"observation: {json.dumps(result.observation, ensure_ascii=False, indent=2, sort_keys=True)}")
        print(f"delta ({len(result.delta)} ops):")
        for op in result.delta:
            print(_format_op(op))
        if args.show_state:
            print("next state:")
            _print_json(result.state)
    return 0 if result.outcome.value in ("success", "failure") else 3


def _print_spec(spec: ConstraintSpec, env_id: str) -> None:
    print(f"Constraint spec of {env_id} ({spec.kind} env, class {spec.entry})")
    for tool in spec.tools.values():
        kind = tool.inferred_kind if tool.declared_kind is None else f"declared {tool.declared_kind}"
        mismatch = f"  KIND MISMATCH: declared {tool.declared_kind} but it writes" if tool.kind_mismatch \
            and tool.inferred_kind == "write" else ("  KIND MISMATCH: declared write but it writes nothing"
                                                    if tool.kind_mismatch else "")
        print(f"\n{tool.name} [{kind}, inferred {tool.inferred_kind}]{mismatch}")
        params = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.json_type or 'any'}"
                           + (f" in {p.enum}" if p.enum else "") for p in tool.params)
        print(f"  params: {params or '-'}")
        for pre in tool.preconditions:
            via = f" (via {pre.via})" if pre.via else ""
            print(f"  guard L{pre.line}{via}: if {pre.condition.source} -> {pre.message.template!r}")
        for effect in tool.effects:
            path = "/".join(effect.path)
            value = f" = {effect.value.source}" if effect.value else ""
            notes = [n for n in (f"via {effect.via}" if effect.via else "", effect.note, effect.unfollowed) if n]
            print(f"  effect L{effect.line}: {effect.op} {path}{value}" + (f"  [{'; '.join(notes)}]" if notes else ""))
        print(f"  reads: {', '.join(tool.read_set) or '-'} | writes: {', '.join(tool.write_set) or '-'}")
        shape = tool.result_shape
        print(f"  result: success {shape.success} / failure {shape.failure}"
              + (f" / other {shape.other}" if shape.other else ""))
        for item in tool.unsupported:
            print(f"  NOT FOLLOWED L{item.line}: {item.src} ({item.why})")


def cmd_constraints(args: argparse.Namespace) -> int:
    from constraints.completeness import completeness, spec_of
    from constraints.extract import ExtractionError

    catalog = _catalog(args)
    if args.completeness:
        if args.env_id and args.env:
            raise UserError("give the env either as ENV_ID or with --env, not both")
        ids = [args.env or args.env_id] if (args.env or args.env_id) else [s.id for s in catalog.list()[0]]
        from verifier.executor import SandboxExecutor
        from verifier.sandbox import SandboxPool

        reports = []
        with SandboxPool(1) as pool:
            for env_id in ids:
                handle = catalog.get(env_id)
                # The shipped reference envs are trusted and run in-process (faster); others in the sandbox.
                executor = None if handle.reference else SandboxExecutor(handle, pool)
                print(f"measuring {env_id}{'' if handle.reference else ' (sandboxed)'} ...", file=sys.stderr)
                try:
                    reports.append(completeness(handle, seed=args.seed, executor=executor))
                except ExtractionError as exc:
                    raise UserError(f"env {env_id}: {exc}") from exc
        keys = ["steps", "exact", "abstained", "wrong", "guards_total", "guards_triggered", "failures",
                "failures_explained", "crashes"]
        if len(reports) == 1:
            out: dict[str, Any] = reports[0]
        else:
            out = {key: sum(r[key] for r in reports) for key in keys}
            out["envs"] = reports
        clean = all(r["wrong"] == 0 for r in reports)
        if args.json:
            _print_json(out)
            return 0 if clean else 4
        print(f"{'ENV':<12} {'STEPS':>6} {'EXACT':>6} {'ABST':>5} {'WRONG':>5} {'EXACT%':>7} {'GUARDS':>9} {'EXPLAINED':>11}")
        for r in reports:
            print(f"{r['env']:<12} {r['steps']:>6} {r['exact']:>6} {r['abstained']:>5} {r['wrong']:>5} "
                  f"{100 * r['exact_rate']:>6.1f}% {r['guards_triggered']:>4}/{r['guards_total']:<4} "
                  f"{r['failures_explained']:>5}/{r['failures']:<5}")
            for guard in r["untriggered_guards"]:
                print(f"    never triggered: {guard}")
            for reason, count in r["top_abstain_reasons"].items():
                print(f"    abstained {count}x: {reason}")
        return 0 if clean else 4
    if not args.env_id:
        raise UserError("name an env (python cli.py constraints library) or pass --completeness")
    try:
        spec = spec_of(catalog.get(args.env_id))
    except ExtractionError as exc:
        raise UserError(f"env {args.env_id}: {exc}") from exc
    if args.json:
        data = spec.to_dict()
        _print_json({"env": args.env_id, "kind": data["kind"], "entry": data["entry"], "tables": data["tables"],
                     "tools": data["tools"]})
    else:
        _print_spec(spec, args.env_id)
    return 0


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def _print_replay(result: Any, *, final_state: bool) -> None:
    """A replay as text: per call its index, call, outcome, observation, delta and diagnostics."""
    print(f"env {result.env}, state {result.state}: {_calls(len(result.steps))}")
    for step in result.steps:
        call, res = step.call, step.result
        print(f"[{step.index}] {call.name}({json.dumps(call.shown_arguments(), ensure_ascii=False)})"
              f"{f'  ({call.source})' if call.source else ''}")
        print(f"  outcome: {res.outcome.value}")
        print(f"  observation: {json.dumps(res.observation, ensure_ascii=False)}")
        print(f"  delta ({len(res.delta)} ops):" if res.delta else "  delta: none")
        for op in res.delta:
            print("  " + _format_op(op))
        for key, value in res.info.items():
            if key == "traceback":
                continue
            if key == "hidden_delta" and isinstance(value, list):
                print(f"  hidden delta ({len(value)} ops):")
                for raw in value:
                    print("  " + _format_op(DeltaOp.from_dict(raw)) if isinstance(raw, dict) else f"    {raw}")
            else:
                print(f"  {key.replace('_', ' ')}: {value if isinstance(value, str) else canonical_json(value)}")
    counts: dict[str, int] = {}
    for step in result.steps:
        counts[step.result.outcome.value] = counts.get(step.result.outcome.value, 0) + 1
    print(f"{_calls(len(result.steps))}: " + ", ".join(f"{n} {outcome}" for outcome, n in counts.items()))
    if final_state:
        print("final state:")
        _print_json(result.final_state)


def cmd_replay(args: argparse.Namespace) -> int:
    from catalog.calls import CallFileError, read_calls
    from verifier.replay import ReplayError, replay

    handle = _catalog(args).get(args.env_id)
    try:
        calls = read_calls(Path(args.calls))
    except CallFileError as exc:
        raise UserError(str(exc)) from None
    try:
        result = replay(handle, args.state, calls, trusted=args.trusted, final_state=args.final_state)
    except ReplayError as exc:
        if exc.partial is not None and exc.partial.steps and args.json:
            _print_json(exc.partial.to_dict())
        elif exc.partial is not None and exc.partial.steps:
            _print_replay(exc.partial, final_state=False)
        raise UserError(str(exc)) from None
    if args.json:
        _print_json(result.to_dict())
    else:
        _print_replay(result, final_state=args.final_state)
    return 0 if result.clean else 3


def cmd_import(args: argparse.Namespace) -> int:
    from catalog.importer import import_env
    from verifier.loadcheck import sandbox_load_check

    report = import_env(Path(args.path), _catalog(args, write=True), class_name=args.class_name,
                        configs=[Path(c) for c in args.config or []], env_id=args.id, replace=args.replace,
                        check=None if args.trusted else sandbox_load_check, convention=args.convention,
                        package_root=Path(args.package_root) if args.package_root else None,
                        allow_modules=args.allow_module or [], failure_exceptions=args.failure_exception or [],
                        error_prefixes=args.error_prefix or [])
    handle = report.handle
    if report.optional_missing:
        print(f"warning: optional imports not installed (the module's fallback is used): "
              f"{', '.join(report.optional_missing)}", file=sys.stderr)
    if args.json:
        _print_json({"id": handle.id, "path": str(handle.path), "files": report.files, "states": handle.state_names(),
                     "tools": [t.name for t in handle.manifest.tools], "failure_exceptions": report.failure_exceptions,
                     "convention": report.convention, "failure": report.failure.model_dump(),
                     "allow_modules": handle.manifest.allow_modules, "optional_missing": report.optional_missing})
        return 0
    print(f"Imported {handle.manifest.name} as {handle.id} into {handle.path}")
    print(f"  convention: {report.convention}" + (f", entry {handle.manifest.entry}" if handle.manifest.entry else ""))
    print(f"  files: {', '.join(report.files)}")
    print(f"  tools ({len(handle.manifest.tools)}): {', '.join(t.name for t in handle.manifest.tools)}")
    print(f"  states: {', '.join(handle.state_names())}")
    _print_failure(report.failure)
    if handle.manifest.allow_modules:
        print(f"  allowed modules in the sandbox: {', '.join(handle.manifest.allow_modules)}")
    print(f"Next: python cli.py constraints --completeness --env {handle.id}")
    return 0


def _print_failure(failure: Any) -> None:
    """How an env signals failure, one line per kind (what `outcome` counts as a rule failure)."""
    if failure is None:
        return
    if failure.exceptions:
        print(f"  failure: raised exceptions: {', '.join(failure.exceptions)}")
    if failure.error_prefixes:
        print(f"  failure: returned strings starting with: {', '.join(repr(p) for p in failure.error_prefixes)}")
    if failure.error_keys:
        print(f"  failure: returned dicts with keys: {', '.join(failure.error_keys)}")


def cmd_verify(args: argparse.Namespace) -> int:
    from verifier.gate import broken_env_report, verify_env
    from verifier.sandbox import SandboxPool

    catalog = _catalog(args)
    if args.mutants is not None:
        from verifier.mutation import mutation_test

        ids = [args.env or args.env_id] if (args.env or args.env_id) else [s.id for s in catalog.list()[0] if s.reference]
        handles = [catalog.get(env_id) for env_id in ids]
        print(f"mutation testing the gate on {', '.join(ids)} ...", file=sys.stderr)
        with SandboxPool(args.workers, timeout=args.timeout) as pool:
            report = mutation_test(handles, args.mutants, pool, seed=args.seed, examples=min(args.examples, 40))
        if args.json:
            _print_json(report)
        else:
            print(f"mutants {report['mutants']}: killed {report['killed']}, survived {report['survived']}, "
                  f"mutation score {100 * report['mutation_score']:.1f}%, false alarms {report['false_alarms']}")
            for operator, counts in report["by_operator"].items():
                print(f"  {operator:<16} {counts['killed']:>3}/{counts['mutants']:<3}")
            for survivor in report["survivors"]:
                print(f"  survived: {survivor['env']} line {survivor['line']}: {survivor['change']} ({survivor['operator']})")
        return 0
    if args.all == bool(args.env_id):
        raise UserError("name one env (python cli.py verify library) or pass --all")
    if args.write_plan:
        from constraints.completeness import spec_of
        from verifier.intent import plan_from_spec, write_plan

        handle = catalog.get(args.env_id)
        plan = plan_from_spec(spec_of(handle), handle.id, "captured from reviewed code")
        write_plan(handle.path, plan)
        print(f"Wrote {handle.path / 'plan.json'}: {len(plan.rules)} rules, {len(plan.tools)} tools. It records the "
              "code's current guards and effects as the intent: review it, since later code is checked against it.")
        return 0
    if args.no_reference:
        catalog.include_reference = False
    summaries, broken = catalog.list() if args.all else ([], [])
    ids = [s.id for s in summaries] if args.all else [args.env_id]
    reports = [broken_env_report(problem.path.name, problem.reason, args.gate) for problem in broken]
    for report in reports:
        print(f"broken env folder {report['env']}: {report['checks'][0]['detail']}", file=sys.stderr)
    with SandboxPool(args.workers, timeout=args.timeout) as pool:
        for env_id in ids:
            print(f"verifying {env_id} ...", file=sys.stderr)
            reports.append(verify_env(catalog.get(env_id), pool, examples=args.examples, seed=args.seed,
                                      gate=args.gate))
    if args.json:
        _print_json(reports[0] if len(reports) == 1 and not args.all else reports)
    else:
        for report in reports:
            verdict = "PASS" if report["passed"] else "FAIL"
            print(f"{report['env']}: {verdict} score {report['score']:.2f} (gate {report['gate']}), plan: {report['plan']}")
            for check in report["checks"]:
                mark = "info" if check.get("informational") else "ok  " if check["ok"] else "FAIL"
                print(f"  {mark} {check['name']}" + (f": {check['detail']}" if check["detail"] else ""))
                if check["counterexample"] and (not check["ok"] or check.get("informational")):
                    example = check["counterexample"]
                    if "actions" in example:
                        calls = "; ".join(f"{a['name']}({canonical_json(a['arguments'])})" for a in example["actions"])
                        print(f"       counterexample from state {example['state']!r}: {calls}")
                    else:
                        print(f"       {canonical_json(example)}")
    return 0 if all(r["passed"] for r in reports) else 5


def cmd_synthesize(args: argparse.Namespace) -> int:
    from synth.run import RunConfig, RunError, synthesize

    if args.resume is None and args.n is None:
        raise UserError("give --n N (how many envs to register), or --resume RUN_ID")
    if args.backend == "llm" and not args.model and args.resume is None:
        raise UserError("--backend llm needs --model NAME; `python cli.py models` lists them")
    if args.model and args.backend == "procedural":
        args.backend = "llm"
    root = str(_catalog(args, write=True).root)
    config = RunConfig(n=args.n or 0, backend=args.backend, model=args.model, mode=args.mode, seed=args.seed,
                       workers=args.workers, catalog=root, judge_model=args.judge_model)
    if args.model or args.judge_model:
        from synth.llm import UnknownModel, load_registry

        try:
            for name in filter(None, (args.model, args.judge_model)):
                load_registry()[name]
        except UnknownModel as exc:
            raise UserError(str(exc)) from exc
    try:
        report = synthesize(config, resume=args.resume, progress=None if not args.json else False,
                            report_dir=Path(args.report) if args.report else None)
    except RunError as exc:
        raise UserError(str(exc)) from exc
    except KeyboardInterrupt as exc:
        if not exc.args:  # before the driver started (e.g. waiting for the catalog lock): no slot ran
            print("\ninterrupted before any env was registered", file=sys.stderr)
            return 130
        print(f"\ninterrupted; finished envs are kept. Continue with: python cli.py synthesize --resume {exc.args[0]}"
              + (f" --catalog {root}" if args.catalog else ""), file=sys.stderr)
        return 130
    skipped = [s["env_id"] for s in report["skipped_existing"]]
    if skipped:
        print(f"kept {len(skipped)} env(s) the catalog already had, not replaced (not written by this run, or "
              f"edited by hand): {', '.join(skipped[:10])}" + (f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""),
              file=sys.stderr)
    if args.json:
        _print_json(report)
    else:
        where = Path(args.report) if args.report else Path(root) / ".runs" / report["run_id"]
        print(f"run {report['run_id']}: {report['registered']}/{report['requested']} registered "
              f"({report['proposed']} proposed, {report['deduplicated']} duplicates, {report['existing']} existing ids "
              f"skipped, {report['rejected']} rejected, "
              f"{report['failed']} failed; yield {report['yield']:.1%}) in {report['wall_s']} s; "
              f"tokens {report['tokens_in']} in / {report['tokens_out']} out, {report['cost_usd']:.4f} USD")
        print(f"report: {where / 'report.md'} (+ report.json, {', '.join(report['plots'])})")
    return 0 if report["registered"] == report["requested"] else 1


def cmd_models(args: argparse.Namespace) -> int:
    from synth.llm import RegistryError, load_registry, probe

    try:
        registry = load_registry()
    except RegistryError as exc:
        raise UserError(str(exc)) from exc
    rows = []
    for spec in registry.values():
        found = probe(spec, registry=registry, timeout=args.timeout) if not args.no_probe else {}
        rows.append({"name": spec.name, "base_url": spec.base_url or "(embedded)", "model": spec.model,
                     "price_in_per_m": spec.price_in, "price_out_per_m": spec.price_out, "json_schema": spec.json_schema,
                     "reachable": found.get("reachable"), "detail": found.get("detail", "")})
    if args.json:
        _print_json(rows)
        return 0
    for row in rows:
        state = "-" if row["reachable"] is None else ("up" if row["reachable"] else "down")
        print(f"{row['name']:<16} {state:<5} {row['base_url']:<34} in ${row['price_in_per_m']}/M out "
              f"${row['price_out_per_m']}/M json_schema={row['json_schema']}  {row['detail']}")
    return 0


def cmd_catalog_search(args: argparse.Namespace) -> int:
    from catalog.search import search_catalog

    hits = search_catalog(_catalog(args), args.query, args.k)
    if args.json:
        _print_json(hits)
        return 0
    if not hits:
        print("no environments match")
    for hit in hits:
        print(f"{hit['score']:.3f}  {hit['id']:<32} {hit['name']}")
    return 0


def _load_bench(path: Path) -> list[Any]:
    """Benchmark items from envforge JSONL or EnvSimBench JSON; unusable samples are reported, not fatal."""
    from catalog.envsimbench import read_envsimbench, read_jsonl

    if not path.is_file():
        raise UserError(f"no benchmark file {path}")
    items, problems = read_jsonl(path) if path.suffix == ".jsonl" else read_envsimbench(path)
    for problem in problems[:10]:
        print(f"warning: {path}: {problem}", file=sys.stderr)
    if len(problems) > 10:
        print(f"warning: {path}: {len(problems) - 10} more unusable samples", file=sys.stderr)
    if not items:
        raise UserError(f"{path}: no usable samples")
    return items


def _default_bench(args: argparse.Namespace) -> Path:
    """The catalog's exported samples (`bench export` writes them there by default)."""
    return Path(_catalog(args).root) / ".bench" / "samples.jsonl"


def _export_default_bench(args: argparse.Namespace, bench: Path) -> None:
    """Export the default samples a fresh catalog lacks, and say so in one line.

    The EnvSimBench composition, 400 samples, with its progress bar, where `bench export` puts them.
    """
    from catalog.envsimbench import write_jsonl
    from verifier.samples import Composition, export_samples

    print(f"no exported samples yet: exporting the default set (envsimbench, 400 samples) to {bench} first",
          file=sys.stderr)
    bar = sys.stderr.isatty() and not args.json

    def progress(stage: str, done: int, total: int) -> None:
        if bar:
            sys.stderr.write(f"\r{stage}: {done}/{total}   ")
            sys.stderr.flush()

    result = export_samples(_catalog(args, write=True), Composition.envsimbench(400), seed=0, progress=progress)
    if bar:
        sys.stderr.write("\n")
    bench.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(result.items, bench)


def cmd_audit_sim(args: argparse.Namespace) -> int:
    from synth.llm import EndpointUnreachable, UnknownModel
    from synth.simulation import open_simulator
    from verifier.audit import AuditAborted, AuditError, run_audit

    if args.property_based:
        return _cmd_property_audit(args)
    bench = Path(args.bench) if args.bench else _default_bench(args)
    if not args.bench and not bench.is_file():
        _export_default_bench(args, bench)
    items = _load_bench(bench)
    digest = hashlib.sha256(bench.read_bytes()).hexdigest()[:8]
    out = Path(args.out) if args.out else Path(_catalog(args, write=True).root) / ".audits" / (
        f"{args.model}-{'spec' if args.model == 'spec' else args.mode}-{bench.stem}-{digest}")
    bar = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, record: dict[str, Any] | None) -> None:
        if bar:
            sys.stderr.write(f"\r{done}/{total} samples audited ")
            sys.stderr.flush()

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_audit(items, simulator, out, workers=args.workers, limit=args.limit, progress=progress)
    except (UnknownModel, ValueError) as exc:
        raise UserError(str(exc)) from exc
    except (AuditAborted, EndpointUnreachable) as exc:
        raise UserError(f"{exc}") from exc
    except AuditError as exc:
        raise UserError(str(exc)) from exc
    except KeyboardInterrupt:
        print(f"\ninterrupted; answered samples are kept in {out}/results.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        if bar:
            sys.stderr.write("\n")
    if args.json:
        _print_json(report)
        return 0
    fmt = lambda v: "-" if v is None else f"{v:.1%}"  # noqa: E731
    print(f"{report['model']} ({report['mode']}) on {report['samples']} samples: FM {fmt(report['fm'])}, "
          f"strict CM {fmt(report['cm_strict'])}, EnvSimBench CM {fmt(report['cm_compat'])}, op F1 "
          f"{fmt(report['op_f1'])}; abstained {report['abstained']}, errors {report['errors']}; tokens "
          f"{report['tokens_in']} in / {report['tokens_out']} out, {report['cost_usd']:.4f} USD")
    print(f"report: {out / 'report.md'} (+ report.json, results.jsonl, plots)")
    return 0


def _add_property_flags(audit: argparse.ArgumentParser) -> None:
    group = audit.add_argument_group("property-based audit (issue 16)")
    group.add_argument("--property-based", action="store_true",
                       help="generate inputs with hypothesis (states reached by real calls, typed and boundary "
                            "arguments), judge each answer by execution and by properties every correct simulator "
                            "has, shrink violations to minimal counterexamples; resumes from --out")
    group.add_argument("--env", action="append", metavar="ID", help="with --property-based: audit this env "
                                                                     "(repeatable; default: every catalog env)")
    group.add_argument("--all", action="store_true", help="with --property-based: every catalog env (the default)")
    group.add_argument("--budget", type=_POSITIVE, metavar="CALLS",
                       help="with --property-based: most model calls, shrinking included (default: no limit), e.g. 500")
    group.add_argument("--max-tokens", type=_POSITIVE, metavar="N",
                       help="with --property-based: most tokens (in + out) over the audit (default: no limit)")


def _cmd_property_audit(args: argparse.Namespace) -> int:
    """`audit-sim --property-based`: the CLI builds the simulator, verifier.simaudit searches and reports."""
    from synth.llm import EndpointUnreachable, UnknownModel
    from synth.simulation import open_simulator
    from verifier.audit import AuditError
    from verifier.simaudit import Budget, PropertyAudit, property_summary, render_summary, run_property_audit

    if args.env and args.all:
        raise UserError("give --env ID or --all, not both")
    mode = "spec" if args.model == "spec" else args.mode
    out = Path(args.out) if args.out else Path(_catalog(args, write=True).root) / ".audits" / (
        f"{args.model}-{mode}-properties-s{args.seed}")
    audit = PropertyAudit(env_ids=args.env, budget=Budget(calls=args.budget, tokens=args.max_tokens), seed=args.seed)
    bar = sys.stderr.isatty() and not args.json

    def progress(env: str, done: int, total: int) -> None:
        if bar:
            sys.stderr.write(f"\r{done}/{total} envs searched {env}   ")
            sys.stderr.flush()

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_property_audit(_catalog(args), simulator, out, audit, progress=progress)
    except (UnknownModel, ValueError, CatalogError, AuditError, EndpointUnreachable) as exc:
        raise UserError(str(exc)) from exc
    except KeyboardInterrupt:
        print(f"\ninterrupted; answers are kept in {out}/answers.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        if bar:
            sys.stderr.write("\n")
    if args.json:
        _print_json(property_summary(report))
        return 0
    print(render_summary(report))
    print(f"report: {out / 'report.md'} (+ report.json, counterexamples.jsonl, answers.jsonl)")
    return 0


def _write_items(items: list[Any], path: Path, fmt: str) -> int:
    from catalog.envsimbench import write_envsimbench, write_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(items, path) if fmt == "jsonl" else write_envsimbench(items, path)


def _split_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(f"{out.stem}.train{out.suffix}"), out.with_name(f"{out.stem}.test{out.suffix}")


def cmd_bench_export(args: argparse.Namespace) -> int:
    from catalog.envsimbench import split_by_env
    from verifier.samples import Composition, CompositionError, export_failures, export_samples, render_export_report

    fmt = args.format
    default_name = "samples.jsonl" if fmt == "jsonl" else "samples.json"
    out = Path(args.out) if args.out else Path(_catalog(args, write=True).root) / ".bench" / default_name
    report: dict[str, Any] = {}
    if args.from_audit:
        if not args.failures:
            raise UserError("--from-audit needs --failures (the steps the audited simulator got wrong)")
        try:
            items = export_failures(Path(args.from_audit))
        except FileNotFoundError as exc:
            raise UserError(f"{args.from_audit}: no audit results there ({exc})") from exc
        report = {"from_audit": args.from_audit, "failures": len(items)}
    else:
        if args.n is None:
            raise UserError("give --n N (how many samples), or --from-audit DIR --failures")
        try:
            composition = Composition.parse(args.composition, args.n)
        except CompositionError as exc:
            raise UserError(str(exc)) from exc
        bar = sys.stderr.isatty() and not args.json

        def progress(stage: str, done: int, total: int) -> None:
            if bar:
                sys.stderr.write(f"\r{stage}: {done}/{total}   ")
                sys.stderr.flush()

        result = export_samples(_catalog(args), composition, seed=args.seed, workers=args.workers,
                                env_ids=args.env or None, progress=progress)
        if bar:
            sys.stderr.write("\n")
        items, report = result.items, result.report
    written = {}
    if args.split_by == "env":
        train, test = split_by_env(items, test_fraction=args.test_fraction, seed=args.seed)
        for part, path in zip((train, test), _split_paths(out), strict=True):
            written[str(path)] = _write_items(part, path, fmt)
    else:
        written[str(out)] = _write_items(items, out, fmt)
    report["written"] = written
    if args.json:
        _print_json(report)
    else:
        if "buckets" in report:
            print(render_export_report(report))
        for target, count in written.items():
            print(f"wrote {count} samples to {target} ({fmt})")
    return 0 if report.get("quotas_met", True) else 1


def cmd_bench_import(args: argparse.Namespace) -> int:
    from catalog.envsimbench import read_envsimbench, read_jsonl

    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    items, problems = read_jsonl(path) if path.suffix == ".jsonl" else read_envsimbench(path)
    summary = {"file": str(path), "usable": len(items), "unusable": len(problems),
               "problems": [str(p) for p in problems], "envs": len({i.env_id for i in items})}
    if args.out:
        summary["written"] = _write_items(items, Path(args.out), "jsonl")
    if args.json:
        _print_json(summary)
    else:
        print(f"{path}: {len(items)} usable samples from {summary['envs']} envs, {len(problems)} unusable")
        for problem in problems[:20]:
            print(f"  {problem}")
        if args.out:
            print(f"wrote {summary['written']} samples to {args.out} (jsonl)")
    return 0 if items else 1


IMPORT_DESCRIPTION = (
    "Copy PATH.py (and the sibling modules it imports, with their package path) into a new catalog env, load it "
    "with each init config in the sandbox to check it works, and register it. Conventions: class (state in instance "
    "attributes), tool_classes (one class per tool with invoke(data, ...) and get_info()), toolkit (a class whose "
    "decorated methods are tools, built with a pydantic db), functions (module-level functions over a module-level "
    "dict); detected unless --convention is given. How the env signals failure (exceptions, error dicts, error "
    "string prefixes) is read from its code and can be added to with --failure-exception and --error-prefix.")


def _import_arguments(importer: argparse.ArgumentParser) -> None:
    importer.add_argument("path", metavar="PATH.py", help="module defining the environment")
    importer.add_argument("--convention", choices=("class", "tool_classes", "toolkit", "functions"),
                          help="force a convention (default: detected from the code)")
    importer.add_argument("--class", dest="class_name", metavar="NAME", help="the entry when several fit: the env "
                          "or toolkit class, the tool list, or the state dict (default: the only one)")
    importer.add_argument("--config", action="append", metavar="CONFIG.json|DIR",
                          help="init config (repeatable); one state per file, or per item of a JSON list; an "
                               "EnvScaler record's init_config is used; a folder of JSON files is one state with "
                               "a key per file (users.json -> users)")
    importer.add_argument("--package-root", metavar="DIR", help="the folder the package path starts from (the one "
                          "holding pkg/ for `from pkg.sub.module import X`; default: found by walking up while "
                          "__init__.py exists)")
    importer.add_argument("--allow-module", action="append", metavar="NAME", help="an installed third-party module "
                          "this env may import in the sandbox (repeatable)")
    importer.add_argument("--failure-exception", action="append", metavar="NAME",
                          help="an exception type the env raises to refuse a call (repeatable; added to those found)")
    importer.add_argument("--error-prefix", action="append", metavar="TEXT",
                          help="a returned string starting with TEXT is a failure (repeatable; added to those found)")
    importer.add_argument("--id", metavar="ENV_ID", help="catalog id (default: from the class name)")
    importer.add_argument("--replace", action="store_true", help="overwrite an existing env with this id")
    importer.add_argument("--json", action="store_true", help="print the result as JSON")
    importer.add_argument("--trusted", action="store_true", help="load the module in this process to check it, "
                          "outside the sandbox (only for code you vouch for)")
    importer.set_defaults(handler=cmd_import)


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--catalog", metavar="DIR", default=argparse.SUPPRESS,
                        help=f"catalog folder (default: ${ENV_VAR}, else ./envforge-catalog); "
                             "the reference envs are always included")
    common.add_argument("--unsafe-no-isolation", action="store_true", default=argparse.SUPPRESS,
                        help="run env code without the OS sandbox (bubblewrap namespaces) where the host cannot "
                             "create one; only for code you trust")
    parser = _Parser(
        prog="python cli.py", parents=[common],
        description="envforge: synthesize executable tool-use environments and verify LLM simulation of them.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    catalog = commands.add_parser("catalog", parents=[common], help="list, show and run catalog environments")
    actions = catalog.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="list environments (never imports their code)")
    listing.add_argument("--json", action="store_true", help="print a JSON array (id, name, kind, tools, states, ...)")
    listing.set_defaults(handler=cmd_catalog_list)
    show = actions.add_parser("show", parents=[common], help="show one environment: rules, tools, states, tasks")
    show.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    show.add_argument("--json", action="store_true", help="print the manifest and tasks as JSON")
    show.set_defaults(handler=cmd_catalog_show)
    run = actions.add_parser("run", parents=[common], help="execute one tool call and print observation and delta",
                             description="Reset ENV_ID to an initial state, execute one call, print the observation "
                                         "and the state delta. Exit status 0 for success or a rule failure, 3 for a "
                                         "crash or an invalid call.")
    run.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    run.add_argument("tool", metavar="TOOL", help="tool name, e.g. borrow_book")
    run.add_argument("--args", default="{}", metavar="JSON",
                     help='arguments as a JSON object (default: {}), e.g. \'{"member_id": "M002", "book_id": "B010"}\'')
    run.add_argument("--state", metavar="NAME", help="initial state (default: 'default', else the first)")
    run.add_argument("--show-state", action="store_true", help="also print the full state after the call")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.add_argument("--trusted", action="store_true", help="run the env's code in this process, outside the sandbox "
                     "(only for code you vouch for; the shipped reference envs always run in-process)")
    run.set_defaults(handler=cmd_catalog_run)
    search = actions.add_parser("search", parents=[common], help="nearest environments to a description (faiss)")
    search.add_argument("query", metavar="QUERY", help='what you are looking for, e.g. "hotel room bookings"')
    search.add_argument("--k", type=_POSITIVE, default=5, help="how many results (default: 5)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler=cmd_catalog_search)

    replaying = commands.add_parser(
        "replay", parents=[common], help="run a file of tool calls (JSONL or an OpenAI-messages trajectory) in order",
        description="Reset ENV_ID to one initial state and run the calls in FILE in order on it, in the sandbox; print "
                    "per call its outcome, observation and state delta. FILE is JSONL of {\"name\", \"arguments\"} "
                    "or an OpenAI-messages trajectory (a JSON list of messages, JSONL of messages, or "
                    "{\"messages\": [...]}: the assistant messages' tool_calls). Exit status 0 when every call "
                    "succeeded or failed by a rule, 3 when one crashed or was invalid, 1 for bad input.")
    replaying.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    replaying.add_argument("--calls", required=True, metavar="FILE", help="the calls to run (format detected)")
    replaying.add_argument("--state", metavar="NAME|FILE", help="initial state: one of the env's states or a state JSON "
                           "file (default: 'default', else the first)")
    replaying.add_argument("--final-state", action="store_true", help="also print the state after the last call")
    replaying.add_argument("--json", action="store_true", help="print the replay as JSON")
    replaying.add_argument("--trusted", action="store_true", help="run the env's code in this process, outside the "
                           "sandbox (reference envs, or code you vouch for)")
    replaying.set_defaults(handler=cmd_replay)

    constraints = commands.add_parser(
        "constraints", parents=[common], help="print constraint specs from tool source; --completeness measures them",
        description="Print the constraint spec that libcst extraction gives for each tool of ENV_ID (no env code is "
                    "run), or with --completeness execute generated calls and compare the spec-only simulator with "
                    "execution. Exit status 4 if the simulator was ever wrong without abstaining.")
    constraints.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. library")
    constraints.add_argument("--json", action="store_true", help="print JSON")
    constraints.add_argument("--completeness", action="store_true",
                             help="measure spec completeness by execution (all envs unless --env; env code runs "
                                  "in the sandbox, except the shipped reference envs)")
    constraints.add_argument("--env", metavar="ENV_ID", help="with --completeness: only this env")
    constraints.add_argument("--seed", type=int, default=0, help="seed of the generated calls (default: 0)")
    constraints.set_defaults(handler=cmd_constraints)

    verify = commands.add_parser(
        "verify", parents=[common], help="run the quality gate on catalog envs (sandboxed property tests)",
        description="Check an environment in sandboxed workers: no crash on typed input, failures change nothing, "
                    "writes stay in the extracted write set, read tools write nothing, determinism, schema "
                    "constraints, reachable guards, tasks unsolved initially and solved by their solution. Each "
                    "failing property comes with a shrunk counterexample. Exit status 5 if an env fails the gate.")
    verify.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. bank")
    verify.add_argument("--all", action="store_true", help="verify every env in the catalog; folders that do not "
                        "read as an env count as failed")
    verify.add_argument("--no-reference", action="store_true", help="with --all: leave out the shipped reference envs")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument("--examples", type=_POSITIVE, default=120, help="hypothesis examples per property (default: 120)")
    verify.add_argument("--seed", type=int, default=0, help="seed of the guard search (default: 0)")
    verify.add_argument("--gate", type=_SHARE, default=0.85, help="score needed to pass (default: 0.85)")
    verify.add_argument("--workers", type=_POSITIVE, default=2, help="sandbox worker processes (default: 2)")
    verify.add_argument("--timeout", type=_SECONDS, default=5.0, help="seconds per call before a worker is killed "
                        "(default: 5)")
    verify.add_argument("--mutants", type=_POSITIVE, metavar="N",
                        help="mutation testing: plant N single bugs in the reference envs (or --env) and report the "
                             "share the gate rejects, survivors and false alarms")
    verify.add_argument("--env", metavar="ENV_ID", help="with --mutants: mutate only this env")
    verify.add_argument("--write-plan", action="store_true",
                        help="capture plan.json from the env's current code (for reviewed, hand-written envs)")
    verify.set_defaults(handler=cmd_verify)

    importer = commands.add_parser(
        "import", parents=[common], help="turn an external environment (four conventions) into a catalog env",
        description=IMPORT_DESCRIPTION)
    _import_arguments(importer)
    importing_env = actions.add_parser("import", parents=[common], help="same as `python cli.py import`",
                                       description=IMPORT_DESCRIPTION)
    _import_arguments(importing_env)

    synth = commands.add_parser(
        "synthesize", parents=[common], help="make new environments with the LangGraph pipeline (offline by default)",
        description="Propose candidate environments (mine topics -> dedup -> plan -> schema -> code -> static checks "
                    "-> initial states -> execute -> tasks -> quality gate -> register) until N are registered. "
                    "Runs are checkpointed in SQLite: Ctrl-C (or a crash) leaves a run that --resume continues. "
                    "Exit status 1 if fewer than N could be registered.")
    synth.add_argument("--n", type=_POSITIVE, help="how many envs to register")
    synth.add_argument("--backend", choices=("procedural", "llm"), default="procedural",
                       help="procedural (no model, the default) or llm (needs --model)")
    synth.add_argument("--model", metavar="NAME", help="registry model for the llm backend, e.g. smollm2-135m")
    synth.add_argument("--mode", choices=("blueprint", "code"), default="blueprint",
                       help="llm backend: the model fills the blueprint (default) or writes the tool code")
    synth.add_argument("--judge-model", metavar="NAME",
                       help="also let this model judge rule conformance in the gate (predicts probed calls' outcomes "
                            "from the rules, without the code; disagreements count against the env)")
    synth.add_argument("--seed", type=int, default=0, help="seed of every choice (default: 0)")
    synth.add_argument("--workers", type=_POSITIVE, default=2, help="worker processes (default: 2)")
    synth.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    synth.add_argument("--report", metavar="DIR", help="where to write report.json/.md and plots (default: the run "
                                                       "folder under <catalog>/.runs)")
    synth.add_argument("--json", action="store_true", help="print the report as JSON (no progress bar)")
    synth.set_defaults(handler=cmd_synthesize)

    models = commands.add_parser("models", parents=[common], help="list the model registry and whether each endpoint "
                                                                 "answers")
    models.add_argument("--json", action="store_true", help="print JSON")
    models.add_argument("--no-probe", action="store_true", help="do not contact the endpoints")
    models.add_argument("--timeout", type=_SECONDS, default=2.0, help="seconds per probe (default: 2)")
    models.set_defaults(handler=cmd_models)

    audit = commands.add_parser(
        "audit-sim", parents=[common], help="measure a simulator against execution (FM/CM per stratum)",
        description="Ask a simulator to predict (observation, state delta) for verified benchmark samples and score "
                    "it against execution: FM, strict CM, EnvSimBench-compatible CM, op-level F1, overall and per "
                    "stratum, with tokens, cost and latency. Results are appended to results.jsonl as they "
                    "arrive; rerunning the same command resumes without asking finished samples again.")
    audit.add_argument("--model", required=True, metavar="NAME",
                       help="`spec` (the spec-only simulator) or a registry model (python cli.py models), e.g. "
                            "local-4b or smollm2-135m")
    audit.add_argument("--mode", choices=("plain", "constrained"), default="plain",
                       help="plain: EnvSimBench-style prompt (code + full state); constrained: doc, tool source, "
                            "constraint spec and the state slice it reads, validated against the spec")
    audit.add_argument("--on-violation", choices=("reask", "project"), default="reask",
                       help="constrained mode: re-ask once listing the violations (default) or project onto the spec")
    audit.add_argument("--bench", metavar="FILE", help="samples: envforge JSONL or EnvSimBench JSON (default: the "
                                                      "catalog's exported samples, <catalog>/.bench/samples.jsonl)")
    audit.add_argument("--limit", type=_POSITIVE, metavar="N", help="audit only N samples (spread over the strata)")
    audit.add_argument("--workers", type=_POSITIVE, default=2, help="concurrent requests (default: 2)")
    audit.add_argument("--out", metavar="DIR", help="results and report folder (default: under <catalog>/.audits)")
    audit.add_argument("--seed", type=int, default=0, help="request seed (default: 0)")
    audit.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_property_flags(audit)
    audit.set_defaults(handler=cmd_audit_sim)

    bench = commands.add_parser("bench", parents=[common], help="export/import verified benchmark samples "
                                                                "(EnvSimBench format, JSONL)")
    bench_actions = bench.add_subparsers(dest="bench_command", metavar="ACTION", required=True)
    export = bench_actions.add_parser(
        "export", parents=[common], help="verified samples from catalog envs, to stratum quotas",
        description="Search the catalog's envs for calls that land in each stratum (failure, no-change by argument "
                    "count, |Δ| 1..12), execute them in the sandbox, re-execute each chosen sample twice (kept only "
                    "if identical), and fill the composition's quotas spread over as many envs as possible. "
                    "Exit status 1 if a quota could not be met.")
    export.add_argument("--n", type=_POSITIVE, help="how many samples (quotas scale; envsimbench is exact at 400)")
    export.add_argument("--composition", default="envsimbench", metavar="envsimbench|uniform|FILE",
                        help="stratum quotas: envsimbench (default), uniform, or a JSON file {bucket: count}")
    export.add_argument("--format", choices=("jsonl", "envsimbench"), default="jsonl",
                        help="jsonl: envforge's own (key-list paths; SFT data is built from it); envsimbench: their "
                             "JSON fields (dotted changes, change_count, env_code)")
    export.add_argument("--out", metavar="FILE", help="output file (default: <catalog>/.bench/samples.jsonl, which "
                                                     "audit-sim reads by default)")
    export.add_argument("--split-by", choices=("env",), help="write FILE.train / FILE.test with disjoint envs")
    export.add_argument("--test-fraction", type=_SHARE, default=0.3, help="with --split-by env (default: 0.3)")
    export.add_argument("--env", action="append", metavar="ENV_ID", help="only these envs (repeatable)")
    export.add_argument("--from-audit", metavar="DIR", help="with --failures: the samples an audit got wrong")
    export.add_argument("--failures", action="store_true", help="with --from-audit")
    export.add_argument("--seed", type=int, default=0, help="seed of the search (default: 0)")
    export.add_argument("--workers", type=_POSITIVE, default=2, help="sandbox workers (default: 2)")
    export.add_argument("--json", action="store_true", help="print the export report as JSON")
    export.set_defaults(handler=cmd_bench_export)
    importing = bench_actions.add_parser("import", parents=[common], help="read EnvSimBench JSON (or envforge "
                                                                          "JSONL) and report unusable samples")
    importing.add_argument("file", metavar="FILE")
    importing.add_argument("--out", metavar="FILE.jsonl", help="also write the usable samples as envforge JSONL")
    importing.add_argument("--json", action="store_true", help="print JSON")
    importing.set_defaults(handler=cmd_bench_import)

    return parser


def _bad_input(message: str) -> int:
    """Print bad input as one line on stderr (however the message was wrapped) and return exit status 1."""
    print(f"envforge: {' '.join(message.split())}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if not hasattr(args, "catalog"):
            args.catalog = None
        if getattr(args, "unsafe_no_isolation", False):
            set_default_isolation("none")
            print("warning: --unsafe-no-isolation: env code runs without the OS sandbox", file=sys.stderr)
        return int(args.handler(args))
    except EnvExists as exc:  # only `import` writes without replacing: name its flag, not the Python keyword
        return _bad_input(f"env {exc.env_id!r} already exists in {exc.root}: pass --replace to overwrite it, or "
                          f"--id to import it under another id")
    except (UserError, CatalogError, StateError, EnvLoadError, CheckError, IsolationUnavailable) as exc:
        return _bad_input(str(exc))
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the user gave cannot be read or written (permissions, a file for a folder)
        return _bad_input(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


if __name__ == "__main__":
    sys.exit(main())
