"""How records, values and requested changes read in a user's words (task instructions).

A user names a record by what they know (its email, its number, its name), not by an internal
id; states values the way people write them (amounts with cents, dates without seconds); and
asks for an action with the verb of the tool, never with its parameter names in snake_case.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from synth.procedural.blueprint import Blueprint, EntitySpec, ToolRecipe

__all__ = ["words", "say_value", "say_record", "say_change", "verb_phrase", "reason_for"]


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


def say_change(bp: Blueprint, recipe: ToolRecipe, arguments: dict[str, Any], record: str,
               names: dict[str, str] | None = None) -> str:
    """One requested action, e.g. 'change the phone of the member "Ada" to +1 ...'.

    `names` says how the user names the other records an argument points to (by parameter).
    """
    e = bp.entity(recipe.entity)
    key = f"{e.name}_id"
    names = names or {}
    details = [f"{words(k)} {say_value(v, e.field(k).kind if e.has(k) else None)}" for k, v in arguments.items()
               if k != key and not k.endswith("_id") and k not in ("payment_method", "amount")]
    detail = ", ".join(details)
    if recipe.archetype == "transfer":
        amount = say_value(arguments.get("amount"), e.field(recipe.field or "").kind)
        receiver = names.get(f"to_{e.name}_id", f"the {words(e.name)} with reference {arguments.get(f'to_{e.name}_id')}")
        return f"move {amount} of {words(recipe.field or '')} from {record} to {receiver}"
    if recipe.archetype in ("create", "place"):
        parents = [names[k] for k in arguments if k in names]
        paid = f", paid by {words(str(arguments['payment_method']))}" if "payment_method" in arguments else ""
        return (f"{'place' if recipe.archetype == 'place' else 'add'} a new {words(e.name)}"
                + (f" with {detail}" if detail else "") + (f" for {' and '.join(parents)}" if parents else "") + paid)
    if recipe.archetype == "update":
        changes = [f"{words(k)} to {say_value(v, e.field(k).kind if e.has(k) else None)}"
                   for k, v in arguments.items() if k != key]
        if record == "it":
            return "change its " + " and its ".join(changes)
        return f"change the {changes[0].replace(' to ', f' of {record} to ', 1)}" + "".join(
            f" and its {c}" for c in changes[1:])
    if recipe.archetype == "adjust":
        amount = say_value(arguments.get("amount"), e.field(recipe.field or "").kind)
        field = words(recipe.field or "")
        return (f"add {amount} to the {field} of {record}" if recipe.direction == "increase"
                else f"take {amount} off the {field} of {record}")
    if recipe.archetype == "delete":
        return f"remove {record}, it is no longer needed"
    if recipe.archetype == "cascade":
        return (f"{verb_phrase(recipe, e)} {record} and everything still pending on it"
                + (f" ({detail})" if detail else ""))
    acting = [names[k] for k in arguments if k in names]
    return (f"{verb_phrase(recipe, e)} {record}" + (f" ({detail})" if detail else "")
            + (f" on behalf of {' and '.join(acting)}" if acting else ""))


def reason_for(recipe: ToolRecipe, e: EntitySpec, pick: int) -> str:
    """A reason a user gives for a lifecycle move, in a few words."""
    verb = verb_phrase(recipe, e)
    what = words(e.name)
    options = (f"Customer asked us to {verb} it", f"{what.capitalize()} no longer needed", "Requested by the "
               "account holder", f"Duplicate {what}", "Details confirmed by phone", f"{verb.capitalize()} after review")
    return options[pick % len(options)]
