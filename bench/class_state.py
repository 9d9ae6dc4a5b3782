"""Class-env state benchmark: what a call costs as the state grows.

    python bench/class_state.py [--sizes 0,300,3000] [--repeat 5] [--json]

Runs the reference store env (class convention) with N extra products, customers and orders on
a fixed mix of read and write calls, and prints the median cost of one call, with and without a
snapshot, and of one encoding of the state. Class envs diff the state's encoding after each call
against the one before it (catalog/state/_tracking.py), so a call costs about one encoding; run the
same script on an older checkout to compare with another mechanism side by side.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402

CALLS = [
    {"name": "get_product", "arguments": {"product_id": "SKU-101"}},
    {"name": "search_products", "arguments": {"keyword": "mug"}},
    {"name": "add_to_cart", "arguments": {"customer_id": "U3", "product_id": "SKU-101", "quantity": 1}},
    {"name": "update_address", "arguments": {"customer_id": "U2", "address": "9 Calle Mayor, Madrid"}},
    {"name": "checkout", "arguments": {"customer_id": "U2"}},
    {"name": "get_customer", "arguments": {"customer_id": "U2"}},
]


def grow(state: dict[str, Any], extra: int) -> dict[str, Any]:
    """The state with `extra` copies of the first record of each keyed collection."""
    grown = copy.deepcopy(state)
    for collection in ("products", "customers", "orders"):
        records = grown[collection]
        first_key, first = next(iter(records.items()))
        for i in range(extra):
            records[f"{first_key}-x{i}"] = copy.deepcopy(first)
    return grown


def measure(extra: int, repeat: int) -> dict[str, Any]:
    handle = Catalog().get("store")
    runtime = handle.runtime()
    state = grow(handle.state("default"), extra)
    figures: dict[str, Any] = {"extra_records": 3 * extra,
                               "state_bytes": len(json.dumps(state))}
    for label, snapshot in (("call_us", False), ("call_with_snapshot_us", True)):
        samples = []
        for _ in range(repeat):
            runtime.reset(state)
            start = time.perf_counter()
            for action in CALLS:
                runtime.call(action, snapshot=snapshot)
            samples.append((time.perf_counter() - start) / len(CALLS) * 1e6)
        figures[label] = round(statistics.median(samples), 1)
    runtime.reset(state)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        runtime.snapshot()
        samples.append((time.perf_counter() - start) * 1e6)
    figures["snapshot_us"] = round(statistics.median(samples), 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,300,3000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(int(n), args.repeat) for n in args.sizes.split(",")]
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print("  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
