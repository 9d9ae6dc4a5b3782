"""Sandbox benchmark: tool calls per second in sandboxed workers vs in-process, side by side.

    python bench/sandbox.py [--calls 400] [--workers 1]

Two shapes of work on the library env, each measured both ways in the same run:
- one call per job (reset to a named state + one call: what property tests do);
- one job of many calls (a sequence from one reset: what audits and exports do).
The pool is warmed first (worker start and env load are one-off costs, reported separately).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from verifier.sandbox import Job, SandboxPool  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    handle = Catalog().get("library")
    members = list(handle.state("default")["members"])
    actions = [{"name": "get_member", "arguments": {"member_id": members[i % len(members)]}} for i in range(args.calls)]

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

    with SandboxPool(args.workers, timeout=10.0) as pool:
        start = time.perf_counter()
        pool.warm()
        pool.run(Job.for_env(handle, actions[:1], state_name="default"))
        warmup = time.perf_counter() - start
        jobs = [Job.for_env(handle, [action], state_name="default") for action in actions]
        start = time.perf_counter()
        results = pool.run_many(jobs) if args.workers > 1 else [pool.run(job) for job in jobs]
        sandbox_jobs = args.calls / (time.perf_counter() - start)
        assert all(r.event is None and r.calls[0].outcome == "success" for r in results)
        start = time.perf_counter()
        batch = pool.run(Job.for_env(handle, actions, state_name="default"))
        sandbox_batch = args.calls / (time.perf_counter() - start)
        assert batch.event is None and len(batch.calls) == args.calls

    print(f"warm-up (start {args.workers} worker(s), load the env): {warmup:.2f} s")
    print(f"one call per job : in-process {inproc_jobs:8.0f} calls/s | sandbox {sandbox_jobs:8.0f} calls/s | "
          f"sandbox is {inproc_jobs / sandbox_jobs:5.2f}x slower")
    print(f"one job, {args.calls} calls: in-process {inproc_batch:8.0f} calls/s | sandbox {sandbox_batch:8.0f} calls/s | "
          f"sandbox is {inproc_batch / sandbox_batch:5.2f}x slower")


if __name__ == "__main__":
    main()
