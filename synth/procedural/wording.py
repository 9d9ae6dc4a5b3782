"""How records, values and requested changes read in a user's words (task instructions).

A user names a record by what they know (its email, its number, its name), not by an internal
id; states values the way people write them (amounts with cents, dates without seconds); and
asks for an action with the verb of the tool, never with its parameter names in snake_case.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from synth.blueprint import Blueprint, EntitySpec, ToolRecipe

__all__ = ["words", "say_value", "say_record", "say_change", "verb_phrase"]


def words(name: str) -> str:
    """snake_case as words: 'max_temp_c' -> 'max temp c'."""
    return name.replace("_", " ")


def say_value(value: Any, kind: str | None = None) -> str:
    """A value as a person writes it: money with cents, ISO times as 'YYYY-MM-DD HH:MM UTC'.

    >>> say_value(12.5, "money"), say_value("2026-03-20T15:00:00+00:00"), say_value(True)
    ('12.50', '2026-03-20 15:00 UTC', 'yes')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "money" and isinstance(value, (int, float)):
        return f"{value:.2f}"
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        if "T" in value:
            return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo else "")
    return str(value)


def say_record(e: EntitySpec, key_field: str | None, key_value: Any, record_id: str) -> str:
    """'the member with email gail@example.org', or 'the booking with reference BK001' for an id."""
    what = words(e.name)
    if key_field is None:
        return f"the {what} with reference {record_id}"
    if key_field == e.label:
        return f"the {what} \"{key_value}\""
    return f"the {what} with {words(key_field)} {say_value(key_value)}"


def verb_phrase(recipe: ToolRecipe, e: EntitySpec) -> str:
    """The tool's verb in plain words: 'quarantine_shipment' -> 'quarantine'."""
    name = recipe.name.split("_with_")[0]
    for suffix in (f"_{e.name}", f"_{e.table}"):
        name = name.removesuffix(suffix)
    return words(name)


def say_change(bp: Blueprint, recipe: ToolRecipe, arguments: dict[str, Any], record: str) -> str:
    """One requested action, e.g. 'change the phone of the member "Ada" to +1 ...'."""
    e = bp.entity(recipe.entity)
    key = f"{e.name}_id"
    details = [f"{words(k)} {say_value(v, e.field(k).kind if e.has(k) else None)}" for k, v in arguments.items()
               if k != key and not k.endswith("_id")]
    detail = ", ".join(details)
    if recipe.archetype == "update":
        changes = " and ".join(f"the {words(k)} to {say_value(v, e.field(k).kind if e.has(k) else None)}"
                               for k, v in arguments.items() if k != key)
        return f"change {changes} of {record}"
    if recipe.archetype == "adjust":
        amount = say_value(arguments.get("amount"), e.field(recipe.field or "").kind)
        field = words(recipe.field or "")
        return (f"add {amount} to the {field} of {record}" if recipe.direction == "increase"
                else f"take {amount} off the {field} of {record}")
    if recipe.archetype == "delete":
        return f"remove {record}, it is no longer needed"
    if recipe.archetype == "cascade":
        return f"{verb_phrase(recipe, e)} {record} and everything still pending on it"
    if recipe.archetype == "create":
        return f"add a new {words(e.name)}" + (f" with {detail}" if detail else "") + (f" for {record}" if record else "")
    return f"{verb_phrase(recipe, e)} {record}" + (f" ({detail})" if detail else "")
