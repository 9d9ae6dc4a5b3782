"""Serving benchmark: many env instances alive at once in one process, each reset and stepped.

    python bench/serving.py [--sessions 1024] [--steps 10] [--json]
    python bench/serving.py --sessions 1024 --synthesized 100 [--catalog DIR] [--baseline-sessions 32] --json

Makes --sessions instances with the gym API (serving), spread evenly over the four
reference envs (in-process, the setting a server of trusted envs runs in), each on one of its
env's tasks so every step also runs the task's check. All instances are created and reset
first, then stepped in rounds (one call per instance per round), so every instance is alive and
mid-episode at once. Each instance's calls are its task's reference solution repeated to
--steps calls: writes that succeed, the same writes refused by a rule, and reads.

Prints sessions, peak RSS (MiB, the whole process), reset and step latency (p50/p99 per call,
timed one by one) and steps per second (all steps over the wall time of the step rounds);
also the time to make an instance and the RSS before any was made. `side_by_side` compares, on
fresh SQL instances measured in the same run, a reset from the shared template against loading
the state afresh, and an instance's first write with the env's shared engine (compiled statements
shared) against an engine of its own (what `handle.runtime()` builds): first writes are the tail
of the step latency, since each fresh instance loads the rows it touches into its ORM session.

With `--synthesized N`: the same sessions over N synthesized envs (`synthesize --n N` into a temp
catalog, or the synthesized envs of `--catalog`), run sandboxed, the way every non-reference env
runs: dense (instances of one env version share a worker, sandbox/dense.py) and, beside it, the
baseline of one worker per instance (`dense=False`) on `--baseline-sessions` (1,024 single
workers do not fit in memory: their PSS is extrapolated and says so). All instances are made and
reset first (`startup_s`, in `--threads` threads), reset once more one by one (the reset
figures), then stepped: the first half of the rounds one
call at a time (the latency figures), the second half by `--threads` threads at once (the
throughput, `steps_per_s`, and the CPU a step took in this process and in the sandbox,
`cpu_ms_per_step`: on a machine others share, what idle cores would allow). PSS is summed over this process and every process under it
(/proc/<pid>/smaps_rollup), measured with every instance alive. The contamination run drives
`--sessions` instances of one env concurrently, each from its own seed, and compares every final
state with a solo run (one instance alone) of the same seed. The in-process figures above come
along as `in_process`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from serving import ToolEnv, make  # noqa: E402

ENVS = ("library", "bank", "clinic", "store")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def side_by_side(catalog: Catalog, instances: int) -> dict[str, float]:
    """Medians (ms) of reset and of a first write, the serving way vs the one-runtime way, and their ratios."""
    from catalog.runtime import runtime_for
    from catalog.store import runtime_options
    from serving._code import loaded

    figures: dict[str, list[float]] = {"reset_template": [], "reset_load": [], "first_write_shared": [],
                                       "first_write_own": []}
    for env_id in ("library", "bank", "clinic"):
        handle = catalog.get(env_id)
        code, m = loaded(handle), handle.manifest
        task, kinds = handle.tasks()[0], {t.name: t.kind for t in m.tools}
        write = next(a for a in task.solution or [] if kinds[a.name] == "write")
        for number in range(instances):
            shared = code.runtime()
            own = runtime_for(code.module, m.kind, m.entry, **runtime_options(m))
            started = time.perf_counter()
            code.reset(shared, code.start(task.state))
            figures["reset_template"].append(time.perf_counter() - started)
            started = time.perf_counter()
            own.reset(handle.state(task.state))
            figures["reset_load"].append(time.perf_counter() - started)
            for runtime, key in ((shared, "first_write_shared"), (own, "first_write_own"))[::1 if number % 2 else -1]:
                started = time.perf_counter()
                runtime.call(write)
                figures[key].append(time.perf_counter() - started)
    medians = {key: statistics.median(values) * 1000.0 for key, values in figures.items()}
    return {**{f"{key}_ms": round(value, 3) for key, value in medians.items()},
            "reset_speedup": round(medians["reset_load"] / medians["reset_template"], 1),
            "first_write_speedup": round(medians["first_write_own"] / medians["first_write_shared"], 1)}


def run(sessions: int, steps: int) -> dict[str, Any]:
    catalog = Catalog(root="/nonexistent-envforge-catalog")
    tasks = {env_id: catalog.get(env_id).tasks() for env_id in ENVS}
    baseline = peak_rss_mb()
    envs: list[ToolEnv] = []
    scripts: list[list[dict[str, Any]]] = []
    make_times: list[float] = []
    for number in range(sessions):
        env_id = ENVS[number % len(ENVS)]
        task = tasks[env_id][(number // len(ENVS)) % len(tasks[env_id])]
        started = time.perf_counter()
        envs.append(make(env_id, task=task, catalog=catalog, terminate_on_success=False))
        make_times.append(time.perf_counter() - started)
        solution = [a.model_dump() for a in task.solution or []]
        scripts.append([solution[i % len(solution)] for i in range(steps)])
    resets: list[float] = []
    for env in envs:
        started = time.perf_counter()
        env.reset(seed=0)
        resets.append(time.perf_counter() - started)
    step_times: list[float] = []
    outcomes: dict[str, int] = {}
    wall = time.perf_counter()
    for round_number in range(steps):
        for env, script in zip(envs, scripts, strict=True):
            started = time.perf_counter()
            info = env.step(script[round_number])[4]
            step_times.append(time.perf_counter() - started)
            outcomes[info["outcome"]] = outcomes.get(info["outcome"], 0) + 1
    wall = time.perf_counter() - wall
    alive = sum(1 for env in envs if env.steps == steps)
    ms = 1000.0
    return {"sessions": alive, "rss_mb": round(peak_rss_mb(), 1),
            "reset_p50_ms": round(statistics.median(resets) * ms, 3),
            "step_p50_ms": round(statistics.median(step_times) * ms, 3),
            "step_p99_ms": round(percentile(step_times, 0.99) * ms, 3),
            "steps_per_s": round(len(step_times) / wall, 1),
            "make_p50_ms": round(statistics.median(make_times) * ms, 3), "rss_before_mb": round(baseline, 1),
            "envs": list(ENVS), "outcomes": dict(sorted(outcomes.items())),
            "side_by_side": side_by_side(catalog, max(8, sessions // 64))}


def tree_pids() -> list[int]:
    """This process and every process under it (sandboxes, fork servers, workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [os.getpid()]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def tree_pss_mb() -> float:
    """PSS (MiB) of this process and every process under it (/proc/<pid>/smaps_rollup)."""
    total = 0
    for pid in tree_pids():
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                total += sum(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        except OSError:
            continue
    return total / 1024


def tree_cpu_seconds() -> dict[int, float]:
    """CPU seconds (user + system) so far of each process in the tree."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in tree_pids():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return out


def synthesized_catalog(n: int, root: str | None) -> tuple[Catalog, list[str], float]:
    """A catalog with at least `n` synthesized envs (`root`'s, or synthesized now), their ids, seconds spent."""
    started = time.perf_counter()
    if root is None:
        from synth.run import RunConfig, synthesize

        root = tempfile.mkdtemp(prefix="envforge-bench-serving-")
        synthesize(RunConfig(n=n, catalog=root, workers=2, seed=7), progress=False)
    catalog = Catalog(root=root)
    summaries, _ = catalog.list()
    ids = sorted(s.id for s in summaries if not catalog.get(s.id).reference)
    if len(ids) < n:
        raise SystemExit(f"{root} has {len(ids)} synthesized envs, fewer than --synthesized {n}")
    return catalog, ids[:n], time.perf_counter() - started


def _episodes(catalog: Catalog, ids: list[str], sessions: int, steps: int) -> list[tuple[Any, list[dict[str, Any]]]]:
    """(task, script) per session: sessions spread over the envs, each on a task with a solution."""
    tasks = {env_id: [t for t in catalog.get(env_id).tasks() if t.solution] for env_id in ids}
    out = []
    for number in range(sessions):
        env_tasks = tasks[ids[number % len(ids)]]
        task = env_tasks[(number // len(ids)) % len(env_tasks)]
        solution = [a.model_dump() for a in task.solution or []]
        out.append((task, [solution[i % len(solution)] for i in range(steps)]))
    return out


def sandboxed(catalog: Catalog, ids: list[str], sessions: int, steps: int, threads: int, *,
              dense: bool) -> dict[str, Any]:
    """The figures of `sessions` sandboxed instances over `ids`, dense or one worker per instance."""
    from sandbox.dense import DensePool
    from sandbox.session import SandboxRuntime

    episodes = _episodes(catalog, ids, sessions, steps)
    pool = DensePool() if dense else None
    pss_before = tree_pss_mb()
    envs: list[ToolEnv] = []
    resets: list[float] = []
    lock = threading.Lock()

    def start(number: int) -> ToolEnv:
        task = episodes[number][0]
        env = ToolEnv(catalog.get(ids[number % len(ids)]), task=task, trusted=False, terminate_on_success=False)
        env._runtime = SandboxRuntime(env.handle, dense=pool if pool is not None else False)  # the variant measured
        env.reset(seed=number)  # the first reset starts the instance (and its worker, if it is the first)
        return env

    wall = time.perf_counter()
    with ThreadPoolExecutor(threads) as executor:
        envs = list(executor.map(start, range(sessions)))
    startup = time.perf_counter() - wall
    for number, env in enumerate(envs):  # every instance up: a reset is now what an episode's start costs
        started = time.perf_counter()
        env.reset(seed=number)
        resets.append(time.perf_counter() - started)
    step_times: list[float] = []
    outcomes: dict[str, int] = {}
    sequential = steps // 2
    for round_number in range(sequential):
        for env, (_, script) in zip(envs, episodes, strict=True):
            started = time.perf_counter()
            info = env.step(script[round_number])[4]
            step_times.append(time.perf_counter() - started)
            outcomes[info["outcome"]] = outcomes.get(info["outcome"], 0) + 1

    def drive(share: int) -> None:
        for round_number in range(sequential, steps):
            for number in range(share, sessions, threads):
                info = envs[number].step(episodes[number][1][round_number])[4]
                with lock:
                    outcomes[info["outcome"]] = outcomes.get(info["outcome"], 0) + 1

    ms = 1000.0
    cpu_before = tree_cpu_seconds()
    wall = time.perf_counter()
    with ThreadPoolExecutor(threads) as executor:
        list(executor.map(drive, range(threads)))
    wall = time.perf_counter() - wall
    cpu_after = tree_cpu_seconds()
    used = {pid: cpu_after[pid] - cpu_before.get(pid, 0.0) for pid in cpu_after}
    threaded_steps = sessions * (steps - sequential)
    pss = tree_pss_mb()
    alive = sum(1 for env in envs if env.steps == steps)
    workers = pool.workers() if pool is not None else sessions
    isolated = sum(1 for env in envs if getattr(env._runtime, "isolated", None))
    for env in envs:
        env.close()
    if pool is not None:
        pool.close()
    return {"sessions": alive, "distinct_envs": len({env.env_id for env in envs}), "workers": workers,
            "isolated_sessions": isolated, "pss_mb": round(pss, 1), "pss_before_mb": round(pss_before, 1),
            "reset_p50_ms": round(statistics.median(resets) * ms, 3),
            "reset_p99_ms": round(percentile(resets, 0.99) * ms, 3),
            "step_p50_ms": round(statistics.median(step_times) * ms, 3),
            "step_p99_ms": round(percentile(step_times, 0.99) * ms, 3),
            "steps_per_s": round(threaded_steps / wall, 1), "threads": threads,
            # CPU a step costs, here and in the sandbox: what the steps/s of idle cores is bounded by
            "cpu_ms_per_step": {"supervisor": round(used.pop(os.getpid(), 0.0) / threaded_steps * ms, 3),
                                "sandbox": round(sum(used.values()) / threaded_steps * ms, 3)},
            "startup_s": round(startup, 2), "outcomes": dict(sorted(outcomes.items()))}


def contamination(catalog: Catalog, env_id: str, instances: int, steps: int, threads: int) -> dict[str, Any]:
    """`instances` of one env driven at once, each from its own seed, against solo runs of the same seeds."""
    from sandbox.dense import DensePool
    from sandbox.session import SandboxRuntime

    handle = catalog.get(env_id)
    actions = [a.model_dump() for task in handle.tasks() for a in task.solution or []]
    state = handle.default_state()

    def script(seed: int) -> list[dict[str, Any]]:
        rng = random.Random(seed)
        return [rng.choice(actions) for _ in range(steps)]

    def run(runtime: SandboxRuntime, seed: int) -> str:
        runtime.reset(state)
        for action in script(seed):
            runtime.call(action)
        return json.dumps(runtime.snapshot(), sort_keys=True)

    with DensePool(per_worker=1) as solo_pool:
        alone = SandboxRuntime(handle, dense=solo_pool)
        solo = [run(alone, seed) for seed in range(instances)]
        alone.close()
    with DensePool() as pool:
        runtimes = [SandboxRuntime(handle, dense=pool) for _ in range(instances)]
        for runtime in runtimes:
            runtime.reset(state)  # all alive before any is driven
        finals: list[str | None] = [None] * instances

        def drive(share: int) -> None:
            for seed in range(share, instances, threads):
                finals[seed] = run(runtimes[seed], seed)

        with ThreadPoolExecutor(threads) as executor:
            list(executor.map(drive, range(threads)))
        workers = pool.workers()
        for runtime in runtimes:
            runtime.close()
    return {"env": env_id, "instances": instances, "workers": workers, "calls_each": steps,
            "distinct_finals": len(set(solo)), "mismatches": sum(a != b for a, b in zip(finals, solo, strict=True))}


def run_synthesized(sessions: int, steps: int, n: int, root: str | None, baseline_sessions: int,
                    threads: int) -> dict[str, Any]:
    catalog, ids, synth_seconds = synthesized_catalog(n, root)
    result = sandboxed(catalog, ids, sessions, steps, threads, dense=True)
    base_n = min(sessions, baseline_sessions)
    base = sandboxed(catalog, ids, base_n, steps, threads, dense=False)
    if base_n < sessions:
        base["note"] = (f"one worker per instance on {base_n} sessions: {sessions} would need about "
                        f"{round(((base['pss_mb'] - base['pss_before_mb']) / base_n * sessions + base['pss_before_mb']) / 1024, 1)}"
                        " GiB of PSS and "
                        f"{round(base['startup_s'] / base_n * sessions, 1)} s to start (extrapolated linearly)")
    return {**result, "load_avg_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
            "catalog": str(catalog.root),
            "synthesize_s": round(synth_seconds, 1), "baseline": base,
            "contamination": contamination(catalog, ids[0], sessions, steps, threads),
            "in_process": run(sessions, steps)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10, help="tool calls per instance (default: 10)")
    parser.add_argument("--synthesized", type=int, default=0,
                        help="also run the sessions sandboxed over this many synthesized envs (default: 0, off)")
    parser.add_argument("--catalog", help="reuse this catalog's synthesized envs instead of synthesizing")
    parser.add_argument("--baseline-sessions", type=int, default=32,
                        help="sessions of the one-worker-per-instance baseline (default: 32)")
    parser.add_argument("--threads", type=int, default=4, help="threads that start and drive sandboxed sessions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.synthesized:
        figures = run_synthesized(args.sessions, args.steps, args.synthesized, args.catalog,
                                  args.baseline_sessions, args.threads)
        print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
        return
    result = run(args.sessions, args.steps)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['sessions']} instances alive at once over {', '.join(result['envs'])} (in-process), "
          f"peak RSS {result['rss_mb']} MiB (before: {result['rss_before_mb']} MiB)")
    print(f"make p50 {result['make_p50_ms']} ms; reset p50 {result['reset_p50_ms']} ms")
    print(f"step p50 {result['step_p50_ms']} ms, p99 {result['step_p99_ms']} ms, {result['steps_per_s']} steps/s "
          f"(outcomes {result['outcomes']})")
    side = result["side_by_side"]
    print(f"side by side on fresh SQL instances: reset from the shared template {side['reset_template_ms']} ms vs "
          f"loading the state {side['reset_load_ms']} ms ({side['reset_speedup']}x); first write with the shared "
          f"engine {side['first_write_shared_ms']} ms vs an engine of its own {side['first_write_own_ms']} ms "
          f"({side['first_write_speedup']}x)")


if __name__ == "__main__":
    main()
