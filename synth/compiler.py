"""The blueprint compiler: writes an env module (docs/design.md's SQL convention) from a blueprint.

Each archetype expands to a fixed, reviewed code shape: guards as `if <cond>: return
fail(...)`, state reached only through `get`/`select`/attribute writes/`add`/`delete`, time and
ids from `self.now()`/`self.new_id()`. The shapes stay inside the subset of Python that the
constraint extractor and interpreter model exactly, so the plan extracted from the compiled
program is complete and the spec-only simulator can predict every call.
"""

from __future__ import annotations

import json

from synth.blueprint import Blueprint, EntitySpec, FieldSpec, ToolRecipe

__all__ = ["compile_env", "tool_params", "rules_of", "terminal_states", "open_states", "quota_constant"]

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
    if tool.archetype == "create":
        for f in e.fields:
            if f.kind == "fk" and not f.nullable:
                target = blueprint.entity(f.fk or "")
                params.append((f.name, "str", f"The {target.name.replace('_', ' ')}, such as '{target.prefix}001'.",
                               None))
        for name in tool.fields:
            f = e.field(name)
            params.append((f.name, PYTHON_TYPES_PARAM[f.kind], f"{_describe(f)}{_range_text(f)}, such as "
                           f"{_example(f, e)}.", None))
        return params
    params.append(key)
    if tool.archetype == "transition" and tool.owner:
        f = e.field(tool.owner)
        target = blueprint.entity(f.fk or "")
        params.append((f.name, "str", f"The {target.name.replace('_', ' ')} acting, who must be the one the "
                                      f"{e.name.replace('_', ' ')} names, such as '{target.prefix}001'.", None))
    names = tool.fields if tool.archetype == "update" else tool.extra if tool.archetype == "transition" else []
    for name in names:
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


# --- archetypes ------------------------------------------------------------------------------

def _lookup(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    _fetch(w, e, e.name, f"{e.name}_id")
    w(2, f"return ok(data={e.name})")


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
    values = [f'id=self.new_id("{e.name}")']
    values += [f"{f.name}={f.name}" for f in e.fks if not f.nullable]
    values += [f"{name}={name}" for name in t.fields]
    if e.has("updated_at"):
        values.append("updated_at=self.now()")
    w(2, f"{e.name} = {e.cls}({', '.join(values)})")
    w(2, f"self.add({e.name})")
    w(2, f'return ok(data={{"{e.name}_id": {e.name}.id}}, message=f"Created {e.name.replace("_", " ")} {{{e.name}.id}}")')


def _update(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    _fetch(w, e, e.name, key)
    if e.states:
        _status_guard(w, e, e.name, key, open_states(e, bp))
    _param_checks(w, e, t.fields)
    for name in t.fields:
        f = e.field(name)
        if f.unique:
            w.guard(2, f"[row for row in self.select({e.cls}, {e.cls}.{f.name} == {f.name}) if row.id != {key}]",
                    f"Another {e.name.replace('_', ' ')} already has {f.name} {{{f.name}}}")
    for name in t.fields:
        w(2, _assign(e.field(name), e.name, name))
    if t.touch:
        _touch(w, e, e.name)
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
    w(2, f"self.delete({e.name})")
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
    w(2, f"{e.name}.status = {_py(t.target)}")
    if t.stamp:
        w(2, f"{e.name}.{t.stamp} = self.now()")
    for name in t.extra:
        w(2, _assign(e.field(name), e.name, name))
    if t.touch:
        _touch(w, e, e.name)
    w(2, f'return ok(data={{"{key}": {e.name}.id, "status": {e.name}.status}}, '
         f'message=f"{_title(e)} {{{key}}} is now {t.target}")')


def _cascade(w: _Writer, bp: Blueprint, t: ToolRecipe, e: EntitySpec) -> None:
    key = f"{e.name}_id"
    child = bp.entity(t.child or "")
    fk = next(f for f in child.fields if f.fk == e.name)
    _fetch(w, e, e.name, key)
    _status_guard(w, e, e.name, key, t.sources)
    w(2, "moved = 0")
    w(2, f"for row in self.select({child.cls}, {child.cls}.{fk.name} == {key}):")
    w(3, f"if row.status in {_py(t.child_sources)}:")
    w(4, f"row.status = {_py(t.child_target)}")
    if child.has(f"{t.child_target}_at"):
        w(4, f"row.{t.child_target}_at = self.now()")
    if t.touch:
        _touch(w, child, "row", depth=4)
    w(4, "moved += 1")
    w(2, f"{e.name}.status = {_py(t.target)}")
    if t.stamp:
        w(2, f"{e.name}.{t.stamp} = self.now()")
    if t.touch:
        _touch(w, e, e.name)
    w(2, f'return ok(data={{"{key}": {e.name}.id, "status": {e.name}.status, "{child.table}_moved": moved}})')


_ARCHETYPES = {"lookup": _lookup, "list": _list, "summary": _summary, "create": _create, "update": _update,
               "adjust": _adjust, "delete": _delete, "transition": _transition, "cascade": _cascade}


# --- module -------------------------------------------------------------------------------------

def _field_line(f: FieldSpec, bp: Blueprint) -> str:
    args: list[str] = []
    if f.nullable:
        args.append("None")
    elif f.kind == "status":
        args.append(_py(f.choices[0]))
    elif f.kind == "version":
        args.append("1")
    elif f.kind in ("int", "float", "money"):
        args.append(_num(f.lo if f.lo is not None and f.lo > 0 else 0, f.kind))
    elif f.kind == "bool":
        args.append("False")
    elif f.kind == "choice":
        args.append(_py(f.choices[0]))
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
            if t.deadline and e.role("deadline"):
                rule += f", never after its {e.role('deadline').name.replace('_', ' ')}"  # type: ignore[union-attr]
            rules.append(rule + ".")
        elif t.archetype == "create" and (t.capacity or t.quota):
            parent = bp.entity(e.parent or "")
            limit = []
            if t.capacity and parent.role("capacity"):
                limit.append(f"its {parent.role('capacity').name.replace('_', ' ')}")  # type: ignore[union-attr]
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
    quotas = []
    for t in bp.tools:
        if t.archetype == "create" and t.quota:
            e = bp.entity(t.entity)
            fk = next(f for f in e.fks if f.fk == e.parent)
            quotas.append((quota_constant(t, fk), t.quota))
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
        kind = "read" if t.archetype in ("lookup", "list", "summary") else "write"
        w()
        w(1, f'@tool(kind="{kind}")')
        signature = ", ".join(["self"] + [f"{n}: {ty}" + (f" = {d}" if d is not None else "") for n, ty, _, d in params])
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
        "list": f"List {plural}" + {"status": " in one state", "parent": f" of one {(e.parent or '').replace('_', ' ')}",
                                    "none": ""}[t.filter],
        "summary": f"Count {plural}" + (" by state" if e.states else ""),
        "create": f"Create {_a(what)}",
        "update": f"Change {_a(what)}'s {', '.join(f.replace('_', ' ') for f in t.fields)}",
        "adjust": f"{'Add to' if t.direction == 'increase' else 'Take from'} {_a(what)}'s "
                  f"{(t.field or '').replace('_', ' ')}",
        "delete": f"Delete {_a(what)}",
        "transition": f"Move {_a(what)} from {' or '.join(t.sources)} to {t.target}",
        "cascade": f"Move {_a(what)} to {t.target}, and its {' and '.join(t.child_sources)} "
                   f"{children} to {t.child_target}",
    }[t.archetype]
