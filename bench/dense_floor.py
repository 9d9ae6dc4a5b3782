"""Where a dense sandboxed step's CPU goes: the env's own call, the round trip, and switching between workers.

    python bench/dense_floor.py [--catalog DIR] [--env ID] [--sessions 64] [--rounds 20] [--json]

Side by side in one run, on one synthesized env (the first of `--catalog`, or `--env`; without `--catalog`, one
synthesized now into a temp catalog) and the
same calls (each session's task solution, repeated; bench/serving.py's episodes):
`in_process_call_ms`, the CPU of the call itself with no sandbox (each instance's calls from its
reset on, as the sandboxed rows make them); then `--sessions` sandboxed sessions (sandbox/dense.py) stepped round-robin with
all of them on one worker (`one_worker`) and with one worker each (`worker_each`, what 100
distinct env versions give: one version per worker is the rule). Each prints the CPU per step
(reset every 10 steps included) of this process (`supervisor`) and of the sandbox's processes.
The difference between the two sandboxed rows is the cost of a step landing on a worker other
than the last one's (a process switch onto cold caches), which no change inside a step removes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.runtime import database_engine, load_module, runtime_for  # noqa: E402
from catalog.store import Catalog, runtime_options  # noqa: E402
from sandbox.dense import DensePool  # noqa: E402
from sandbox.session import SandboxRuntime  # noqa: E402
from serving import ToolEnv  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_serving", Path(__file__).with_name("serving.py"))
assert _spec is not None and _spec.loader is not None
bench_serving = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_serving)


def in_process(catalog: Catalog, env_id: str, episodes: list[tuple[Any, list[dict[str, Any]]]]) -> float:
    """CPU ms of the env's call alone, no sandbox (the reset not counted)."""
    handle = catalog.get(env_id)
    m = handle.manifest
    module = load_module(handle.path / "env.py", "dense_floor_env")
    builder = runtime_for(module, m.kind, m.entry, **runtime_options(m),
                          engine=database_engine() if m.kind == "sql" else None)
    total, calls = 0.0, 0
    for task, script in episodes:
        runtime = builder.sibling() if hasattr(builder, "sibling") else builder
        runtime.reset(handle.state(task.state) if isinstance(task.state, str) else task.state)
        for action in script:
            started = time.thread_time()
            runtime.call(action)
            total, calls = total + time.thread_time() - started, calls + 1
    return round(total / calls * 1000, 3)


def sandboxed(catalog: Catalog, env_id: str, episodes: list[tuple[Any, list[dict[str, Any]]]], rounds: int,
              per_worker: int) -> dict[str, Any]:
    """CPU per op (steps, and a reset every 10 steps) of the sessions stepped round-robin, here and in the sandbox."""
    pool = DensePool(per_worker=per_worker)
    envs = []
    for number, (task, _) in enumerate(episodes):
        env = ToolEnv(catalog.get(env_id), task=task, trusted=False, terminate_on_success=False)
        env._runtime = SandboxRuntime(env.handle, dense=pool)
        env.reset(seed=number)
        envs.append(env)
    ops = 0
    before = bench_serving.tree_cpu_seconds()
    for round_number in range(rounds):
        for number, env in enumerate(envs):
            if round_number and round_number % 10 == 0:
                env.reset(seed=number)
                ops += 1
            script = episodes[number][1]
            env.step(script[round_number % len(script)])
            ops += 1
    after = bench_serving.tree_cpu_seconds()
    used = {pid: after[pid] - before.get(pid, 0.0) for pid in after}
    workers = pool.workers()
    for env in envs:
        env.close()
    pool.close()
    return {"workers": workers, "ops": ops,
            "cpu_ms_per_op": {"supervisor": round(used.pop(os.getpid(), 0.0) / ops * 1000, 3),
                              "sandbox": round(sum(used.values()) / ops * 1000, 3)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", help="a catalog with synthesized envs (default: synthesize one now)")
    parser.add_argument("--env", help="the env (default: the catalog's first synthesized env)")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    catalog, ids, _ = bench_serving.synthesized_catalog(1, args.catalog)
    env_id = args.env or ids[0]
    episodes = bench_serving._episodes(catalog, [env_id], args.sessions, 10)
    figures = {"env": env_id, "sessions": args.sessions, "in_process_call_ms": in_process(catalog, env_id, episodes),
               "one_worker": sandboxed(catalog, env_id, episodes, args.rounds, per_worker=args.sessions),
               "worker_each": sandboxed(catalog, env_id, episodes, args.rounds, per_worker=1),
               "load_avg_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    one, each = figures["one_worker"]["cpu_ms_per_op"], figures["worker_each"]["cpu_ms_per_op"]
    figures["switch_cost_ms"] = round(sum(each.values()) - sum(one.values()), 3)
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
