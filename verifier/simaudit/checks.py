"""The properties a simulator's answer must have, as a named registry (one decorated function each).

Each property reads one judged answer (the case with its executed truth, the simulator's answer,
the tool's constraint spec) and returns a `Verdict`: it does not apply, it holds, or it is
violated (with a one-line reason). Some are judged by execution (Feedback Match, strict Config
Match, the guard execution reports); the others hold for any correct simulator whatever the
truth (a failure changes nothing, a read tool changes nothing, writes stay in the write set, the
next state fits the schema, the same question gets the same answer, an unrelated record renamed
or added does not change the answer). The metamorphic ones ask the simulator more questions
through `Judged.ask` (cached and budgeted like every other question); `extra_asks` says how many.

Adding a property is one `@simulator_property(...)` function; the audit and its report take the
list from `PROPERTIES`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from catalog.bench.items import SimResult
from catalog.models import Action, Outcome
from catalog.registry import Registry
from catalog.state.delta import DeltaConflict, DeltaOp, apply_delta
from catalog.state.jsonable import canonical_json
from constraints.extract import template_regex
from constraints.spec import ConstraintSpec, ToolSpec
from verifier.audit.metrics import DeltaFormatError, feedback_match, parse_delta, parse_observation, strict_config_match
from verifier.gate import properties
from verifier.simaudit.cases import Case

__all__ = ["PROPERTIES", "Judged", "SimProperty", "Verdict", "simulator_property"]

Asker = Callable[[dict[str, Any], Action, int], "SimResult | None"]


@dataclass(frozen=True)
class Verdict:
    """A property's verdict on one answer: `applies` False means the input says nothing about it."""

    applies: bool
    problem: str | None = None

    @property
    def violated(self) -> bool:
        return self.applies and self.problem is not None


NOT_APPLICABLE = Verdict(False)
HOLDS = Verdict(True)


def violated(problem: str) -> Verdict:
    return Verdict(True, problem)


@dataclass
class Judged:
    """One answered case: the input and its truth, the answer, the spec; `ask` poses a related question."""

    case: Case
    answer: SimResult
    spec: ConstraintSpec
    ask: Asker

    @property
    def tool(self) -> ToolSpec:
        return self.spec.tools[self.case.action.name]

    def predicted_ops(self) -> list[DeltaOp] | None:
        """The answer's Δ as ops; None if it is malformed."""
        try:
            return parse_delta(self.answer.delta or [])
        except DeltaFormatError:
            return None


CheckFn = Callable[[Judged], Verdict]


@dataclass(frozen=True)
class SimProperty:
    """A registered property: its name, what it says, how many extra questions it asks per input."""

    name: str
    summary: str
    judge: Literal["execution", "spec", "metamorphic"]
    extra_asks: int
    check: CheckFn


PROPERTIES: Registry[SimProperty] = Registry("simulator property")


def simulator_property(name: str, summary: str, *, judge: Literal["execution", "spec", "metamorphic"],
                       extra_asks: int = 0) -> Callable[[CheckFn], CheckFn]:
    """Register a property check under `name` (the report's key)."""
    return PROPERTIES.register(name, lambda check: SimProperty(name, summary, judge, extra_asks, check))


def _short(value: Any, limit: int = 160) -> str:
    text = canonical_json(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."


# --- judged by execution ------------------------------------------------------------------------
@simulator_property("feedback_match", "the predicted observation equals the executed one (FM)", judge="execution")
def feedback(j: Judged) -> Verdict:
    if feedback_match(j.answer.observation, j.case.observation):
        return HOLDS
    return violated(f"predicted {_short(j.answer.observation)}, execution returned {_short(j.case.observation)}")


@simulator_property("config_match", "the predicted Δ applied to s gives exactly the executed s' (strict CM)",
                    judge="execution")
def config(j: Judged) -> Verdict:
    if strict_config_match(j.case.state, j.answer.delta or [], j.case.next_state):
        return HOLDS
    return violated(f"predicted Δ {_short(j.answer.delta or [])}, executed Δ {_short(j.case.delta)}")


def _failure_text(observation: Any) -> str | None:
    """The error text of an observation that says the call failed, else None.

    Failures read `{"success": false, "error": ...}` or `{"error": ...}`.
    """
    value = parse_observation(observation)
    if isinstance(value, dict) and (value.get("success") is False or ("error" in value and "success" not in value)):
        return str(value.get("error") or value.get("message") or "")
    return None


def _guards_matching(tool: ToolSpec, text: str) -> set[str]:
    """The message templates of the tool's guards that the text is an instance of."""
    return {g.message.template for g in tool.preconditions
            if not g.message.opaque and template_regex(g.message.template).fullmatch(text)}


def _predicts_failure(j: Judged) -> str | None:
    text = _failure_text(j.answer.observation)
    if text is None and isinstance(j.answer.observation, str) and _guards_matching(j.tool, j.answer.observation):
        text = j.answer.observation
    return text


@simulator_property("cites_executed_guard", "a predicted failure cites the guard execution reports (its template)",
                    judge="execution")
def cited_guard(j: Judged) -> Verdict:
    if j.case.outcome != Outcome.FAILURE.value:
        return NOT_APPLICABLE
    predicted = _predicts_failure(j)
    executed = _failure_text(j.case.observation)
    if executed is None and isinstance(j.case.observation, str):
        executed = j.case.observation
    if predicted is None or executed is None:
        return NOT_APPLICABLE
    truth = _guards_matching(j.tool, executed)
    if not truth:
        return NOT_APPLICABLE  # execution's message is no known template: nothing to compare with
    if truth & _guards_matching(j.tool, predicted):
        return HOLDS
    return violated(f"execution failed by {sorted(truth)[0]!r} ({executed!r}); the simulator said {predicted!r}")


# --- hold for any correct simulator -------------------------------------------------------------
@simulator_property("failure_changes_nothing", "when the simulator predicts a failure, its Δ is empty", judge="spec")
def failure_changes_nothing(j: Judged) -> Verdict:
    if _predicts_failure(j) is None:
        return NOT_APPLICABLE
    if not j.answer.delta:
        return HOLDS
    return violated(f"predicted a failure and {len(j.answer.delta)} changes: {_short(j.answer.delta)}")


@simulator_property("read_tool_changes_nothing", "a read tool's predicted Δ is empty", judge="spec")
def read_changes_nothing(j: Judged) -> Verdict:
    if j.tool.kind != "read":
        return NOT_APPLICABLE
    if not j.answer.delta:
        return HOLDS
    return violated(f"read tool {j.tool.name} predicted to change {_short(j.answer.delta)}")


@simulator_property("writes_in_write_set", "every predicted write is inside the tool's write set", judge="spec")
def writes_in_write_set(j: Judged) -> Verdict:
    ops = j.predicted_ops()
    if not ops or not j.tool.writes_known:
        return NOT_APPLICABLE
    outside = [op.path for op in ops if not j.tool.allows_write(op.path)]
    if not outside:
        return HOLDS
    return violated(f"{j.tool.name} predicted to write {list(outside[0])}, outside its write set {j.tool.write_set}")


def _value_problem(kind: str, optional: bool, value: Any) -> str | None:
    """Why a column value does not fit its column kind (None if it fits or the kind is not checked)."""
    if value is None:
        return None if optional else "NULL"
    checks: dict[str, Callable[[Any], bool]] = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "datetime": lambda v: isinstance(v, str) and _parses(dt.datetime.fromisoformat, v),
        "date": lambda v: isinstance(v, str) and _parses(dt.date.fromisoformat, v),
    }
    fits = checks.get(kind)
    return None if fits is None or fits(value) else f"{value!r} is not a {kind}"


def _parses(parse: Callable[[str], Any], text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def schema_problem(spec: ConstraintSpec, state: dict[str, Any], changed: list[DeltaOp] | None = None) -> str | None:
    """The first schema constraint `state` breaks, or None.

    Column types of the changed records first, then non-null, unique and foreign keys (verifier.gate.properties'
    check).
    """
    for op in changed or []:
        table = op.path[0] if op.path else None
        if table not in spec.tables or len(op.path) < 2 or op.op == "delete":
            continue
        record = state.get(table, {}).get(op.path[1])
        if not isinstance(record, dict):
            continue
        for name, column in spec.tables[table].columns.items():
            problem = _value_problem(column.kind, column.optional, record.get(name))
            if problem and not (problem == "NULL" and column.primary_key):
                return f"{table}.{name} of {op.path[1]!r}: {problem}"
    return properties.schema_problem(spec, state)


@simulator_property("next_state_fits_schema", "the predicted next state satisfies the schema "
                    "(types, non-null, unique, foreign keys)", judge="spec")
def next_state_fits_schema(j: Judged) -> Verdict:
    ops = j.predicted_ops()
    if j.spec.kind != "sql" or not ops or schema_problem(j.spec, j.case.state) is not None:
        return NOT_APPLICABLE
    try:
        predicted = apply_delta(j.case.state, ops)
    except (DeltaConflict, ValueError):
        return NOT_APPLICABLE  # a Δ that does not apply fails config_match; there is no next state to check
    problem = schema_problem(j.spec, predicted, ops)
    return HOLDS if problem is None else violated(f"predicted next state: {problem}")


def _answer_key(answer: SimResult) -> str:
    return canonical_json([parse_observation(answer.observation), answer.delta or []])


@simulator_property("deterministic", "the same (state, action) asked twice gets the same answer", judge="metamorphic",
                    extra_asks=1)
def deterministic(j: Judged) -> Verdict:
    again = j.ask(j.case.state, j.case.action, 1)
    if again is None or again.abstained or again.error:
        return NOT_APPLICABLE
    if _answer_key(again) == _answer_key(j.answer):
        return HOLDS
    return violated(f"asked twice: {_short(j.answer.observation, 80)} then {_short(again.observation, 80)}")


# --- metamorphic: unrelated records ---------------------------------------------------------------
def _touched(tool: ToolSpec) -> set[str] | None:
    """Collections the tool reads or writes by its spec; None if some access is not resolved to one."""
    entries = [*tool.read_set, *tool.write_set]
    if any(e.startswith("<") for e in entries):
        return None
    return {e.split(".")[0] for e in entries}


def _mentions(value: Any, key: str) -> bool:
    """Whether a value anywhere inside `value` equals `key` (a reference to the record by its key)."""
    if isinstance(value, dict):
        return any(_mentions(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, key) for v in value)
    return value == key or (isinstance(value, int) and not isinstance(value, bool) and str(value) == key)


def unrelated_records(spec: ConstraintSpec, tool: ToolSpec, state: dict[str, Any],
                      action: Action) -> list[tuple[str, str]]:
    """Records the call cannot depend on.

    They are plain dict records in a collection outside the tool's read and write sets, their key named by
    no argument and by no other record (no foreign key points at them).
    """
    touched = _touched(tool)
    if touched is None:
        return []
    out = []
    for name in sorted(state):
        collection = state[name]
        if name in touched or not isinstance(collection, dict) or "__py__" in collection:
            continue
        if spec.kind == "sql" and name not in spec.tables:
            continue
        for key in sorted(collection):
            record = collection[key]
            if not isinstance(record, dict) or "__py__" in record or _mentions(action.arguments, key):
                continue
            others = {n: ({k: r for k, r in c.items() if k != key} if n == name else c)
                      for n, c in state.items()}
            if not _mentions(others, key):
                out.append((name, key))
    return out


def _key_fields(record: dict[str, Any], key: str) -> list[str]:
    return [field for field, value in record.items() if value == key]


def renamed(state: dict[str, Any], collection: str, key: str) -> dict[str, Any]:
    """The state with one record moved to a new key (and its own key fields updated)."""
    new = _fresh_key(state[collection], key)
    record = dict(state[collection][key])
    for field in _key_fields(record, key):
        record[field] = new
    records = {(new if k == key else k): (record if k == key else r) for k, r in state[collection].items()}
    return {**state, collection: dict(sorted(records.items()))}


def with_copy(spec: ConstraintSpec, state: dict[str, Any], collection: str, key: str) -> dict[str, Any] | None:
    """The state plus a copy of one record under a new key; None if a unique column cannot be made distinct.

    Unique text columns of the copy get a prefix.
    """
    new = _fresh_key(state[collection], key)
    record = dict(state[collection][key])
    for field in _key_fields(record, key):
        record[field] = new
    table = spec.tables.get(collection)
    for name, column in (table.columns if table is not None else {}).items():
        if column.unique and record.get(name) is not None:
            if not isinstance(record[name], str):
                return None
            record[name] = f"copy.{record[name]}"
    return {**state, collection: dict(sorted({**state[collection], new: record}.items()))}


def _fresh_key(records: dict[str, Any], key: str) -> str:
    if key.isdigit():
        return str(max(int(k) for k in records if k.isdigit()) + 1)
    candidate, n = f"{key}-x", 1
    while candidate in records:
        n += 1
        candidate = f"{key}-x{n}"
    return candidate


def _invariant(j: Judged, variant: dict[str, Any] | None, what: str) -> Verdict:
    if variant is None:
        return NOT_APPLICABLE
    other = j.ask(variant, j.case.action, 0)
    if other is None or other.abstained or other.error:
        return NOT_APPLICABLE
    if _answer_key(other) == _answer_key(j.answer):
        return HOLDS
    return violated(f"{what}: the answer became {_short(other.observation, 80)} with Δ {_short(other.delta or [], 80)}")


@simulator_property("rename_invariance", "renaming an unrelated record does not change the answer",
                    judge="metamorphic", extra_asks=1)
def rename_invariance(j: Judged) -> Verdict:
    records = unrelated_records(j.spec, j.tool, j.case.state, j.case.action)
    if not records:
        return NOT_APPLICABLE
    collection, key = records[0]
    return _invariant(j, renamed(j.case.state, collection, key), f"after renaming {collection}/{key}")


@simulator_property("extra_rows_invariance", "adding an unrelated record does not change the answer",
                    judge="metamorphic", extra_asks=1)
def extra_rows_invariance(j: Judged) -> Verdict:
    records = unrelated_records(j.spec, j.tool, j.case.state, j.case.action)
    if not records:
        return NOT_APPLICABLE
    collection, key = records[0]
    return _invariant(j, with_copy(j.spec, j.case.state, collection, key), f"after adding a copy of {collection}/{key}")
