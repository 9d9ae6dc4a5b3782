"""--executor and --ray-address: where a command's work units run, parsed into one ExecutorSpec."""

from __future__ import annotations

import argparse
import os
from typing import Any

from executors.base import EXECUTORS


def add_executor_options(parser: argparse.ArgumentParser, unit: str) -> None:
    """--executor and --ray-address, for the commands whose work units can run on a Ray cluster."""
    group = parser.add_argument_group("scale-out")
    group.add_argument("--executor", choices=EXECUTORS, default="local",
                       help=f"where the {unit} run: local (default; this machine's worker pool) or ray (actors on a "
                            "Ray cluster, needs pip install -e \".[ray]\"); the output files and resume are the same")
    group.add_argument("--ray-address", metavar="auto|ADDRESS",
                       help="with --executor ray: the cluster to join (auto: the one running on this node; "
                            "HOST:PORT or ray://HOST:PORT); default: $RAY_ADDRESS, else a new local instance")


def executor_spec(args: argparse.Namespace, *, local_only: str | None = None) -> Any:
    """The ExecutorSpec of --executor / --ray-address (an address without ray is bad input).

    `local_only`: this form of the command has no units to spread, so asking for Ray is bad
    input, said in that line. An explicit Ray address is probed here, before the command writes anything.
    """
    from cli.errors import UserError
    from executors import ExecutorSpec

    spec = ExecutorSpec(args.executor, args.ray_address)
    if local_only and args.executor != "local":
        raise UserError(local_only)
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    if args.executor == "ray" and address:
        from executors.ray_pool import probe

        probe(address)
    return spec
