"""`constraints`: an env's constraint spec from its tool source, or the spec's completeness measured."""

from __future__ import annotations

import argparse
from typing import Any

from catalog.runs.progress import Progress
from cli.common import open_catalog
from cli.errors import UserError
from cli.output import print_json, print_lines


def cmd_constraints(args: argparse.Namespace) -> int:
    from constraints.completeness import completeness, spec_of
    from constraints.extract import ExtractionError
    from constraints.render import completeness_summary, render_completeness, render_spec, spec_document

    catalog = open_catalog(args)
    if args.completeness:
        if args.env_id and args.env:
            raise UserError("give the env either as ENV_ID or with --env, not both")
        ids = [args.env or args.env_id] if (args.env or args.env_id) else [s.id for s in catalog.list()[0]]
        from sandbox.calls import SandboxCallRunner
        from sandbox.pool import SandboxPool

        reports = []
        with SandboxPool(1) as pool, Progress("constraints --completeness", len(ids), unit="envs") as progress:
            for done, env_id in enumerate(ids):
                handle = catalog.get(env_id)
                # The shipped reference envs are trusted and run in-process (faster); others in the sandbox.
                runner = None if handle.reference else SandboxCallRunner(handle, pool)
                progress.say(f"measuring {env_id}{'' if handle.reference else ' (sandboxed)'} ...", done=done)

                def sequences(run: int, planned: int, env_id: str = env_id, done: int = done) -> None:
                    progress.update(done, note=f"{env_id}: {run} call sequences (at most {planned})")

                try:
                    reports.append(completeness(handle, seed=args.seed, runner=runner, progress=sequences))
                except ExtractionError as exc:
                    raise UserError(f"env {env_id}: {exc}") from exc
                progress.update(done + 1)
        if args.json:
            print_json(completeness_summary(reports).model_dump(mode="json"))
        else:
            print_lines(render_completeness(reports))
        unmeasured = [why for why in (r.nothing_ran() for r in reports) if why]
        if unmeasured:  # 0 steps measured nothing: never a pass
            raise UserError("constraints --completeness measured nothing for " + "; ".join(unmeasured))
        return 0 if all(r.wrong == 0 for r in reports) else 4
    if not args.env_id:
        raise UserError("name an env (python cli.py constraints library) or pass --completeness")
    try:
        spec = spec_of(catalog.get(args.env_id))
    except ExtractionError as exc:
        raise UserError(f"env {args.env_id}: {exc}") from exc
    if args.json:
        print_json(spec_document(spec, args.env_id))
    else:
        print_lines(render_spec(spec, args.env_id))
    return 0


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`constraints [ENV_ID] [--completeness]`."""
    constraints = commands.add_parser(
        "constraints", parents=[common], help="print constraint specs from tool source; --completeness measures them",
        description="Print the constraint spec that libcst extraction gives for each tool of ENV_ID (no env code is "
                    "run), or with --completeness execute generated calls and compare the spec-only simulator with "
                    "execution. Exit status 4 if the simulator was ever wrong without abstaining, 1 if an env ran no call "
                    "(the sandbox refused them all: nothing was measured).")
    constraints.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. library")
    constraints.add_argument("--json", action="store_true", help="print JSON")
    constraints.add_argument("--completeness", action="store_true",
                             help="measure spec completeness by execution (all envs unless --env; env code runs "
                                  "in the sandbox, except the shipped reference envs)")
    constraints.add_argument("--env", metavar="ENV_ID", help="with --completeness: only this env")
    constraints.add_argument("--seed", type=int, default=0, help="seed of the generated calls (default: 0)")
    constraints.set_defaults(handler=cmd_constraints)
