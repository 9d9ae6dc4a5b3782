"""`rollout`: an agent (a registry model, or `reference`) on catalog tasks, optionally through a simulator."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from catalog.runs.progress import Progress
from cli.arguments import POSITIVE, SECONDS, SHARE
from cli.common import check_models, check_out, open_catalog
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from synth.simulators import simulator_help


def cmd_rollout(args: argparse.Namespace) -> int:
    """`rollout`: the CLI builds the agent and the simulator, synth.rollout runs, records and reports."""
    from contextlib import ExitStack

    from synth.llm import open_client
    from synth.rollout import (
        ModelAgentFactory,
        RolloutConfig,
        TrustSettings,
        build_report,
        json_summary,
        plan_units,
        render_summary,
        run_rollouts,
        write_report,
    )
    from synth.rollout.agents import AGENTS
    from synth.simulation import open_simulator
    from synth.simulators import SIMULATORS
    from verifier.audit.trust import TrustPolicy, TrustTable

    executor = executor_spec(args)
    if bool(args.env) == bool(args.all):
        raise UserError("give --env ID (repeatable) or --all")
    catalog = open_catalog(args)
    units, skipped = plan_units(catalog, None if args.all else args.env, args.task)
    if not units:
        raise UserError(f"nothing to roll out: {'the catalog has' if args.all else ', '.join(args.env) + ' has'} no "
                        f"task{' ' + repr(args.task) if args.task else 's'}")
    for env_id in skipped:
        print(f"note: {env_id} has no task{' ' + repr(args.task) if args.task else ''}: not rolled out", file=sys.stderr)
    check_out(Path(args.out), "--out")
    if args.trust and not args.simulator:
        raise UserError("--trust needs --simulator: the simulator whose audit it is")
    check_models(args.model, args.simulator)
    sim_mode = args.sim_mode if args.simulator and args.simulator not in SIMULATORS else None
    policy = TrustPolicy(min_cm=args.min_cm, min_samples=args.min_samples, spot_check=args.spot_check)
    trust = TrustSettings(audit=str(Path(args.trust).resolve()), policy=policy) if args.trust else None
    config = RolloutConfig(model=args.model, simulator=args.simulator, sim_mode=sim_mode, max_steps=args.max_steps,
                           max_tokens=args.max_tokens, seed=args.seed, trust=trust)
    out = Path(args.out)
    progress = Progress("rollout", unit="episodes")
    try:
        with ExitStack() as stack:
            simulator = stack.enter_context(open_simulator(args.simulator, sim_mode or "plain", seed=args.seed)) \
                if args.simulator else None
            table = None
            if trust is not None and simulator is not None:
                table = TrustTable.load(trust.audit, catalog, simulator=simulator.name, mode=simulator.mode)
                if table.foreign:
                    print(f"note: {sum(table.foreign.values())} audit record(s) give no trust: " + ", ".join(
                        f"{why} ({n})" for why, n in table.foreign.most_common()), file=sys.stderr)
            if args.model in AGENTS:
                factory = AGENTS[args.model].factory
            else:
                client = stack.enter_context(open_client(args.model, seed=args.seed, timeout=args.timeout))
                factory = ModelAgentFactory.of(client, max_tokens=config.max_tokens)  # Ray workers open their own
            result = run_rollouts(catalog, units, config, out, agent_factory=factory, simulator=simulator,
                                  concurrency=args.concurrency, executor=executor, trust=table,
                                  progress=lambda done, total, _t: progress.update(done, total=total))
    except KeyboardInterrupt:
        print(f"\ninterrupted; finished trajectories are kept in {out / 'trajectories.jsonl'}: rerun the same command "
              "to resume", file=sys.stderr)
        return 130
    finally:
        progress.close()
    report = write_report(build_report(result.trajectories, model=args.model, simulator=args.simulator,
                                       errors=result.errors, trust=table.summary(policy) if table else None), out)
    if result.errors:
        print(f"warning: {len(result.errors)} episode(s) could not run; rerun to retry (see {out / 'report.md'})",
              file=sys.stderr)
    ran = bool(result.trajectories) or not result.errors  # every episode failed: the run is not a success
    if args.json:
        print_json(json_summary(report).model_dump(mode="json"))
    else:
        print(render_summary(report))
        print(f"trajectories: {out / 'trajectories.jsonl'}; report: {out / 'report.md'} (+ report.json, rollouts.png)")
    return 0 if ran else 1


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`rollout --model NAME --env ID|--all --out DIR`."""
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
                    "marked verified or diverged. With --trust AUDIT_DIR (an audit-sim folder of that simulator) "
                    "the env is hybrid: the simulator answers a call alone only where the audit's strict CM in "
                    "the call's cell (tool, and the stratum the constraint spec predicts: failure, read, write "
                    "band) is at least --min-cm over at least --min-samples samples; every other call executes, "
                    "a --spot-check share of trusted calls also executes, and a cell whose spot check fails is "
                    "executed for the rest of the run.")
    rollout.add_argument("--model", required=True, metavar="NAME",
                         help="`reference` (follows each task's reference solution: gold trajectories, no model) or "
                              "a registry model (python cli.py models), e.g. gpt-4o-mini or smollm2-135m")
    rollout.add_argument("--env", action="append", metavar="ID", help="roll out this env's tasks (repeatable)")
    rollout.add_argument("--all", action="store_true", help="every env of the catalog (reference envs included)")
    rollout.add_argument("--task", metavar="ID", help="only this task")
    rollout.add_argument("--max-steps", type=POSITIVE, default=20, help="tool calls per episode (default: 20)")
    rollout.add_argument("--concurrency", type=POSITIVE, default=2, help="episodes at once (default: 2)")
    add_executor_options(rollout, "episodes")
    rollout.add_argument("--simulator", metavar="NAME", help=f"answer calls with a simulator, checked against the env: "
                                                             f"{simulator_help()}")
    rollout.add_argument("--sim-mode", choices=("plain", "constrained"), default="plain",
                         help="prompt mode of an LLM simulator (default: plain)")
    rollout.add_argument("--trust", metavar="AUDIT_DIR", help="hybrid: trust the simulator only in the cells this "
                                                               "audit-sim folder (of the same simulator) measured right")
    rollout.add_argument("--min-cm", type=SHARE, default=0.9, help="with --trust: a cell's strict CM that earns trust "
                                                                   "(default: 0.9)")
    rollout.add_argument("--min-samples", type=POSITIVE, default=5, metavar="K",
                         help="with --trust: audited samples a cell needs (default: 5)")
    rollout.add_argument("--spot-check", type=SHARE, default=0.1, help="with --trust: share of trusted calls also "
                                                                       "executed and compared, by the seed "
                                                                       "(default: 0.1)")
    rollout.add_argument("--max-tokens", type=POSITIVE, metavar="N", help="cap on each model reply (default: the "
                                                                           "registry's max_output_tokens)")
    rollout.add_argument("--timeout", type=SECONDS, default=120.0, help="seconds per model request (default: 120)")
    rollout.add_argument("--seed", type=int, default=0, help="seed of resets and model requests (default: 0)")
    rollout.add_argument("--out", required=True, metavar="DIR", help="trajectories and report folder")
    rollout.add_argument("--json", action="store_true", help='print {"model", "trajectories", "success_rate", '
                                                            '"verified" (with --simulator), "tokens_in", "tokens_out", '
                                                            '"cost_usd", "executed_share" and '
                                                            '"trusted_verified_share" (with --trust)}')
    rollout.set_defaults(handler=cmd_rollout)
