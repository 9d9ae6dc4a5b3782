"""How strict the gate is and how hard it looks, defined once for every caller.

The threshold is EnvScaler's 0.85. Effort is two knobs: `examples`, the hypothesis examples per
property, and `effort`, the scale of the guard-directed searches (1.0 = 1,500 calls). `verify`
looks hard at one env; mutation testing runs the gate on hundreds of mutants (40 examples kill
as many as 120 there, and a critical failure ends a mutant's run early); synthesis runs it on
every candidate, so it looks least: 8 examples at effort 0.05 (what every run has used; the
pipeline's own 10/0.25 was an unused older default) keeps 200 envs within 5 minutes.

`every_guard_reachable` is the one check whose verdict followed the effort (more random calls
reach more guards): after the random calls it climbs to each guard they missed, at every effort
(verifier/gate/guards.py), so the synthesis effort reaches what `verify gate` reaches and the
manifest's quality score is the one it prints.

This module imports nothing heavy: the CLI reads it to build its parser.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GATE", "GateEffort", "MUTATION", "SYNTHESIS", "VERIFY"]

GATE = 0.85  # share of scored checks an env must pass (and no critical check may fail)


@dataclass(frozen=True)
class GateEffort:
    """Hypothesis examples per property, and the scale of the guard-directed searches."""

    examples: int
    effort: float


VERIFY = GateEffort(examples=120, effort=1.0)
MUTATION = GateEffort(examples=40, effort=1.0)
SYNTHESIS = GateEffort(examples=8, effort=0.05)
