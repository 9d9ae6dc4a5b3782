"""How realistic the synthesized envs are: the figures per env, and their totals in a run's report.

Per env (computed in the pipeline's tasks node, where the blueprint, plan, states and tasks are
at hand): tools and tables, seed rows per initial state, calls per task's reference solution,
refusal tasks, unnatural parameters (synth.procedural.naturalness), value-constraint
violations (verifier.gate.invariants over every initial state and over the final state each task's
solution reaches, predicted by the plan interpreter; the gate's `invariants_hold` checks the
executed states too) and placeholder values in every table of every initial state (`placeholders`:
a generated code where the column is no identifier, word salad, a label made of the column's own
name, an email not made from the name beside it). The report sums them over the registered envs.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from functools import cache
from typing import Any

from catalog.jsonmodel import JsonModel
from catalog.models import Outcome
from catalog.plan import Plan
from catalog.state.delta import apply_delta
from catalog.tasks import Task
from synth.procedural.blueprint import Blueprint
from synth.procedural.naturalness import unnatural_parameters
from verifier.gate.intent import PlanSimulator
from verifier.gate.invariants import violations

__all__ = ["env_realism", "placeholders", "Spread", "Realism", "realism_totals"]

_CODE = re.compile(r"^[A-Z]{1,4}-\d{4}-[A-Z]{2}$")  # synth.procedural.values' generic code
_IDENTIFIER = re.compile(r"(^|_)(number|code|sku|ref|reference|serial|plate|mask|barcode|no|tracking|confirmation|"
                         r"locator|key|token|handle|iccid|imei|msisdn|vin|isbn|account|licen[cs]e|permit|policy|"
                         r"claim|case|docket|order|ticket|voucher|badge|tag|lot|batch|seal|slot|bay|pin|id|rfid|ndc|spid|upc|ean|gtin|"
                         r"iban|bic|swift|npi)(_|$)")
_WORD = re.compile(r"[a-z]+")


@cache
def _lorem() -> frozenset[str]:
    """Faker's en_US lorem words: a value made of them alone is word salad, not a sentence anyone wrote."""
    from faker.providers.lorem.en_US import Provider

    return frozenset(Provider.word_list)


def placeholders(bp: Blueprint, states: dict[str, dict[str, Any]]) -> list[str]:
    """Every placeholder-looking value in every table of `states`, as `state: table.column = value (why)`."""
    from synth.procedural.values import _person_key

    lorem = _lorem()
    found: list[str] = []
    for name, state in states.items():
        for e in bp.entities:
            texts = [f for f in e.fields if f.kind in ("text", "code", "name")]
            names = {_person_key(f.name): f.name for f in e.fields if f.kind == "name"}
            emails = [f for f in e.fields if f.kind == "email"]
            for row in (state.get(e.table) or {}).values():
                for f in texts:
                    why = _placeholder(f.name, row.get(f.name), lorem)
                    if why:
                        found.append(f"{name}: {e.table}.{f.name} = {row.get(f.name)!r} ({why})")
                for f in emails:
                    person = names.get(_person_key(f.name)) or next(iter(names.values()), None)
                    if person and isinstance(row.get(f.name), str) and isinstance(row.get(person), str) and \
                            not _made_from(row[f.name], row[person]):
                        found.append(f"{name}: {e.table}.{f.name} = {row[f.name]!r} (not {row[person]!r}'s)")
    return found


def _placeholder(column: str, value: Any, lorem: frozenset[str]) -> str | None:
    if not isinstance(value, str):
        return None
    if _CODE.match(value) and not _IDENTIFIER.search(column):
        return "a generated code in a column that is no identifier"
    words = _WORD.findall(value.lower())
    noun = column.removesuffix("_name").removesuffix("_label").replace("_", " ")
    if len(words) == 3 and value.lower().endswith(" " + noun) and all(w in lorem for w in words[:2]):
        return "a label made of the column's name"
    if len(words) >= 3 and value.endswith(".") and value[:1].isupper() and all(w in lorem for w in words):
        return "word salad"  # the shape of Faker's lorem sentence(): a capital, lorem words only, a full stop
    return None


def _made_from(email: str, name: str) -> bool:
    """Whether `email`'s local part starts with the first and last word of `name` (ascii, letters only)."""
    from synth.procedural.values import _ascii

    parts = [re.sub(r"[^a-z]", "", _ascii(p).lower()) for p in name.split()]
    return len(parts) < 2 or email.split("@")[0].startswith(f"{parts[0]}.{parts[-1]}")


def env_realism(bp: Blueprint, plan: Plan, states: dict[str, dict[str, Any]], tasks: list[Task]) -> dict[str, Any]:
    """One env's realism figures (JSON-safe: the slot state is checkpointed as JSON)."""
    invariants = bp.invariants
    tables = {e.table for e in bp.entities}
    problems = [f"{name}: {p}" for name, state in states.items() for p in violations(invariants, state)]
    simulator = PlanSimulator(plan)
    for task in tasks:
        final = states[task.state]
        for action in task.solution or []:
            prediction = simulator.predict(final, action)
            if prediction.abstained or prediction.outcome != Outcome.SUCCESS:
                break
            final = apply_delta(final, prediction.delta)
        problems += [f"task {task.id}: {p}" for p in violations(invariants, final)]
    unnatural = unnatural_parameters(bp)
    placeholder = placeholders(bp, states)
    return {"placeholder_values": len(placeholder), "placeholders": placeholder[:10],"tools": len(bp.tools), "tables": len(bp.entities),
            "seed_rows": {name: sum(len(rows) for table, rows in state.items() if table in tables)
                          for name, state in states.items()},
            "solution_calls": [len(t.solution or []) for t in tasks],
            "refusal_tasks": sum(t.refusal for t in tasks),
            "unnatural_parameters": len(unnatural), "unnatural": unnatural[:10],
            "value_constraint_violations": len(problems), "violations": problems[:10]}


class Spread(JsonModel):
    """min, median, max and the histogram (value -> how many) of one figure (a median of ints may be either)."""

    min: int | float | None
    median: int | float | None
    max: int | float | None
    histogram: dict[int, int]

    @classmethod
    def of(cls, values: list[int], *, bin_width: int = 1) -> Spread:
        if not values:
            return cls(min=None, median=None, max=None, histogram={})
        bins = Counter(v // bin_width * bin_width for v in values)
        return cls(min=min(values), median=statistics.median(values), max=max(values),
                   histogram=dict(sorted(bins.items())))


class Realism(JsonModel):
    """The report's `realism` object: counts over all registered envs."""

    envs: int
    tools_per_env: Spread
    tables_per_env: Spread
    seed_rows_per_state: Spread  # histogram in bins of 10 rows
    solution_calls: Spread
    tasks: int
    refusal_tasks: int
    envs_with_refusal: int
    unnatural_parameters: int
    value_constraint_violations: int
    examples: dict[str, list[str]]
    placeholder_values: int = 0  # over every table of every initial state (0 in reports from before the check)


def realism_totals(rows: list[dict[str, Any]]) -> Realism | None:
    """Sum the per-env figures of registered envs (None when none carries them, e.g. an older run)."""
    rows = [r for r in rows if r]
    if not rows:
        return None
    calls = [n for r in rows for n in r.get("solution_calls", [])]
    return Realism(
        envs=len(rows), tools_per_env=Spread.of([r["tools"] for r in rows]),
        tables_per_env=Spread.of([r["tables"] for r in rows]),
        seed_rows_per_state=Spread.of([n for r in rows for n in r.get("seed_rows", {}).values()], bin_width=10),
        solution_calls=Spread.of(calls), tasks=len(calls),
        refusal_tasks=sum(r.get("refusal_tasks", 0) for r in rows),
        envs_with_refusal=sum(1 for r in rows if r.get("refusal_tasks")),
        unnatural_parameters=sum(r.get("unnatural_parameters", 0) for r in rows),
        value_constraint_violations=sum(r.get("value_constraint_violations", 0) for r in rows),
        examples={"unnatural": [u for r in rows for u in r.get("unnatural", [])][:10],
                  "violations": [v for r in rows for v in r.get("violations", [])][:10],
                  "placeholders": [p for r in rows for p in r.get("placeholders", [])][:10]},
        placeholder_values=sum(r.get("placeholder_values", 0) for r in rows))
