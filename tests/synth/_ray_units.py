"""Simulators for the Ray command tests: module-level, so Ray actors can unpickle them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, SimResult
from constraints.simulate import SpecSimulator


class DiesOnce(SpecSimulator):
    """The spec-only simulator, whose process dies at its first answer of the run (a marker file says whether)."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = Path(marker)

    def predict(self, item: BenchItem) -> SimResult:
        try:
            self.marker.touch(exist_ok=False)
        except FileExistsError:
            return super().predict(item)
        os._exit(9)  # a killed worker: no reply, no cleanup


def _cannot_build() -> SpecSimulator:
    raise RuntimeError("this worker cannot build its simulator")


class CannotBuild(SpecSimulator):
    """A simulator that a worker cannot build from what it is sent (e.g. a worker that lacks a dependency)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_cannot_build, ())
