"""EnvSimBench and JSONL formats: round trips, unusable samples reported with reasons, env-disjoint splits."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.bench.envsimbench import (
    Problem,
    dotted_changes,
    entry_class,
    from_envsimbench,
    parse_content,
    read_envsimbench,
    read_jsonl,
    split_by_env,
    to_envsimbench,
    write_envsimbench,
    write_jsonl,
)
from catalog.bench.items import BenchItem, item_id
from catalog.models import Action, Outcome, Strata
from catalog.state.delta import Delta, diff

CLASS_CODE = '''from typing import Dict, TypedDict


class OrderInfo(TypedDict):
    order_id: str
    status: str


class ShopSystem:
    """A tiny shop."""

    def __init__(self, init_config: dict):
        self.orders: Dict[str, OrderInfo] = {}

    def cancel_order(self, order_id: str) -> dict:
        return {"success": True, "message": f"Order {order_id} cancelled"}

    def get_order(self, order_id: str) -> dict:
        return {"success": True, "data": self.orders.get(order_id)}
'''


def make_item(env_id, state, action, observation, next_state, *, code=CLASS_CODE, kind="class", entry="ShopSystem"):
    action = Action(**action)
    delta = diff(state, next_state)
    outcome = Outcome.SUCCESS if observation.get("success") else Outcome.FAILURE
    return BenchItem(id=item_id(env_id, state, action), env_id=env_id, env_kind=kind, env_entry=entry,
                     env_code=code, state=state, action=action, observation=observation, next_state=next_state,
                     delta=Delta.dump_python(delta, mode="json"), strata=Strata.of(outcome, len(delta), len(action.arguments)))


@pytest.fixture
def items():
    before = {"orders": {"O1": {"status": "pending", "items": [1, 2], "total": 10.5, "note": None},
                         "O2": {"status": "shipped", "items": [], "total": 3, "note": "gift"}},
              "customers": {"ann@example.org": {"points": 3, "tier": "gold"}}, "next_id": 3}
    after = copy.deepcopy(before)
    after["orders"]["O1"].update(status="cancelled", items=[1], total=4.0)
    del after["orders"]["O2"]
    after["orders"]["O3"] = {"status": "new", "items": [], "total": 0, "note": None}
    after["customers"]["ann@example.org"]["points"] = 5
    after["next_id"] = 4
    return [
        make_item("env_1", before, {"name": "cancel_order", "arguments": {"order_id": "O1"}},
                  {"success": True, "message": "Order O1 cancelled", "refund": 6.5}, after),
        make_item("env_1", before, {"name": "get_order", "arguments": {"order_id": "O9"}},
                  {"success": False, "error": "Order O9 not found"}, before),
        make_item("env_2", after, {"name": "get_order", "arguments": {}},
                  {"success": True, "data": {"ids": ["O1", "O3"], "open": True, "n": None}}, after),
    ]


# --- EnvSimBench -------------------------------------------------------------------------------------
def test_envsimbench_sample_has_their_fields(items):
    sample = to_envsimbench(items[:1])[0]
    assert set(sample) == {"task_info", "step_detail", "env_code"}
    assert set(sample["task_info"]) == {"env_id", "task_id", "task", "step"}
    detail = sample["step_detail"]
    assert detail["action"] == {"name": "cancel_order", "arguments": {"order_id": "O1"}}
    assert detail["observation"]["type"] == "tool"
    # their content is str() of the return value: a Python repr, not JSON
    assert detail["observation"]["content"] == "{'success': True, 'message': 'Order O1 cancelled', 'refund': 6.5}"
    change = detail["config_change"]
    assert change["change_count"] == len(change["changes"]) == len(items[0].delta) == 7
    by_path = {c["path"]: c for c in change["changes"]}
    assert by_path["orders.O2"]["type"] == "removed" and by_path["orders.O3"]["type"] == "added"
    assert by_path["orders.O1.total"] == {"path": "orders.O1.total", "type": "modified", "before": 10.5,
                                          "after": 4.0, "note": "decrease"}
    assert by_path["orders.O1.items"]["after"] == [1]  # a changed list is one change of the whole list
    # the dotted path cannot tell the key "ann@example.org" from nested keys: their format's limit
    assert "customers.ann@example.org.points" in by_path


def test_envsimbench_round_trip_keeps_state_action_observation_delta(items, tmp_path):
    path = tmp_path / "bench.json"
    assert write_envsimbench(items, path) == 3
    back, problems = read_envsimbench(path)
    assert problems == []
    for original, imported in zip(items, back, strict=True):
        assert imported.id == original.id
        assert imported.state == original.state and imported.next_state == original.next_state
        assert imported.action == original.action and imported.observation == original.observation
        assert imported.delta == original.delta  # key-list paths, dotted key intact (recomputed from configs)
        assert imported.strata == original.strata
        assert (imported.env_kind, imported.env_entry, imported.origin) == ("class", "ShopSystem", "envsimbench")
        assert imported.env_doc == "A tiny shop."
    dotted = [op for op in back[0].delta if "ann@example.org" in op["path"]]
    assert dotted == [{"op": "modify", "path": ["customers", "ann@example.org", "points"], "value": 5}]


def test_import_reports_every_unusable_sample_with_its_reason(items):
    good = to_envsimbench(items[:1])[0]

    def broken(edit):
        sample = copy.deepcopy(good)
        edit(sample)
        return sample

    samples = [
        good,
        "not a sample",
        broken(lambda s: s.pop("task_info")),
        broken(lambda s: s["step_detail"].pop("action")),
        broken(lambda s: s["step_detail"]["observation"].update(content="<Result object at 0x7f>")),
        broken(lambda s: s["step_detail"]["observation"].update(content="{'error': 'Order not found'}")),
        broken(lambda s: s["step_detail"]["config_change"].update(change_count=2)),
        broken(lambda s: s.update(env_code="def helper():\n    return 1\n")),
        broken(lambda s: s.update(env_code="class Broken(:\n")),
        broken(lambda s: s["step_detail"].update(config_after="not a dict")),
        broken(lambda s: s["step_detail"]["config_change"].update(change_count=True)),
    ]
    imported, problems = from_envsimbench(samples)
    assert [i.id for i in imported] == [items[0].id]
    reasons = {p.where: p.reason for p in problems}
    assert list(reasons) == [f"sample {n}" + ("" if n in (1, 2) else " (env_1)") for n in range(1, 11)]
    assert reasons["sample 1"] == "a sample is an object, got str"
    assert reasons["sample 2"] == "missing field task_info"
    assert reasons["sample 3 (env_1)"] == "missing field step_detail.action"
    assert "neither a Python literal nor JSON" in reasons["sample 4 (env_1)"]
    assert "no boolean 'success' flag" in reasons["sample 5 (env_1)"]
    assert reasons["sample 6 (env_1)"] == "change_count 2 disagrees with the recomputed diff of the configs (7 ops)"
    assert "no environment class" in reasons["sample 7 (env_1)"]
    assert "does not parse" in reasons["sample 8 (env_1)"]
    assert "config_after should be dict" in reasons["sample 9 (env_1)"]
    assert "change_count should be int" in reasons["sample 10 (env_1)"]
    assert str(problems[0]) == "sample 1: a sample is an object, got str"


def test_import_of_a_file_that_is_not_an_array(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"task_info": {}}')
    assert read_envsimbench(path) == (
        [], [Problem(where="file", reason="the top level should be a JSON array of samples, got dict")])
    path.write_text("[{")
    items, problems = read_envsimbench(path)
    assert items == [] and problems[0].reason.startswith("cannot read as JSON")


def test_entry_class_and_content_parsing():
    assert entry_class(CLASS_CODE) == ("ShopSystem", False)
    sql = "from catalog.envkit import Env, tool\n\nclass Loan(Table, table=True):\n    id: str\n\n" \
          "class LibEnv(Env):\n    @tool(kind='read')\n    def get(self) -> dict:\n        return {}\n"
    assert entry_class(sql) == ("LibEnv", True)
    assert parse_content("{'success': True, 'data': None, 'x': (1, 2)}") == {"success": True, "data": None, "x": [1, 2]}
    assert parse_content('{"success": false, "n": null}') == {"success": False, "n": None}
    with pytest.raises(ValueError, match="neither"):
        parse_content("Error: boom")


def test_dotted_changes_notes_numeric_direction():
    changes = dotted_changes({"a": {"n": 1, "s": "x"}}, {"a": {"n": 3, "s": "y", "t": 1}})
    assert [(c["path"], c["type"], c["note"]) for c in changes] == [
        ("a.n", "modified", "increase"), ("a.s", "modified", None), ("a.t", "added", None)]


# --- envforge JSONL ------------------------------------------------------------------------------------
def test_jsonl_round_trip_keeps_dotted_keys(items, tmp_path):
    path = tmp_path / "out" / "bench.jsonl"
    assert write_jsonl(items, path) == 3
    back, problems = read_jsonl(path)
    assert problems == [] and back == items
    assert ["customers", "ann@example.org", "points"] in [op["path"] for op in back[0].delta]
    assert [p.name for p in path.parent.iterdir()] == ["bench.jsonl"]  # no temp file left behind
    write_jsonl(items[:1], path)  # replaced atomically
    assert len(read_jsonl(path)[0]) == 1


def test_jsonl_reports_corrupt_lines_with_their_numbers(items, tmp_path):
    path = tmp_path / "bench.jsonl"
    good = [item.model_dump_json() for item in items]
    bad_item = json.dumps({**json.loads(good[1]), "state": "oops"})
    path.write_text("\n".join([good[0], "{not json", "", bad_item, good[2]]) + "\n")
    back, problems = read_jsonl(path)
    assert [i.id for i in back] == [items[0].id, items[2].id]
    assert [p.where for p in problems] == ["line 2", "line 4"]
    assert problems[0].reason.startswith("not JSON") and problems[1].reason.startswith("not a benchmark item: state")


# --- splits ----------------------------------------------------------------------------------------------
def _items_for(envs):
    out = []
    for index, env in enumerate(envs):
        state = {"n": {"k": index}}
        out.append(make_item(env, state, {"name": "get_order", "arguments": {"order_id": str(index)}},
                             {"success": True}, state))
    return out


@given(st.lists(st.sampled_from([f"env_{i}" for i in range(12)]), min_size=0, max_size=60),
       st.floats(0.0, 1.0), st.integers(0, 10**6))
@settings(max_examples=80, deadline=None)
def test_split_by_env_is_disjoint_complete_and_deterministic(envs, fraction, seed):
    items = _items_for(envs)
    train, test = split_by_env(items, fraction, seed)
    assert not {i.env_id for i in train} & {i.env_id for i in test}
    assert sorted(i.id for i in train + test) == sorted(i.id for i in items)
    assert [i for i in items if i in train] == train  # input order kept
    distinct = len(set(envs))
    if distinct >= 2 and 0 < fraction < 1:
        assert train and test
    if fraction == 0:
        assert test == []
    assert split_by_env(items, fraction, seed) == (train, test)


def test_split_by_env_aims_at_the_fraction_of_items():
    items = _items_for([f"env_{i % 10}" for i in range(100)])
    train, test = split_by_env(items, 0.3, seed=1)
    assert len(test) == 30 and len(train) == 70
    with pytest.raises(ValueError):
        split_by_env(items, 1.5)
