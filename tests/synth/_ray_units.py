"""Recipes for the Ray command tests: module-level, so Ray actors can unpickle them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catalog.bench.items import BenchItem, SimResult
from constraints.simulate import SpecSimulator


class _DiesOnce(SpecSimulator):
    """The spec-only simulator, whose process dies at its first answer of the run (a marker file says whether)."""

    def __init__(self, marker: Path) -> None:
        super().__init__()
        self.marker = marker

    def predict(self, item: BenchItem) -> SimResult:
        try:
            self.marker.touch(exist_ok=False)
        except FileExistsError:
            return super().predict(item)
        os._exit(9)  # a killed worker: no reply, no cleanup


@dataclass(frozen=True)
class DiesOnce:
    """A recipe (what an audit on Ray hands its workers) for `_DiesOnce`."""

    marker: str

    def __call__(self) -> SpecSimulator:
        return _DiesOnce(Path(self.marker))


@dataclass(frozen=True)
class CannotBuild:
    """A recipe whose simulator cannot be built (e.g. a worker that lacks a dependency)."""

    def __call__(self) -> SpecSimulator:
        raise RuntimeError("this worker cannot build its simulator")
