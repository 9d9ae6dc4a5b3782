"""Serving benchmark: many env instances alive at once in one process, each reset and stepped.

    python bench/serving.py [--sessions 1024] [--steps 10] [--json]

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
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10, help="tool calls per instance (default: 10)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
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
