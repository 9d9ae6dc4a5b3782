"""The whole command line: the options every command shares, then each command's parser from its module."""

from __future__ import annotations

import argparse

from catalog.store import ENV_VAR
from cli.arguments import Parser
from cli.commands import (
    audit_sim,
    bench,
    catalog,
    constraints,
    import_env,
    models,
    replay,
    rollout,
    serve,
    synthesize,
    verify,
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python cli.py`, built afresh (each command's handler is read from its module now)."""
    common = Parser(add_help=False)
    common.add_argument("--catalog", metavar="DIR", default=argparse.SUPPRESS,
                        help=f"catalog folder (default: ${ENV_VAR}, else ./envforge-catalog); "
                             "the reference envs are always included")
    common.add_argument("--unsafe-no-isolation", action="store_true", default=argparse.SUPPRESS,
                        help="run env code without the OS sandbox (bubblewrap namespaces) where the host cannot "
                             "create one; only for code you trust")
    parser = Parser(
        prog="python cli.py", parents=[common],
        description="envforge: synthesize executable tool-use environments and verify LLM simulation of them.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for command in (catalog, replay, constraints, verify, serve, import_env, synthesize, models, audit_sim, rollout,
                    bench):  # the order `--help` lists them in
        command.add_parser(commands, common)
    return parser
