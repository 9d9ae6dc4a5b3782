"""The strata ladder: where a step sits by outcome, |Δ| and argument count, from one table.

Export quotas, audit tables and a sample's `Strata.delta_band` all read `LADDER`, so a bucket
of `bench export` and a band of `audit-sim` are the same rung under the same name. Every step
of a success or failure lands on exactly one rung:

- A failure is `failure` whatever its |Δ|: a refused call is judged first by its refusal. A
  refused call that changed state is an env bug, so `bench export` does not take it as a
  sample (verifier/samples/export.py says so); the audit still reports it under `failure`.
- A read with 2+ arguments is `no_change_args2+`: EnvSimBench has no such group (nor 13+), so
  those two rungs are envforge's own (`envsimbench=False`); both can be exported and audited.

The |Δ| bands (0, 1-2, 3-6, 7-12, 13+) are the success rungs' bands; `delta_band` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Rung", "LADDER", "RUNG_NAMES", "GROUPS", "DELTA_BANDS", "rung", "rung_of", "rung_of_strata",
           "delta_band"]

OutcomeLabel = Literal["success", "failure"]


@dataclass(frozen=True)
class Rung:
    """One stratum: its name (export bucket and audit band), coarse group and the steps it holds.

    `delta` and `args` are inclusive ranges (`None`: no upper bound). `band` is the |Δ| band of
    the rung's steps ('' for failure, whose |Δ| is not fixed).
    """

    name: str
    group: str
    outcome: OutcomeLabel
    band: str
    delta: tuple[int, int | None]
    args: tuple[int, int | None] = (0, None)
    envsimbench: bool = True

    def holds(self, outcome: str, delta_size: int, arg_count: int) -> bool:
        """Whether a step with this outcome, |Δ| and argument count sits on this rung."""
        return (outcome == self.outcome and _within(delta_size, self.delta) and _within(arg_count, self.args))

    @property
    def min_delta(self) -> int | None:
        """The smallest |Δ| a step on this rung has (None for failure, which is about refusing)."""
        return None if self.outcome == "failure" else self.delta[0]

    @property
    def changes_state(self) -> bool:
        """True for the state-change rungs (success with |Δ| > 0), as EnvSimBench splits its samples."""
        return self.outcome == "success" and self.delta[0] > 0


def _within(value: int, bounds: tuple[int, int | None]) -> bool:
    low, high = bounds
    return value >= low and (high is None or value <= high)


# The one table. Order is the report order and the export's tie-break order.
LADDER: tuple[Rung, ...] = (
    Rung("failure", "failure", "failure", "", (0, None)),
    Rung("no_change_args0", "no_change", "success", "0", (0, 0), (0, 0)),
    Rung("no_change_args1", "no_change", "success", "0", (0, 0), (1, 1)),
    Rung("no_change_args2+", "no_change", "success", "0", (0, 0), (2, None), envsimbench=False),
    Rung("simple_1", "simple", "success", "1-2", (1, 1)),
    Rung("simple_2", "simple", "success", "1-2", (2, 2)),
    Rung("medium_3", "medium", "success", "3-6", (3, 3)),
    Rung("medium_4", "medium", "success", "3-6", (4, 4)),
    Rung("medium_5", "medium", "success", "3-6", (5, 5)),
    Rung("medium_6", "medium", "success", "3-6", (6, 6)),
    Rung("difficult_7_12", "difficult", "success", "7-12", (7, 12)),
    Rung("beyond_13+", "beyond_13+", "success", "13+", (13, None), envsimbench=False),
)
RUNG_NAMES: tuple[str, ...] = tuple(r.name for r in LADDER)
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(r.group for r in LADDER))
DELTA_BANDS: tuple[str, ...] = tuple(dict.fromkeys(r.band for r in LADDER if r.band))
_BY_NAME = {r.name: r for r in LADDER}
_BAND_OF_SIZE = [(r.delta, r.band) for r in LADDER if r.outcome == "success"]


def rung(name: str) -> Rung:
    """The rung called `name`; raises KeyError listing the names."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"Unknown stratum {name!r}. Known: {', '.join(RUNG_NAMES)}") from None


def rung_of(outcome: str, delta_size: int, arg_count: int) -> Rung:
    """The rung of a step (outcome 'success' or 'failure'; crashes count as failures before this).

    >>> [rung_of("success", n, 1).name for n in (0, 2, 5, 9, 20)]
    ['no_change_args1', 'simple_2', 'medium_5', 'difficult_7_12', 'beyond_13+']
    >>> rung_of("success", 0, 3).name, rung_of("failure", 4, 0).name
    ('no_change_args2+', 'failure')
    """
    if delta_size < 0 or arg_count < 0:
        raise ValueError(f"|Δ| and argument count cannot be negative: {delta_size}, {arg_count}")
    for candidate in LADDER:
        if candidate.holds(outcome, delta_size, arg_count):
            return candidate
    raise ValueError(f"Unknown outcome {outcome!r}: a stratum needs 'success' or 'failure'")


def rung_of_strata(strata: Mapping[str, Any] | Any) -> Rung:
    """The rung of a sample's `Strata` (the model, or its JSON dict as results files hold it)."""
    def get(key: str) -> Any:
        return strata[key] if isinstance(strata, Mapping) else getattr(strata, key)

    return rung_of(str(get("outcome")), int(get("delta_size")), int(get("arg_count")))


def delta_band(size: int) -> str:
    """The |Δ| band of a delta size: '0', '1-2', '3-6', '7-12' or '13+'.

    >>> [delta_band(n) for n in (0, 2, 3, 12, 13)]
    ['0', '1-2', '3-6', '7-12', '13+']
    """
    if size < 0:
        raise ValueError(f"A delta size cannot be negative: {size}")
    return next(band for bounds, band in _BAND_OF_SIZE if _within(size, bounds))
