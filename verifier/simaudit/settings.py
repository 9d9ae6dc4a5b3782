"""What a property audit is asked (envs, budget, seed, inputs per property) and the files it writes.

Its own module so the runner, the report and the export read one definition without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.simaudit.answers import Budget

__all__ = ["COUNTEREXAMPLES_FILE", "META_FILE", "PropertyAudit", "examples_for"]

COUNTEREXAMPLES_FILE = "counterexamples.jsonl"
META_FILE = "property_audit.json"


@dataclass(frozen=True)
class PropertyAudit:
    """What to audit: which envs (None: every catalog env), the budget, the seed, inputs per property."""

    env_ids: list[str] | None = None
    budget: Budget = Budget()
    seed: int = 0
    examples: int | None = None  # per property and env; None: from the budget (see `examples_for`)
    properties: list[str] | None = None  # names in checks.PROPERTIES; None: all of them


def examples_for(budget: Budget, envs: int) -> int:
    """Inputs per property and env: a third of an env's share of the call budget, 3 to 100.

    An input costs up to four questions (the answer, its repeat, two metamorphic variants), but hypothesis
    repeats inputs and some cannot be labelled (a crash), so a third uses most of a budget.

    >>> examples_for(Budget(calls=500), 4), examples_for(Budget(), 4)
    (41, 50)
    """
    if budget.calls is None:
        return 50
    return max(3, min(100, budget.calls // max(1, envs) // 3))
