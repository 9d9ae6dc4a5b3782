"""envforge command line: `python cli.py --help`."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from catalog.errors import EnvforgeError
from catalog.state.jsonable import pretty_json
from catalog.store import ENV_VAR, Catalog, EnvExists
from synth.backends import backend_help, backend_names
from synth.procedural.blueprint import SIZES
from synth.simulators import simulator_help
from verifier.gate.settings import GATE, MUTATION, VERIFY, GateEffort
from sandbox.isolation import set_default_isolation
from sandbox.pool import DEFAULT_TIMEOUT


class UserError(EnvforgeError):
    """An error caused by input; printed without a traceback, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors are bad input like any other: one line and exit status 1 (argparse prints usage, exits 2).

    `epilog_from` builds the epilog only when help is shown (e.g. from a registry that is slow to
    import); `old_form` parses a command's earlier syntax, returning None when the arguments are
    not in it, so existing command lines keep working beside new subcommands.
    """

    def __init__(self, *args: Any, epilog_from: Callable[[], str] | None = None,
                 old_form: Callable[[list[str]], argparse.Namespace | None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epilog_from, self.old_form = epilog_from, old_form

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see: {self.prog} --help)")

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        if self.old_form is not None and args is not None:
            old = self.old_form(list(args))
            if old is not None:
                return old, []
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()


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


def _executor_options(parser: argparse.ArgumentParser, unit: str) -> None:
    """--executor and --ray-address, for the commands whose work units can run on a Ray cluster."""
    group = parser.add_argument_group("scale-out")
    group.add_argument("--executor", choices=("local", "ray"), default="local",
                       help=f"where the {unit} run: local (default; this machine's worker pool) or ray (actors on a "
                            "Ray cluster, needs pip install -e \".[ray]\"); the output files and resume are the same")
    group.add_argument("--ray-address", metavar="auto|ADDRESS",
                       help="with --executor ray: the cluster to join (auto: the one running on this node; "
                            "HOST:PORT or ray://HOST:PORT); default: $RAY_ADDRESS, else a new local instance")


def _executor(args: argparse.Namespace) -> Any:
    """The ExecutorSpec of --executor / --ray-address (an address without ray is bad input).

    An explicit Ray address is probed here, before the command writes anything.
    """
    from executors import ExecutorSpec

    spec = ExecutorSpec(args.executor, args.ray_address)
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    if args.executor == "ray" and address:
        from executors.ray_pool import probe

        probe(address)
    return spec


def _check_out(path: Path | None, flag: str) -> None:
    """An output folder a command will write into must be one it can write, said before any work."""
    from catalog.files import unwritable_folder

    problem = unwritable_folder(path) if path is not None else None
    if problem:
        raise UserError(f"{flag}: {problem}")


def _preflight(*models: str | None) -> None:
    """Check each model the command will call (key set, endpoint answers) before any work; simulators are skipped."""
    from synth.simulators import SIMULATORS

    names = [m for m in models if m and m != "reference" and m not in SIMULATORS]
    if names:
        from synth.llm.preflight import preflight

        preflight(names)


def _print_json(data: Any) -> None:
    print(pretty_json(data))


def _print_lines(lines: Sequence[str]) -> None:
    """Print what a `render_*` function gave, one line each."""
    for line in lines:
        print(line)


def _catalog(args: argparse.Namespace, *, write: bool = False) -> Catalog:
    """The catalog of --catalog / $ENVFORGE_CATALOG; a file there (or, for writers, a read-only folder) is bad input."""
    catalog = Catalog(args.catalog)
    catalog.check_root(write=write)
    return catalog


def cmd_catalog_list(args: argparse.Namespace) -> int:
    from catalog.render import render_env_list

    summaries, problems = _catalog(args).list()
    for problem in problems:
        print(f"warning: skipped {problem.path}: {problem.reason}", file=sys.stderr)
    if args.json:
        _print_json([s.to_dict() for s in summaries])
    else:
        _print_lines(render_env_list(summaries))
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    from catalog.render import env_document, render_env

    handle = _catalog(args).get(args.env_id)
    if args.json:
        _print_json(env_document(handle))
    else:
        _print_lines(render_env(handle))
    return 0


def cmd_catalog_run(args: argparse.Namespace) -> int:
    from catalog.render import call_document, render_call
    from sandbox.session import SandboxRuntime, open_runtime

    handle = _catalog(args).get(args.env_id)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise UserError(f"--args is not valid JSON ({exc}); example: --args '{{\"book_id\": \"B001\"}}'") from exc
    if not isinstance(arguments, dict):
        raise UserError("--args must be a JSON object of argument names to values")
    state_name = args.state or handle.default_state()
    action = {"name": args.tool, "arguments": arguments}
    runtime = open_runtime(handle, trusted=args.trusted)
    try:
        runtime.reset(handle.state(state_name))
        result = runtime.call(action, snapshot=args.show_state)
    except RuntimeError as exc:  # the sandbox could not load or reset the env
        raise UserError(f"{handle.id}: {exc}") from None
    finally:
        if isinstance(runtime, SandboxRuntime):
            runtime.close()
    if args.json:
        _print_json(call_document(handle.id, state_name, action, result, show_state=args.show_state))
    else:
        _print_lines(render_call(handle.id, state_name, action, result, show_state=args.show_state))
    return 0 if result.outcome.value in ("success", "failure") else 3


def cmd_constraints(args: argparse.Namespace) -> int:
    from constraints.completeness import completeness, spec_of
    from constraints.extract import ExtractionError
    from constraints.render import completeness_summary, render_completeness, render_spec, spec_document

    catalog = _catalog(args)
    if args.completeness:
        if args.env_id and args.env:
            raise UserError("give the env either as ENV_ID or with --env, not both")
        ids = [args.env or args.env_id] if (args.env or args.env_id) else [s.id for s in catalog.list()[0]]
        from sandbox.calls import SandboxCallRunner
        from sandbox.pool import SandboxPool

        reports = []
        with SandboxPool(1) as pool:
            for env_id in ids:
                handle = catalog.get(env_id)
                # The shipped reference envs are trusted and run in-process (faster); others in the sandbox.
                runner = None if handle.reference else SandboxCallRunner(handle, pool)
                print(f"measuring {env_id}{'' if handle.reference else ' (sandboxed)'} ...", file=sys.stderr)
                try:
                    reports.append(completeness(handle, seed=args.seed, runner=runner))
                except ExtractionError as exc:
                    raise UserError(f"env {env_id}: {exc}") from exc
        if args.json:
            _print_json(completeness_summary(reports))
        else:
            _print_lines(render_completeness(reports))
        return 0 if all(r["wrong"] == 0 for r in reports) else 4
    if not args.env_id:
        raise UserError("name an env (python cli.py constraints library) or pass --completeness")
    try:
        spec = spec_of(catalog.get(args.env_id))
    except ExtractionError as exc:
        raise UserError(f"env {args.env_id}: {exc}") from exc
    if args.json:
        _print_json(spec_document(spec, args.env_id))
    else:
        _print_lines(render_spec(spec, args.env_id))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from catalog.calls import CallFileError, read_calls
    from verifier.replay import ReplayError, render_replay, replay

    handle = _catalog(args).get(args.env_id)
    try:
        calls = read_calls(Path(args.calls))
    except CallFileError as exc:
        raise UserError(str(exc)) from None
    try:
        result = replay(handle, args.state, calls, trusted=args.trusted, final_state=args.final_state)
    except ReplayError as exc:
        if exc.partial is not None and exc.partial.steps and args.json:
            _print_json(exc.partial.model_dump(mode="json"))
        elif exc.partial is not None and exc.partial.steps:
            _print_lines(render_replay(exc.partial, final_state=False))
        raise UserError(str(exc)) from None
    if args.json:
        _print_json(result.model_dump(mode="json"))
    else:
        _print_lines(render_replay(result, final_state=args.final_state))
    return 0 if result.clean else 3


def cmd_import(args: argparse.Namespace) -> int:
    from catalog.importing.importer import import_env
    from catalog.names import check_env_id
    from catalog.render import import_document, render_import
    from sandbox.loadcheck import sandbox_load_check

    if args.id is not None:
        check_env_id(args.id)  # before the catalog folder is created
    report = import_env(Path(args.path), _catalog(args, write=True), class_name=args.class_name,
                        configs=[Path(c) for c in args.config or []], env_id=args.id, replace=args.replace,
                        check=None if args.trusted else sandbox_load_check, convention=args.convention,
                        package_root=Path(args.package_root) if args.package_root else None,
                        allow_modules=args.allow_module or [], failure_exceptions=args.failure_exception or [],
                        error_prefixes=args.error_prefix or [])
    if report.optional_missing:
        print(f"warning: optional imports not installed (the module's fallback is used): "
              f"{', '.join(report.optional_missing)}", file=sys.stderr)
    if args.json:
        _print_json(import_document(report))
    else:
        _print_lines(render_import(report))
    return 0


def cmd_verify_gate(args: argparse.Namespace) -> int:
    from verifier.gate.run import verify_env, verify_envs
    from verifier.gate.report import GateReport, broken_env_report, render_gate_report
    from sandbox.pool import SandboxPool

    catalog = _catalog(args)
    if args.all == bool(args.env_id):
        raise UserError("name one env (python cli.py verify gate library) or pass --all")
    executor = _executor(args)
    if not args.all and not executor.is_local:
        raise UserError("--executor ray spreads the envs of --all over a cluster; one env runs on this machine")
    if args.no_reference:
        catalog.include_reference = False
    summaries, broken = catalog.list() if args.all else ([], [])
    reports = [broken_env_report(problem.path.name, problem.reason, args.gate) for problem in broken]
    for report in reports:
        print(f"broken env folder {report.env}: {report.checks[0].detail}", file=sys.stderr)
    if args.all:  # one env per unit, side by side on the executor's workers

        def verified(report: GateReport) -> None:
            print(f"verified {report.env}: score {report.score:.2f}, {'passed' if report.passed else 'FAILED'}",
                  file=sys.stderr)

        reports += verify_envs(catalog, [s.id for s in summaries], executor=executor, workers=args.workers,
                               examples=args.examples, seed=args.seed, gate=args.gate, timeout=args.timeout,
                               progress=verified)
    else:
        with SandboxPool(args.workers, timeout=args.timeout) as pool:
            print(f"verifying {args.env_id} ...", file=sys.stderr)
            reports.append(verify_env(catalog.get(args.env_id), pool, examples=args.examples, seed=args.seed,
                                      gate=args.gate))
    if args.json:
        _print_json(reports[0].to_dict() if len(reports) == 1 and not args.all else [r.to_dict() for r in reports])
    else:
        for report in reports:
            print(render_gate_report(report))
    return 0 if all(r.passed for r in reports) else 5


def cmd_verify_mutants(args: argparse.Namespace) -> int:
    from verifier.gate.mutation import mutation_test, render_mutation_report
    from sandbox.pool import SandboxPool

    catalog = _catalog(args)
    ids = [args.env] if args.env else [s.id for s in catalog.list()[0] if s.reference]
    handles = [catalog.get(env_id) for env_id in ids]
    print(f"mutation testing the gate on {', '.join(ids)} ...", file=sys.stderr)
    with SandboxPool(args.workers, timeout=args.timeout) as pool:
        report = mutation_test(handles, args.count, pool, seed=args.seed, examples=args.examples)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(render_mutation_report(report))
    return 0


def cmd_verify_write_plan(args: argparse.Namespace) -> int:
    from constraints.completeness import spec_of
    from verifier.gate.intent import plan_from_spec, write_plan

    handle = _catalog(args).get(args.env_id)
    plan = plan_from_spec(spec_of(handle), handle.id, "captured from reviewed code")
    write_plan(handle.path, plan)
    print(f"Wrote {handle.path / 'plan.json'}: {len(plan.rules)} rules, {len(plan.tools)} tools. It records the "
          "code's current guards and effects as the intent: review it, since later code is checked against it.")
    return 0


def cmd_synthesize(args: argparse.Namespace) -> int:
    from synth.backends import backend_for, resolve_models
    from synth.run_config import RunConfig, read_run_config, runs_dir

    if args.resume is None and args.n is None:
        raise UserError("give --n N (how many envs to register), or --resume RUN_ID")
    executor = _executor(args)
    root = str(_catalog(args, write=True).root)
    config = RunConfig(n=args.n or 0, backend=backend_for(args.backend, args.model), model=args.model,
                       mode=args.mode, seed=args.seed, workers=args.workers, catalog=root,
                       judge_model=args.judge_model, size=args.size)
    models = resolve_models(read_run_config(Path(root), args.resume) if args.resume else config)  # names, once
    _check_out(Path(args.report) if args.report else None, "--report")
    from synth.llm.preflight import preflight
    preflight(e.spec for e in (models.generator, models.judge) if e is not None)
    # the pipeline (LangGraph, the report's plotting) loads only once the arguments are known to be good
    from synth.report import render_skipped, render_summary
    from synth.run import synthesize
    try:
        report = synthesize(config, resume=args.resume, progress=None if not args.json else False,
                            report_dir=Path(args.report) if args.report else None, models=models,
                            executor=executor)
    except KeyboardInterrupt as exc:
        if not exc.args:  # before the driver started (e.g. waiting for the catalog lock): no slot ran
            print("\ninterrupted before any env was registered", file=sys.stderr)
            return 130
        print(f"\ninterrupted; finished envs are kept. Continue with: python cli.py synthesize --resume {exc.args[0]}"
              + (f" --catalog {root}" if args.catalog else ""), file=sys.stderr)
        return 130
    note = render_skipped(report)
    if note:
        print(note, file=sys.stderr)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(render_summary(report, Path(args.report) if args.report else runs_dir(Path(root)) / report.run_id))
    return 0 if report.registered == report.requested else 1


def cmd_models(args: argparse.Namespace) -> int:
    from synth.llm import load_registry
    from synth.llm.table import model_rows, render_models

    rows = model_rows(load_registry(), probe_endpoints=not args.no_probe, timeout=args.timeout)
    if args.json:
        _print_json([row.to_dict() for row in rows])
    elif rows:
        print(render_models(rows))
    return 0


def cmd_catalog_search(args: argparse.Namespace) -> int:
    from catalog.render import render_search_hits
    from catalog.search.index import search_catalog

    hits = search_catalog(_catalog(args), args.query, args.k)
    if args.json:
        _print_json(hits)
    else:
        _print_lines(render_search_hits(hits))
    return 0


def _load_bench(path: Path) -> list[Any]:
    """Benchmark items from envforge JSONL or EnvSimBench JSON; unusable samples are reported, not fatal."""
    from catalog.bench.envsimbench import read_envsimbench, read_jsonl

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


class _ProgressLine:
    """One progress line rewritten in place on stderr: shown on a terminal only, never with --json."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.shown = sys.stderr.isatty() and not getattr(args, "json", False)

    def show(self, text: str) -> None:
        if self.shown:
            sys.stderr.write(f"\r{text}   ")
            sys.stderr.flush()

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _default_bench(args: argparse.Namespace, *, write: bool = False) -> Path:
    """The catalog's exported samples (`bench export` writes them there by default)."""
    return Path(_catalog(args, write=write).root) / ".bench" / "samples.jsonl"


def _export_default_bench(args: argparse.Namespace, bench: Path) -> None:
    """Export the default samples a fresh catalog lacks (what `bench export --n 400` does), saying so in one line."""
    from catalog.bench.envsimbench import write_jsonl
    from verifier.samples.compositions import Composition

    print(f"no exported samples yet: exporting the default set (envsimbench, 400 samples) to {bench} first",
          file=sys.stderr)
    result = _export_with_progress(args, Composition.envsimbench(400), seed=0)
    bench.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(result.items, bench)


def _export_with_progress(args: argparse.Namespace, composition: Any, *, seed: int, workers: int | None = None,
                          env_ids: list[str] | None = None, executor: Any = None) -> Any:
    """verifier.samples.export.export_samples with its progress on stderr (a terminal only, never with --json)."""
    from verifier.samples.export import export_samples

    line = _ProgressLine(args)
    try:
        return export_samples(_catalog(args), composition, seed=seed,
                              progress=lambda stage, done, total: line.show(f"{stage}: {done}/{total}"),
                              **({"workers": workers} if workers else {}), env_ids=env_ids, executor=executor)
    finally:
        line.end()


def cmd_audit_sim(args: argparse.Namespace) -> int:
    from synth.simulation import open_simulator, recipe_for
    from synth.simulators import audit_label
    from verifier.audit.run import render_summary, run_audit

    if args.property_based:
        return _cmd_property_audit(args)
    executor = _executor(args)
    _check_out(Path(args.out) if args.out else None, "--out")
    _preflight(args.model)  # before the default export, which takes minutes
    bench = Path(args.bench) if args.bench else _default_bench(args)
    if not args.bench and not bench.is_file():
        _export_default_bench(args, bench)
    items = _load_bench(bench)
    digest = hashlib.sha256(bench.read_bytes()).hexdigest()[:8]
    out = Path(args.out) if args.out else Path(_catalog(args, write=True).root) / ".audits" / (
        f"{audit_label(args.model, args.mode)}-{bench.stem}-{digest}")
    line = _ProgressLine(args)

    def progress(done: int, total: int, record: dict[str, Any] | None) -> None:
        line.show(f"{done}/{total} samples audited")

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_audit(items, simulator, out, workers=args.workers, limit=args.limit, progress=progress,
                               executor=executor, recipe=None if executor.is_local else recipe_for(simulator))
    except ValueError as exc:  # a bad mode or policy (unknown models, unreachable endpoints, aborted audits
        raise UserError(str(exc)) from exc  # are EnvforgeErrors: main prints them)
    except KeyboardInterrupt:
        print(f"\ninterrupted; answered samples are kept in {out}/results.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        line.end()
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(render_summary(report))
    print(f"report: {out / 'report.md'} (+ report.json, results.jsonl, plots)")
    return 0


def cmd_rollout(args: argparse.Namespace) -> int:
    """`rollout`: the CLI builds the agent and the simulator, synth.rollout runs, records and reports."""
    from contextlib import ExitStack

    from synth.llm import open_client
    from synth.rollout import (
        ModelAgent,
        ModelAgentFactory,
        RolloutConfig,
        build_report,
        json_summary,
        plan_units,
        reference_agent,
        render_summary,
        run_rollouts,
        write_report,
    )
    from synth.simulation import open_simulator, recipe_for
    from synth.simulators import SIMULATORS

    executor = _executor(args)
    if bool(args.env) == bool(args.all):
        raise UserError("give --env ID (repeatable) or --all")
    catalog = _catalog(args)
    units, skipped = plan_units(catalog, None if args.all else args.env, args.task)
    if not units:
        raise UserError(f"nothing to roll out: {'the catalog has' if args.all else ', '.join(args.env) + ' has'} no "
                        f"task{' ' + repr(args.task) if args.task else 's'}")
    for env_id in skipped:
        print(f"note: {env_id} has no task{' ' + repr(args.task) if args.task else ''}: not rolled out", file=sys.stderr)
    _check_out(Path(args.out), "--out")
    _preflight(args.model, args.simulator)
    sim_mode = args.sim_mode if args.simulator and args.simulator not in SIMULATORS else None
    config = RolloutConfig(model=args.model, simulator=args.simulator, sim_mode=sim_mode, max_steps=args.max_steps,
                           max_tokens=args.max_tokens, seed=args.seed)
    out = Path(args.out)
    line = _ProgressLine(args)
    try:
        with ExitStack() as stack:
            simulator = stack.enter_context(open_simulator(args.simulator, sim_mode or "plain", seed=args.seed)) \
                if args.simulator else None
            if args.model == "reference":
                factory = reference_agent
            else:
                client = stack.enter_context(open_client(args.model, seed=args.seed, timeout=args.timeout))
                factory = lambda unit, handle: ModelAgent(client, max_tokens=config.max_tokens)  # noqa: E731
                if not executor.is_local:  # workers open their own client to the endpoint the driver reaches
                    factory = ModelAgentFactory.of(client, max_tokens=config.max_tokens)
            recipe = recipe_for(simulator) if simulator is not None and not executor.is_local else None
            result = run_rollouts(catalog, units, config, out, agent_factory=factory, simulator=simulator,
                                  concurrency=args.concurrency, executor=executor, simulator_recipe=recipe,
                                  progress=lambda done, total, _t: line.show(f"{done}/{total} episodes"))
    except KeyboardInterrupt:
        print(f"\ninterrupted; finished trajectories are kept in {out / 'trajectories.jsonl'}: rerun the same command "
              "to resume", file=sys.stderr)
        return 130
    finally:
        line.end()
    report = write_report(build_report(result.trajectories, model=args.model, simulator=args.simulator,
                                       errors=result.errors), out)
    if result.errors:
        print(f"warning: {len(result.errors)} episode(s) could not run; rerun to retry (see {out / 'report.md'})",
              file=sys.stderr)
    ran = bool(result.trajectories) or not result.errors  # every episode failed: the run is not a success
    if args.json:
        _print_json(json_summary(report))
    else:
        print(render_summary(report))
        print(f"trajectories: {out / 'trajectories.jsonl'}; report: {out / 'report.md'} (+ report.json, rollouts.png)")
    return 0 if ran else 1


def _add_property_flags(audit: argparse.ArgumentParser) -> None:
    group = audit.add_argument_group("property-based audit")
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
    from synth.simulation import open_simulator
    from synth.simulators import audit_label
    from verifier.simaudit import Budget, PropertyAudit, property_summary, render_summary, run_property_audit

    if args.env and args.all:
        raise UserError("give --env ID or --all, not both")
    if not _executor(args).is_local:  # one budget and one answer cache span every env: no per-env units to farm out
        raise UserError("audit-sim --property-based runs on this machine only (its search shares one call budget and "
                        "one answer cache across envs); drop --executor ray, or audit exported samples on Ray "
                        "(audit-sim without --property-based)")
    out = Path(args.out) if args.out else Path(_catalog(args, write=True).root) / ".audits" / (
        f"{audit_label(args.model, args.mode)}-properties-s{args.seed}")
    _check_out(out, "--out")
    _preflight(args.model)
    audit = PropertyAudit(env_ids=args.env, budget=Budget(calls=args.budget, tokens=args.max_tokens), seed=args.seed)
    line = _ProgressLine(args)

    def progress(env: str, done: int, total: int) -> None:
        line.show(f"{done}/{total} envs searched {env}")

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_property_audit(_catalog(args), simulator, out, audit, progress=progress)
    except ValueError as exc:  # a bad mode or policy; the other errors are EnvforgeErrors main prints
        raise UserError(str(exc)) from exc
    except KeyboardInterrupt:
        print(f"\ninterrupted; answers are kept in {out}/answers.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        line.end()
    if args.json:
        _print_json(property_summary(report))
        return 0
    print(render_summary(report))
    print(f"report: {out / 'report.md'} (+ report.json, counterexamples.jsonl, answers.jsonl)")
    return 0


def _write_items(items: list[Any], path: Path, fmt: str) -> int:
    from catalog.bench.envsimbench import write_envsimbench, write_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(items, path) if fmt == "jsonl" else write_envsimbench(items, path)


def _split_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(f"{out.stem}.train{out.suffix}"), out.with_name(f"{out.stem}.test{out.suffix}")


def cmd_bench_export(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import split_by_env
    from verifier.samples.compositions import Composition, CompositionError
    from verifier.samples.report import ExportReport, FailuresReport, render_export_report, render_written
    from verifier.samples.export import export_failures
    from verifier.simaudit.export import is_property_audit, load_counterexamples

    fmt = args.format
    suffix = ".jsonl" if fmt == "jsonl" else ".json"
    out = Path(args.out) if args.out else _default_bench(args, write=True).with_suffix(suffix)
    report: ExportReport | FailuresReport
    if args.from_audit:
        if not args.failures:
            raise UserError("--from-audit needs --failures (the steps the audited simulator got wrong)")
        try:
            audit_dir = Path(args.from_audit)  # a property audit's are its minimal counterexamples
            items = load_counterexamples(audit_dir) if is_property_audit(audit_dir) else export_failures(audit_dir)
        except FileNotFoundError as exc:
            raise UserError(f"{args.from_audit}: no audit results there ({exc})") from exc
        report = FailuresReport(from_audit=args.from_audit, failures=len(items))
    else:
        if args.n is None:
            raise UserError("give --n N (how many samples), or --from-audit DIR --failures")
        try:
            composition = Composition.parse(args.composition, args.n)
        except CompositionError as exc:
            raise UserError(str(exc)) from exc
        result = _export_with_progress(args, composition, seed=args.seed, workers=args.workers,
                                       env_ids=args.env or None, executor=_executor(args))
        items, report = result.items, result.report
    written = {}
    if args.split_by == "env":
        train, test = split_by_env(items, test_fraction=args.test_fraction, seed=args.seed)
        for part, path in zip((train, test), _split_paths(out), strict=True):
            written[str(path)] = _write_items(part, path, fmt)
    else:
        written[str(out)] = _write_items(items, out, fmt)
    report.written = written
    if args.json:
        _print_json(report.to_dict())
    else:
        if isinstance(report, ExportReport):
            print(render_export_report(report))
        print(render_written(written, fmt))
    return 0 if report.quotas_met else 1


def cmd_bench_import(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import read_envsimbench, read_jsonl

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


def cmd_serve(args: argparse.Namespace) -> int:
    from serving.http_auth import TOKEN_ENV
    from serving.mcp_server import ServeConfig, serve

    if bool(args.env_id) == bool(args.all):
        raise UserError("name one env to serve, or --all (python cli.py serve ENV_ID | --all)")
    if args.all and (args.state or args.task):
        raise UserError("with --all each session picks its env, state and task: the endpoint's ?env=&state=&task= "
                        "or the reset tool's arguments, not --state/--task")
    door, generated = _serve_door(args)
    config = ServeConfig(_catalog(args), None if args.all else args.env_id, args.state, args.task,
                         True if args.trusted else None, **({"door": door} if door is not None else {}))
    config.check()

    def ready(url: str) -> None:
        assert door is not None
        access = "no auth" if door.open else f"bearer token required, {len(door.tokens)} configured"
        idle = f"idle sessions closed after {door.idle_timeout:g} s" if door.idle_timeout else "no idle timeout"
        print(f"envforge: serving {args.env_id or 'the catalog'} over MCP at {url}"
              + ("?env=ENV_ID" if args.all else "") + f" ({access}; at most {door.max_sessions} sessions; {idle})",
              file=sys.stderr)
        if generated:
            print(f"envforge: token (generated; choose one with --token or {TOKEN_ENV}): {door.tokens[0]} "
                  f"- send it as the header 'Authorization: Bearer {door.tokens[0]}'", file=sys.stderr)

    serve(config, args.transport, host=args.host, port=args.port, ready=ready)
    return 0


def _serve_door(args: argparse.Namespace) -> tuple[Any, bool]:
    """The HTTP door from --token (else ENVFORGE_SERVE_TOKEN, else one generated), --no-auth and the limits.

    Returns (door or None for stdio, whether the token was generated and must be shown).
    """
    import os

    from serving.http_auth import (
        DEFAULT_IDLE_TIMEOUT,
        TOKEN_ENV,
        HttpDoor,
        default_max_sessions,
        new_token,
        parse_tokens,
    )

    http_only = {"--token": args.token, "--no-auth": args.no_auth, "--max-sessions": args.max_sessions,
                 "--idle-timeout": args.idle_timeout}
    if args.transport != "http":
        given = [flag for flag, value in http_only.items() if value not in (None, False)]
        if given:
            raise UserError(f"{', '.join(given)}: only with --transport http (stdio has one client, the process "
                            f"that started the server)")
        return None, False
    if args.no_auth and args.token:
        raise UserError("--no-auth and --token exclude each other")
    tokens = () if args.no_auth else tuple(args.token or ()) or parse_tokens(os.environ.get(TOKEN_ENV, ""))
    generated = not args.no_auth and not tokens
    door = HttpDoor((new_token(),) if generated else tokens,
                    default_max_sessions() if args.max_sessions is None else args.max_sessions,
                    DEFAULT_IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout)
    return door, generated


def _serve_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    serving = commands.add_parser(
        "serve", parents=[common], help="serve an env (or the catalog) to agents over MCP, one instance per session",
        description="Serve ENV_ID over MCP (the official SDK) on stdio or streamable HTTP: each MCP session gets its "
                    "own env instance with the env's tools, a reset tool and the task instruction as a prompt; tool "
                    "errors come back as MCP tool errors. With --all every catalog env is served and each session "
                    "picks one (HTTP: /mcp?env=ENV_ID[&state=S&task=T]; any transport: reset's env argument). "
                    "Reference envs run in the server's process, other envs in sandbox workers. HTTP requests "
                    "need 'Authorization: Bearer TOKEN' (--token, else ENVFORGE_SERVE_TOKEN, else a generated token "
                    "printed at start); a session answers only the token that created it.")
    serving.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. library")
    serving.add_argument("--all", action="store_true", help="serve every catalog env, chosen per session")
    serving.add_argument("--state", metavar="NAME", help="initial state (default: the task's, else the env's default)")
    serving.add_argument("--task", metavar="TASK_ID", help="the task each session starts on (its instruction is the "
                         "'task' prompt; the check's verdict is in each result's _meta)")
    serving.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                         help="stdio (default; one session) or streamable HTTP (many sessions) at /mcp")
    serving.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on (default: 127.0.0.1)")
    serving.add_argument("--port", type=_count(0), default=8000, help="HTTP: port, 0 for any free one (default: 8000)")
    serving.add_argument("--token", action="append", metavar="TOKEN", help="HTTP: a bearer token clients must send "
                         "(repeatable: one per client, each sees only its own sessions; other users see it in ps, so "
                         "prefer ENVFORGE_SERVE_TOKEN, comma-separated; default: one generated and printed)")
    serving.add_argument("--no-auth", action="store_true", help="HTTP: no token (only with a loopback --host: "
                         "anyone on this machine can then drive the sessions)")
    serving.add_argument("--max-sessions", type=_count(1), metavar="N", help="HTTP: sessions open at once; more are "
                         "refused with HTTP 503 (default: MemAvailable / 100 MiB, one sandboxed session each)")
    serving.add_argument("--idle-timeout", type=_number(0, inclusive=True), metavar="SECONDS",
                         help="HTTP: close a session after this long without a request, its env closed and its "
                              "slot freed (default: 900; 0: never)")
    serving.add_argument("--trusted", action="store_true", help="run every env's code in the server's process, "
                         "outside the sandbox (only for code you vouch for)")
    serving.set_defaults(handler=cmd_serve)


VERIFY_ACTIONS = ("gate", "mutants", "write-plan")


def _checks_epilog() -> str:
    """The registered checks, read when help is shown (registering them imports the property suite)."""
    import verifier.gate.properties  # noqa: F401 - registers the suite's checks
    from verifier.gate.checks import describe

    return "checks (name, severity, meaning), in the order they run:\n" + describe()


def _sandbox_options(parser: argparse.ArgumentParser, effort: GateEffort) -> None:
    """Options of the verb's actions that run the gate in sandbox workers."""
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--examples", type=_POSITIVE, default=effort.examples,
                        help=f"hypothesis examples per property (default: {effort.examples})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the guard search (default: 0)")
    parser.add_argument("--workers", type=_POSITIVE, default=2, help="sandbox worker processes (default: 2); with --all, envs checked side by side, one worker each")
    parser.add_argument("--timeout", type=_SECONDS, default=DEFAULT_TIMEOUT, help="seconds per call before a worker "
                        f"is killed (default: {DEFAULT_TIMEOUT:g})")


def _old_verify_form(args: list[str], common: argparse.ArgumentParser) -> argparse.Namespace | None:
    """Parse the forms `verify` had before its actions; None if `args` use an action (or ask for help).

    They are `verify ENV_ID|--all [...]`, `verify --mutants N [--env ENV_ID]` and `verify ENV_ID --write-plan`.
    """
    old = _Parser(prog="python cli.py verify", add_help=False, parents=[common])
    old.add_argument("env_id", nargs="?")
    old.add_argument("--all", action="store_true")
    old.add_argument("--no-reference", action="store_true")
    old.add_argument("--gate", type=_SHARE, default=GATE)
    _executor_options(old, "envs (with --all)")
    _sandbox_options(old, VERIFY)
    old.add_argument("--mutants", type=_POSITIVE)
    old.add_argument("--env")
    old.add_argument("--write-plan", action="store_true")
    parsed, rest = old.parse_known_args(args)
    if rest or parsed.env_id in VERIFY_ACTIONS:
        return None
    if parsed.mutants is not None:  # the old form took the env as ENV_ID or --env, and capped --examples
        parsed.verify_command, parsed.handler = "mutants", cmd_verify_mutants
        parsed.count, parsed.env = parsed.mutants, parsed.env or parsed.env_id
        parsed.examples = min(parsed.examples, MUTATION.examples)
        return parsed
    if parsed.write_plan:
        if not parsed.env_id:
            raise UserError("name one env: python cli.py verify write-plan ENV_ID")
        parsed.verify_command, parsed.handler = "write-plan", cmd_verify_write_plan
        return parsed
    parsed.verify_command, parsed.handler = "gate", cmd_verify_gate
    return parsed


def _verify_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    verify = commands.add_parser(
        "verify", parents=[common], help="run the quality gate on catalog envs (sandboxed property tests)",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog_from=_checks_epilog,
        old_form=functools.partial(_old_verify_form, common=common),
        description="Check environments in sandboxed workers (gate), measure how many planted bugs the gate\n"
                    "catches (mutants), or capture an env's plan from reviewed code (write-plan). Each failing\n"
                    "property comes with a shrunk counterexample. The forms before these actions still work:\n"
                    "verify ENV_ID|--all [...], verify --mutants N [--env ENV_ID], verify ENV_ID --write-plan.")
    actions = verify.add_subparsers(dest="verify_command", metavar="ACTION", required=True)
    gate = actions.add_parser(
        "gate", parents=[common], help="score envs on every check; exit status 5 if one fails the gate",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog_from=_checks_epilog,
        description="Run every registered check on ENV_ID (or every env) in sandboxed workers and score it: an env\n"
                    "passes with a score >= --gate and no critical check failed. Exit status 5 if an env fails.")
    gate.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. bank")
    gate.add_argument("--all", action="store_true", help="verify every env in the catalog; folders that do not "
                      "read as an env count as failed")
    gate.add_argument("--no-reference", action="store_true", help="with --all: leave out the shipped reference envs")
    gate.add_argument("--gate", type=_SHARE, default=GATE, help=f"score needed to pass (default: {GATE})")
    _executor_options(gate, "envs (with --all)")
    _sandbox_options(gate, VERIFY)
    gate.set_defaults(handler=cmd_verify_gate)
    mutants = actions.add_parser(
        "mutants", parents=[common], help="plant N single bugs in the reference envs (or --env); report the share "
                                          "the gate rejects, survivors and false alarms")
    mutants.add_argument("count", metavar="N", type=_POSITIVE, help="how many mutants, e.g. 200")
    mutants.add_argument("--env", metavar="ENV_ID", help="mutate only this env (default: the reference envs)")
    _sandbox_options(mutants, MUTATION)
    mutants.set_defaults(handler=cmd_verify_mutants)
    plan = actions.add_parser("write-plan", parents=[common], help="capture plan.json from the env's current code "
                                                                   "(for reviewed, hand-written envs)")
    plan.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. bank")
    plan.set_defaults(handler=cmd_verify_write_plan)


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

    _verify_parser(commands, common)
    _serve_parser(commands, common)

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
    synth.add_argument("--backend", choices=backend_names(), default=backend_names()[0],
                       help=f"generator backend (default: {backend_names()[0]}): {backend_help()}")
    synth.add_argument("--model", metavar="NAME", help="registry model for the llm backend, e.g. smollm2-135m")
    synth.add_argument("--mode", choices=("blueprint", "code"), default="blueprint",
                       help="llm backend: the model fills the blueprint (default) or writes the tool code")
    synth.add_argument("--judge-model", metavar="NAME",
                       help="also let this model judge rule conformance in the gate (predicts probed calls' outcomes "
                            "from the rules, without the code; disagreements count against the env)")
    synth.add_argument("--seed", type=int, default=0, help="seed of every choice (default: 0)")
    synth.add_argument("--workers", type=_POSITIVE, default=2, help="worker processes (default: 2)")
    _executor_options(synth, "slots (each candidate env's pipeline after dedup)")
    synth.add_argument("--size", choices=tuple(SIZES), default="medium",
                       help="env size: " + "; ".join(f"{name} {c.tables[0]}-{c.tables[1]} tables, {c.tools[0]}-"
                                                     f"{c.tools[1]} tools, >= {c.min_rows} seed rows per state"
                                                     for name, c in SIZES.items()) + " (default: medium)")
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
                       help=f"the simulator: {simulator_help()}")
    audit.add_argument("--mode", choices=("plain", "constrained"), default="plain",
                       help="plain: EnvSimBench-style prompt (code + full state); constrained: doc, tool source, "
                            "constraint spec and the state slice it reads, validated against the spec")
    audit.add_argument("--on-violation", choices=("reask", "project"), default="reask",
                       help="constrained mode: re-ask once listing the violations (default) or project onto the spec")
    audit.add_argument("--bench", metavar="FILE", help="samples: envforge JSONL or EnvSimBench JSON (default: the "
                                                      "catalog's exported samples, <catalog>/.bench/samples.jsonl)")
    audit.add_argument("--limit", type=_POSITIVE, metavar="N", help="audit only N samples (spread over the strata)")
    audit.add_argument("--workers", type=_POSITIVE, default=2, help="concurrent requests (default: 2)")
    _executor_options(audit, "samples' predictions")
    audit.add_argument("--out", metavar="DIR", help="results and report folder (default: under <catalog>/.audits)")
    audit.add_argument("--seed", type=int, default=0, help="request seed (default: 0)")
    audit.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_property_flags(audit)
    audit.set_defaults(handler=cmd_audit_sim)

    rollout = commands.add_parser(
        "rollout", parents=[common], help="roll out an agent (a registry model, or `reference`) on catalog tasks",
        description="Run an agent on each task of the chosen envs, each episode on its own env instance: the task "
                    "instruction is the user message, the env's tools the model's tools (native tool calling, or a "
                    "JSON-schema fallback where the registry says the endpoint has none), the reward the task's "
                    "check. Trajectories (OpenAI messages and tools, per-step outcome and delta, reward, usage, "
                    "cost) are appended to DIR/trajectories.jsonl as they finish; rerunning the same command "
                    "resumes. DIR/report.json, report.md and rollouts.png give success per env and per solution "
                    "length, steps, tokens, cost and latency. With --simulator every call is answered by the "
                    "simulator and also executed on the env from the same state: each step and trajectory is "
                    "marked verified or diverged.")
    rollout.add_argument("--model", required=True, metavar="NAME",
                         help="`reference` (follows each task's reference solution: gold trajectories, no model) or "
                              "a registry model (python cli.py models), e.g. gpt-4o-mini or smollm2-135m")
    rollout.add_argument("--env", action="append", metavar="ID", help="roll out this env's tasks (repeatable)")
    rollout.add_argument("--all", action="store_true", help="every env of the catalog (reference envs included)")
    rollout.add_argument("--task", metavar="ID", help="only this task")
    rollout.add_argument("--max-steps", type=_POSITIVE, default=20, help="tool calls per episode (default: 20)")
    rollout.add_argument("--concurrency", type=_POSITIVE, default=2, help="episodes at once (default: 2)")
    _executor_options(rollout, "episodes")
    rollout.add_argument("--simulator", metavar="NAME", help=f"answer calls with a simulator, checked against the env: "
                                                             f"{simulator_help()}")
    rollout.add_argument("--sim-mode", choices=("plain", "constrained"), default="plain",
                         help="prompt mode of an LLM simulator (default: plain)")
    rollout.add_argument("--max-tokens", type=_POSITIVE, metavar="N", help="cap on each model reply (default: the "
                                                                           "registry's max_output_tokens)")
    rollout.add_argument("--timeout", type=_SECONDS, default=120.0, help="seconds per model request (default: 120)")
    rollout.add_argument("--seed", type=int, default=0, help="seed of resets and model requests (default: 0)")
    rollout.add_argument("--out", required=True, metavar="DIR", help="trajectories and report folder")
    rollout.add_argument("--json", action="store_true", help='print {"model", "trajectories", "success_rate", '
                                                            '"verified" (with --simulator), "tokens_in", "tokens_out", '
                                                            '"cost_usd"}')
    rollout.set_defaults(handler=cmd_rollout)

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
    _executor_options(export, "sandbox jobs")
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
    except EnvforgeError as exc:  # every error a user can fix: one line, exit status 1
        return _bad_input(str(exc))
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the user gave cannot be read or written (permissions, a file for a folder)
        return _bad_input(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


if __name__ == "__main__":
    sys.exit(main())
