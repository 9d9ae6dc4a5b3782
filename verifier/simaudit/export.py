"""Counterexamples of a property audit as benchmark samples (`bench export --from-audit DIR --failures`).

Each minimal counterexample carries the verified item of its input (state, action, executed
observation, next state and Δ), so the hardest inputs a simulator got wrong become samples.
"""

from __future__ import annotations

import json
from pathlib import Path

from catalog.bench.items import BenchItem
from verifier.simaudit.settings import COUNTEREXAMPLES_FILE

__all__ = ["is_property_audit", "load_counterexamples"]


def is_property_audit(folder: Path | str) -> bool:
    """Whether `folder` is a property audit's folder (it has counterexamples.jsonl)."""
    return (Path(folder) / COUNTEREXAMPLES_FILE).is_file()


def load_counterexamples(folder: Path | str) -> list[BenchItem]:
    """The items of a property audit's counterexamples, one per distinct input, in file order."""
    items: dict[str, BenchItem] = {}
    for line in (Path(folder) / COUNTEREXAMPLES_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = BenchItem.model_validate(json.loads(line)["item"])
            items.setdefault(item.id, item)
    return list(items.values())
