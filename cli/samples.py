"""The catalog's exported benchmark samples, shared by `bench export|sft` and `audit-sim` (its default input), and bench files read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from catalog.runs.progress import Progress
from cli.common import open_catalog
from cli.errors import UserError


def default_bench(args: argparse.Namespace, *, write: bool = False) -> Path:
    """The catalog's exported samples (`bench export` writes them there by default)."""
    return Path(open_catalog(args, write=write).root) / ".bench" / "samples.jsonl"


def export_with_progress(args: argparse.Namespace, composition: Any, *, seed: int, workers: int | None = None,
                          env_ids: list[str] | None = None, executor: Any = None) -> Any:
    """verifier.samples.export.export_samples with its progress on stderr.

    The envs' specs, then each search round's and verification pass's sandbox jobs, with the time the stage has left.
    """
    from verifier.samples.export import export_samples

    with Progress("bench export") as progress:
        return export_samples(open_catalog(args), composition, seed=seed,
                              progress=lambda stage, done, total: progress.update(
                                  done, total=total, stage=stage, unit="envs" if stage == "specs" else "sandbox jobs"),
                              **({"workers": workers} if workers else {}), env_ids=env_ids, executor=executor)


def load_bench(path: Path) -> list[Any]:
    """Benchmark items from envforge JSONL or EnvSimBench JSON; unusable samples are reported, not fatal."""
    from catalog.bench.envsimbench import read_envsimbench, read_jsonl

    if not path.is_file():
        raise UserError(f"no benchmark file {path}")
    items, problems = read_jsonl(path) if path.suffix == ".jsonl" else read_envsimbench(path)
    for problem in problems[:10]:
        print(f"warning: {path}: {problem}", file=sys.stderr)
    if len(problems) > 10:
        print(f"warning: {path}: {len(problems) - 10} more unusable samples", file=sys.stderr)
    if not items:
        raise UserError(f"{path}: no usable samples")
    return items
