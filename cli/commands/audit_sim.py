"""`audit-sim`: a simulator measured against execution, on exported samples or property-based."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from catalog.runs.progress import Progress, cost_note
from catalog.usage import Usage
from cli.arguments import POSITIVE
from cli.common import check_models, check_out, open_catalog
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from cli.samples import default_bench, export_with_progress, load_bench
from synth.simulators import simulator_help


def _export_default_bench(args: argparse.Namespace, bench: Path) -> None:
    """Export the default samples a fresh catalog lacks (what `bench export --n 400` does), saying so in one line."""
    from catalog.bench.envsimbench import write_jsonl
    from verifier.samples.compositions import Composition

    print(f"no exported samples yet: exporting the default set (envsimbench, 400 samples) to {bench} first",
          file=sys.stderr)
    result = export_with_progress(args, Composition.envsimbench(400), seed=0)
    bench.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(result.items, bench)


def cmd_audit_sim(args: argparse.Namespace) -> int:
    from synth.simulation import open_simulator
    from synth.simulators import audit_label
    from verifier.audit.run import render_summary, run_audit

    if args.property_based:
        return _cmd_property_audit(args)
    executor = executor_spec(args)
    check_out(Path(args.out) if args.out else None, "--out")
    check_models(args.model)  # before the default export, which takes minutes
    bench = Path(args.bench) if args.bench else default_bench(args)
    if not args.bench and not bench.is_file():
        _export_default_bench(args, bench)
    items = load_bench(bench)
    digest = hashlib.sha256(bench.read_bytes()).hexdigest()[:8]
    out = Path(args.out) if args.out else Path(open_catalog(args, write=True).root) / ".audits" / (
        f"{audit_label(args.model, args.mode)}-{bench.stem}-{digest}")
    line = Progress("audit-sim", unit="samples")
    spent = Usage()  # this run's answers: what the samples left will cost at their rate

    def progress(done: int, total: int, record: dict[str, Any] | None) -> None:
        if record is not None:
            spent.calls += 1
            spent.cost_usd += record["cost_usd"]
            spent.tokens_in += record["tokens_in"]
            spent.tokens_out += record["tokens_out"]
        line.update(done, total=total, note=cost_note(spent.cost_usd, spent.tokens_in + spent.tokens_out, spent.calls,
                                                      total - done))

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_audit(items, simulator, out, workers=args.workers, limit=args.limit, progress=progress,
                               executor=executor)
    except ValueError as exc:  # a bad mode or policy (unknown models, unreachable endpoints, aborted audits
        raise UserError(str(exc)) from exc  # are EnvforgeErrors: main prints them)
    except KeyboardInterrupt:
        print(f"\ninterrupted; answered samples are kept in {out}/results.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        line.close()
    if args.json:
        print_json(report.model_dump(mode="json"))
        return 0
    print(render_summary(report))
    print(f"report: {out / 'report.md'} (+ report.json, results.jsonl, plots)")
    return 0


def _add_property_flags(audit: argparse.ArgumentParser) -> None:
    group = audit.add_argument_group("property-based audit")
    group.add_argument("--property-based", action="store_true",
                       help="generate inputs with hypothesis (states reached by real calls, typed and boundary "
                            "arguments), judge each answer by execution and by properties every correct simulator "
                            "has, shrink violations to minimal counterexamples; resumes from --out")
    group.add_argument("--env", action="append", metavar="ID", help="with --property-based: audit this env "
                                                                     "(repeatable; default: every catalog env)")
    group.add_argument("--all", action="store_true", help="with --property-based: every catalog env (the default)")
    group.add_argument("--budget", type=POSITIVE, metavar="CALLS",
                       help="with --property-based: most model calls, shrinking included (default: no limit), e.g. 500")
    group.add_argument("--max-tokens", type=POSITIVE, metavar="N",
                       help="with --property-based: most tokens (in + out) over the audit (default: no limit)")


def _cmd_property_audit(args: argparse.Namespace) -> int:
    """`audit-sim --property-based`: the CLI builds the simulator, verifier.simaudit searches and reports."""
    from synth.simulation import open_simulator
    from synth.simulators import audit_label
    from verifier.simaudit import Budget, PropertyAudit, property_summary, render_summary, run_property_audit

    if args.env and args.all:
        raise UserError("give --env ID or --all, not both")
    executor_spec(args, local_only="audit-sim --property-based runs on this machine only (its search shares one "
                  "call budget and one answer cache across envs); drop --executor ray, or audit exported samples on "
                  "Ray (audit-sim without --property-based)")  # no per-env units to farm out
    out = Path(args.out) if args.out else Path(open_catalog(args, write=True).root) / ".audits" / (
        f"{audit_label(args.model, args.mode)}-properties-s{args.seed}")
    check_out(out, "--out")
    check_models(args.model)
    audit = PropertyAudit(env_ids=args.env, budget=Budget(calls=args.budget, tokens=args.max_tokens), seed=args.seed)
    line = Progress("audit-sim --property-based", unit="envs")

    def progress(env: str, done: int, total: int, used: Usage) -> None:
        cost = cost_note(used.cost_usd, used.tokens_in + used.tokens_out, done, total - done)
        line.update(done, total=total, note="; ".join(n for n in (f"searching {env}" if env else "", cost) if n))

    try:
        with open_simulator(args.model, args.mode, args.on_violation, seed=args.seed) as simulator:
            report = run_property_audit(open_catalog(args), simulator, out, audit, progress=progress)
    except ValueError as exc:  # a bad mode or policy; the other errors are EnvforgeErrors main prints
        raise UserError(str(exc)) from exc
    except KeyboardInterrupt:
        print(f"\ninterrupted; answers are kept in {out}/answers.jsonl: rerun the same command to resume",
              file=sys.stderr)
        return 130
    finally:
        line.close()
    if args.json:
        print_json(property_summary(report).model_dump(mode="json"))
        return 0
    print(render_summary(report))
    print(f"report: {out / 'report.md'} (+ report.json, counterexamples.jsonl, answers.jsonl)")
    return 0


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`audit-sim --model NAME [...]`."""
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
    audit.add_argument("--limit", type=POSITIVE, metavar="N", help="audit only N samples (spread over the strata)")
    audit.add_argument("--workers", type=POSITIVE, default=2, help="concurrent requests (default: 2)")
    add_executor_options(audit, "samples' predictions")
    audit.add_argument("--out", metavar="DIR", help="results and report folder (default: under <catalog>/.audits)")
    audit.add_argument("--seed", type=int, default=0, help="request seed (default: 0)")
    audit.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_property_flags(audit)
    audit.set_defaults(handler=cmd_audit_sim)
