"""Sandbox benchmark: what the OS sandbox costs, measured side by side in one run.

    python bench/sandbox.py [--calls 400] [--starts 5] [--json]

On the library env:
- worker start (start a worker, load the env, answer one call), with the OS sandbox
  (bubblewrap + seccomp + hook) and without it (`--unsafe-no-isolation`: process + seccomp + hook),
  interleaved, median of `--starts` each;
- one call per job (reset to a named state + one call: what property tests do), in-process and
  in a warm sandboxed worker;
- one job of many calls (a sequence from one reset: what audits and exports do), both ways.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from verifier.sandbox import Job, SandboxPool  # noqa: E402


def start_cost(handle, action, isolation: str) -> float:  # type: ignore[no-untyped-def]
    """Seconds from a new pool to the first answer (worker start + env load + one call)."""
    started = time.perf_counter()
    with SandboxPool(1, timeout=10.0, isolation=isolation) as pool:  # type: ignore[arg-type]
        result = pool.run(Job.for_env(handle, [action], state_name="default"))
        seconds = time.perf_counter() - started
    assert result.event is None, result.event
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    handle = Catalog().get("library")
    members = list(handle.state("default")["members"])
    actions = [{"name": "get_member", "arguments": {"member_id": members[i % len(members)]}} for i in range(args.calls)]

    starts: dict[str, list[float]] = {"os": [], "none": []}
    for _ in range(args.starts):
        for isolation in ("os", "none"):
            starts[isolation].append(start_cost(handle, actions[0], isolation))

    runtime = handle.runtime()
    template = runtime.template(handle.state("default"))
    start = time.perf_counter()
    for action in actions:
        runtime.reset(template)
        runtime.call(action)
    inproc_jobs = args.calls / (time.perf_counter() - start)
    runtime.reset(template)
    start = time.perf_counter()
    for action in actions:
        runtime.call(action)
    inproc_batch = args.calls / (time.perf_counter() - start)

    with SandboxPool(1, timeout=10.0) as pool:
        pool.run(Job.for_env(handle, actions[:1], state_name="default"))  # start the worker, load the env
        start = time.perf_counter()
        results = [pool.run(Job.for_env(handle, [action], state_name="default")) for action in actions]
        sandbox_jobs = args.calls / (time.perf_counter() - start)
        assert all(r.event is None and r.calls[0].outcome == "success" for r in results)
        start = time.perf_counter()
        batch = pool.run(Job.for_env(handle, actions, state_name="default"))
        sandbox_batch = args.calls / (time.perf_counter() - start)
        assert batch.event is None and len(batch.calls) == args.calls

    figures = {
        "worker_start_ms": {k: round(1000 * statistics.median(v), 1) for k, v in starts.items()},
        "one_call_per_job": {"in_process_calls_s": round(inproc_jobs), "sandbox_calls_s": round(sandbox_jobs),
                             "slowdown": round(inproc_jobs / sandbox_jobs, 2)},
        "batched": {"calls": args.calls, "in_process_calls_s": round(inproc_batch),
                    "sandbox_calls_s": round(sandbox_batch), "slowdown": round(inproc_batch / sandbox_batch, 2)},
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    start_ms = figures["worker_start_ms"]
    print(f"worker start + env load + 1 call (median of {args.starts}): OS sandbox {start_ms['os']:.0f} ms | "
          f"no OS isolation {start_ms['none']:.0f} ms | ratio {start_ms['os'] / start_ms['none']:.2f}x")
    print(f"one call per job : in-process {inproc_jobs:8.0f} calls/s | sandbox {sandbox_jobs:8.0f} calls/s | "
          f"sandbox is {inproc_jobs / sandbox_jobs:5.2f}x slower")
    print(f"one job, {args.calls} calls: in-process {inproc_batch:8.0f} calls/s | sandbox {sandbox_batch:8.0f} calls/s | "
          f"sandbox is {inproc_batch / sandbox_batch:5.2f}x slower")


if __name__ == "__main__":
    main()
