"""One test per extraction pattern, on small modules written for the test."""

import json

import pytest

from constraints.extract import ExtractionError, extract_spec, shared_spec, template_regex
from constraints.spec import ConstraintSpec

SQL_MODULE = '''
import datetime as dt
from sqlmodel import Field
from catalog.envkit import Env, ToolError, fail, ok, table_base, tool

LIMIT = 3
KINDS = ("a", "b")
Table = table_base()


class Box(Table, table=True):
    __tablename__ = "boxes"
    id: str = Field(primary_key=True)
    owner: str | None = Field(None)
    items: int = Field(0)
    sealed_at: dt.datetime | None = None


class Boxes(Env):
    tables = (Box,)

    def _problem(self, box):
        if box.items >= LIMIT:
            return f"Box {box.id} is full ({box.items} of {LIMIT})"
        if box.sealed_at is not None:
            return "Box is sealed"
        return None

    @tool(kind="write")
    def put(self, box_id: str, count: int = 1) -> dict:
        """Put items in a box.

        Args:
            box_id: The box.
            count: How many.
        """
        box = self.get(Box, box_id)
        if box is None:
            return fail(f"Box {box_id} not found")
        problem = self._problem(box)
        if problem:
            return fail(problem)
        box.items += count
        box.owner = "me"
        return ok(data=box)

    @tool(kind="write")
    def make(self, kind: str) -> dict:
        """Make a box."""
        if kind not in KINDS:
            raise ToolError(f"Unknown kind {kind}")
        box = Box(id=self.new_id("box"))
        self.add(box)
        return ok(data={"id": box.id})

    @tool(kind="write")
    def trash(self, box_id: str) -> dict:
        """Throw a box away."""
        box = self.get(Box, box_id)
        if box is None:
            return {"success": False, "error": "no box"}
        self.delete(box)
        return ok()

    @tool(kind="read")
    def peek(self, box_id: str) -> dict:
        """Declared read, but it writes: the planted kind mismatch."""
        box = self.get(Box, box_id)
        box.items = 0
        return ok()

    @tool(kind="read")
    def count(self) -> dict:
        """Count boxes."""
        return ok(data=len(self.select(Box)))
'''

CLASS_MODULE = '''
class Shelf:
    def __init__(self, init_config: dict):
        self.slots = {}
        self.log = []
        self.meta = {}

    def _require(self, slot_id):
        if slot_id not in self.slots:
            raise KeyError(f"No slot {slot_id}")

    def place(self, slot_id: str, item: str) -> dict:
        if slot_id not in self.slots:
            return {"success": False, "error": f"Slot {slot_id} unknown"}
        slot = self.slots[slot_id]
        slot["items"].append(item)
        self.log.append({"placed": item})
        self.meta.setdefault("count", 0)
        self.meta.update({"last": item})
        return {"success": True}

    def clear(self, slot_id: str) -> dict:
        self._require(slot_id)
        removed = self.slots[slot_id]["items"].pop()
        del self.slots[slot_id]
        return {"removed": removed}

    def weird(self, name: str) -> dict:
        value = getattr(self, name)
        while False:
            pass
        return {"value": value}

    def parse(self, text: str) -> dict:
        try:
            number = int(text)
        except ValueError:
            return {"error": f"Not a number: {text}"}
        return {"number": number}
'''


@pytest.fixture(scope="module")
def sql():
    return extract_spec(SQL_MODULE, "sql", "Boxes")


@pytest.fixture(scope="module")
def cls():
    return extract_spec(CLASS_MODULE, "class", "Shelf", failure_exceptions=["KeyError"])


def test_parameters_with_types_defaults_and_enums(sql):
    params = {p.name: p for p in sql.tools["put"].params}
    assert params["box_id"].model_dump(mode="json") == {"name": "box_id", "annotation": "str", "json_type": "string",
                                                          "required": True, "nullable": False}
    assert params["count"].default == 1 and params["count"].default_known and params["count"].required is False
    assert sql.tools["make"].params[0].enum == ["a", "b"]


def test_fstring_messages_become_templates_with_named_holes(sql):
    guard = sql.tools["put"].preconditions[0]
    assert guard.condition.source == "box is None"
    assert guard.message.template == "Box {box_id} not found" and guard.message.holes == ["box_id"]
    assert template_regex(guard.message.template).fullmatch("Box b-7 not found")
    assert not template_regex(guard.message.template).fullmatch("Box b-7 is full")


def test_guards_inside_helpers_and_their_early_returns_count(sql):
    guards = sql.tools["put"].preconditions
    via = [(g.via, g.condition.source, g.message.template) for g in guards if g.via]
    assert via == [("_problem", "box.items >= LIMIT", "Box {box.id} is full ({box.items} of {LIMIT})"),
                   ("_problem", "box.sealed_at is not None", "Box is sealed")]
    assert "_problem" in sql.tools["put"].helpers


def test_sql_session_writes(sql):
    put = [(e.op, e.path) for e in sql.tools["put"].effects]
    assert put == [("modify", ["boxes", "<box_id>", "items"]), ("modify", ["boxes", "<box_id>", "owner"])]
    make = [(e.op, e.path[0]) for e in sql.tools["make"].effects]
    assert ("add", "boxes") in make and ("modify", "env_meta") in make
    assert [(e.op, e.path) for e in sql.tools["trash"].effects] == [("delete", ["boxes", "<box_id>"])]
    assert sql.tools["put"].write_set == ["boxes.items", "boxes.owner"]
    assert "boxes.items" in sql.tools["put"].read_set


def test_raise_and_error_dict_guards(sql):
    make = sql.tools["make"].preconditions[0]
    assert make.exit == "raise" and make.message.template == "Unknown kind {kind}"
    trash = sql.tools["trash"].preconditions[0]
    assert trash.message.template == "no box"


def test_planted_kind_mismatch_is_reported(sql):
    assert sql.tools["peek"].kind_mismatch is True
    assert sql.tools["peek"].declared_kind == "read" and sql.tools["peek"].inferred_kind == "write"
    assert sql.tools["peek"].kind == "read"
    assert sql.tools["count"].kind_mismatch is False


def test_result_shapes(sql):
    assert sql.tools["put"].result_shape.model_dump() == {"success": ["data", "success"], "failure": ["error", "success"],
                                                          "other": []}


def test_container_mutations_on_class_state(cls):
    effects = [(e.op, e.path) for e in cls.tools["place"].effects]
    assert effects == [("append", ["slots", "<slot_id>", "items"]), ("append", ["log"]),
                       ("setdefault", ["meta"]), ("update", ["meta"])]
    clear = [(e.op, e.path) for e in cls.tools["clear"].effects]
    assert ("pop", ["slots", "<slot_id>", "items"]) in clear and ("delete", ["slots", "<slot_id>"]) in clear
    assert cls.tools["clear"].preconditions[0].via == "_require"
    assert cls.tools["clear"].preconditions[0].exit == "raise"


def test_class_kinds_are_inferred(cls):
    assert cls.tools["place"].inferred_kind == "write" and cls.tools["parse"].inferred_kind == "read"
    assert cls.state_attributes == ["slots", "log", "meta"]


def test_what_cannot_be_followed_is_marked(cls):
    reasons = [u.why for u in cls.tools["weird"].unsupported]
    assert "dynamic attribute or code" in reasons and "While" in reasons


def test_try_except_failures_are_guards(cls):
    guard = cls.tools["parse"].preconditions[0]
    assert guard.condition.source.startswith("ValueError raised by: number = int(text)")
    assert guard.message.template == "Not a number: {text}"


def test_the_json_form_reads_back_to_the_same_spec(sql, cls):
    """model_dump/model_validate are lossless, key order included (the JSON printed and sent between processes)."""
    for spec in (sql, cls):
        data = spec.model_dump(mode="json")
        again = ConstraintSpec.model_validate(json.loads(json.dumps(data)))
        assert again == spec and json.dumps(again.model_dump(mode="json")) == json.dumps(data)
    assert "default" not in sql.tools["put"].model_dump(mode="json")["params"][0]  # absent optional keys stay absent
    assert list(sql.tools["put"].model_dump(mode="json")) == [
        "name", "declared_kind", "inferred_kind", "kind_mismatch", "description", "params", "preconditions", "effects",
        "read_set", "write_set", "result_shape", "helpers", "unsupported", "line"]


def test_callers_get_their_own_copy_and_the_shared_one_is_cached():
    first = extract_spec(CLASS_MODULE, "class", "Shelf")
    first.tools["place"].params.clear()
    assert extract_spec(CLASS_MODULE, "class", "Shelf").tools["place"].params
    assert shared_spec(CLASS_MODULE, "class", "Shelf") is shared_spec(CLASS_MODULE, "class", "Shelf")


def test_bad_sources_are_clear_errors():
    with pytest.raises(ExtractionError, match="does not parse"):
        extract_spec("def (", "class")
    with pytest.raises(ExtractionError, match="no class 'Nope'"):
        extract_spec(CLASS_MODULE, "class", "Nope")
