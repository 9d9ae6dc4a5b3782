"""What a synthesis run was asked (RunConfig) and the models it uses, resolved once (RunModels).

A run names its models (`--model`, `--judge-model`); the names are looked up in the model
registry once, at the boundary (the CLI, or `synthesize` for a library caller), and the typed
specs travel down to the generator, the judge and the worker processes. Where a model is
reached this session (the embedded model has no fixed address) is filled in by the one helper
that starts servers, `synth.llm.embedded.serving`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from catalog.errors import EnvforgeError
from synth.llm.registry import ModelSpec
from synth.procedural.blueprint import SizeName
from verifier.gate.settings import SYNTHESIS

__all__ = ["Endpoint", "RunConfig", "RunError", "RunModels", "read_run_config", "runs_dir"]


class RunError(RuntimeError, EnvforgeError):
    """A run cannot start or resume (unknown run id, mismatched options)."""


@dataclass
class RunConfig:
    """Everything a run was asked; stored as config.json so a resume continues with the same choices.

    `base_url` and `judge_base_url` stay in the file's keys (always null there): where a model
    is reached is per session and lives in RunModels, not in what the run was asked.
    """

    n: int
    backend: str = "procedural"
    model: str | None = None
    mode: str = "blueprint"
    seed: int = 0
    workers: int = 2
    catalog: str = ""
    run_id: str = ""
    max_proposals: int = 0
    gate_examples: int = SYNTHESIS.examples
    gate_effort: float = SYNTHESIS.effort
    domain_order: list[str] = field(default_factory=list)
    size: SizeName = "medium"
    judge_model: str | None = None
    base_url: str | None = None
    judge_base_url: str | None = None


@dataclass(frozen=True)
class Endpoint:
    """A registry model and the address this session reaches it at (None until a server runs)."""

    spec: ModelSpec
    base_url: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class RunModels:
    """The run's models, resolved: the generator's (model backends only) and the judge's (optional)."""

    generator: Endpoint | None = None
    judge: Endpoint | None = None

    def embedded(self) -> bool:
        """Whether a model of the run needs the embedded server started."""
        return any(e is not None and e.spec.embedded for e in (self.generator, self.judge))


def runs_dir(catalog_root: Path) -> Path:
    """Where a catalog keeps its runs (a dot folder: listing skips it)."""
    return catalog_root / ".runs"


def read_run_config(catalog_root: Path, run_id: str) -> RunConfig:
    """The stored config of run `run_id`; RunError naming the known runs if there is none."""
    run_dir = runs_dir(catalog_root) / run_id
    if not (run_dir / "config.json").is_file():
        known = sorted(p.name for p in runs_dir(catalog_root).glob("run-*")) if runs_dir(catalog_root).is_dir() else []
        raise RunError(f"no run {run_id!r} under {runs_dir(catalog_root)}; known runs: {known or 'none'}")
    return RunConfig(**json.loads((run_dir / "config.json").read_text(encoding="utf-8")))
