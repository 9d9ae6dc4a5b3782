"""`verify gate|mutants|write-plan`: the quality gate, its mutation test, an env's plan; the forms before them."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from catalog.runs.progress import Progress
from cli.arguments import POSITIVE, SECONDS, SHARE, Parser
from cli.common import open_catalog
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from sandbox.pool import DEFAULT_TIMEOUT
from verifier.gate.settings import GATE, MUTATION, VERIFY, GateEffort


def cmd_verify_gate(args: argparse.Namespace) -> int:
    from sandbox.pool import SandboxPool
    from verifier.gate.report import GateReport, broken_env_report, render_gate_report
    from verifier.gate.run import verify_env, verify_envs

    catalog = open_catalog(args)
    if args.all == bool(args.env_id):
        raise UserError("name one env (python cli.py verify gate library) or pass --all")
    executor = executor_spec(args, local_only=None if args.all else
                             "--executor ray spreads the envs of --all over a cluster; one env runs on this machine")
    if args.no_reference:
        catalog.include_reference = False
    summaries, broken = catalog.list() if args.all else ([], [])
    reports = [broken_env_report(problem.path.name, problem.reason, args.gate) for problem in broken]
    for report in reports:
        print(f"broken env folder {report.env}: {report.checks[0].detail}", file=sys.stderr)
    if args.all:  # one env per unit, side by side on the executor's workers
        progress = Progress("verify gate --all", len(summaries), unit="envs")

        def verified(report: GateReport) -> None:
            progress.say(f"verified {report.env}: score {report.score:.2f}, {'passed' if report.passed else 'FAILED'}",
                         done=progress.done + 1)

        with progress:
            reports += verify_envs(catalog, [s.id for s in summaries], executor=executor, workers=args.workers,
                                   examples=args.examples, seed=args.seed, gate=args.gate, timeout=args.timeout,
                                   progress=verified)
    else:
        handle = catalog.get(args.env_id)
        with SandboxPool(args.workers, timeout=args.timeout) as pool, \
                Progress(f"verify gate {args.env_id}", unit="checks") as progress:
            progress.say(f"verifying {args.env_id} ...")

            def checking(done: int, total: int, name: str) -> None:
                progress.update(done, total=total, note=name)

            reports.append(verify_env(handle, pool, examples=args.examples, seed=args.seed, gate=args.gate,
                                      progress=checking))
    if args.json:
        documents = [r.model_dump(mode="json") for r in reports]
        print_json(documents[0] if len(documents) == 1 and not args.all else documents)
    else:
        for report in reports:
            print(render_gate_report(report))
    return 0 if all(r.passed for r in reports) else 5


def cmd_verify_mutants(args: argparse.Namespace) -> int:
    from verifier.gate.mutation import mutation_test, render_mutation_report

    catalog = open_catalog(args)
    ids = [args.env] if args.env else [s.id for s in catalog.list()[0] if s.reference]
    handles = [catalog.get(env_id) for env_id in ids]
    print(f"mutation testing the gate on {', '.join(ids)} ...", file=sys.stderr)
    report = mutation_test(handles, args.count, seed=args.seed, examples=args.examples, workers=args.workers,
                           timeout=args.timeout)  # envs side by side, one process (and sandbox worker) each
    if args.json:
        print_json(report.model_dump(mode="json"))
    else:
        print(render_mutation_report(report))
    return 0


def cmd_verify_write_plan(args: argparse.Namespace) -> int:
    from constraints.completeness import spec_of
    from verifier.gate.intent import draft_plan, plan_from_spec, write_plan

    handle = open_catalog(args).get(args.env_id)
    if handle.manifest.provenance.backend == "import":  # code written elsewhere: a draft for its user to edit
        plan = draft_plan(handle, spec_of(handle), timeout=args.timeout)
        write_plan(handle.path, plan)
        print(f"Wrote a draft {handle.path / 'plan.json'}: {len(plan.rules)} rules, {len(plan.tools)} tools, "
              f"{len(plan.invariants)} inferred invariants. It states what the code does now: edit it to say what "
              f"the env should do (keep or delete each invariant, add your own), then `verify gate {handle.id}` "
              "checks the code against it. See docs/guide/verify.md.")
        return 0
    plan = plan_from_spec(spec_of(handle), handle.id, "captured from reviewed code")
    write_plan(handle.path, plan)
    print(f"Wrote {handle.path / 'plan.json'}: {len(plan.rules)} rules, {len(plan.tools)} tools. It records the "
          "code's current guards and effects as the intent: review it, since later code is checked against it.")
    return 0


VERIFY_ACTIONS = ("gate", "mutants", "write-plan")


def _checks_epilog() -> str:
    """The registered checks, read when help is shown (registering them imports the property suite)."""
    import verifier.gate.properties  # noqa: F401 - registers the suite's checks
    from verifier.gate.checks import describe

    return "checks (name, severity, meaning), in the order they run:\n" + describe()


def _sandbox_options(parser: argparse.ArgumentParser, effort: GateEffort) -> None:
    """Options of the verb's actions that run the gate in sandbox workers."""
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--examples", type=POSITIVE, default=effort.examples,
                        help=f"hypothesis examples per property (default: {effort.examples})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the guard search (default: 0)")
    parser.add_argument("--workers", type=POSITIVE, default=2, help="sandbox worker processes (default: 2); with --all and for mutants, envs checked side by side, one worker each")
    parser.add_argument("--timeout", type=SECONDS, default=DEFAULT_TIMEOUT, help="seconds per call before a worker "
                        f"is killed (default: {DEFAULT_TIMEOUT:g})")


def _old_verify_form(args: list[str], common: argparse.ArgumentParser) -> argparse.Namespace | None:
    """Parse the forms `verify` had before its actions; None if `args` use an action (or ask for help).

    They are `verify ENV_ID|--all [...]`, `verify --mutants N [--env ENV_ID]` and `verify ENV_ID --write-plan`.
    """
    old = Parser(prog="python cli.py verify", add_help=False, parents=[common])
    old.add_argument("env_id", nargs="?")
    old.add_argument("--all", action="store_true")
    old.add_argument("--no-reference", action="store_true")
    old.add_argument("--gate", type=SHARE, default=GATE)
    add_executor_options(old, "envs (with --all)")
    _sandbox_options(old, VERIFY)
    old.add_argument("--mutants", type=POSITIVE)
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


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
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
    gate.add_argument("--gate", type=SHARE, default=GATE, help=f"score needed to pass (default: {GATE})")
    add_executor_options(gate, "envs (with --all)")
    _sandbox_options(gate, VERIFY)
    gate.set_defaults(handler=cmd_verify_gate)
    mutants = actions.add_parser(
        "mutants", parents=[common], help="plant N single bugs in the reference envs (or --env); report the share "
                                          "the gate rejects, survivors and false alarms")
    mutants.add_argument("count", metavar="N", type=POSITIVE, help="how many mutants, e.g. 200")
    mutants.add_argument("--env", metavar="ENV_ID", help="mutate only this env (default: the reference envs)")
    _sandbox_options(mutants, MUTATION)
    mutants.set_defaults(handler=cmd_verify_mutants)
    plan = actions.add_parser("write-plan", parents=[common], help="capture plan.json from the env's current code "
                                                                   "(for reviewed, hand-written envs); for an imported "
                                                                   "env, a draft with inferred invariants to edit")
    plan.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. bank")
    plan.add_argument("--timeout", type=SECONDS, default=DEFAULT_TIMEOUT, help="seconds for the sandbox to load an "
                      f"imported env's initial states (default: {DEFAULT_TIMEOUT:g})")
    plan.set_defaults(handler=cmd_verify_write_plan)
