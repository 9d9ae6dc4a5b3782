"""`models`: the model registry, and whether each endpoint answers."""

from __future__ import annotations

import argparse
from typing import Any

from cli.arguments import SECONDS
from cli.output import print_json


def cmd_models(args: argparse.Namespace) -> int:
    from synth.llm import load_registry
    from synth.llm.table import model_rows, render_models

    rows = model_rows(load_registry(), probe_endpoints=not args.no_probe, timeout=args.timeout)
    if args.json:
        print_json([row.model_dump() for row in rows])
    elif rows:
        print(render_models(rows))
    return 0


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`models [--no-probe]`."""
    models = commands.add_parser("models", parents=[common], help="list the model registry and whether each endpoint "
                                                                 "answers")
    models.add_argument("--json", action="store_true", help="print JSON")
    models.add_argument("--no-probe", action="store_true", help="do not contact the endpoints")
    models.add_argument("--timeout", type=SECONDS, default=2.0, help="seconds per probe (default: 2)")
    models.set_defaults(handler=cmd_models)
