"""Compositions: how many samples `bench export` should find in each bucket (a rung of `catalog.bench.strata`).

`envsimbench` is EnvSimBench's 400-sample mix, scaled by largest remainder (exact at 400);
`balance2` is the mix of their simulator's SFT set (1K failure + 1K no-change + 2K simple +
2.23K complex change of 6.23K, exact at 6230; `bench sft` builds training sets with it);
`uniform` spreads over every rung; a JSON file names its own counts. Optional buckets (envforge's
own rungs in `uniform` and `balance2`) give what no env reaches to the others: to every other
bucket, or, in a composition with `groups`, to the other buckets of their group, so the groups'
totals (balance2's proportions) stay exact.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from catalog.bench.strata import LADDER, RUNG_NAMES
from catalog.errors import EnvforgeError

__all__ = ["BALANCE2_COUNTS", "BALANCE2_GROUPS", "BUCKETS", "ENVSIMBENCH_COUNTS", "Composition", "CompositionError"]

BUCKETS = RUNG_NAMES  # every rung of the strata ladder can be asked for
# EnvSimBench's 400-sample mix over its groups (reference/envsimbench.md §3).
ENVSIMBENCH_COUNTS = {"failure": 20, "no_change_args0": 40, "no_change_args1": 40, "simple_1": 25, "simple_2": 25,
                      "medium_3": 50, "medium_4": 50, "medium_5": 50, "medium_6": 50, "difficult_7_12": 50}
# EnvSimBench's "Full-Balance2" SFT mix of 6.23K samples (reference/envsimbench.md §5), by its four groups,
# and the rungs each group spans on envforge's ladder: simple change is |Δ| 1-2 (their Simple), complex
# change every larger |Δ| (their Medium and Difficult, and envforge's 13+); no-change takes every argument
# count (their 0 and 1, and envforge's 2+). A group's count is split evenly over its rungs.
BALANCE2_COUNTS = {"failure": 1000, "no_change": 1000, "simple_change": 2000, "complex_change": 2230}
BALANCE2_GROUPS: dict[str, tuple[str, ...]] = {
    "failure": ("failure",),
    "no_change": ("no_change_args0", "no_change_args1", "no_change_args2+"),
    "simple_change": ("simple_1", "simple_2"),
    "complex_change": ("medium_3", "medium_4", "medium_5", "medium_6", "difficult_7_12", "beyond_13+"),
}


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
    groups: tuple[tuple[str, ...], ...] = ()  # buckets that make up each other's shortfalls (empty: all do)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @classmethod
    def envsimbench(cls, n: int = 400) -> Composition:
        """EnvSimBench's 400-sample mix, scaled to `n` by largest remainder (exact at 400)."""
        return cls("envsimbench", _largest_remainder({k: float(v) for k, v in ENVSIMBENCH_COUNTS.items()}, n))

    @classmethod
    def balance2(cls, n: int = 6230) -> Composition:
        """EnvSimBench's SFT mix (BALANCE2_COUNTS) scaled to `n`: exact group totals, each split evenly over its rungs.

        Both steps use largest remainder, so at 6230 the groups are exactly 1000/1000/2000/2230.
        envforge's own rungs (no-change with 2+ arguments, |Δ| 13+) are optional: what no env reaches of
        them goes to the other rungs of their group.

        >>> c = Composition.balance2(6230)
        >>> [sum(c.counts[b] for b in rungs) for rungs in BALANCE2_GROUPS.values()], c.counts["simple_1"]
        ([1000, 1000, 2000, 2230], 1000)
        """
        totals = _largest_remainder({k: float(v) for k, v in BALANCE2_COUNTS.items()}, n)
        counts: dict[str, int] = {}
        for group, rungs in BALANCE2_GROUPS.items():
            counts.update(_largest_remainder({r: 1.0 for r in rungs}, totals[group]))
        optional = frozenset(r.name for r in LADDER if not r.envsimbench)
        return cls("balance2", {b: counts[b] for b in BUCKETS}, optional, tuple(BALANCE2_GROUPS.values()))

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
        """`envsimbench`, `balance2`, `uniform` or a JSON file path (what `--composition` takes)."""
        if spec == "envsimbench":
            return cls.envsimbench(400 if n is None else n)
        if spec == "balance2":
            return cls.balance2(6230 if n is None else n)
        if spec == "uniform":
            return cls.uniform(400 if n is None else n)
        if Path(spec).is_file():
            return cls.from_file(spec, n)
        raise CompositionError(f"unknown composition {spec!r}: use envsimbench, balance2, uniform or a JSON file of "
                               f"bucket -> count (buckets: {', '.join(BUCKETS)})")

    def redistribute(self, available: dict[str, int]) -> tuple[Composition, dict[str, int]]:
        """Cap buckets at what was found and give the rest to others; returns the new composition and what each capped bucket gave away.

        Without `groups`, only optional buckets are capped and their rest is spread evenly over the
        other buckets. With `groups` (balance2), every bucket is capped and its group's total is
        shared out again as evenly as what was found allows (water-filling), so a group stays whole
        while its buckets together have the samples.
        """
        if self.groups:
            return self._fill_groups(available)
        moved = {b: c - available.get(b, 0) for b, c in self.counts.items()
                 if b in self.optional and c > available.get(b, 0)}
        if not moved:
            return self, {}
        counts = {b: (available.get(b, 0) if b in moved else c) for b, c in self.counts.items()}
        others = [b for b in counts if b not in self.optional]
        if others:
            extra = _largest_remainder({b: 1.0 for b in others}, sum(moved.values()))
            counts = {b: c + extra.get(b, 0) for b, c in counts.items()}
        return Composition(self.name, counts, self.optional), moved

    def _fill_groups(self, available: dict[str, int]) -> tuple[Composition, dict[str, int]]:
        counts = dict(self.counts)
        for group in self.groups:
            members = [b for b in group if b in counts]
            left = sum(counts[b] for b in members)
            quota = {b: 0 for b in members}
            while left > 0:
                open_ = [b for b in members if available.get(b, 0) > quota[b]]
                if not open_:
                    break
                share = _largest_remainder({b: 1.0 for b in open_}, left)
                for b in open_:
                    give = min(share[b], available.get(b, 0) - quota[b])
                    quota[b] += give
                    left -= give
            counts.update(quota)
            if left > 0:  # the group ran short even together: the rest stays where the even split put it
                short = {b: self.counts[b] - quota[b] for b in members if self.counts[b] > quota[b]}
                extra = _largest_remainder({b: float(v) for b, v in short.items()}, left)
                counts.update({b: quota[b] + extra.get(b, 0) for b in members})
        moved = {b: c - counts[b] for b, c in self.counts.items() if counts[b] < c}
        if not moved:
            return self, {}
        return Composition(self.name, counts, self.optional, self.groups), moved
