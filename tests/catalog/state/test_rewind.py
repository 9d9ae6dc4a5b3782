"""Rewinding a class env to its template, and patches of tracked calls, against a fresh build and a full snapshot."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from catalog.runtime import load_module, runtime_for
from catalog.state.patches import PatchError, apply_patch

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bigstate"
sys.path.insert(0, str(FIXTURE))

import make_state  # noqa: E402


def _runtime() -> Any:
    module = load_module(FIXTURE / "retail_store.py")
    return runtime_for(module, "class", "RetailStore", failure_exceptions=["ValueError"], strict_args=False)


def _calls(state: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    users, orders, products = list(state["users"]), list(state["orders"]), list(state["products"])
    calls = []
    for _ in range(rng.randint(1, 4)):
        order = rng.choice([*orders, "#missing"])
        user = rng.choice(users)
        product = rng.choice(products)
        item = rng.choice(list(state["products"][product]["variants"]))
        owner = state["orders"][order]["user_id"] if order in state["orders"] else user
        method = rng.choice(list(state["users"][owner]["payment_methods"]))
        first = state["orders"][order]["items"][0]["item_id"] if order in state["orders"] else "x"
        calls.append(rng.choice([
            {"name": "cancel_pending_order", "arguments": {"order_id": order, "reason": "no longer needed"}},
            {"name": "modify_user_address", "arguments": {"user_id": user, "address1": "1 A St", "city": "B", "zip": "2"}},
            {"name": "modify_pending_order_address", "arguments": {"order_id": order, "address1": "x", "city": "y",
                                                                   "zip": "3"}},
            {"name": "return_delivered_order_item", "arguments": {"order_id": order, "item_id": first,
                                                                  "payment_method_id": method}},
            {"name": "restock_variant", "arguments": {"product_id": product, "item_id": item,
                                                      "quantity": rng.choice([2, 0])}},
            {"name": "get_user_details", "arguments": {"user_id": user}},
        ]))
    return calls


def test_a_rewind_gives_what_a_fresh_build_gives_and_patches_give_the_snapshot() -> None:
    state = make_state.state(40, seed=1)
    rewinding, fresh = _runtime(), _runtime()
    template = rewinding.template(state)
    rng = random.Random(0)
    patched = 0
    for _ in range(40):
        rewinding.reset(template)
        fresh.reset(state)
        assert json.dumps(rewinding.snapshot(hidden=True)) == json.dumps(fresh.snapshot(hidden=True))
        for call in _calls(state, rng):
            before = rewinding.snapshot()
            one, two = rewinding.call(call), fresh.call(call)
            assert (one.observation, one.delta, one.outcome) == (two.observation, two.delta, two.outcome)
            ops = rewinding.patch()
            if one.delta and ops is not None:
                assert json.dumps(apply_patch(before, ops)) == json.dumps(rewinding.snapshot())
                patched += 1
    assert rewinding.rewinds >= 35 and patched > 10  # the first two resets build (the template's stability)


def test_a_key_removed_and_added_again_rebuilds() -> None:
    class Shop:
        def __init__(self) -> None:
            self.orders: dict[str, Any] = {}

        def bump(self, order_id: str) -> bool:
            """Move an order to the end."""
            self.orders[order_id] = self.orders.pop(order_id)
            return True

        def order_ids(self) -> list[str]:
            """The orders in their order."""
            return list(self.orders)

    runtime = runtime_for_class(Shop)
    template = runtime.template({"orders": {"a": {"n": 1}, "b": {"n": 2}}})
    for _ in range(3):
        runtime.reset(template)
        assert runtime.call({"name": "order_ids", "arguments": {}}).observation == ["a", "b"]
        runtime.call({"name": "bump", "arguments": {"order_id": "a"}})
        assert runtime.call({"name": "order_ids", "arguments": {}}).observation == ["b", "a"]
    assert runtime.rewinds == 0  # the order cannot be put back by path: every reset built the instance again


def runtime_for_class(env_class: type) -> Any:
    from catalog.runtime import ClassRuntime

    return ClassRuntime(env_class)


def test_a_patch_that_does_not_fit_is_refused() -> None:
    state = {"orders": {"a": {"n": 1}}}
    for ops in ([{"path": ["orders", "a", "n", "x"], "value": 1, "keys": None}],
                [{"path": [], "value": 1}], [{"path": ["orders", "b"], "keys": ["a"]}],
                [{"path": ["orders", "b"], "value": 2, "keys": ["a", "c"]}]):
        try:
            apply_patch(state, ops)
        except PatchError:
            continue
        raise AssertionError(f"accepted {ops}")
    assert apply_patch(state, [{"path": ["orders", "b"], "value": 2, "keys": ["b", "a"]}]) == \
        {"orders": {"b": 2, "a": {"n": 1}}}
    assert state == {"orders": {"a": {"n": 1}}}  # the state before is left as it was
