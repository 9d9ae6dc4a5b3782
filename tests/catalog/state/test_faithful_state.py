"""Class envs run faithfully: through ClassRuntime (from an init config, from a mid-run snapshot,
in this process and in the sandbox) every call gives the observation, state, delta and hidden
delta that running the class directly gives, with Python's own types kept."""

from __future__ import annotations

import copy
import json
import sys
import traceback
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from catalog.models import EnvManifest, Outcome
from catalog.runtime import ClassRuntime, load_module
from catalog.state import _tracking, codec
from catalog.state.delta import Delta, apply_delta
from catalog.store import Catalog

from .test_codec import same

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "faithful"
FAILURES = ["InvoiceError"]

CALLS: list[dict[str, Any]] = [
    {"name": "add_invoice", "arguments": {"number": 30, "amount": "100.00"}},
    {"name": "split", "arguments": {"number": 30, "parts": 3}},
    {"name": "split", "arguments": {"number": 99, "parts": 2}},
    {"name": "total", "arguments": {}},
    {"name": "tag", "arguments": {"name": "paid-late"}},
    {"name": "untag", "arguments": {"name": "urgent"}},
    {"name": "pay", "arguments": {"number": 7}},
    {"name": "pay", "arguments": {"number": 8}},
    {"name": "mkdir", "arguments": {"name": "zeta"}},
    {"name": "mkdir", "arguments": {"name": "alpha"}},
    {"name": "ls", "arguments": {}},
    {"name": "cd", "arguments": {"name": "docs"}},
    {"name": "write", "arguments": {"name": "readme.txt", "text": "hello, world"}},
    {"name": "write", "arguments": {"name": "notes.txt", "text": "ünïcode ✓"}},
    {"name": "stat", "arguments": {"name": "readme.txt"}},
    {"name": "lucky", "arguments": {}},
    {"name": "lucky", "arguments": {}},
    {"name": "echo", "arguments": {"text": "half a pair: \ud83d, and ✓"}},
    {"name": "renumber", "arguments": {"old": 12, "new": -12}},
    {"name": "total", "arguments": {}},
    {"name": "cd", "arguments": {"name": "/"}},
    {"name": "ls", "arguments": {}},
    {"name": "lucky", "arguments": {}},
]
MIDWAY = 12  # the snapshot is taken after this many calls (inside docs/, RNG and cache in use)


@pytest.fixture(scope="module")
def env_class() -> type:
    return load_module(FIXTURE / "env.py").Workshop  # type: ignore[no-any-return]


def build(env_class: type) -> Any:
    """The start state, built by hand in plain Python."""
    fs = vars(sys.modules[env_class.__module__])  # the env module's names: Directory, File
    instance = env_class()
    root = fs["Directory"]("/")
    docs = fs["Directory"]("docs", root)
    root.children["docs"] = docs
    docs.children["readme.txt"] = fs["File"]("readme.txt", docs, "draft")
    instance.invoices = {7: {"amount": Decimal("19.99"), "paid": False, "shares": ()},
                         12: {"amount": Decimal("0.01"), "paid": True, "shares": ()}}
    instance.tags = {"urgent", "q3"}
    instance.root = root
    instance.counter = 0
    return instance


def run_directly(instance: Any, calls: list[dict[str, Any]], types: codec.TypeNames) -> list[dict[str, Any]]:
    """Run calls on the class itself; record what envforge should report for each."""
    steps = []
    before = _tracking.encode_state(instance, types)
    for call in calls:
        try:
            raw = getattr(instance, call["name"])(**call["arguments"])
            observation, outcome = codec.encode(raw, types), None
        except Exception as exc:
            traceback.clear_frames(exc.__traceback__)
            if type(exc).__name__ in FAILURES:
                observation, outcome = {"success": False, "error": str(exc)}, Outcome.FAILURE
            else:
                observation, outcome = {"error": f"{type(exc).__name__}: {exc}"}, Outcome.CRASH
        after = _tracking.encode_state(instance, types)
        delta, hidden = _tracking.state_delta(before, after)
        steps.append({"observation": observation, "outcome": outcome, "delta": Delta.dump_python(delta, mode="json"),
                      "hidden_delta": Delta.dump_python(hidden, mode="json"), "state": after.state(hidden=True),
                      "public_before": before.state(), "values": copy.deepcopy(_values(instance))})
        before = after
    return steps


def _values(instance: Any) -> dict[str, Any]:
    public, hidden = _tracking.state_attributes(instance)
    return {**public, **hidden}


def text(value: Any) -> str:
    """JSON text with the order kept: equal text means equal values in equal order."""
    return json.dumps(value, ensure_ascii=False)


def check_step(step: dict[str, Any], observation: Any, outcome: Outcome, delta: list[dict[str, Any]],
               hidden_delta: list[dict[str, Any]], state: dict[str, Any], call: dict[str, Any]) -> None:
    assert text(observation) == text(step["observation"]), call
    if step["outcome"] is not None:
        assert outcome is step["outcome"], call
    assert delta == step["delta"], call
    assert hidden_delta == step["hidden_delta"], call
    assert text(state) == text(step["state"]), call
    public = {k: v for k, v in state.items() if not k.startswith("_")}
    assert apply_delta(step["public_before"], [_op(d) for d in delta]) == public, call


def _op(data: dict[str, Any]) -> Any:
    from catalog.state.delta import DeltaOp

    return DeltaOp.model_validate(data)


@pytest.fixture(scope="module")
def expected(env_class: type) -> list[dict[str, Any]]:
    return run_directly(build(env_class), CALLS, _tracking.env_type_names(env_class))


@pytest.fixture(scope="module")
def config(env_class: type) -> dict[str, Any]:
    encoded = _tracking.encode_state(build(env_class), _tracking.env_type_names(env_class))
    assert not encoded.hidden or set(encoded.hidden) == {"_random", "_cache", "_cwd"}
    return json.loads(text(encoded.public))  # as it would come from a state file


def test_the_state_keeps_python_types(config: dict[str, Any]) -> None:
    assert config["invoices"]["items"]["7"]["amount"] == {"__py__": "decimal", "value": "19.99"}
    assert config["tags"] == {"__py__": "set", "items": ["q3", "urgent"]}
    readme = config["root"]["attrs"]["children"]["docs"]["attrs"]["children"]["readme.txt"]
    assert readme["type"] == "fs:File" and readme["attrs"]["parent"] == {
        "__py__": "ref", "path": ["root", "attrs", "children", "docs"]}


def test_runtime_matches_the_class_on_every_call(env_class: type, config: dict[str, Any],
                                                 expected: list[dict[str, Any]]) -> None:
    runtime = ClassRuntime(env_class, failure_exceptions=FAILURES)
    runtime.reset(config)
    for call, step in zip(CALLS, expected, strict=True):
        result = runtime.call(call, snapshot=True)
        check_step(step, result.observation, result.outcome, Delta.dump_python(result.delta, mode="json"),
                   result.info.get("hidden_delta", []), runtime.snapshot(hidden=True), call)
        assert result.state == runtime.snapshot()
        assert same(step["values"], codec.decode(runtime.snapshot(hidden=True), runtime.types))


def test_a_mid_run_snapshot_resumes_exactly(env_class: type, config: dict[str, Any],
                                            expected: list[dict[str, Any]]) -> None:
    first = ClassRuntime(env_class, failure_exceptions=FAILURES)
    first.reset(config)
    for call in CALLS[:MIDWAY]:
        first.call(call)
    saved = json.loads(text(first.snapshot(hidden=True)))
    assert saved["_cwd"] == {"__py__": "ref", "path": ["root", "attrs", "children", "docs"]}
    second = ClassRuntime(env_class, failure_exceptions=FAILURES)
    second.reset(saved)
    assert text(second.snapshot(hidden=True)) == text(saved)
    for call, step in zip(CALLS[MIDWAY:], expected[MIDWAY:], strict=True):
        result = second.call(call)
        check_step(step, result.observation, result.outcome, Delta.dump_python(result.delta, mode="json"),
                   result.info.get("hidden_delta", []), second.snapshot(hidden=True), call)


def test_what_the_calls_show(expected: list[dict[str, Any]]) -> None:
    """Spot checks that the comparison above is about the right things."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for call, step in zip(CALLS, expected, strict=True):
        by_name.setdefault(call["name"], []).append(step)
    share = by_name["split"][0]["observation"]["items"][1]["value"]
    assert share == "33.333333333333333333333333333333333333333333333333"  # 50 digits, not a float
    assert by_name["split"][1]["outcome"] is Outcome.FAILURE
    # A set is a leaf of the delta, written as its encoding: no codec level in the path.
    assert by_name["tag"][0]["delta"] == [{"op": "modify", "path": ["tags"],
                                           "value": {"__py__": "set", "items": ["paid-late", "q3", "urgent"]}}]
    assert by_name["pay"][1]["observation"] == "Error: invoice 8 not found"
    assert list(by_name["ls"][0]["observation"]) == ["docs", "zeta", "alpha"]
    assert by_name["cd"][0]["delta"] == [] and by_name["cd"][0]["hidden_delta"][0]["path"] == ["_cwd"]
    assert by_name["total"][0]["delta"] == [] and by_name["total"][0]["hidden_delta"]
    assert by_name["lucky"][0]["observation"] != by_name["lucky"][1]["observation"]
    assert [d["path"] for d in by_name["lucky"][0]["hidden_delta"]] == [["_random"]]
    assert by_name["echo"][0]["observation"] == "half a pair: \ud83d, and ✓"
    crash = by_name["renumber"][0]
    assert crash["outcome"] is Outcome.CRASH and {"op": "modify", "path": ["counter"], "value": 2} in crash["delta"]
    assert by_name["stat"][0]["observation"]["type"] == "fs:File"
    edit = by_name["write"][0]["delta"]
    assert edit == [{"op": "modify", "path": ["root", "children", "docs", "children", "readme.txt", "content"],
                     "value": "hello, world"},
                    {"op": "modify", "path": ["root", "children", "docs", "children", "readme.txt", "size"], "value": 12}]


def test_the_sandbox_matches_the_class(tmp_path: Path, env_class: type, config: dict[str, Any],
                                       expected: list[dict[str, Any]]) -> None:
    from sandbox.session import open_runtime

    tools = list(ClassRuntime(env_class).tools.values())
    manifest = EnvManifest(id="workshop", name="Workshop", kind="class", entry="Workshop", tools=tools,
                           init="auto", failure_exceptions=FAILURES)
    handle = Catalog(tmp_path).write_env(manifest, (FIXTURE / "env.py").read_text(), {"start": config},
                                         extra_files={"fs.py": (FIXTURE / "fs.py").read_text()})
    runtime = open_runtime(handle)
    try:
        runtime.reset(handle.state("start"))
        saved: dict[str, Any] = {}
        for index, (call, step) in enumerate(zip(CALLS, expected, strict=True)):
            if index == MIDWAY:
                saved = runtime.snapshot(hidden=True)
            result = runtime.call(call)
            check_step(step, result.observation, result.outcome, Delta.dump_python(result.delta, mode="json"),
                       result.info.get("hidden_delta", []), runtime.snapshot(hidden=True), call)
        runtime.reset(saved)  # a mid-run snapshot, in a worker that never saw the first half
        for call, step in zip(CALLS[MIDWAY:], expected[MIDWAY:], strict=True):
            result = runtime.call(call)
            check_step(step, result.observation, result.outcome, Delta.dump_python(result.delta, mode="json"),
                       result.info.get("hidden_delta", []), runtime.snapshot(hidden=True), call)
    finally:
        runtime.close()  # type: ignore[union-attr]


class User(BaseModel):
    name: str
    balance: Decimal = Decimal("0")


class Database(BaseModel):
    users: dict[str, User] = {}
    flags: set[str] = set()


class Toolkit:
    """A typed (pydantic) database, as toolkit-style envs keep theirs."""

    def __init__(self) -> None:
        self.db = Database(users={"u1": User(name="Ada", balance=Decimal("10.10"))})

    def rename(self, user_id: str, name: str) -> User:
        self.db.users[user_id].name = name
        return self.db.users[user_id]

    def flag(self, flag: str) -> bool:
        self.db.flags.add(flag)
        return True


def test_pydantic_models_are_state_and_results() -> None:
    runtime = ClassRuntime(Toolkit)
    runtime.reset({})
    result = runtime.call({"name": "rename", "arguments": {"user_id": "u1", "name": "Grace"}})
    assert Delta.dump_python(result.delta, mode="json") == [
        {"op": "modify", "path": ["db", "users", "u1", "name"], "value": "Grace"}]
    assert result.observation["type"].endswith(":User") and result.observation["attrs"]["name"] == "Grace"
    assert Delta.dump_python(runtime.call({"name": "flag", "arguments": {"flag": "vip"}}).delta, mode="json") == [
        {"op": "modify", "path": ["db", "flags"], "value": {"__py__": "set", "items": ["vip"]}}]
    restored = ClassRuntime(Toolkit)
    restored.reset(runtime.snapshot())
    db = codec.decode(restored.snapshot(), restored.types)["db"]
    assert isinstance(db, Database) and db.users["u1"] == User(name="Grace", balance=Decimal("10.10"))
    assert db.model_dump() == {"users": {"u1": {"name": "Grace", "balance": Decimal("10.10")}}, "flags": {"vip"}}
