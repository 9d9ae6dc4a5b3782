"""The blueprint compiler: writes an env module (docs/design.md's SQL convention) from a blueprint.

Each archetype expands to a fixed, reviewed code shape: guards as `if <cond>: return
fail(...)`, state reached only through `get`/`select`/attribute writes/`add`/`delete`, time and
ids from `self.now()`/`self.new_id()`. The shapes stay inside the subset of Python that the
constraint extractor and interpreter model exactly, so the plan extracted from the compiled
program is complete and the spec-only simulator can predict every call.
"""

from __future__ import annotations

import json
import re

from catalog.plan import Invariant
from synth.procedural.blueprint import READS, Blueprint, EntitySpec, FieldSpec, ToolRecipe

__all__ = ["compile_env", "tool_params", "rules_of", "terminal_states", "open_states", "quota_constant",
           "PAYMENT_METHODS", "support_table", "per_unit", "fee_constant", "fee_of", "stock_of", "charge_of", "copied_fields"]

PAYMENT_METHODS = ("card", "bank_transfer", "balance")

_INDENT = "    "


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _a(noun: str, capital: bool = False) -> str:
    """'a booking', 'an invoice' (snake_case nouns read as words)."""
    words = noun.replace("_", " ")
    article = "an" if words[:1] in "aeiou" else "a"
    return f"{article.capitalize() if capital else article} {words}"


def _title(entity: EntitySpec) -> str:
    return entity.name.replace("_", " ").capitalize()


def _py(value: object) -> str:
    """A Python literal for a JSON-like value (strings double-quoted)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_py(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _num(value: float | None, kind: str) -> str:
    if value is None:
        return "0"
    return str(int(value)) if kind in ("int", "version") else repr(float(value))


def terminal_states(entity: EntitySpec) -> list[str]:
    """States no lifecycle move leaves (given by the blueprint; by default all but the first)."""
    return list(entity.ends) if entity.ends else entity.states[1:]


def open_states(entity: EntitySpec, blueprint: Blueprint | None = None) -> list[str]:
    """States in which a record is still live (not at a lifecycle end)."""
    ends = set(terminal_states(entity))
    live = [s for s in entity.states if s not in ends]
    return live or entity.states[:1]


def quota_constant(tool: ToolRecipe, owner: FieldSpec) -> str:
    """The module constant holding a create tool's quota, e.g. MAX_OPEN_BOOKINGS_PER_ROOM."""
    return f"MAX_OPEN_{tool.entity.upper()}S_PER_{(owner.fk or owner.name).upper()}"


def fee_constant(tool: ToolRecipe) -> str:
    """The module constant holding a transfer's flat fee, e.g. TRANSFER_WALLET_CREDIT_FEE."""
    return f"{tool.name.upper()}_FEE"


def fee_of(field: FieldSpec) -> int | float:
    """A transfer's flat fee: about 1% of the balance's range, whole units for int balances."""
    span = (field.hi or 100) - (field.lo or 0)
    return max(1, int(span // 200)) if field.kind == "int" else round(max(0.5, span / 400), 2)


def stock_of(bp: Blueprint, t: ToolRecipe) -> tuple[FieldSpec, EntitySpec, FieldSpec] | None:
    """A place tool's stock: (the new record's fk field, the stocked entity, its balance field)."""
    if not t.stock:
        return None
    e = bp.entity(t.entity)
    fk_name, _, balance = t.stock.partition(".")
    fk = e.field(fk_name)
    target = bp.entity(fk.fk or "")
    return fk, target, target.field(balance)


def copied_fields(bp: Blueprint, t: ToolRecipe) -> list[str]:
    """Fields a place tool copies from the stocked record (a line's unit price from its product)."""
    found = stock_of(bp, t)
    if found is None:
        return []
    e = bp.entity(t.entity)
    _fk, target, _balance = found
    return [f.name for f in e.fields if f.kind == "money" and target.has(f.name) and target.field(f.name).kind == "money"
            and f.name not in t.fields]


def per_unit(price: str) -> bool:
    """Whether a money field is a price per unit (times a quantity), not already a total."""
    return bool(re.search(r"unit|price|fare|rate", price)) and not re.search(r"total|amount", price)


def charge_of(bp: Blueprint, t: ToolRecipe, var: str) -> str | None:
    """The amount a place tool charges, as an expression over the new record `var` (None: no charge)."""
    if not t.price:
        return None
    expr = f"{var}.{t.price}"
    if t.quantity and per_unit(t.price):
        expr += f" * {var}.{t.quantity}"
    return f"round({expr}, 2)"


# --- parameters ---------------------------------------------------------------------------

def _example(field: FieldSpec, entity: EntitySpec) -> str:
    if field.kind in ("int", "version"):
        return str(int(((field.lo or 0) + (field.hi or 10)) // 2) or 1)
    if field.kind in ("float", "money"):
        return f"{round(((field.lo or 0) + (field.hi or 100)) / 2, 2)}"
    if field.kind == "bool":
        return "true"
    if field.kind == "choice":
        return repr(field.choices[0])
    if field.kind == "email":
        return "'kim@example.org'"
    if field.kind == "phone":
        return "'+44 20 7946 0000'"
    if field.kind == "fk":
        return f"'{field.fk[:1].upper() if field.fk else 'X'}001'"
    if field.name == entity.label and entity.words:
        return repr(entity.words[0])
    return f"'{field.name.replace('_', ' ')} example'" if field.kind == "text" else f"'{entity.prefix}-100'"


def _range_text(field: FieldSpec) -> str:
    if field.kind in ("int", "float", "money") and field.lo is not None and field.hi is not None:
        return f" between {_num(field.lo, field.kind)} and {_num(field.hi, field.kind)}"
    if field.kind == "choice":
        return f": one of {', '.join(field.choices)}"
    return ""


def tool_params(blueprint: Blueprint, tool: ToolRecipe) -> list[tuple[str, str, str, str | None]]:
    """(name, python type, description, default source or None) for each parameter, in order."""
    e = blueprint.entity(tool.entity)
    key = (f"{e.name}_id", "str", f"The {e.name.replace('_', ' ')}, such as '{e.prefix}001'.", None)
    params: list[tuple[str, str, str, str | None]] = []
    if tool.archetype == "list":
        if tool.filter == "status":
            params.append(("status", "str", f"Only {e.table.replace('_', ' ')} in this state: one of "
                                            f"{', '.join(e.states)}, such as '{e.states[0]}'.", None))
        elif tool.filter == "parent" and e.parent:
            p = blueprint.entity(e.parent)
            params.append((f"{p.name}_id", "str", f"The {p.name.replace('_', ' ')}, such as '{p.prefix}001'.", None))
        return params
    if tool.archetype == "summary":
        return params
    if tool.archetype == "find":
        f = e.field(tool.key or "")
        params.append((f.name, PYTHON_TYPES_PARAM[f.kind], f"{_describe(f)} of the {e.name.replace('_', ' ')}, such "
                                                            f"as {_example(f, e)}.", None))
        return params
    if tool.archetype in ("create", "place"):
        for f in e.fields:
            if f.kind == "fk" and not f.nullable:
                target = blueprint.entity(f.fk or "")
                role = " who pays" if f.name == tool.payer else ""
                params.append((f.name, "str", f"The {target.name.replace('_', ' ')}{role}, such as "
                                              f"'{target.prefix}001'.", None))
        for name in tool.fields:
            f = e.field(name)
            params.append((f.name, PYTHON_TYPES_PARAM[f.kind], f"{_describe(f)}{_range_text(f)}, such as "
                           f"{_example(f, e)}.", None))
        if tool.archetype == "place" and tool.price:
            balance = _payer_balance(blueprint, tool)
            drawn = (f"; 'balance' draws on the {balance[0].name.replace('_', ' ')}'s "
                     f"{balance[1].name.replace('_', ' ')}" if balance else "")
            params.append(("payment_method", "str", f"How it is paid: one of {', '.join(PAYMENT_METHODS)}{drawn}, "
                                                    f"such as 'card'.", None))
        return params
    if tool.archetype == "transfer":
        f = e.field(tool.field or "")
        what = e.name.replace("_", " ")
        kind = "int" if f.kind == "int" else "float"
        params.append((f"from_{e.name}_id", "str", f"The {what} the {f.name.replace('_', ' ')} comes from, such as "
                                                   f"'{e.prefix}001'.", None))
        params.append((f"to_{e.name}_id", "str", f"The {what} it goes to, such as '{e.prefix}002'.", None))
        params.append(("amount", kind, f"How much to move, more than 0 (a flat fee is charged on top), such as "
                                       f"{'5' if kind == 'int' else '5.0'}.", None))
        return params
    params.append(key)
    if tool.archetype == "transition" and tool.owner:
        f = e.field(tool.owner)
        target = blueprint.entity(f.fk or "")
        params.append((f.name, "str", f"The {target.name.replace('_', ' ')} acting, who must be the one the "
                                      f"{e.name.replace('_', ' ')} names, such as '{target.prefix}001'.", None))
    if tool.archetype in ("transition", "cascade") and tool.reason:
        params.append(("reason", "str", f"Why, in a few words (kept on the {e.name.replace('_', ' ')}), such as "
                                        f"'{_reason_example(tool)}'.", None))
    if tool.archetype == "update":
        for name in tool.fields:
            f = e.field(name)
            params.append((f.name, f"{PYTHON_TYPES_PARAM[f.kind]} | None", f"New {_describe(f).lower()}"
                           f"{_range_text(f)}, such as {_example(f, e)}; left as it is when not given.", "None"))
    for name in tool.extra if tool.archetype == "transition" else []:
        f = e.field(name)
        params.append((f.name, PYTHON_TYPES_PARAM[f.kind], f"New {_describe(f).lower()}{_range_text(f)}, such as "
                       f"{_example(f, e)}.", None))
    if tool.archetype == "adjust" and tool.field:
        f = e.field(tool.field)
        kind = "int" if f.kind == "int" else "float"
        params.append(("amount", kind, f"How much to {'add to' if tool.direction == 'increase' else 'take from'} "
                                       f"{f.name.replace('_', ' ')}, more than 0, such as {'5' if kind == 'int' else '5.0'}.",
                       None))
    return params


def _reason_example(tool: ToolRecipe) -> str:
    target = (tool.target or "").replace("_", " ")
    return {"cancelled": "customer changed their plans", "rejected": "missing documents",
            "suspended": "repeated late payments", "refunded": "item arrived damaged"}.get(
        tool.target or "", f"{target} at the customer's request")


def _payer_balance(bp: Blueprint, tool: ToolRecipe) -> tuple[EntitySpec, FieldSpec] | None:
    """The payer entity and the money balance a place tool's 'balance' payment draws on."""
    if not tool.payer:
        return None
    payer = bp.entity(bp.entity(tool.entity).field(tool.payer).fk or "")
    balance = payer.role("balance")
    return (payer, balance) if balance is not None and balance.kind == "money" else None


PYTHON_TYPES_PARAM = {"text": "str", "name": "str", "email": "str", "phone": "str", "code": "str", "int": "int",
                      "float": "float", "money": "float", "bool": "bool", "choice": "str", "fk": "str"}


def _describe(field: FieldSpec) -> str:
    if field.description:
        return field.description.rstrip(".")
    return field.name.replace("_", " ").capitalize()


# --- guards ------------------------------------------------------------------------------

def _value_checks(f: FieldSpec, var: str) -> list[tuple[str, str]]:
    """(condition, message f-string body) pairs validating a parameter named like the field."""
    checks: list[tuple[str, str]] = []
    if f.kind in ("text", "name", "code"):
        checks.append((f"not {var}.strip()", f"{f.name} must not be empty"))
    elif f.kind == "email":
        checks.append((f'"@" not in {var}', f"Invalid email {{{var}}}"))
    elif f.kind == "phone":
        checks.append((f"len({var}) < 6", f"Invalid phone number {{{var}}}"))
    elif f.kind in ("int", "float", "money") and f.lo is not None and f.hi is not None:
        lo, hi = _num(f.lo, f.kind), _num(f.hi, f.kind)
        checks.append((f"{var} < {lo} or {var} > {hi}", f"{f.name} must be between {lo} and {hi}, got {{{var}}}"))
    elif f.kind == "choice":
        checks.append((f"{var} not in {_py(f.choices)}", f"{f.name} must be one of {', '.join(f.choices)}, "
                                                         f"got {{{var}}}"))
    return checks


def _param_checks(w: _Writer, e: EntitySpec, names: list[str]) -> None:
    """Guards validating parameters named like the entity's fields (emptiness, ranges, choices)."""
    for name in names:
        for condition, message in _value_checks(e.field(name), name):
            w.guard(2, condition, message)


class _Writer:
    """Accumulates indented lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, depth: int = 0, text: str = "") -> None:
        self.lines.append(f"{_INDENT * depth}{text}" if text else "")

    def guard(self, depth: int, condition: str, message: str) -> None:
        self(depth, f"if {condition}:")
        literal = f'f"{message}"' if "{" in message else json.dumps(message)
        self(depth + 1, f"return fail({literal})")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _fetch(w: _Writer, entity: EntitySpec, var: str, key: str) -> None:
    w(2, f"{var} = self.get({entity.cls}, {key})")
    w.guard(2, f"{var} is None", f"{_title(entity)} {{{key}}} not found")


def _status_guard(w: _Writer, entity: EntitySpec, var: str, key: str, allowed: list[str]) -> None:
    if not allowed or set(allowed) == set(entity.states):
        return
    w.guard(2, f"{var}.status not in {_py(allowed)}",
            f"{_title(entity)} {{{key}}} is {{{var}.status}}; this needs {' or '.join(allowed)}")


def _touch(w: _Writer, entity: EntitySpec, var: str, depth: int = 2) -> None:
    if entity.has("version"):
        w(depth, f"{var}.version += 1")
    if entity.has("updated_at"):
        w(depth, f"{var}.updated_at = self.now()")


def _assign(f: FieldSpec, var: str, value: str) -> str:
    return f"{var}.{f.name} = {value}"


# --- invariants and derived records -------------------------------------------------------------

def support_table(bp: Blueprint, name: str) -> EntitySpec | None:
    """One of the system support tables (synth.procedural.ontology.support), if the env has it (not a domain namesake)."""
    return next((e for e in bp.entities if e.name == name and e.support), None)


def _pairs(bp: Blueprint, e: EntitySpec) -> list[Invariant]:
    return [i for i in bp.invariants if i.kind in ("le", "lt") and i.collection == e.table]


def _pair_guards(w: _Writer, bp: Blueprint, e: EntitySpec, given: list[str], current: str | None) -> None:
    """Refuse a create or update that would break `a <= b` / `a < b` (update: omitted values stay as they are)."""
    for inv in _pairs(bp, e):
        a, b = inv.field, inv.other or ""
        if a not in given and b not in given:
            continue

        def value(name: str) -> str:
            if name not in given:  # a create leaves it at the schema's default
                return f"{current}.{name}" if current else _default_literal(e.field(name))
            return f"({name} if {name} is not None else {current}.{name})" if current else name

        op, words = (">", "more than") if inv.kind == "le" else (">=", "at least")
        w.guard(2, f"{value(a)} {op} {value(b)}", f"{a} must not be {words} {b}")


def _maintain(w: _Writer, bp: Blueprint, child: EntitySpec, var: str, parents: dict[str, str], sign: int,
              depth: int = 2) -> None:
    """Keep the parents' counters and totals (count/sum invariants) true after adding or removing `var`."""
    for inv in bp.invariants:
        if inv.child != child.table or inv.via not in parents:
            continue
        parent = f"{parents[inv.via]}.{inv.field}"
        op = "+" if sign > 0 else "-"
        if inv.kind == "count_of_children":
            w(depth, f"{parent} {op}= 1")
        elif inv.kind == "sum_of_children":
            term = f"{var}.{inv.child_field}" + (f" * {var}.{inv.times}" if inv.times else "")
            w(depth, f"{parent} = round({parent} {op} {term}, 2)")


def _audit(w: _Writer, bp: Blueprint, t: ToolRecipe, record: str, depth: int = 2) -> None:
    """Append the audit-log row a write tool leaves (when the env keeps an audit log)."""
    log = support_table(bp, "audit_log")
    if not t.audit or log is None:
        return
    w(depth, f'self.add({log.cls}(id=self.new_id("audit_log"), action="{t.name}", record_id={record}, '
             f'detail={json.dumps(_default_doc(bp, t))}, logged_at=self.now()))')


def _history(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec, var: str, was: str, depth: int = 2) -> None:
    """Append a status-history row for a lifecycle move (when the env keeps status history)."""
    log = support_table(bp, "status_change")
    if not t.history or log is None:
        return
    reason = "reason" if t.reason else "None"
    w(depth, f'self.add({log.cls}(id=self.new_id("status_change"), record_id={var}.id, record_kind="{e.name}", '
             f'from_status={was}, to_status={var}.status, reason={reason}, changed_at=self.now()))')


# --- archetypes ------------------------------------------------------------------------------

def _lookup(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    _fetch(w, e, e.name, f"{e.name}_id")
    w(2, f"return ok(data={e.name})")


def _find(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = t.key or ""
    w(2, f"rows = self.select({e.cls}, {e.cls}.{key} == {key})")
    w.guard(2, "not rows", f"No {e.name.replace('_', ' ')} has {key.replace('_', ' ')} {{{key}}}")
    w(2, "return ok(data=rows[0])")


def _row_summary(e: EntitySpec, var: str) -> str:
    keys = ["id", e.label] + (["status"] if e.states else [])
    return "{" + ", ".join(f'"{k}": {var}.{k}' for k in keys) + "}"


def _list(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    if t.filter == "status":
        w.guard(2, f"status not in {_py(e.states)}", f"Unknown status {{status}}; use one of {', '.join(e.states)}")
        w(2, f"rows = self.select({e.cls}, {e.cls}.status == status)")
    elif t.filter == "parent" and e.parent:
        p = bp.entity(e.parent)
        fk = next(f for f in e.fields if f.fk == p.name)
        w.guard(2, f"self.get({p.cls}, {p.name}_id) is None", f"{_title(p)} {{{p.name}_id}} not found")
        w(2, f"rows = self.select({e.cls}, {e.cls}.{fk.name} == {p.name}_id)")
    else:
        w(2, f"rows = self.select({e.cls})")
    w(2, f"return ok(data=[{_row_summary(e, 'row')} for row in rows])")


def _summary(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    w(2, f"rows = self.select({e.cls})")
    parts = ['"total": len(rows)']
    for state in e.states:
        parts.append(f'"{state}": len([row for row in rows if row.status == {_py(state)}])')
    balance = e.role("balance")
    if balance is not None:
        rounding = "" if balance.kind == "int" else ", 2"
        parts.append(f'"{balance.name}_total": round(sum([row.{balance.name} for row in rows]){rounding})')
    w(2, "return ok(data={" + ", ".join(parts) + "})")


def _create(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    _param_checks(w, e, t.fields)
    _pair_guards(w, bp, e, t.fields, None)
    for name in t.fields:
        f = e.field(name)
        if f.unique:
            w.guard(2, f"self.select({e.cls}, {e.cls}.{f.name} == {f.name})",
                    f"{_a(e.name, True)} with {f.name} {{{f.name}}} already exists")
    for f in e.fks:
        if f.nullable:
            continue
        target = bp.entity(f.fk or "")
        var = f"{target.name}_row" if target.name == e.name else target.name
        _fetch(w, target, var, f.name)
        if target.states:
            _status_guard(w, target, var, f.name, open_states(target, bp))
    parent_fk = next((f for f in e.fks if f.fk == e.parent), None)
    live = open_states(e, bp) if e.states else []
    if parent_fk is not None and (t.capacity or t.quota):
        parent = bp.entity(parent_fk.fk or "")
        held = f"[row for row in self.select({e.cls}, {e.cls}.{parent_fk.name} == {parent_fk.name})"
        held += f" if row.status in {_py(live)}]" if e.states else "]"
        w(2, f"held = {held}")
        capacity = parent.role("capacity")
        if t.capacity and capacity is not None:
            w.guard(2, f"len(held) >= {parent.name}.{capacity.name}",
                    f"{_title(parent)} {{{parent_fk.name}}} is full ({{{parent.name}.{capacity.name}}} "
                    f"{e.table.replace('_', ' ')} at most)")
        if t.quota:
            constant = quota_constant(t, parent_fk)
            w.guard(2, f"len(held) >= {constant}",
                    f"{_title(parent)} {{{parent_fk.name}}} already has {{len(held)}} open "
                    f"{e.table.replace('_', ' ')} (limit {{{constant}}})")
    if t.archetype == "place":
        _place_guards(w, bp, t, e)
    values = [f'id=self.new_id("{e.name}")']
    values += [f"{f.name}={f.name}" for f in e.fks if not f.nullable]
    values += [f"{name}={name}" for name in t.fields]
    stocked = stock_of(bp, t)
    if stocked is not None:
        values += [f"{name}={stocked[1].name}.{name}" for name in copied_fields(bp, t)]
    values += [f"{f.name}=self.now()" for f in e.fields if "now" in f.roles and f.name not in t.fields]
    if e.has("updated_at"):
        values.append("updated_at=self.now()")
    w(2, f"{e.name} = {e.cls}({', '.join(values)})")
    w(2, f"self.add({e.name})")
    parents = {f.name: (f"{bp.entity(f.fk or '').name}_row" if f.fk == e.name else bp.entity(f.fk or "").name)
               for f in e.fks if not f.nullable}
    _maintain(w, bp, e, e.name, parents, +1)
    result = f'"{e.name}_id": {e.name}.id'
    if t.archetype == "place":
        result += _place_effects(w, bp, t, e)
    _audit(w, bp, t, f"{e.name}.id")
    w(2, f'return ok(data={{{result}}}, message=f"Created {e.name.replace("_", " ")} {{{e.name}.id}}")')


def _place_guards(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    """A placement's own checks: enough stock, a known payment method, enough balance when paying from it."""
    stocked = stock_of(bp, t)
    if stocked is not None:
        fk, target, balance = stocked
        need = t.quantity or "1"
        w.guard(2, f"{need} > {target.name}.{balance.name}",
                f"Only {{{target.name}.{balance.name}}} {balance.name.replace('_', ' ')} left for "
                f"{target.name.replace('_', ' ')} {{{fk.name}}}")
    if not t.price:
        return
    w.guard(2, f"payment_method not in {_py(PAYMENT_METHODS)}",
            f"payment_method must be one of {', '.join(PAYMENT_METHODS)}, got {{payment_method}}")
    drawn = _payer_balance(bp, t)
    times = f" * {t.quantity}" if t.quantity and per_unit(t.price) else ""
    price = f"{t.price}{times}"
    if stocked is not None and t.price in copied_fields(bp, t):
        price = f"{stocked[1].name}.{t.price}{times}"
    if drawn is None:
        w.guard(2, 'payment_method == "balance"', f"{_title(e)} cannot be paid from a balance; use card or bank_transfer")
        return
    payer, balance = drawn
    w.guard(2, f'payment_method == "balance" and round({price}, 2) > {payer.name}.{balance.name}',
            f"{_title(payer)} {{{t.payer}}} has only {{{payer.name}.{balance.name}}} {balance.name.replace('_', ' ')}; "
            f"pay the rest another way")


def _place_effects(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> str:
    """A placement's writes beyond the new record: stock, the payer's balance, the payment row."""
    stocked = stock_of(bp, t)
    if stocked is not None:
        _fk, target, balance = stocked
        w(2, f"{target.name}.{balance.name} -= {e.name}.{t.quantity}" if t.quantity else
          f"{target.name}.{balance.name} -= 1")
        if t.touch:
            _touch(w, target, target.name)
    charge = charge_of(bp, t, e.name)
    if charge is None:
        return ""
    drawn = _payer_balance(bp, t)
    if drawn is not None:
        payer, balance = drawn
        w(2, 'if payment_method == "balance":')
        w(3, f"{payer.name}.{balance.name} = round({payer.name}.{balance.name} - {charge}, 2)")
        if t.touch:
            _touch(w, payer, payer.name, depth=3)
    pay = support_table(bp, "payment")
    if pay is not None:
        w(2, f'self.add({pay.cls}(id=self.new_id("payment"), reference={e.name}.id, paid_amount={charge}, '
             f'method=payment_method, paid_at=self.now()))')
    return f', "charged": {charge}, "payment_method": payment_method'



def _update(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    """A partial update: every field parameter is optional and only what is given changes."""
    key = f"{e.name}_id"
    _fetch(w, e, e.name, key)
    if e.states:
        _status_guard(w, e, e.name, key, open_states(e, bp))
    w.guard(2, " and ".join(f"{name} is None" for name in t.fields),
            f"Nothing to change: give at least one of {', '.join(t.fields)}")
    for name in t.fields:
        f = e.field(name)
        for condition, message in _value_checks(f, name):
            w.guard(2, f"{name} is not None and ({condition})", message)
        if f.unique:
            w.guard(2, f"{name} is not None and [row for row in self.select({e.cls}, {e.cls}.{f.name} == {f.name}) "
                       f"if row.id != {key}]", f"Another {e.name.replace('_', ' ')} already has {f.name} {{{f.name}}}")
    _pair_guards(w, bp, e, t.fields, e.name)
    for name in t.fields:
        w(2, f"if {name} is not None:")
        w(3, _assign(e.field(name), e.name, name))
    if t.touch:
        _touch(w, e, e.name)
    _audit(w, bp, t, f"{e.name}.id")
    w(2, f'return ok(data={e.name}, message=f"Updated {e.name.replace("_", " ")} {{{key}}}")')


def _adjust(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    f = e.field(t.field or "")
    _fetch(w, e, e.name, key)
    w.guard(2, "amount <= 0", "amount must be more than 0, got {amount}")
    if e.states:
        _status_guard(w, e, e.name, key, open_states(e, bp))
    if t.deadline:
        _deadline_guard(w, e, key)
    current = f"{e.name}.{f.name}"
    if t.direction == "decrease":
        w.guard(2, f"amount > {current}", f"{_title(e)} {{{key}}} has only {{{current}}} {f.name.replace('_', ' ')}")
        value = f"{current} - amount"
    else:
        hi = _num(f.hi, f.kind)
        w.guard(2, f"{current} + amount > {hi}",
                f"{f.name.replace('_', ' ').capitalize()} of {e.name.replace('_', ' ')} {{{key}}} would exceed {hi}")
        value = f"{current} + amount"
    w(2, _assign(f, e.name, value if f.kind == "int" else f"round({value}, 2)"))
    if t.touch:
        _touch(w, e, e.name)
    w(2, f'return ok(data={{"{key}": {e.name}.id, "{f.name}": {current}}})')


def _deadline_guard(w: _Writer, e: EntitySpec, key: str) -> None:
    deadline = e.role("deadline")
    if deadline is None:
        return
    var = f"{e.name}.{deadline.name}"
    w.guard(2, f"{var} is not None and {var} < self.now()",
            f"{_title(e)} {{{key}}} is past its {deadline.name.replace('_', ' ')}")


def _delete(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    _fetch(w, e, e.name, key)
    if t.sources:
        _status_guard(w, e, e.name, key, t.sources)
    for child in bp.children(e.name):
        for f in child.fields:
            if f.fk == e.name:
                w.guard(2, f"self.select({child.cls}, {child.cls}.{f.name} == {key})",
                        f"{_title(e)} {{{key}}} still has {child.table.replace('_', ' ')}")
    parents: dict[str, str] = {}
    for inv in bp.invariants:
        if inv.child == e.table and inv.via and inv.via not in parents:
            parent = bp.entity(e.field(inv.via).fk or "")
            var = f"{parent.name}_parent"
            w(2, f"{var} = self.get({parent.cls}, {e.name}.{inv.via})")
            parents[inv.via] = var
    for via, var in parents.items():
        w(2, f"if {var} is not None:")
        _maintain(w, bp, e, e.name, {via: var}, -1, depth=3)
    w(2, f"self.delete({e.name})")
    _audit(w, bp, t, key)
    w(2, f'return ok(message=f"Deleted {e.name.replace("_", " ")} {{{key}}}")')


def _transition(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    _fetch(w, e, e.name, key)
    if t.owner:
        w.guard(2, f"{e.name}.{t.owner} != {t.owner}",
                f"{_title(e)} {{{key}}} does not belong to {t.owner.removesuffix('_id').replace('_', ' ')} {{{t.owner}}}")
    _status_guard(w, e, e.name, key, t.sources)
    if t.deadline:
        _deadline_guard(w, e, key)
    _param_checks(w, e, t.extra)
    if t.reason:
        w.guard(2, "not reason.strip()", "reason must not be empty")
    if t.history and support_table(bp, "status_change") is not None:
        w(2, f"was = {e.name}.status")
    w(2, f"{e.name}.status = {_py(t.target)}")
    if t.stamp:
        w(2, f"{e.name}.{t.stamp} = self.now()")
    if t.reason:
        w(2, f"{e.name}.{t.reason} = reason")
    for name in t.extra:
        w(2, _assign(e.field(name), e.name, name))
    if t.touch:
        _touch(w, e, e.name)
    _history(w, bp, t, e, e.name, "was")
    _audit(w, bp, t, f"{e.name}.id")
    w(2, f'return ok(data={{"{key}": {e.name}.id, "status": {e.name}.status}}, '
         f'message=f"{_title(e)} {{{key}}} is now {t.target}")')


def _cascade(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    child = bp.entity(t.child or "")
    fk = next(f for f in child.fields if f.fk == e.name)
    _fetch(w, e, e.name, key)
    _status_guard(w, e, e.name, key, t.sources)
    if t.reason:
        w.guard(2, "not reason.strip()", "reason must not be empty")
    w(2, "moved = 0")
    w(2, f"for row in self.select({child.cls}, {child.cls}.{fk.name} == {key}):")
    w(3, f"if row.status in {_py(t.child_sources)}:")
    history = t.history and support_table(bp, "status_change") is not None
    if history:
        w(4, "was = row.status")
    w(4, f"row.status = {_py(t.child_target)}")
    if child.has(f"{t.child_target}_at"):
        w(4, f"row.{t.child_target}_at = self.now()")
    if t.touch:
        _touch(w, child, "row", depth=4)
    _history(w, bp, t, child, "row", "was", depth=4)
    w(4, "moved += 1")
    if history:
        w(2, f"was = {e.name}.status")
    w(2, f"{e.name}.status = {_py(t.target)}")
    if t.stamp:
        w(2, f"{e.name}.{t.stamp} = self.now()")
    if t.reason:
        w(2, f"{e.name}.{t.reason} = reason")
    if t.touch:
        _touch(w, e, e.name)
    _history(w, bp, t, e, e.name, "was")
    _audit(w, bp, t, f"{e.name}.id")
    w(2, f'return ok(data={{"{key}": {e.name}.id, "status": {e.name}.status, "{child.table}_moved": moved}})')


def _transfer(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    """Move an amount between two records' balances, with a flat fee, a ledger entry and an audit row."""
    f = e.field(t.field or "")
    src, dst = f"from_{e.name}_id", f"to_{e.name}_id"
    _fetch(w, e, "sender", src)
    _fetch(w, e, "receiver", dst)
    w.guard(2, f"{src} == {dst}", f"Cannot move {f.name.replace('_', ' ')} from a {e.name.replace('_', ' ')} to itself")
    w.guard(2, "amount <= 0", "amount must be more than 0, got {amount}")
    if e.states:
        _status_guard(w, e, "sender", src, open_states(e, bp))
        _status_guard(w, e, "receiver", dst, open_states(e, bp))
    fee = fee_constant(t)
    w.guard(2, f"amount + {fee} > sender.{f.name}",
            f"{_title(e)} {{{src}}} has only {{sender.{f.name}}} {f.name.replace('_', ' ')} (the fee is {{{fee}}})")
    hi = _num(f.hi, f.kind)
    w.guard(2, f"receiver.{f.name} + amount > {hi}",
            f"{f.name.replace('_', ' ').capitalize()} of {e.name.replace('_', ' ')} {{{dst}}} would exceed {hi}")
    if f.kind == "int":
        w(2, f"sender.{f.name} -= amount + {fee}")
        w(2, f"receiver.{f.name} += amount")
    else:
        w(2, f"sender.{f.name} = round(sender.{f.name} - amount - {fee}, 2)")
        w(2, f"receiver.{f.name} = round(receiver.{f.name} + amount, 2)")
    if t.touch:
        _touch(w, e, "sender")
        _touch(w, e, "receiver")
    ledger = support_table(bp, "ledger_entry")
    if ledger is not None:
        w(2, f'self.add({ledger.cls}(id=self.new_id("ledger_entry"), memo=f"{f.name.replace("_", " ")} from '
             f'{{{src}}} to {{{dst}}}", from_account={src}, to_account={dst}, transfer_amount=amount, fee={fee}, '
             f'posted_at=self.now()))')
    _audit(w, bp, t, src)
    w(2, f'return ok(data={{"{src}": sender.id, "{dst}": receiver.id, "{f.name}": sender.{f.name}, "fee": {fee}}})')


_ARCHETYPES = {"lookup": _lookup, "find": _find, "list": _list, "summary": _summary, "create": _create,
               "update": _update, "adjust": _adjust, "delete": _delete, "transition": _transition,
               "cascade": _cascade, "transfer": _transfer, "place": _create}


# --- module -------------------------------------------------------------------------------------

def _default_literal(f: FieldSpec) -> str:
    """The value a new record gets for a field no parameter sets (what `_field_line` declares)."""
    if f.nullable:
        return "None"
    if f.kind == "status" or f.kind == "choice":
        return _py(f.choices[0])
    if f.kind == "version":
        return "1"
    if f.kind in ("int", "float", "money"):
        return _num(f.lo if f.lo is not None and f.lo > 0 else 0, f.kind)
    if f.kind == "bool":
        return "False"
    return '""'


def _field_line(f: FieldSpec, bp: Blueprint) -> str:
    args: list[str] = []
    if f.nullable or f.kind in ("status", "version", "int", "float", "money", "bool", "choice"):
        args.append(_default_literal(f))
    if f.unique:
        args.append("unique=True")
    if f.kind == "fk":
        args.append(f'foreign_key="{bp.entity(f.fk or "").table}.id"')
    description = _describe(f)
    if f.kind in ("status", "choice"):
        description = f"{description}: {' | '.join(f.choices)}"
    elif f.kind in ("int", "float", "money") and f.lo is not None:
        description += f" ({_num(f.lo, f.kind)} to {_num(f.hi, f.kind)})"
    args.append(f"description={json.dumps(description + '.', ensure_ascii=False)}")
    return f"{f.name}: {f.python_type} = Field({', '.join(args)})"


def _docstring(w: _Writer, summary: str, params: list[tuple[str, str, str, str | None]]) -> None:
    w(2, f'"""{summary}')
    if params:
        w()
        w(2, "Args:")
        for name, _type, description, _default in params:
            w(3, f"{name}: {description}")
    w(2, '"""')


def rules_of(bp: Blueprint) -> list[str]:
    """The env's rules in plain words, for the manifest and the agent's system prompt."""
    rules: list[str] = []
    for t in bp.tools:
        e = bp.entity(t.entity)
        what = e.name.replace("_", " ")
        if t.archetype == "transition":
            rule = f"{t.name}: {_a(what)} must be {' or '.join(t.sources)}; it becomes {t.target}"
            if t.owner:
                rule += f", and only for its own {t.owner.removesuffix('_id').replace('_', ' ')}"
            if t.deadline and (deadline := e.role("deadline")):
                rule += f", never after its {deadline.name.replace('_', ' ')}"
            rules.append(rule + ".")
        elif t.archetype == "create" and (t.capacity or t.quota):
            parent = bp.entity(e.parent or "")
            limit = []
            if t.capacity and (capacity := parent.role("capacity")):
                limit.append(f"its {capacity.name.replace('_', ' ')}")
            if t.quota:
                limit.append(str(t.quota))
            rules.append(f"{_a(parent.name, True)} holds at most {' and at most '.join(limit)} open "
                         f"{e.table.replace('_', ' ')}.")
        elif t.archetype == "adjust":
            f = e.field(t.field or "")
            rules.append(f"The {f.name.replace('_', ' ')} of {_a(what)} never goes below 0"
                         + (f" or above {_num(f.hi, f.kind)}." if t.direction == "increase" else "."))
        elif t.archetype == "delete":
            rules.append(f"{_a(what, True)} can be deleted only " + (f"while {' or '.join(t.sources)} and " if t.sources else "")
                         + "when nothing refers to it.")
        elif t.archetype == "cascade":
            child = bp.entity(t.child or "")
            rules.append(f"{t.name}: moving {_a(what)} to {t.target} moves its {' and '.join(t.child_sources)} "
                         f"{child.table.replace('_', ' ')} to {t.child_target}.")
        elif t.archetype == "transfer":
            f = e.field(t.field or "")
            rules.append(f"{t.name}: a transfer between two {e.table.replace('_', ' ')} charges the sender a flat fee of "
                         f"{fee_of(f)} on top; the sender's {f.name.replace('_', ' ')} never goes below 0.")
        elif t.archetype == "place":
            stocked = stock_of(bp, t)
            if stocked is not None:
                rules.append(f"{t.name}: the {(t.quantity or '').replace('_', ' ')} never exceeds the "
                             f"{stocked[1].name.replace('_', ' ')}'s {stocked[2].name.replace('_', ' ')}.")
            drawn = _payer_balance(bp, t)
            if t.price and drawn is not None:
                rules.append(f"{t.name}: paying by balance needs enough {drawn[1].name.replace('_', ' ')}; otherwise "
                             f"pay another way.")
    for inv in bp.invariants:
        if inv.kind in ("le", "lt") and inv.other:
            words = "never exceeds" if inv.kind == "le" else "is always before"
            rules.append(f"The {inv.field.replace('_', ' ')} of {_a(bp.by_table(inv.collection).name)} {words} its "
                         f"{inv.other.replace('_', ' ')}.")
    for e in bp.entities:
        for f in e.fields:
            if f.unique:
                rules.append(f"{f.name.replace('_', ' ').capitalize()} is unique among {e.table.replace('_', ' ')}.")
    return list(dict.fromkeys(rules))


def compile_env(bp: Blueprint) -> str:
    """The env module's source for a blueprint."""
    w = _Writer()
    w(0, f'"""{bp.name}: {bp.description}"""')
    w()
    w(0, "from __future__ import annotations")
    w()
    w(0, "import datetime as dt")
    w()
    w(0, "from sqlmodel import Field")
    w()
    w(0, "from catalog.envkit import Env, fail, ok, table_base, tool")
    w()
    quotas: list[tuple[str, int | float]] = []
    for t in bp.tools:
        if t.archetype == "create" and t.quota:
            e = bp.entity(t.entity)
            fk = next(f for f in e.fks if f.fk == e.parent)
            quotas.append((quota_constant(t, fk), t.quota))
    for t in bp.tools:
        if t.archetype == "transfer":
            quotas.append((fee_constant(t), fee_of(bp.entity(t.entity).field(t.field or ""))))
    for name, value in dict(quotas).items():
        w(0, f"{name} = {value}")
    w(0, "Table = table_base()")
    for e in bp.entities:
        w()
        w()
        w(0, f"class {e.cls}(Table, table=True):  # type: ignore[call-arg]")
        w(1, f'"""{(e.description or "A " + e.name.replace("_", " ")).rstrip(".")}."""')
        w()
        w(1, f'__tablename__ = "{e.table}"')
        w(1, f'id: str = Field(primary_key=True, description="{_title(e)} id, such as \'{e.prefix}001\'.")')
        for f in e.fields:
            w(1, _field_line(f, bp))
    w()
    w()
    w(0, f"class {_camel(bp.env_id.split('-')[0])}Env(Env):")
    w(1, f'"""{bp.name}, used by a {bp.actor}."""')
    w()
    w(1, f"tables = ({', '.join(e.cls for e in bp.entities)},)")
    for t in bp.tools:
        e = bp.entity(t.entity)
        params = tool_params(bp, t)
        kind = "read" if t.archetype in READS else "write"
        w()
        w(1, f'@tool(kind="{kind}")')
        signature = ", ".join(["self"] + [f"{n}: {ty}" + (f" = {d}" if d is not None else "") for n, ty, _, d in params])
        if len(signature) > 100:
            signature = "\n        " + ",\n        ".join(signature.split(", ")) + ",\n    "
        w(1, f"def {t.name}({signature}) -> dict:")
        _docstring(w, (t.doc or _default_doc(bp, t)).rstrip(".") + ".", params)
        _ARCHETYPES[t.archetype](w, bp, t, e)
    return w.text()


def _default_doc(bp: Blueprint, t: ToolRecipe) -> str:
    e = bp.entity(t.entity)
    what = e.name.replace("_", " ")
    plural = e.table.replace("_", " ")
    children = bp.entity(t.child).table.replace("_", " ") if t.child else ""
    return {
        "lookup": f"Show one {what} with all its fields",
        "find": f"Find {_a(what)} by its {(t.key or '').replace('_', ' ')}",
        "transfer": f"Move {(t.field or '').replace('_', ' ')} from one {what} to another (a flat fee is charged)",
        "place": _place_doc(bp, t),
        "list": f"List {plural}" + {"status": " in one state", "parent": f" of one {(e.parent or '').replace('_', ' ')}",
                                    "none": ""}[t.filter],
        "summary": f"Count {plural}" + (" by state" if e.states else ""),
        "create": f"Create {_a(what)}",
        "update": f"Change any of {_a(what)}'s {', '.join(f.replace('_', ' ') for f in t.fields)} (only what is given)",
        "adjust": f"{'Add to' if t.direction == 'increase' else 'Take from'} {_a(what)}'s "
                  f"{(t.field or '').replace('_', ' ')}",
        "delete": f"Delete {_a(what)}",
        "transition": f"Move {_a(what)} from {' or '.join(t.sources)} to {t.target}" + (", with the reason" if t.reason
                                                                                         else ""),
        "cascade": f"Move {_a(what)} to {t.target}, and its {' and '.join(t.child_sources)} "
                   f"{children} to {t.child_target}",
    }[t.archetype]


def _place_doc(bp: Blueprint, t: ToolRecipe) -> str:
    e = bp.entity(t.entity)
    parts = [f"Create {_a(e.name)}"]
    stocked = stock_of(bp, t)
    if stocked is not None:
        parts.append(f"take it from the {stocked[1].name.replace('_', ' ')}'s {stocked[2].name.replace('_', ' ')}")
    counted = [bp.by_table(i.collection).name.replace("_", " ") for i in bp.invariants
               if i.child == e.table and i.kind in ("count_of_children", "sum_of_children")]
    if counted:
        parts.append(f"update the {' and '.join(sorted(set(counted)))} totals")
    if t.price:
        parts.append("and record its payment")
    return ", ".join(parts)
