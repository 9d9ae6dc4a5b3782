"""What commands check before any work: the catalog of --catalog, the output folders, the models they call."""

from __future__ import annotations

import argparse
from pathlib import Path

from catalog.store import Catalog
from cli.errors import UserError


def open_catalog(args: argparse.Namespace, *, write: bool = False) -> Catalog:
    """The catalog of --catalog / $ENVFORGE_CATALOG; a file there (or, for writers, a read-only folder) is bad input."""
    catalog = Catalog(args.catalog)
    catalog.check_root(write=write)
    return catalog


def check_out(path: Path | None, flag: str) -> None:
    """An output folder a command will write into must be one it can write, said before any work."""
    from catalog.runs.files import unwritable_folder

    problem = unwritable_folder(path) if path is not None else None
    if problem:
        raise UserError(f"{flag}: {problem}")


def check_models(*models: str | None) -> None:
    """Check each model the command will call (key set, endpoint answers) before any work; simulators are skipped."""
    from synth.rollout.agents import AGENTS
    from synth.simulators import SIMULATORS

    names = [m for m in models if m and m not in AGENTS and m not in SIMULATORS]
    if names:
        from synth.llm.preflight import preflight

        preflight(names)
