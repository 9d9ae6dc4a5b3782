"""constraints.interpreter on its own: one behaviour per test, on small modules written for the test.

Each answer it gives is checked against what really happens (the class runtime running the same
module, SQLite for SQL semantics); where it cannot know, it must abstain, never guess.
"""

import copy
import sqlite3

import pytest

from catalog.envkit import META_TABLE
from catalog.models import Outcome
from catalog.runtime import ClassRuntime
from catalog.state.delta import DeltaOp
from constraints.extract import extract_spec
from constraints.interpreter import MAX_STEPS, Abstain, Interpreter

SQL_MODULE = '''
from sqlmodel import Field, col
from catalog.envkit import Env, ToolError, fail, ok, table_base, tool

Table = table_base()


class Box(Table, table=True):
    __tablename__ = "boxes"
    id: str = Field(primary_key=True)
    label: str | None = Field(None)
    items: int = Field(0)


class Boxes(Env):
    tables = (Box,)

    @tool(kind="write")
    def put(self, box_id: str, count: int = 1) -> dict:
        """Put items in a box."""
        box = self.get(Box, box_id)
        if box is None:
            return fail(f"Box {box_id} not found")
        box.items += count
        return ok(data={"items": box.items})

    @tool(kind="write")
    def make(self, label: str) -> dict:
        """Make a box."""
        if not label:
            raise ToolError("A label is required")
        box = Box(id=self.new_id("box"), label=label)
        self.add(box)
        return ok(data={"id": box.id, "at": self.now().isoformat()})

    @tool(kind="write")
    def empty_all(self, raising: bool) -> dict:
        """Empty every box, then refuse (a raised ToolError rolls back; a returned failure commits)."""
        for box in self.select(Box):
            box.items = 0
        if raising:
            raise ToolError("Emptying is not allowed")
        return fail("Emptying is not allowed")

    @tool(kind="write")
    def trash(self, box_id: str) -> dict:
        """Throw a box away."""
        box = self.get(Box, box_id)
        if box is None:
            return fail(f"Box {box_id} not found")
        self.delete(box)
        return ok()

    @tool(kind="read")
    def not_x(self) -> dict:
        """Boxes whose label is not 'x'."""
        return ok(data=[b.id for b in self.select(Box, col(Box.label) != "x")])

    @tool(kind="read")
    def labelled(self, text: str) -> dict:
        """Boxes whose label contains `text`, ignoring case."""
        return ok(data=[b.id for b in self.select(Box, col(Box.label).contains(text))])
'''

SQL_STATE = {"boxes": {"b1": {"id": "b1", "label": None, "items": 0},
                       "b2": {"id": "b2", "label": "Äpfel big", "items": 2}}}

CLASS_MODULE = '''
SEEN = []


class Shelf:
    def __init__(self, init_config: dict):
        self.slots = init_config.get("slots", {})
        self.log = init_config.get("log", [])

    def stock(self, slot: str, item: str) -> dict:
        """Put an item on a slot (at most two)."""
        if slot not in self.slots:
            raise KeyError(f"no slot {slot}")
        self.log.append(f"stock {item}")
        if len(self.slots[slot]["items"]) >= 2:
            raise ValueError(f"Slot {slot} is full")
        self.slots[slot]["items"].append(item)
        return {"success": True, "count": len(self.slots[slot]["items"])}

    def distinct(self) -> dict:
        """Every distinct item, in a set's order."""
        return {"success": True, "items": [i for i in {x for s in self.slots.values() for x in s["items"]}]}

    def remember(self, item: str) -> dict:
        """Writes module-level state."""
        SEEN.append(item)
        return {"success": True}

    def count_up(self, n: int) -> dict:
        """A loop as long as asked."""
        total = 0
        for _ in range(n):
            total += 1
        return {"success": True, "total": total}

    def square(self, n: int) -> dict:
        """Two nested loops: n * n steps."""
        total = 0
        for _ in range(n):
            for _ in range(n):
                total += 1
        return {"success": True, "total": total}

    def halve(self, slot: str) -> dict:
        """10 split over the slot's items."""
        return {"success": True, "half": 10 // len(self.slots[slot]["items"])}

    def collect(self, item: str, into: list = []) -> dict:
        """A mutable default, which persists between calls."""
        into.append(item)
        return {"success": True, "into": into}
'''

CLASS_STATE = {"slots": {"s1": {"items": ["a"]}, "s2": {"items": ["a", "b"]}, "s3": {"items": []}}, "log": []}


@pytest.fixture(scope="module")
def sql_spec():
    return extract_spec(SQL_MODULE, "sql", "Boxes")


@pytest.fixture(scope="module")
def class_spec():
    return extract_spec(CLASS_MODULE, "class", "Shelf", failure_exceptions=["ValueError"])


def run(spec, state, tool, arguments):
    """Run one call, checking that the interpreter never touches the state it was given."""
    before = copy.deepcopy(state)
    result = Interpreter(spec, state).run(tool, arguments)
    assert state == before
    return result


def abstains(spec, state, tool, arguments) -> str:
    with pytest.raises(Abstain) as raised:
        Interpreter(spec, state).run(tool, arguments)
    return raised.value.reason


# --- SQL envs -------------------------------------------------------------------------------
def test_a_sql_write_is_one_modify_of_the_changed_field(sql_spec):
    assert run(sql_spec, SQL_STATE, "put", {"box_id": "b1", "count": 2}) == (
        {"success": True, "data": {"items": 2}}, Outcome.SUCCESS, [DeltaOp("modify", ("boxes", "b1", "items"), 2)])


def test_a_failed_guard_returns_its_message_and_changes_nothing(sql_spec):
    assert run(sql_spec, SQL_STATE, "put", {"box_id": "zz"}) == (
        {"success": False, "error": "Box zz not found"}, Outcome.FAILURE, [])
    assert run(sql_spec, SQL_STATE, "make", {"label": ""}) == (
        {"success": False, "error": "A label is required"}, Outcome.FAILURE, [])  # a ToolError is a failure too


def test_a_raised_refusal_rolls_back_and_a_returned_one_keeps_its_writes_as_the_runtime_does(sql_spec):
    refused = {"success": False, "error": "Emptying is not allowed"}
    assert run(sql_spec, SQL_STATE, "empty_all", {"raising": True}) == (refused, Outcome.FAILURE, [])
    assert run(sql_spec, SQL_STATE, "empty_all", {"raising": False}) == (
        refused, Outcome.FAILURE, [DeltaOp("modify", ("boxes", "b2", "items"), 0)])


def test_new_rows_take_ids_and_time_from_the_state(sql_spec):
    observation, outcome, delta = run(sql_spec, SQL_STATE, "make", {"label": "new"})
    assert outcome is Outcome.SUCCESS and observation["data"]["id"] == "box-1"
    assert delta == [DeltaOp("add", ("boxes", "box-1"), {"id": "box-1", "label": "new", "items": 0}),
                     DeltaOp("add", (META_TABLE,), {"next_id:box": {"key": "next_id:box", "value": 2}})]
    counted = {**SQL_STATE, META_TABLE: {"next_id:box": {"key": "next_id:box", "value": 7},
                                         "clock": {"key": "clock", "value": "2030-02-03T04:05:06+00:00"}}}
    observation, _, delta = run(sql_spec, counted, "make", {"label": "new"})
    assert observation["data"] == {"id": "box-7", "at": "2030-02-03T04:05:06+00:00"}
    assert DeltaOp("modify", (META_TABLE, "next_id:box", "value"), 8) in delta


def test_a_deleted_row_is_one_delete(sql_spec):
    assert run(sql_spec, SQL_STATE, "trash", {"box_id": "b2"}) == (
        {"success": True}, Outcome.SUCCESS, [DeltaOp("delete", ("boxes", "b2"), None)])


def sqlite_ids(where: str, *parameters: str) -> list[str]:
    """What SQLite itself answers for the boxes of SQL_STATE."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE boxes (id TEXT PRIMARY KEY, label TEXT, items INTEGER)")
    db.executemany("INSERT INTO boxes VALUES (:id, :label, :items)", SQL_STATE["boxes"].values())
    return [row[0] for row in db.execute(f"SELECT id FROM boxes WHERE {where} ORDER BY id", parameters)]


def test_null_never_matches_a_comparison_as_in_sql(sql_spec):
    observation, _, _ = run(sql_spec, SQL_STATE, "not_x", {})
    assert observation["data"] == sqlite_ids("label != 'x'") == ["b2"]  # b1's NULL label is not "not x"


@pytest.mark.parametrize("text", ["BIG", "äpfel", "Äpfel"])
def test_like_folds_ascii_case_only_as_sqlite_does(sql_spec, text):
    observation, _, _ = run(sql_spec, SQL_STATE, "labelled", {"text": text})
    assert observation["data"] == sqlite_ids("label LIKE '%' || ? || '%'", text)


def test_ill_typed_arguments_are_refused_as_the_runtime_refuses_them(sql_spec):
    assert run(sql_spec, SQL_STATE, "put", {"box_id": 3}) == (
        {"error": "Bad arguments for put: box_id must be a string, got 3"}, Outcome.INVALID, [])
    lenient = Interpreter(sql_spec, SQL_STATE, strict_args=False).run("put", {"box_id": "b1", "count": True})
    assert lenient[1] is Outcome.SUCCESS  # imported envs: the call runs as Python runs it


def test_calls_it_cannot_bind_or_find_abstain(sql_spec):
    assert abstains(sql_spec, SQL_STATE, "nope", {}) == "unknown tool nope"
    assert "do not bind" in abstains(sql_spec, SQL_STATE, "put", {"box": "b1"})
    assert "do not bind" in abstains(sql_spec, SQL_STATE, "put", {})


# --- class envs -----------------------------------------------------------------------------
def test_class_writes_are_diffed_attribute_by_attribute(class_spec):
    assert run(class_spec, CLASS_STATE, "stock", {"slot": "s1", "item": "c"}) == (
        {"success": True, "count": 2}, Outcome.SUCCESS,
        [DeltaOp("modify", ("log",), ["stock c"]), DeltaOp("modify", ("slots", "s1", "items"), ["a", "c"])])


def test_a_declared_failure_exception_keeps_what_was_written_before_it(class_spec):
    assert run(class_spec, CLASS_STATE, "stock", {"slot": "s2", "item": "c"}) == (
        {"success": False, "error": "Slot s2 is full"}, Outcome.FAILURE, [DeltaOp("modify", ("log",), ["stock c"])])


@pytest.mark.parametrize(("tool", "arguments"), [("stock", {"slot": "s1", "item": "c"}),
                                                 ("stock", {"slot": "s2", "item": "c"}),
                                                 ("halve", {"slot": "s2"}), ("count_up", {"n": 3})])
def test_class_answers_match_the_class_runtime(class_spec, tool, arguments):
    namespace: dict = {}
    exec(CLASS_MODULE, namespace)
    runtime = ClassRuntime(namespace["Shelf"], failure_exceptions=["ValueError"])
    runtime.reset(copy.deepcopy(CLASS_STATE))
    result = runtime.call({"name": tool, "arguments": arguments})
    assert run(class_spec, CLASS_STATE, tool, arguments) == (result.observation, result.outcome, result.delta)


@pytest.mark.parametrize(("tool", "arguments", "reason"), [
    ("stock", {"slot": "zz", "item": "c"}, "the tool raises KeyError"),  # not a declared failure: a crash
    ("halve", {"slot": "s3"}, "the tool raises ZeroDivisionError"),
    ("distinct", {}, "iteration over a set"),
    ("remember", {"item": "x"}, "module-level SEEN"),
    ("collect", {"item": "x"}, "mutable default of into"),
])
def test_what_the_state_does_not_decide_is_abstained_on(class_spec, tool, arguments, reason):
    assert reason in abstains(class_spec, CLASS_STATE, tool, arguments)


def test_a_run_has_a_step_budget_and_ranges_a_length_limit(class_spec):
    assert run(class_spec, CLASS_STATE, "square", {"n": 100})[0] == {"success": True, "total": 10_000}
    assert MAX_STEPS < 1000 * 1000
    assert abstains(class_spec, CLASS_STATE, "square", {"n": 1000}) == "step budget exhausted"
    assert "range too long" in abstains(class_spec, CLASS_STATE, "count_up", {"n": MAX_STEPS})


def test_guards_that_held_are_recorded(class_spec):
    interpreter = Interpreter(class_spec, CLASS_STATE)
    interpreter.run("stock", {"slot": "s2", "item": "c"})
    assert [function for function, _line in interpreter.fired] == ["stock"]  # the "full" guard, not "no slot"
