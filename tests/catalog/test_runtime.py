"""Runtime contract: outcomes, rollback, reset from templates, deterministic time and ids."""

import datetime as dt

import pytest
from sqlmodel import Field

from catalog.envkit import Env, ToolError, fail, ok, table_base, tool
from catalog.models import Outcome
from catalog.runtime import ClassRuntime, EnvLoadError, SqlRuntime, StateError
from catalog.state.delta import Delta

Table = table_base()


class Item(Table, table=True):
    __tablename__ = "items"
    id: str = Field(primary_key=True)
    qty: int = 0
    tags: list = Field(default_factory=list, sa_type=__import__("sqlalchemy").JSON)
    seen_at: dt.datetime | None = None
    price: float = 1.0
    flag: bool = False


class ToyEnv(Env):
    tables = (Item,)

    @tool(kind="write")
    def bump(self, item_id: str, by: int = 1) -> dict:
        """Increase a quantity.

        Args:
            item_id: The item.
            by: Amount.
        """
        item = self.get(Item, item_id)
        if item is None:
            return fail(f"Item {item_id} not found")
        item.qty += by
        item.seen_at = self.now()
        item.tags = [*item.tags, "bumped"]
        return ok(data=item)

    @tool(kind="write")
    def create(self) -> dict:
        """Create an item with a fresh id."""
        item = Item(id=self.new_id("item"), flag=True)
        self.add(item)
        return ok(data={"id": item.id})

    @tool(kind="write")
    def remove(self, item_id: str) -> dict:
        """Delete an item.

        Args:
            item_id: The item.
        """
        item = self.get(Item, item_id)
        if item is None:
            raise ToolError(f"Item {item_id} not found")
        self.delete(item)
        return ok()

    @tool(kind="write")
    def half_then_crash(self, item_id: str) -> dict:
        """Write, flush, then fail with a bug."""
        self.get(Item, item_id).qty = 999
        self.session.flush()
        return {"ratio": 1 / 0}

    @tool(kind="write")
    def write_then_fail(self, item_id: str) -> dict:
        """A buggy guard: writes before refusing (the verifier must be able to see this)."""
        self.get(Item, item_id).qty = -1
        return fail("refused after writing")

    @tool(kind="read")
    def count(self) -> dict:
        """Count items."""
        return ok(data=len(self.select(Item)))


STATE = {"items": {"a": {"id": "a", "qty": 1, "tags": [], "seen_at": None, "price": 2.5, "flag": False}},
         "env_meta": {"clock": {"key": "clock", "value": "2026-02-03T04:05:06+00:00"}}}


@pytest.fixture()
def toy():
    runtime = SqlRuntime(ToyEnv)
    runtime.reset(STATE)
    return runtime


def test_success_reports_changes_with_time_from_the_state(toy):
    result = toy.call({"name": "bump", "arguments": {"item_id": "a", "by": 2}})
    assert result.outcome is Outcome.SUCCESS
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "modify", "path": ["items", "a", "qty"], "value": 3},
        {"op": "modify", "path": ["items", "a", "seen_at"], "value": "2026-02-03T04:05:06+00:00"},
        {"op": "modify", "path": ["items", "a", "tags"], "value": ["bumped"]},
    ]
    assert result.state is None  # no snapshot unless asked


def test_new_ids_come_from_a_counter_in_the_state(toy):
    first = toy.call({"name": "create", "arguments": {}})
    second = toy.call({"name": "create", "arguments": {}}, snapshot=True)
    assert first.observation["data"]["id"] == "item-1" and second.observation["data"]["id"] == "item-2"
    assert second.state["env_meta"]["next_id:item"]["value"] == 3
    assert second.state["items"]["item-2"]["flag"] is True


def test_deletion_is_one_delete_op(toy):
    result = toy.call({"name": "remove", "arguments": {"item_id": "a"}}, snapshot=True)
    assert Delta.dump_python(result.delta, mode="json") == [{"op": "delete", "path": ["items", "a"]}]
    assert result.state["items"] == {}


def test_tool_error_is_a_failure_and_changes_nothing(toy):
    result = toy.call({"name": "remove", "arguments": {"item_id": "zz"}}, snapshot=True)
    assert result.outcome is Outcome.FAILURE
    assert result.observation == {"success": False, "error": "Item zz not found"}
    assert result.delta == [] and result.state["items"]["a"]["qty"] == 1


def test_crash_is_a_result_and_rolls_back_flushed_writes(toy):
    result = toy.call({"name": "half_then_crash", "arguments": {"item_id": "a"}}, snapshot=True)
    assert result.outcome is Outcome.CRASH
    assert result.observation == {"error": "ZeroDivisionError: division by zero"}
    assert "ZeroDivisionError" in result.info["traceback"]
    assert result.delta == [] and result.state["items"]["a"]["qty"] == 1
    # the runtime is still usable, and the tracker forgot the rolled-back write
    after = toy.call({"name": "bump", "arguments": {"item_id": "a"}})
    assert [op.path for op in after.delta][0] == ("items", "a", "qty") and after.delta[0].value == 2


def test_a_returned_failure_keeps_its_writes_so_bugs_stay_visible(toy):
    result = toy.call({"name": "write_then_fail", "arguments": {"item_id": "a"}})
    assert result.outcome is Outcome.FAILURE
    assert Delta.dump_python(result.delta, mode="json") == [{"op": "modify", "path": ["items", "a", "qty"], "value": -1}]


@pytest.mark.parametrize("action, message", [
    ({"name": "nope", "arguments": {}}, "Unknown tool 'nope'"),
    ({"name": "bump", "arguments": {}}, "missing a required argument: 'item_id'"),
    ({"name": "bump", "arguments": {"item_id": "a", "extra": 1}}, "unexpected keyword argument 'extra'"),
])
def test_malformed_actions_are_invalid_not_crashes(toy, action, message):
    result = toy.call(action)
    assert result.outcome is Outcome.INVALID and message in result.observation["error"]


def test_reset_restores_the_initial_state_exactly(toy):
    initial = toy.snapshot()
    for _ in range(3):
        toy.call({"name": "bump", "arguments": {"item_id": "a"}})
        toy.call({"name": "create", "arguments": {}})
    toy.reset(STATE)
    assert toy.snapshot() == initial
    assert toy.call({"name": "create", "arguments": {}}).observation["data"]["id"] == "item-1"


def test_snapshot_is_canonical_json_with_every_table(toy):
    state = toy.snapshot()
    assert state == {"env_meta": STATE["env_meta"], "items": STATE["items"]}


@pytest.mark.parametrize("bad, message", [
    ({"widgets": {}}, "no table for"),
    ({"items": {"a": {"id": "b", "qty": 1}}}, "has primary key 'b', not 'a'"),
    ({"items": {"a": {"id": "a", "colour": "red"}}}, "unknown fields ['colour']"),
    ({"items": {"a": "not a record"}}, "must be an object"),
    ({"items": {"a": {"id": "a", "qty": None, "tags": [], "price": 1.0, "flag": False}}}, "does not fit its table"),
])
def test_states_that_do_not_fit_are_rejected_clearly(bad, message):
    with pytest.raises(StateError, match=None) as info:
        SqlRuntime(ToyEnv).reset(bad)
    assert message in str(info.value)


def test_an_env_without_tables_is_refused():
    class Empty(Env):
        pass

    with pytest.raises(EnvLoadError, match="tables is empty"):
        SqlRuntime(Empty)


def test_call_before_reset_says_what_to_do():
    with pytest.raises(RuntimeError, match="reset"):
        SqlRuntime(ToyEnv).call({"name": "count", "arguments": {}})


# --- class-based envs ---------------------------------------------------------------------
class Warehouse:
    def __init__(self):
        self.bins = {}
        self.log = []
        self.counter = 0

    def move(self, src, dst, n: int):
        """Move stock between bins (dicts nested two levels)."""
        if self.bins[src]["stock"]["units"] < n:
            return {"success": False, "error": "not enough"}
        self.bins[src]["stock"]["units"] -= n
        self.bins.setdefault(dst, {"stock": {"units": 0}})["stock"]["units"] += n
        self.log.append({"src": src, "dst": dst, "n": n})
        self.counter += 1
        return {"success": True}

    def tag_entry(self, index: int):
        """Mutate a dict inside a list: the whole list is one modify."""
        self.log[index]["tag"] = "checked"
        return {"ok": True}

    def drop(self, name):
        """Delete a bin; raises for unknown bins."""
        if name not in self.bins:
            raise ValueError(f"no bin {name}")
        del self.bins[name]
        return {"success": True}

    def wipe_then_crash(self):
        self.bins.clear()
        self.counter = 99
        self.log.append("x")
        raise RuntimeError("boom")

    def rename(self, old, new):
        """Moving a tracked dict: later edits must be recorded at its new path."""
        self.bins[new] = self.bins.pop(old)
        self.bins[new]["stock"]["units"] += 1
        return {"success": True}

    def _helper(self):
        return None


WAREHOUSE = {"bins": {"A": {"stock": {"units": 5}}, "B.1": {"stock": {"units": 0}}}, "log": [], "counter": 0}


@pytest.fixture()
def warehouse():
    runtime = ClassRuntime(Warehouse, failure_exceptions=["ValueError"])
    runtime.reset(WAREHOUSE)
    return runtime


def test_class_tools_are_public_methods_in_definition_order(warehouse):
    assert list(warehouse.tools) == ["move", "tag_entry", "drop", "wipe_then_crash", "rename"]
    assert warehouse.init == "setattr"


def test_nested_dicts_lists_and_attributes_are_tracked(warehouse):
    result = warehouse.call({"name": "move", "arguments": {"src": "A", "dst": "C", "n": 2}}, snapshot=True)
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "modify", "path": ["bins", "A", "stock", "units"], "value": 3},
        {"op": "add", "path": ["bins", "C"], "value": {"stock": {"units": 2}}},
        {"op": "modify", "path": ["counter"], "value": 1},
        {"op": "modify", "path": ["log"], "value": [{"src": "A", "dst": "C", "n": 2}]},
    ]
    # the bin created during the call is tracked from now on
    again = warehouse.call({"name": "move", "arguments": {"src": "C", "dst": "B.1", "n": 1}})
    assert {"op": "modify", "path": ["bins", "C", "stock", "units"], "value": 1} in Delta.dump_python(again.delta, mode="json")
    assert {"op": "modify", "path": ["bins", "B.1", "stock", "units"], "value": 1} in Delta.dump_python(again.delta, mode="json")


def test_a_dict_inside_a_list_changes_the_whole_list(warehouse):
    warehouse.call({"name": "move", "arguments": {"src": "A", "dst": "B.1", "n": 1}})
    result = warehouse.call({"name": "tag_entry", "arguments": {"index": 0}})
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "modify", "path": ["log"], "value": [{"src": "A", "dst": "B.1", "n": 1, "tag": "checked"}]}]


def test_raised_failure_exception_is_a_failure(warehouse):
    result = warehouse.call({"name": "drop", "arguments": {"name": "Z"}})
    assert result.outcome is Outcome.FAILURE and result.observation == {"success": False, "error": "no bin Z"}
    ok_result = warehouse.call({"name": "drop", "arguments": {"name": "B.1"}})
    assert Delta.dump_python(ok_result.delta, mode="json") == [{"op": "delete", "path": ["bins", "B.1"]}]


def test_class_crash_keeps_what_the_code_wrote(warehouse):
    """Faithful execution: the class outside envforge keeps its partial writes, so envforge does too."""
    result = warehouse.call({"name": "wipe_then_crash", "arguments": {}}, snapshot=True)
    assert result.outcome is Outcome.CRASH and result.observation == {"error": "RuntimeError: boom"}
    assert result.state == {"bins": {}, "log": ["x"], "counter": 99}
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "delete", "path": ["bins", "A"]}, {"op": "delete", "path": ["bins", "B.1"]},
        {"op": "modify", "path": ["counter"], "value": 99}, {"op": "modify", "path": ["log"], "value": ["x"]}]


def test_moved_containers_are_tracked_at_their_new_path(warehouse):
    first = warehouse.call({"name": "rename", "arguments": {"old": "A", "new": "Z"}})
    assert Delta.dump_python(first.delta, mode="json") == [
        {"op": "delete", "path": ["bins", "A"]}, {"op": "add", "path": ["bins", "Z"], "value": {"stock": {"units": 6}}}]
    second = warehouse.call({"name": "move", "arguments": {"src": "Z", "dst": "B.1", "n": 1}})
    assert {"op": "modify", "path": ["bins", "Z", "stock", "units"], "value": 5} in Delta.dump_python(second.delta, mode="json")


class ByConstructor:
    def __init__(self, config: dict):
        self.rooms = {int(k): v for k, v in config["rooms"].items()}

    def book(self, room: int):
        """Integer keys appear as strings in paths."""
        self.rooms[room]["free"] = False
        return {"success": True}


class ByScenario:
    def __init__(self):
        self.accounts = {}

    def _load_scenario(self, config, long_context=False):
        self.accounts = dict(config["accounts"])

    def deposit(self, account, amount):
        self.accounts[account] += amount
        return {"balance": self.accounts[account]}


def test_init_by_constructor_and_int_keys():
    runtime = ClassRuntime(ByConstructor)
    assert runtime.init == "constructor"
    runtime.reset({"rooms": {"101": {"free": True}}})
    result = runtime.call({"name": "book", "arguments": {"room": 101}}, snapshot=True)
    # int keys stay int: the delta names the record by its int key (a JSON int), not by the encoding
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "modify", "path": ["rooms", 101, "free"], "value": False}]
    assert result.state == {"rooms": {"__py__": "dict", "keys": "int", "items": {"101": {"free": False}}}}


def test_init_by_load_scenario():
    runtime = ClassRuntime(ByScenario)
    assert runtime.init == "load_scenario"
    runtime.reset({"accounts": {"x": 1}})
    result = runtime.call({"name": "deposit", "arguments": {"account": "x", "amount": 2}})
    assert result.observation == {"balance": 3}
    assert Delta.dump_python(result.delta, mode="json") == [{"op": "modify", "path": ["accounts", "x"], "value": 3}]


def test_a_config_the_class_rejects_is_a_state_error():
    with pytest.raises(StateError, match="rejected the init config"):
        ClassRuntime(ByConstructor).reset({"no_rooms": {}})


class EnvScalerStyle:
    def __init__(self, init_config: dict):
        self.users = {}
        self.clock = "2026-01-01T00:00:00"
        self.init_config = init_config

    def rename(self, user_id: str, name: str) -> dict:
        if user_id not in self.users:
            return {"success": False, "error": f"User {user_id} not found"}
        self.users[user_id]["name"] = name
        return {"success": True, "message": "renamed"}


def test_envscaler_classes_load_every_config_key_over_constructor_defaults():
    runtime = ClassRuntime(EnvScalerStyle)
    assert runtime.init == "envscaler"
    runtime.reset({"users": {"u1": {"name": "A"}}, "clock": "2026-05-05T00:00:00"})
    state = runtime.snapshot()
    assert state["users"] == {"u1": {"name": "A"}} and state["clock"] == "2026-05-05T00:00:00"
    result = runtime.call({"name": "rename", "arguments": {"user_id": "u1", "name": "B"}})
    assert Delta.dump_python(result.delta, mode="json") == [{"op": "modify", "path": ["users", "u1", "name"], "value": "B"}]


def test_values_assigned_in_one_call_are_seen_as_stored_in_the_next():
    class Priced(Env):
        tables = (Item,)

        @tool(kind="write")
        def set_price(self, item_id: str) -> dict:
            """Assign an int to a float column."""
            self.get(Item, item_id).price = 3
            return ok()

        @tool(kind="read")
        def show(self, item_id: str) -> dict:
            """Format the price."""
            return ok(message=f"{self.get(Item, item_id).price}")

    runtime = SqlRuntime(Priced)
    runtime.reset(STATE)
    runtime.call({"name": "set_price", "arguments": {"item_id": "a"}})
    assert runtime.call({"name": "show", "arguments": {"item_id": "a"}}).observation["message"] == "3.0"


# --- snapshots that reuse untouched tables (what the sandbox worker does) -------------------------
NoteTable = table_base()  # a metadata of its own: ToyEnv's runtimes must not see this table


class Note(NoteTable, table=True):
    __tablename__ = "notes"
    id: str = Field(primary_key=True)
    text: str = ""


class SneakyEnv(ToyEnv):
    """ToyEnv plus a second table and tools that change state behind the change tracker's back."""

    tables = (Item, Note)

    @tool(kind="write")
    def commit_then_fail(self, item_id: str) -> dict:
        """Commits a write itself, then refuses: the rollback cannot undo it."""
        self.get(Item, item_id).qty = 7
        self.session.commit()
        raise ToolError("refused after committing")

    @tool(kind="write")
    def untracked_write(self, text: str) -> dict:
        """Drops a tracking trigger, then writes where it no longer looks."""
        from sqlalchemy import text as sql

        self.session.execute(sql('DROP TRIGGER IF EXISTS temp."_ef_ins_notes"'))
        self.add(Note(id=text, text=text))
        return ok()


def test_reused_snapshots_equal_full_reads_whatever_the_calls_did():
    from catalog.state import _sqlstate

    runtime = SqlRuntime(SneakyEnv)
    runtime.reuse_snapshots = True
    state = {**STATE, "notes": {"n1": {"id": "n1", "text": "hello"}}}
    calls = [("bump", {"item_id": "a"}), ("count", {}), ("remove", {"item_id": "zz"}), ("write_then_fail", {"item_id": "a"}),
             ("half_then_crash", {"item_id": "a"}), ("create", {}), ("commit_then_fail", {"item_id": "a"}),
             ("bump", {"item_id": "a", "by": 2}), ("untracked_write", {"text": "n2"}), ("untracked_write", {"text": "n3"})]
    for _ in range(2):  # the second round starts from the template's remembered tables
        runtime.reset(state)
        assert runtime.snapshot() == _sqlstate.snapshot(runtime._raw, runtime.codecs)
        for name, arguments in calls:
            result = runtime.call({"name": name, "arguments": arguments}, snapshot=True)
            assert result.state == _sqlstate.snapshot(runtime._raw, runtime.codecs), name
    assert {"n2", "n3"} <= set(runtime.snapshot()["notes"])  # seen although no trigger reported them
