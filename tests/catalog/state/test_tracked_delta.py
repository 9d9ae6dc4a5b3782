"""Tracked deltas (only what a tool is proven able to write is encoded) equal the full diff.

The tracked runtime is run side by side with one that encodes and diffs the whole state after
every call (`track=False`), on a tau-bench-like env not written for envforge and on tools built
to defeat the tracking (aliasing, mutation through loops, helpers, globals, `exec`): deltas,
hidden deltas, observations and the encoding of the live instance must agree on every call.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.runtime import ClassRuntime
from catalog.state import _tracking, codec
from catalog.state.delta import Delta
from catalog.state.touches import Param, StateKey, tool_touches

from .retail_env import RetailEnv, retail_state

SHARED: dict[str, Any] = {"hits": 0}


class Tricky:
    """Tools whose writes are hard to see from their code; the runtime must never miss one."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.log: list[Any] = []
        self._seen: dict[str, Any] = {}

    def touch_all(self) -> int:
        for record in self.data["a"].values():
            record["n"] = record.get("n", 0) + 1
        return len(self.data["a"])

    def alias(self, key: str) -> bool:
        self.data["b"][key] = self.data["a"]["x"]  # one record now at two places
        return True

    def through_alias(self, key: str) -> bool:
        self.data["b"][key]["n"] = -1  # writes data.a.x too once aliased
        return True

    def move(self, key: str) -> bool:
        self.data["b"][key] = self.data["a"].pop("y", {"fresh": True})
        return True

    def default_from_state(self, key: str) -> bool:
        record = self.data["a"].get(key, self.data["a"]["x"])
        record["m"] = 1
        return True

    def by_owner(self, key: str) -> bool:
        record = self.data["a"][key]
        self.data["a"][record["owner"]]["n"] = 7  # a key read from the state: resolved from it
        return True

    def rekey(self, key: str) -> bool:
        record = self.data["a"][key]
        record["owner"] = "y"  # the key's source is written first: it cannot be read from the state before
        self.data["a"][record["owner"]]["n"] = 8
        return True

    def fresh_or_state(self, key: str) -> bool:
        box = self.data["a"].get(key, {})  # a fresh dict when the key is missing...
        box["k"] = self.data["a"]["x"]
        box["k"]["w"] = 2  # ...so this writes record x
        return True

    def link(self) -> bool:
        record = self.data["a"]["x"]
        record["peer"] = self.data["a"]["y"]  # into the state: aliasing, seen by the runtime
        return True

    def through_link(self) -> bool:
        self.data["a"]["x"]["peer"]["n"] = 9  # writes record y too
        return True

    def in_place_add(self) -> int:
        items = self.log
        items += ["more"]
        return len(items)

    def hidden(self, key: str) -> str:
        self._seen[key] = len(self._seen)
        return key

    def via_helper(self) -> bool:
        self._bump()
        return True

    def via_global(self) -> bool:
        SHARED["hits"] += 1  # not state unless the state holds SHARED: never followed (shared by both runtimes here)
        return True

    def via_exec(self) -> bool:
        exec("self.data['a'].clear()")  # noqa: S102 - a tool the analysis must refuse to follow
        return True

    def via_frame(self) -> bool:
        try:
            raise KeyError("x")
        except KeyError as error:
            frame = error.__traceback__.tb_frame  # type: ignore[union-attr]
            frame.f_locals["self"].data["b"].clear()  # `self` reached through the traceback
        return True

    def via_import(self) -> int:
        import gc

        for value in gc.get_objects():  # every object, the state's dicts among them
            if isinstance(value, dict) and "fresh" in value:
                value["found"] = True
        return 0

    def via_key_function(self) -> list[str]:
        return sorted(["self.log.append('exec')"], key=exec)  # type: ignore[arg-type]

    def new_attribute(self) -> bool:
        self.extra = {"k": 1}
        return True

    def keep_default(self, key: str, bucket: list[str] = []) -> int:  # noqa: B006 - the hazard under test
        bucket.append(key)  # once the state holds `bucket`, this writes it
        self.data["bucket"] = bucket
        return len(bucket)

    def _bump(self) -> None:
        self.data["a"]["x"]["h"] = 1


TRICKY_CALLS = [  # aliasing last: once the state shares structure, every call takes the full diff
    {"name": "touch_all", "arguments": {}},
    {"name": "by_owner", "arguments": {"key": "y"}},
    {"name": "rekey", "arguments": {"key": "x"}},
    {"name": "by_owner", "arguments": {"key": "nope"}},
    {"name": "default_from_state", "arguments": {"key": "nope"}},
    {"name": "fresh_or_state", "arguments": {"key": "missing"}},
    {"name": "move", "arguments": {"key": "m"}},
    {"name": "move", "arguments": {"key": "m2"}},
    {"name": "via_frame", "arguments": {}},
    {"name": "via_key_function", "arguments": {}},
    {"name": "via_import", "arguments": {}},
    {"name": "in_place_add", "arguments": {}},
    {"name": "hidden", "arguments": {"key": "k"}},
    {"name": "via_helper", "arguments": {}},
    {"name": "new_attribute", "arguments": {}},
    {"name": "via_exec", "arguments": {}},
    {"name": "touch_all", "arguments": {}},
    {"name": "link", "arguments": {}},
    {"name": "through_link", "arguments": {}},
    {"name": "alias", "arguments": {"key": "z"}},
    {"name": "through_alias", "arguments": {"key": "z"}},
    {"name": "touch_all", "arguments": {}},
]


def _step(runtime: ClassRuntime, action: dict[str, Any]) -> tuple[Any, ...]:
    result = runtime.call(action)
    return result.outcome, result.observation, Delta.dump_python(result.delta, mode="json"), \
        result.info.get("hidden_delta")


def _live(runtime: ClassRuntime) -> dict[str, Any]:
    """The full encoding of the instance as it is now (not the runtime's baseline)."""
    return _tracking.encode_state(runtime._instance, runtime.types).state(hidden=True)


def _side_by_side(env_class: type, state: dict[str, Any], calls: list[dict[str, Any]]) -> int:
    """Run the calls tracked and untracked; return how many were tracked. Any difference fails."""
    tracked = ClassRuntime(env_class, failure_exceptions=["ValueError"], strict_args=False)
    full = ClassRuntime(env_class, failure_exceptions=["ValueError"], strict_args=False, track=False)
    tracked.reset(state)
    full.reset(state)
    for action in calls:
        assert _step(tracked, action) == _step(full, action), action
        assert tracked.snapshot(hidden=True) == _live(tracked) == full.snapshot(hidden=True), action
    assert full.tracked_calls == 0
    return tracked.tracked_calls


def test_tricky_tools_never_lose_a_write() -> None:
    state = {"data": {"a": {"x": {"n": 0, "owner": "x"}, "y": {"n": 5, "owner": "x"}}, "b": {}}, "log": []}
    tracked = _side_by_side(Tricky, state, TRICKY_CALLS)
    assert 0 < tracked < len(TRICKY_CALLS)


def test_unfollowable_tools_are_not_tracked() -> None:
    for name in ("via_helper", "via_global", "via_exec", "keep_default", "via_frame", "via_import",
                 "via_key_function"):
        assert tool_touches(Tricky, getattr(Tricky, name)) is None, name
    # the default is another record: the write is bounded by the collection, not by the key
    assert tool_touches(Tricky, Tricky.default_from_state).writes == (("data", "a"),)  # type: ignore[union-attr]
    assert tool_touches(Tricky, Tricky.touch_all).writes == (("data", "a"),)  # type: ignore[union-attr]
    assert tool_touches(Tricky, Tricky.in_place_add).writes == (("log",),)  # type: ignore[union-attr]
    exec_defined: dict[str, Any] = {}
    exec("def ghost(self, key):\n    return 1\n", exec_defined)  # noqa: S102 - no source to analyse
    assert tool_touches(Tricky, exec_defined["ghost"]) is None


def test_keys_read_from_the_state_are_resolved_unless_written() -> None:
    touches = tool_touches(Tricky, Tricky.by_owner)
    assert touches is not None
    key = StateKey(("data", "a", Param("key"), "owner"))
    assert touches.writes == (("data", "a", key, "n"),)
    state = {"data": {"a": {"x": {"owner": "y"}}}}
    lookup = _tracking.Encoded(state, {}, plain={"data": True}).lookup
    assert touches.resolve({"key": "x"}, lookup) == [("data", "a", "y", "n")]
    assert touches.resolve({"key": "q"}, lookup) == [("data", "a")]  # no such record: the collection
    rekey = tool_touches(Tricky, Tricky.rekey)
    assert rekey is not None and set(rekey.resolve({"key": "x"}, lookup)) == {("data", "a"), ("data", "a", "x", "owner")}


def test_retail_tools_are_proven_to_their_records() -> None:
    touches = tool_touches(RetailEnv, RetailEnv.cancel_pending_order)
    assert touches is not None and set(touches.writes) == {
        ("data", "orders", Param("order_id"), "status"), ("data", "orders", Param("order_id"), "cancel_reason")}
    assert tool_touches(RetailEnv, RetailEnv.find_orders).writes == ()  # type: ignore[union-attr]


USERS = [f"U{i}" for i in range(7)]
ORDERS = [f"O{i}" for i in range(12)]
PRODUCTS = [f"P{i}" for i in range(7)]


def _ids(pool: list[str]) -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(pool), st.sampled_from([1, None, "", "O1.x"]))  # ill-typed too: strict_args off


RETAIL_CALL = st.one_of(
    st.builds(lambda u: {"name": "get_user_details", "arguments": {"user_id": u}}, _ids(USERS)),
    st.builds(lambda u: {"name": "find_orders", "arguments": {"user_id": u}}, _ids(USERS)),
    st.builds(lambda o, r: {"name": "cancel_pending_order", "arguments": {"order_id": o, "reason": r}},
              _ids(ORDERS), st.sampled_from(["no longer needed", "ordered by mistake"])),
    st.builds(lambda o: {"name": "refund_order", "arguments": {"order_id": o}}, _ids(ORDERS)),
    st.builds(lambda u, a: {"name": "modify_user_address", "arguments": {"user_id": u, "address": a}},
              _ids(USERS), st.text(max_size=4)),
    st.builds(lambda o, p: {"name": "add_order_item", "arguments": {"order_id": o, "product_id": p}},
              _ids(ORDERS), _ids(PRODUCTS)),
    st.builds(lambda o, u: {"name": "place_order", "arguments": {"order_id": o, "user_id": u}},
              _ids(ORDERS), _ids(USERS)),
    st.builds(lambda o: {"name": "delete_order", "arguments": {"order_id": o}}, _ids(ORDERS)),
    st.builds(lambda t: {"name": "note", "arguments": {"text": t}}, st.text(max_size=3)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RETAIL_CALL, min_size=1, max_size=8))
def test_tracked_delta_equals_full_diff_on_retail(calls: list[dict[str, Any]]) -> None:
    _side_by_side(RetailEnv, retail_state(5), calls)


def test_retail_calls_are_tracked() -> None:
    calls = [{"name": "find_orders", "arguments": {"user_id": "U1"}},
             {"name": "cancel_pending_order", "arguments": {"order_id": "O1", "reason": "x"}},
             {"name": "refund_order", "arguments": {"order_id": "O1"}},
             {"name": "place_order", "arguments": {"order_id": "O99", "user_id": "U1"}},
             {"name": "delete_order", "arguments": {"order_id": "O2"}}]
    assert _side_by_side(RetailEnv, retail_state(5), calls) == len(calls)


def test_state_shared_between_attributes_falls_back() -> None:
    steps = []
    for track in (True, False):
        runtime = ClassRuntime(RetailEnv, failure_exceptions=["ValueError"], track=track)
        runtime.reset(retail_state(2))
        runtime._instance.log = runtime._instance.data["orders"]["O1"]["items"]  # shared from the start
        runtime._encoded = runtime._encode(runtime._instance)
        steps.append(_step(runtime, {"name": "add_order_item", "arguments": {"order_id": "O1", "product_id": "P0"}}))
        assert runtime.tracked_calls == 0
    assert steps[0] == steps[1] and steps[0][2]


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3) | st.sampled_from([codec.TAG]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3) | st.just(codec.TAG), inner,
                                                                  max_size=3)
    | st.dictionaries(st.integers(0, 3), inner, max_size=2) | st.tuples(inner) | st.frozensets(st.integers(), max_size=2),
    max_leaves=10)


@settings(max_examples=60, deadline=None)
@given(VALUES, st.booleans())
def test_the_encoder_counts_every_tagged_value(value: Any, shared: bool) -> None:
    """`Encoded.is_plain` (which lets a call be tracked) rests on this count."""
    if shared and isinstance(value, (list, dict)):
        value = [value, value]  # a container reached twice is a reference
    encoder = codec.Encoder(codec.TypeNames({}, []))
    encoded = encoder.encode(value, ("x",))
    assert (encoder.tags == 0) == codec.is_plain(encoded)


def test_a_shadowed_or_patched_tool_is_not_tracked() -> None:
    steps = []
    for track in (True, False):
        runtime = ClassRuntime(RetailEnv, failure_exceptions=["ValueError"], track=track)
        runtime.reset(retail_state(2))
        instance = runtime._instance
        instance.note = lambda text, of=instance: of.data["users"].clear()  # an instance attribute shadows the tool
        steps.append(_step(runtime, {"name": "note", "arguments": {"text": "x"}}))
        assert runtime.tracked_calls == 0
    assert steps[0] == steps[1] and steps[0][2]
