"""A recipe for the executor tests: module-level, so worker processes and Ray actors can import it.

A unit is `(what, value, *args)`: `scaled` multiplies by the worker's factor (and says which
process ran it), `slow` sleeps, `fails` raises, `dies` kills the worker's process.
"""

import os
import time
from dataclasses import dataclass
from typing import Any

from executors import Recipe


class _Worker:
    def __init__(self, factor: int) -> None:
        self.factor = factor

    def run(self, unit: tuple[Any, ...]) -> Any:
        what, value, *args = unit
        return getattr(self, what)(value, *args)

    def scaled(self, value: int) -> tuple[int, int]:
        return value * self.factor, os.getpid()

    def slow(self, value: int, seconds: float = 1.0) -> int:
        time.sleep(seconds)
        return value

    def fails(self, value: int) -> int:
        raise ValueError(f"unit {value} is bad input")

    def dies(self, value: int) -> int:
        os._exit(3)


@dataclass(frozen=True)
class Units(Recipe[tuple[Any, ...], Any]):
    """Workers holding `factor`, on threads or processes locally (`threads`)."""

    factor: int = 1
    threads: bool = False

    def open(self) -> _Worker:
        return _Worker(self.factor)
