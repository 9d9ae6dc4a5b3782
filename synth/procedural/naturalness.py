"""Whether a tool's parameters are ones a real API of its domain would take (issue 12, item 1).

Definition. A parameter of a write tool is *natural* when it is one of:
1. a locator: the id of the record the tool acts on, or of a record the action involves (the
   parent a record is created under, the counterpart of a transfer, the payer, the acting owner);
2. a value of a new record: a create or place tool stores it in a field of the record it adds;
3. an optional field of a partial update: an update tool's field parameter that defaults to
   None and is written only when given;
4. an action value: something the action itself consumes rather than a field the record already
   holds -- the amount of an adjustment or transfer, the payment method of a placement, the
   reason of a lifecycle move (stored in the field kept for that move's reason).
Every other parameter is *unnatural*; in particular a parameter of a transition, cascade or
compound tool that is only copied into a field of an existing record that the tool's action does
not concern (a recipe's `extra` field), and a required field parameter of an update (a full
overwrite dressed up as an edit). Read tools take locators, natural keys and filters only, so
they are never counted. The count is over the compiled signatures (`compiler.tool_params`), so
it describes exactly what an agent sees.
"""

from __future__ import annotations

from synth.procedural.blueprint import READS, Blueprint, ToolRecipe
from synth.procedural.compiler import tool_params

__all__ = ["unnatural_parameters", "ACTION_VALUES"]

# parameters that carry what the action consumes (item 4), by archetype
ACTION_VALUES: dict[str, frozenset[str]] = {
    "adjust": frozenset({"amount"}),
    "transfer": frozenset({"amount"}),
    "place": frozenset({"payment_method"}),
    "transition": frozenset({"reason"}),
    "cascade": frozenset({"reason"}),
}


def _locators(bp: Blueprint, t: ToolRecipe) -> set[str]:
    e = bp.entity(t.entity)
    names = {f"{e.name}_id", f"from_{e.name}_id", f"to_{e.name}_id"}
    if t.owner:
        names.add(t.owner)
    if t.archetype in ("create", "place"):
        names |= {f.name for f in e.fks}
    return names


def _unnatural(bp: Blueprint, t: ToolRecipe) -> list[str]:
    e = bp.entity(t.entity)
    locators = _locators(bp, t)
    actions = ACTION_VALUES.get(t.archetype, frozenset())
    if t.archetype in ("transition", "cascade") and not t.reason:
        actions = frozenset()
    bad = []
    for name, _type, _doc, default in tool_params(bp, t):
        if name in locators or name in actions:
            continue
        if t.archetype in ("create", "place") and e.has(name) and name in t.fields:
            continue
        if t.archetype == "update" and name in t.fields and default == "None":
            continue
        bad.append(f"{t.name}.{name}")
    return bad


def unnatural_parameters(bp: Blueprint) -> list[str]:
    """`tool.parameter` for every unnatural parameter of the blueprint's write tools (see the module doc)."""
    out: list[str] = []
    for t in bp.tools:
        if t.archetype not in READS:
            out += _unnatural(bp, t)
    return out
