"""The catalog's exported benchmark samples, shared by `bench export` and `audit-sim` (its default input)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.common import open_catalog
from cli.output import ProgressLine


def default_bench(args: argparse.Namespace, *, write: bool = False) -> Path:
    """The catalog's exported samples (`bench export` writes them there by default)."""
    return Path(open_catalog(args, write=write).root) / ".bench" / "samples.jsonl"


def export_with_progress(args: argparse.Namespace, composition: Any, *, seed: int, workers: int | None = None,
                          env_ids: list[str] | None = None, executor: Any = None) -> Any:
    """verifier.samples.export.export_samples with its progress on stderr (a terminal only, never with --json)."""
    from verifier.samples.export import export_samples

    line = ProgressLine(args)
    try:
        return export_samples(open_catalog(args), composition, seed=seed,
                              progress=lambda stage, done, total: line.show(f"{stage}: {done}/{total}"),
                              **({"workers": workers} if workers else {}), env_ids=env_ids, executor=executor)
    finally:
        line.end()
