"""The completeness report (`constraints --completeness`): one env's figures, and several envs summed.

Typed so the measurement (constraints/completeness.py), the renderers and the CLI read fields;
`model_dump(mode="json")` is what `constraints --completeness --json` prints, key for key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from catalog.jsonmodel import JsonModel

__all__ = ["COMPLETENESS_TOTALS", "CompletenessReport", "CompletenessTotals", "completeness_summary"]

COMPLETENESS_TOTALS = ("steps", "exact", "abstained", "wrong", "guards_total", "guards_triggered", "failures",
                       "failures_explained", "crashes")
"""The counts that add up over envs."""


class CompletenessReport(JsonModel):
    """One env: steps run and how the spec-only simulator did on them, guards reached, failures explained."""

    env: str
    kind: str
    steps: int
    exact: int
    abstained: int
    wrong: int
    exact_rate: float
    guards_total: int
    guards_triggered: int
    failures: int
    failures_explained: int
    crashes: int
    untriggered_guards: list[str] = Field(default_factory=list)
    top_abstain_reasons: dict[str, int] = Field(default_factory=dict)
    sandbox_events: dict[str, int] = Field(default_factory=dict)
    wrong_examples: list[dict[str, Any]] = Field(default_factory=list)

    def nothing_ran(self) -> str | None:
        """Why this measurement measured nothing (no call ran), or None: 0 steps is no evidence of completeness."""
        if self.steps:
            return None
        if self.sandbox_events:
            cause = max(sorted(self.sandbox_events), key=lambda event: self.sandbox_events[event])
            return f"{self.env}: no call ran, the sandbox refused every job ({cause})"
        return f"{self.env}: no call ran (no call could be generated for its tools)"


class CompletenessTotals(JsonModel):
    """Several envs: the counts summed, each env's own report kept under `envs`."""

    steps: int
    exact: int
    abstained: int
    wrong: int
    guards_total: int
    guards_triggered: int
    failures: int
    failures_explained: int
    crashes: int
    envs: list[CompletenessReport]


def completeness_summary(reports: Sequence[CompletenessReport]) -> CompletenessReport | CompletenessTotals:
    """`constraints --completeness --json`: one env's report as is; several summed, each kept under `envs`."""
    if len(reports) == 1:
        return reports[0]
    totals = {key: sum(getattr(r, key) for r in reports) for key in COMPLETENESS_TOTALS}
    return CompletenessTotals(**totals, envs=list(reports))
