"""Sandbox benchmark: what the OS sandbox costs, measured side by side in one run.

    python bench/sandbox.py [--calls 400] [--starts 5] [--json]

On the library env:
- pool start (the sandbox and its fork server, then a worker: load the env, answer one call) and
  worker start on a running pool (fork a worker for a new env version, load it, answer one call),
  with the OS sandbox (bubblewrap + private mounts + seccomp + hook) and without it
  (`--unsafe-no-isolation`), interleaved, median of `--starts` each;
- one call per job (reset to a named state + one call: what property tests do), in-process and
  in a warm sandboxed worker;
- one job of many calls (a sequence from one reset: what audits and exports do), both ways.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.runtime import SqlRuntime  # noqa: E402
from catalog.store import Catalog, EnvHandle  # noqa: E402
from sandbox.isolation import Isolation  # noqa: E402
from sandbox.pool import Job, SandboxPool  # noqa: E402


def pool_start(handle: EnvHandle, action: dict[str, Any], isolation: Isolation) -> float:
    """Seconds from a new pool to the first answer (sandbox + fork server + worker + env load + one call)."""
    started = time.perf_counter()
    with SandboxPool(1, timeout=10.0, isolation=isolation) as pool:
        result = pool.run(Job.for_env(handle, [action], state_name="default"))
        seconds = time.perf_counter() - started
    assert result.event is None, result.event
    return seconds


def worker_start(pool: SandboxPool, copy: Path, handle: EnvHandle, action: dict[str, Any]) -> float:
    """Seconds to the first answer of a new env version on a running pool (fork + env load + one call)."""
    job = Job.for_env(handle, [action], state_name="default")
    job.env_dir = str(copy)
    started = time.perf_counter()
    result = pool.run(job)
    assert result.event is None, result.event
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    handle = Catalog().get("library")
    members = list(handle.state("default")["members"])
    actions = [{"name": "get_member", "arguments": {"member_id": members[i % len(members)]}} for i in range(args.calls)]

    pool_starts: dict[str, list[float]] = {"os": [], "none": []}
    worker_starts: dict[str, list[float]] = {"os": [], "none": []}
    for _ in range(args.starts):
        for isolation in ("os", "none"):
            pool_starts[isolation].append(pool_start(handle, actions[0], isolation))
    with tempfile.TemporaryDirectory() as folder, SandboxPool(1, isolation="os") as isolated, \
            SandboxPool(1, isolation="none") as plain:
        copies = []
        for index in range(2 * args.starts + 1):
            copies.append(Path(folder) / f"library-{index}")
            shutil.copytree(handle.path, copies[-1])
        isolated.run(Job.for_env(handle, actions[:1], state_name="default"))  # start both fork servers
        plain.run(Job.for_env(handle, actions[:1], state_name="default"))
        for index in range(args.starts):
            worker_starts["os"].append(worker_start(isolated, copies[2 * index], handle, actions[0]))
            worker_starts["none"].append(worker_start(plain, copies[2 * index + 1], handle, actions[0]))

    runtime = handle.runtime()
    assert isinstance(runtime, SqlRuntime), "the library env is a SQL env"
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
        "pool_start_ms": {k: round(1000 * statistics.median(v), 1) for k, v in pool_starts.items()},
        "worker_start_ms": {k: round(1000 * statistics.median(v), 1) for k, v in worker_starts.items()},
        "one_call_per_job": {"in_process_calls_s": round(inproc_jobs), "sandbox_calls_s": round(sandbox_jobs),
                             "slowdown": round(inproc_jobs / sandbox_jobs, 2)},
        "batched": {"calls": args.calls, "in_process_calls_s": round(inproc_batch),
                    "sandbox_calls_s": round(sandbox_batch), "slowdown": round(inproc_batch / sandbox_batch, 2)},
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for label, key in (("pool start (sandbox + fork server) + env load + 1 call", "pool_start_ms"),
                       ("new env on a running pool (fork + env load + 1 call)", "worker_start_ms")):
        ms = figures[key]
        print(f"{label} (median of {args.starts}): OS sandbox {ms['os']:.0f} ms | no OS isolation {ms['none']:.0f} ms"
              f" | ratio {ms['os'] / ms['none']:.2f}x")
    print(f"one call per job : in-process {inproc_jobs:8.0f} calls/s | sandbox {sandbox_jobs:8.0f} calls/s | "
          f"sandbox is {inproc_jobs / sandbox_jobs:5.2f}x slower")
    print(f"one job, {args.calls} calls: in-process {inproc_batch:8.0f} calls/s | sandbox {sandbox_batch:8.0f} calls/s | "
          f"sandbox is {inproc_batch / sandbox_batch:5.2f}x slower")


if __name__ == "__main__":
    main()
