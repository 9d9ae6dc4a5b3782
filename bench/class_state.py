"""Class-env state benchmark: what a call costs as the state grows, tracked and full diff side by side.

    python bench/class_state.py [--sizes 5000,5000000] [--calls 100] [--seed 0] [--sandbox 5000000]
                                [--store 0,3000] [--json]

A class env's delta is either the full encoding and diff of its state after every call (the
old path, `track=False`), or only the subtrees the tool is proven able to write
(catalog/state/touches.py, catalog/state/_tracking.py `tracked_encode`). Both run here in one
process on the same seeded calls, call by call, and every delta, hidden delta and observation is
compared (`mismatches` must be 0; the final states are compared with a fresh full encoding too).

- retail: a tau-bench-like env (tests/catalog/state/retail_env.py, one `data` dict of users,
  orders and products) grown to about each of --sizes bytes of JSON, on a mix of lookups and
  writes (cancel, refund to the order's user, address change, add item, place order, a log).
- retail-sandbox: the same env in the sandbox worker (tracked: the worker runs ClassRuntime), its
  results compared with the full diff in this process; its cost includes the worker round trip.
- store: the reference store env with N extra products, customers and orders (--store), on
  its fixed mix of calls.

Figures: median and mean cost of one call (µs) tracked and full, how many calls were tracked,
`ratio_full_over_tracked`, and for retail `ratio_largest_over_smallest` of the tracked median.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.models import EnvManifest, StepResult  # noqa: E402
from catalog.runtime import ClassRuntime  # noqa: E402
from catalog.state import _tracking  # noqa: E402
from catalog.state.delta import Delta  # noqa: E402
from catalog.store import Catalog  # noqa: E402
from tests.catalog.state.retail_env import RetailEnv, retail_state  # noqa: E402

RETAIL_SOURCE = Path(__file__).resolve().parents[1] / "tests" / "catalog" / "state" / "retail_env.py"

STORE_CALLS = [
    {"name": "get_product", "arguments": {"product_id": "SKU-101"}},
    {"name": "search_products", "arguments": {"keyword": "mug"}},
    {"name": "add_to_cart", "arguments": {"customer_id": "U3", "product_id": "SKU-101", "quantity": 1}},
    {"name": "update_address", "arguments": {"customer_id": "U2", "address": "9 Calle Mayor, Madrid"}},
    {"name": "checkout", "arguments": {"customer_id": "U2"}},
    {"name": "get_customer", "arguments": {"customer_id": "U2"}},
]


def grow(state: dict[str, Any], extra: int) -> dict[str, Any]:
    """The store state with `extra` copies of the first record of each keyed collection."""
    grown = copy.deepcopy(state)
    for collection in ("products", "customers", "orders"):
        records = grown[collection]
        first_key, first = next(iter(records.items()))
        for i in range(extra):
            records[f"{first_key}-x{i}"] = copy.deepcopy(first)
    return grown


def retail_calls(n: int, count: int, seed: int) -> list[dict[str, Any]]:
    """A seeded tau-bench-like episode on retail_state(n): mostly lookups, some writes, a few bad ids."""
    rng = random.Random(seed)
    user = lambda: f"U{rng.randrange(n)}"  # noqa: E731
    order = lambda: f"O{rng.randrange(2 * n)}" if rng.random() < 0.9 else "O-missing"  # noqa: E731
    makers = [
        (4, lambda: {"name": "get_user_details", "arguments": {"user_id": user()}}),
        (4, lambda: {"name": "find_orders", "arguments": {"user_id": user()}}),
        (4, lambda: {"name": "get_order_details", "arguments": {"order_id": order()}}),
        (2, lambda: {"name": "order_total", "arguments": {"order_id": order()}}),
        (2, lambda: {"name": "cancel_pending_order", "arguments": {"order_id": order(), "reason": "no longer needed"}}),
        (2, lambda: {"name": "refund_order", "arguments": {"order_id": order()}}),
        (2, lambda: {"name": "modify_user_address", "arguments": {"user_id": user(), "address": "9 Calle Mayor"}}),
        (2, lambda: {"name": "add_order_item", "arguments": {"order_id": order(), "product_id": f"P{rng.randrange(n)}"}}),
        (2, lambda: {"name": "place_order", "arguments": {"order_id": f"N{rng.randrange(10 ** 6)}", "user_id": user()}}),
        (1, lambda: {"name": "note", "arguments": {"text": "called the customer"}}),
    ]
    weights = [w for w, _ in makers]
    return [rng.choices(makers, weights)[0][1]() for _ in range(count)]


def _view(result: StepResult) -> tuple[Any, ...]:
    return (result.outcome, result.observation, Delta.dump_python(result.delta, mode="json"),
            result.info.get("hidden_delta"))


_FULL_RUNS: dict[Any, tuple[list[float], list[tuple[Any, ...]], dict[str, Any]]] = {}  # the full path, run once


def _run(runtime: Any, state: dict[str, Any], calls: list[dict[str, Any]]) -> tuple[list[float], list[tuple[Any, ...]]]:
    runtime.reset(state)
    gc.collect()
    times, views = [], []
    for action in calls:
        start = time.perf_counter()
        result = runtime.call(action)
        times.append((time.perf_counter() - start) * 1e6)
        views.append(_view(result))
    return times, views


def side_by_side(tracked: Any, full: ClassRuntime, state: dict[str, Any], calls: list[dict[str, Any]],
                 full_key: Any = None) -> dict[str, Any]:
    """Run `calls` on both runtimes (one after the other, so neither pays for the other's garbage
    or cold caches); time each call and compare every result call by call. `full_key`: the full
    path's run on the same state and calls is reused (the sandbox row compares with the retail row's)."""
    times: dict[str, list[float]] = {}
    views: dict[str, list[tuple[Any, ...]]] = {}
    times["tracked"], views["tracked"] = _run(tracked, state, calls)
    if full_key is None or full_key not in _FULL_RUNS:
        times["full"], views["full"] = _run(full, state, calls)
        _FULL_RUNS[full_key] = (times["full"], views["full"], full.snapshot(hidden=True))
    times["full"], views["full"], full_final = _FULL_RUNS[full_key]
    mismatches = sum(a != b for a, b in zip(views["tracked"], views["full"], strict=True))
    final_same = tracked.snapshot(hidden=True) == full_final
    if isinstance(tracked, ClassRuntime):  # in this process: the live instance too, encoded afresh
        final_same = final_same and tracked.snapshot(hidden=True) == _tracking.encode_state(
            tracked._instance, tracked.types).state(hidden=True)
    return {"calls": len(calls), "tracked_calls": getattr(tracked, "tracked_calls", "n/a"), "mismatches": mismatches,
            "final_state_same": final_same,
            "tracked_first_us": round(times["tracked"][0], 1),
            "tracked_median_us": round(statistics.median(times["tracked"]), 1),
            "tracked_mean_us": round(statistics.mean(times["tracked"]), 1),
            "full_median_us": round(statistics.median(times["full"]), 1),
            "full_mean_us": round(statistics.mean(times["full"]), 1),
            "ratio_full_over_tracked": round(statistics.median(times["full"]) / statistics.median(times["tracked"]), 1)}


def retail_size(target_bytes: int) -> int:
    """The n whose retail_state(n) is about `target_bytes` of JSON."""
    per_record = len(json.dumps(retail_state(100))) / 100
    return max(1, round(target_bytes / per_record))


def measure_retail(target_bytes: int, calls: int, seed: int) -> dict[str, Any]:
    n = retail_size(target_bytes)
    state = retail_state(n)
    tracked = ClassRuntime(RetailEnv, failure_exceptions=["ValueError"])
    row = {"env": "retail", "records": 4 * n, "state_bytes": len(json.dumps(state))}
    row.update(side_by_side(tracked, tracked.sibling(track=False), state, retail_calls(n, calls, seed),
                            ("retail", n, calls, seed)))
    return row


def measure_sandbox(target_bytes: int, calls: int, seed: int) -> dict[str, Any]:
    """The retail env in the sandbox worker (tracked, as it always runs there) against the full diff here."""
    from sandbox.session import SandboxRuntime

    n = retail_size(target_bytes)
    state = retail_state(n)
    full = ClassRuntime(RetailEnv, failure_exceptions=["ValueError"], track=False)
    manifest = EnvManifest(id="retail", name="Retail", kind="class", entry="RetailEnv", tools=list(full.tools.values()),
                           init="auto", failure_exceptions=["ValueError"])
    with tempfile.TemporaryDirectory() as folder:
        handle = Catalog(Path(folder)).write_env(manifest, RETAIL_SOURCE.read_text(), {"start": state})
        sandboxed = SandboxRuntime(handle)
        try:
            row = {"env": "retail-sandbox", "records": 4 * n, "state_bytes": len(json.dumps(state))}
            row.update(side_by_side(sandboxed, full, state, retail_calls(n, calls, seed), ("retail", n, calls, seed)))
        finally:
            sandboxed.close()
    return row


def measure_store(extra: int, repeat: int) -> dict[str, Any]:
    handle = Catalog().get("store")
    tracked = handle.runtime()
    assert isinstance(tracked, ClassRuntime)
    state = grow(handle.state("default"), extra)
    row = {"env": "store", "records": 3 * extra, "state_bytes": len(json.dumps(state))}
    row.update(side_by_side(tracked, tracked.sibling(track=False), state, STORE_CALLS * repeat))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,5000000", help="retail state sizes, bytes of JSON")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", default="0,3000", help="extra records of the store env ('' to skip)")
    parser.add_argument("--sandbox", default="5000000", help="retail size run in the sandbox worker ('' to skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure_retail(int(size), args.calls, args.seed) for size in args.sizes.split(",")]
    retail = list(rows)
    rows += [measure_sandbox(int(size), args.calls, args.seed) for size in args.sandbox.split(",") if size]
    rows += [measure_store(int(extra), 3) for extra in args.store.split(",") if extra]
    summary = {"retail_ratio_largest_over_smallest": round(retail[-1]["tracked_median_us"]
                                                           / retail[0]["tracked_median_us"], 2),
               "mismatches": sum(row["mismatches"] for row in rows),
               "final_states_same": all(row["final_state_same"] for row in rows)}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}))
        return
    for row in rows:
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    print("  ".join(f"{k}={v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
