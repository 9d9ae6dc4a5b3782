"""`synthesize`: new environments from the LangGraph pipeline, checkpointed and resumable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.arguments import POSITIVE
from cli.common import check_out, open_catalog
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from synth.backends import backend_help, backend_names
from synth.procedural.blueprint import SIZES


def cmd_synthesize(args: argparse.Namespace) -> int:
    from synth.backends import backend_for, resolve_models
    from synth.run_config import RunConfig, read_run_config, runs_dir

    if args.resume is None and args.n is None:
        raise UserError("give --n N (how many envs to register), or --resume RUN_ID")
    executor = executor_spec(args)
    root = str(open_catalog(args, write=True).root)
    config = RunConfig(n=args.n or 0, backend=backend_for(args.backend, args.model), model=args.model,
                       mode=args.mode, seed=args.seed, workers=args.workers, catalog=root,
                       judge_model=args.judge_model, size=args.size, max_proposals=args.max_proposals or 0)
    models = resolve_models(read_run_config(Path(root), args.resume) if args.resume else config)  # names, once
    check_out(Path(args.report) if args.report else None, "--report")
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
    for note in (render_skipped(report), report.shortfall and report.shortfall.reason):
        if note:
            print(note, file=sys.stderr)
    if args.json:
        print_json(report.model_dump())  # int keys (histograms) sort as numbers, as they always printed
    else:
        print(render_summary(report, Path(args.report) if args.report else runs_dir(Path(root)) / report.run_id))
    return 0 if report.registered == report.requested else 1


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`synthesize --n N | --resume RUN_ID`."""
    synth = commands.add_parser(
        "synthesize", parents=[common], help="make new environments with the LangGraph pipeline (offline by default)",
        description="Propose candidate environments (mine topics -> dedup -> plan -> schema -> code -> static checks "
                    "-> initial states -> execute -> tasks -> quality gate -> register) until N are registered. "
                    "Runs are checkpointed in SQLite: Ctrl-C (or a crash) leaves a run that --resume continues. "
                    "Exit status 1 if fewer than N could be registered.")
    synth.add_argument("--n", type=POSITIVE, help="how many envs to register")
    synth.add_argument("--backend", choices=backend_names(), default=backend_names()[0],
                       help=f"generator backend (default: {backend_names()[0]}): {backend_help()}")
    synth.add_argument("--model", metavar="NAME", help="registry model for the llm backend, e.g. smollm2-135m")
    synth.add_argument("--mode", choices=("blueprint", "code"), default="blueprint",
                       help="llm backend: the model fills the blueprint (default) or writes the tool code")
    synth.add_argument("--judge-model", metavar="NAME",
                       help="also let this model judge rule conformance in the gate (predicts probed calls' outcomes "
                            "from the rules, without the code; disagreements count against the env)")
    synth.add_argument("--seed", type=int, default=0, help="seed of every choice (default: 0)")
    synth.add_argument("--workers", type=POSITIVE, default=2, help="worker processes (default: 2)")
    add_executor_options(synth, "slots (each candidate env's pipeline after dedup)")
    synth.add_argument("--size", choices=tuple(SIZES), default="medium",
                       help="env size: " + "; ".join(f"{name} {c.tables[0]}-{c.tables[1]} tables, {c.tools[0]}-"
                                                     f"{c.tools[1]} tools, >= {c.min_rows} seed rows per state"
                                                     for name, c in SIZES.items()) + " (default: medium)")
    synth.add_argument("--max-proposals", type=POSITIVE, metavar="N",
                       help="stop after N proposed candidates even if fewer than --n are registered (default: "
                            "max(10 n, n + 100)); with --resume, the resumed run's new cap. A run that stops short "
                            "says why and how many distinct topics its next proposals hold")
    synth.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    synth.add_argument("--report", metavar="DIR", help="where to write report.json/.md and plots (default: the run "
                                                       "folder under <catalog>/.runs)")
    synth.add_argument("--json", action="store_true", help="print the report as JSON (no progress bar)")
    synth.set_defaults(handler=cmd_synthesize)
