"""Runtime benchmark: reset, call throughput, and how a write's cost scales with the state.

    python bench/runtime.py [--rows 1000] [--big-rows 100000] [--repeat 30]

Prints ratios measured side by side in one run (the machine is shared and noisy):
(a) reset by template restore (SQLite backup API) vs rebuilding the database from INSERT
    statements (the Agent World Model approach), on the library env grown to --rows rows;
(b) in-process tool calls per second for a read tool and for write tools;
(c) one write call with its delta at --rows vs --big-rows rows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.runtime import SqlRuntime  # noqa: E402
from catalog.store import Catalog  # noqa: E402

CLOCK = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)


def grow_library(rows: int, seed: int = 7) -> dict[str, Any]:
    """A consistent library state with about `rows` rows: 1/4 members, 1/2 books, 1/4 loans."""
    rng = random.Random(seed)
    n_members, n_books = max(rows // 4, 2), max(rows // 2, 2)
    n_loans = max(rows - n_members - n_books, 1)
    iso = lambda t: t.isoformat()  # noqa: E731
    members = {f"M{i:06d}": {"id": f"M{i:06d}", "name": f"Member {i}", "email": f"m{i}@example.org", "status": "active",
                              "max_loans": 5, "active_loans": 0, "fines_due": 0.0, "lost_count": 0,
                              "joined_at": iso(CLOCK - dt.timedelta(days=rng.randint(1, 900)))} for i in range(n_members)}
    books = {f"B{i:06d}": {"id": f"B{i:06d}", "title": f"Title {i}", "author": f"Author {i % 997}",
                            "genre": rng.choice(["fiction", "science", "classic"]), "status": "available",
                            "replacement_cost": float(rng.randint(8, 40)), "times_borrowed": rng.randint(0, 30),
                            "hold_member_id": None, "lost_at": None} for i in range(n_books)}
    loans = {}
    for i in range(n_loans):
        member_id, book_id = f"M{i % n_members:06d}", f"B{i:06d}"
        start = CLOCK - dt.timedelta(days=rng.randint(1, 12))
        loans[f"loan-{i + 1}"] = {"id": f"loan-{i + 1}", "book_id": book_id, "member_id": member_id,
                                  "borrowed_at": iso(start), "due_at": iso(start + dt.timedelta(days=14)),
                                  "returned_at": None, "renewals": 0, "status": "active"}
        books[book_id]["status"] = "on_loan"
        members[member_id]["active_loans"] += 1
    meta = {"clock": {"key": "clock", "value": iso(CLOCK)},
            "next_id:loan": {"key": "next_id:loan", "value": n_loans + 1}}
    return {"members": members, "books": books, "loans": loans, "fines": {}, "env_meta": meta}


def median_time(function: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def free_pairs(state: dict[str, Any], count: int) -> list[tuple[str, str]]:
    """(member, book) pairs where borrowing succeeds: members with room, available books."""
    members = [m for m, r in state["members"].items() if r["active_loans"] < r["max_loans"] - 1]
    books = [b for b, r in state["books"].items() if r["status"] == "available"]
    return list(zip(members[:count], books[-count:], strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--big-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    runtime = Catalog().get("library").runtime()
    assert isinstance(runtime, SqlRuntime), "the library env is a SQL env (templates are its reset)"
    state = grow_library(args.rows)
    rows = sum(len(c) for c in state.values())
    template = runtime.template(state)
    dump = "\n".join(template.connection.iterdump())
    inserts = sum(1 for line in dump.splitlines() if line.startswith("INSERT"))

    # (a) reset: template restore vs rebuilding from INSERT statements, interleaved.
    def replay() -> None:
        connection = sqlite3.connect(":memory:")
        connection.executescript(dump)
        connection.close()

    restore_times, replay_times = [], []
    for _ in range(args.repeat):
        restore_times.append(median_time(lambda: runtime.reset(template), 1))
        replay_times.append(median_time(replay, 1))
    restore, rebuilt = statistics.median(restore_times), statistics.median(replay_times)
    print(f"(a) reset, {rows} rows ({inserts} INSERT statements), median of {args.repeat}:")
    print(f"    template restore {restore * 1e3:8.3f} ms | INSERT replay {rebuilt * 1e3:8.3f} ms | "
          f"restore is {rebuilt / restore:6.1f}x faster")

    # (b) throughput in-process.
    runtime.reset(template)
    member_ids = list(state["members"])
    n_reads = 3000
    start = time.perf_counter()
    for i in range(n_reads):
        runtime.call({"name": "get_member", "arguments": {"member_id": member_ids[i % len(member_ids)]}})
    reads_per_s = n_reads / (time.perf_counter() - start)
    pairs = free_pairs(state, 200)
    runtime.reset(template)
    writes = 0
    start = time.perf_counter()
    for member_id, book_id in pairs:
        result = runtime.call({"name": "borrow_book", "arguments": {"member_id": member_id, "book_id": book_id}})
        assert result.outcome.value == "success", result.observation
        runtime.call({"name": "return_book", "arguments": {"loan_id": result.observation["data"]["loan_id"]}})
        writes += 2
    writes_per_s = writes / (time.perf_counter() - start)
    runtime.reset(template)
    loan_ids = list(state["loans"])
    start = time.perf_counter()
    for loan_id in loan_ids * 2:  # each loan can be renewed twice
        result = runtime.call({"name": "renew_loan", "arguments": {"loan_id": loan_id}})
        assert result.outcome.value == "success" and len(result.delta) == 2, result.observation
    renews_per_s = 2 * len(loan_ids) / (time.perf_counter() - start)
    print(f"(b) in-process calls/s: read get_member {reads_per_s:8.0f}/s | write renew_loan (|Δ|=2) "
          f"{renews_per_s:8.0f}/s | write borrow_book+return_book (|Δ|=5, 4) {writes_per_s:8.0f}/s")

    # (c) one write with its delta, small vs big state, timed the same way.
    def write_cost(big_state: dict[str, Any]) -> tuple[float, int]:
        big_template = runtime.template(big_state)
        runtime.reset(big_template)
        samples, size = [], 0
        for member_id, book_id in free_pairs(big_state, args.repeat):
            start = time.perf_counter()
            result = runtime.call({"name": "borrow_book", "arguments": {"member_id": member_id, "book_id": book_id}})
            samples.append(time.perf_counter() - start)
            size = len(result.delta)
        return statistics.median(samples), size

    big_state = grow_library(args.big_rows)
    big_rows = sum(len(c) for c in big_state.values())
    small_cost, small_delta = write_cost(state)
    big_cost, big_delta = write_cost(big_state)
    small_again, _ = write_cost(state)
    small_cost = min(small_cost, small_again)
    print(f"(c) borrow_book with its delta (|Δ|={small_delta}/{big_delta}), median of {args.repeat}: "
          f"{rows} rows {small_cost * 1e3:.3f} ms | {big_rows} rows {big_cost * 1e3:.3f} ms | "
          f"ratio {big_cost / small_cost:.2f}x")


if __name__ == "__main__":
    main()
