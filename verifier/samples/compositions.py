"""Compositions: how many samples `bench export` should find in each bucket (a rung of `catalog.bench.strata`).

`envsimbench` is EnvSimBench's 400-sample mix, scaled by largest remainder (exact at 400);
`uniform` spreads over every rung; a JSON file names its own counts. Optional buckets (envforge's
own rungs in `uniform`) give what no env reaches to the others.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from catalog.bench.strata import LADDER, RUNG_NAMES
from catalog.errors import EnvforgeError

__all__ = ["BUCKETS", "ENVSIMBENCH_COUNTS", "Composition", "CompositionError"]

BUCKETS = RUNG_NAMES  # every rung of the strata ladder can be asked for
# EnvSimBench's 400-sample mix over its groups (reference/envsimbench.md §3).
ENVSIMBENCH_COUNTS = {"failure": 20, "no_change_args0": 40, "no_change_args1": 40, "simple_1": 25, "simple_2": 25,
                      "medium_3": 50, "medium_4": 50, "medium_5": 50, "medium_6": 50, "difficult_7_12": 50}


class CompositionError(ValueError, EnvforgeError):
    """A composition cannot be built as asked (unknown name or bucket, bad counts)."""


def _largest_remainder(weights: dict[str, float], total: int) -> dict[str, int]:
    """Integer counts proportional to `weights` summing to `total` (ties go to the earlier bucket)."""
    mass = sum(weights.values())
    if total < 0:
        raise CompositionError(f"a sample count cannot be negative: {total}")
    if mass <= 0:
        return {name: 0 for name in weights}
    exact = {name: w * total / mass for name, w in weights.items()}
    counts = {name: math.floor(value) for name, value in exact.items()}
    order = sorted(weights, key=lambda name: (-(exact[name] - counts[name]), list(weights).index(name)))
    for name in order[: total - sum(counts.values())]:
        counts[name] += 1
    return counts


@dataclass(frozen=True)
class Composition:
    """How many samples each bucket should get; `optional` buckets give what they cannot fill to the others."""

    name: str
    counts: dict[str, int]
    optional: frozenset[str] = frozenset()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @classmethod
    def envsimbench(cls, n: int = 400) -> Composition:
        """EnvSimBench's 400-sample mix, scaled to `n` by largest remainder (exact at 400)."""
        return cls("envsimbench", _largest_remainder({k: float(v) for k, v in ENVSIMBENCH_COUNTS.items()}, n))

    @classmethod
    def uniform(cls, n: int = 400) -> Composition:
        """Equal counts over all buckets; envforge's own rungs (13+, no-change with 2+ arguments) are optional.

        What no env reaches of an optional bucket is spread over the others.
        """
        optional = frozenset(r.name for r in LADDER if not r.envsimbench)
        return cls("uniform", _largest_remainder({k: 1.0 for k in BUCKETS}, n), optional)

    @classmethod
    def from_file(cls, path: Path | str, n: int | None = None) -> Composition:
        """A JSON object mapping bucket names to counts; scaled proportionally if `n` differs from its total."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CompositionError(f"cannot read composition file {path}: {exc}") from exc
        if not isinstance(data, dict) or not data:
            raise CompositionError(f"{path}: a composition is a JSON object of bucket -> count")
        unknown = sorted(set(data) - set(BUCKETS))
        if unknown:
            raise CompositionError(f"{path}: unknown buckets {unknown}. Known: {', '.join(BUCKETS)}")
        bad = {k: v for k, v in data.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0}
        if bad:
            raise CompositionError(f"{path}: counts must be non-negative integers, got {bad}")
        counts = {name: data[name] for name in BUCKETS if name in data}
        if n is not None and n != sum(counts.values()):
            counts = _largest_remainder({k: float(v) for k, v in counts.items()}, n)
        return cls(Path(path).stem, counts)

    @classmethod
    def parse(cls, spec: str, n: int | None = None) -> Composition:
        """`envsimbench`, `uniform` or a JSON file path (what `--composition` takes)."""
        if spec == "envsimbench":
            return cls.envsimbench(400 if n is None else n)
        if spec == "uniform":
            return cls.uniform(400 if n is None else n)
        if Path(spec).is_file():
            return cls.from_file(spec, n)
        raise CompositionError(f"unknown composition {spec!r}: use envsimbench, uniform or a JSON file of "
                               f"bucket -> count (buckets: {', '.join(BUCKETS)})")

    def redistribute(self, available: dict[str, int]) -> tuple[Composition, dict[str, int]]:
        """Cap optional buckets at what was found, spreading the rest evenly over the other buckets.

        Returns the new composition and how much each capped bucket gave away (empty if none).
        """
        moved = {b: c - available.get(b, 0) for b, c in self.counts.items()
                 if b in self.optional and c > available.get(b, 0)}
        if not moved:
            return self, {}
        counts = {b: (available.get(b, 0) if b in moved else c) for b, c in self.counts.items()}
        others = [b for b in counts if b not in self.optional]
        if not others:
            return Composition(self.name, counts, self.optional), moved
        extra = _largest_remainder({b: 1.0 for b in others}, sum(moved.values()))
        return Composition(self.name, {b: c + extra.get(b, 0) for b, c in counts.items()}, self.optional), moved
