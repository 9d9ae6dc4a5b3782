"""Executors side by side: the local pool vs Ray on one machine, per command, per bare unit and per env step.

    python bench/executors.py [--json] [--commands synthesize,verify,export,audit,rollout]

Starts one local Ray cluster in this process (`ray.init(num_cpus=2)`) and runs every command as
a subprocess of the CLI twice over, `--executor local` and `--executor ray --ray-address <its GCS
address>`, so the Ray figures depend only on the CLI flags and both executors run back to back
under the same machine load. Per command (units: envs registered, envs verified, samples
exported, samples audited, episodes rolled out):

- the wall time of a small and a large run with 2 workers, for each executor: with two sizes the
  fixed cost (start-up: imports, pool or actors, the cluster join) and the per-unit slope are
  told apart (`fixed_s`, `per_unit_ms`), and `ray_overhead_per_unit_ms` / `ray_fixed_overhead_s`
  are Ray's minus the local pool's;
- units/s of the large run with 1 and 2 workers for each executor (these include start-up);
- a command whose `--executor ray` starts no Ray actor on the cluster (not wired yet) prints
  "not wired" instead of a figure: its Ray runs would only measure the local pool again.

Also: `bare_pools`, no-op units (`os.getpid`) through `open_pool` (local processes vs Ray actors,
1 and 2 workers, two sizes: ms per unit and the fixed start-up); and `env_pool`, steps/s of 256
env instances stepped in batches through `EnvActorPool` (1 and 2 actors) vs 256 local ToolEnvs
in this process (sequential, and on 4 threads: what an actor would gain from threads), each the best
of 3 repeats. Local and Ray runs of a command alternate, so both meet the same load. Progress
goes to stderr. Figures from a small 2-core machine shared with other jobs are noisy: compare
within one run.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog.store import REFERENCE_DIR, Catalog  # noqa: E402
from executors import ExecutorSpec, Recipe, open_pool  # noqa: E402

REFERENCE = ("library", "bank", "clinic", "store")
EXECUTORS = ("local", "ray")
REPEATS = 3  # env-pool rounds: the best of three
NOISE_S = 1.0  # seconds: differences below this on a shared 2-core machine are noise


def say(message: str) -> None:
    print(f"[executors] {message}", file=sys.stderr, flush=True)


def fit(small: tuple[int, float], large: tuple[int, float]) -> tuple[float, float]:
    """(fixed seconds, seconds per unit) of the line through two (units, seconds) runs."""
    (u1, t1), (u2, t2) = small, large
    slope = (t2 - t1) / (u2 - u1) if u2 != u1 else 0.0
    return t1 - slope * u1, slope


# --- the commands -----------------------------------------------------------------------------------
class Command:
    """One CLI command at a size: its arguments, its unit count, and the folders it needs."""

    def __init__(self, name: str, unit: str, sizes: tuple[int, int], work: Path) -> None:
        self.name, self.unit, self.sizes, self.work = name, unit, sizes, work
        self.prepared: dict[str, Path] = {}

    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        raise NotImplementedError

    def units(self, size: int, out: Path, report: Any) -> int:
        return size

    def ok(self, code: int) -> bool:
        return code == 0


class Synthesize(Command):
    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        return ["synthesize", "--catalog", str(out / "catalog"), "--n", str(size), "--size", "small",
                "--seed", "0", "--workers", str(workers), "--json"]


class Verify(Command):
    """verify gate --all over copies of reference envs (--no-reference): the small run 1 env, the large 3."""

    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        catalog = out / "catalog"
        for env_id in REFERENCE[:size]:
            shutil.copytree(REFERENCE_DIR / env_id, catalog / env_id)
        return ["verify", "gate", "--catalog", str(catalog), "--all", "--no-reference", "--examples", "5",
                "--workers", str(workers), "--json"]

    def ok(self, code: int) -> bool:
        return code in (0, 5)  # 5: an env failed the gate (a verdict, not a crash)


class Export(Command):
    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        return ["bench", "export", "--catalog", str(out / "catalog"), "--n", str(size), "--composition", "uniform",
                "--out", str(out / "samples.jsonl"), "--workers", str(workers), "--json"]

    def units(self, size: int, out: Path, report: Any) -> int:
        path = out / "samples.jsonl"
        return sum(1 for _ in path.open()) if path.exists() else 0

    def ok(self, code: int) -> bool:
        return code in (0, 1)  # 1: a quota not met from the reference envs alone (the samples are written)


class Audit(Command):
    def prepare(self) -> None:
        samples = self.work / "audit-samples.jsonl"
        say("audit-sim: exporting its samples once (not timed)")
        subprocess.run([sys.executable, str(ROOT / "cli.py"), "bench", "export", "--catalog", str(self.work / "audit"),
                        "--n", "300", "--composition", "uniform", "--out", str(samples)],
                       cwd=self.work, capture_output=True, check=False)
        self.prepared["samples"] = samples

    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        if "samples" not in self.prepared:
            self.prepare()
        return ["audit-sim", "--catalog", str(self.work / "audit"), "--model", "spec", "--bench",
                str(self.prepared["samples"]), "--limit", str(size), "--workers", str(workers), "--out",
                str(out / "audit"), "--json"]

    def units(self, size: int, out: Path, report: Any) -> int:
        return int(report.get("samples", size)) if isinstance(report, dict) else size


class Rollout(Command):
    """rollout --model reference: the small run the library's tasks, the large every reference env's."""

    def argv(self, size: int, workers: int, out: Path) -> list[str]:
        chosen = ["--env", "library"] if size == self.sizes[0] else ["--all"]
        return ["rollout", "--catalog", str(out / "catalog"), "--model", "reference", *chosen,
                "--concurrency", str(workers), "--out", str(out / "rollouts"), "--json"]

    def units(self, size: int, out: Path, report: Any) -> int:
        return int(report.get("trajectories", size)) if isinstance(report, dict) else size


def commands(work: Path) -> dict[str, Command]:
    tasks = {env_id: len(Catalog(root="/nonexistent-envforge-catalog").get(env_id).tasks()) for env_id in REFERENCE}
    return {"synthesize": Synthesize("synthesize", "envs registered", (2, 4), work),
            "verify": Verify("verify --all", "envs verified", (1, 3), work),
            "export": Export("bench export", "samples exported", (40, 120), work),
            "audit": Audit("audit-sim --model spec", "samples audited", (60, 240), work),
            "rollout": Rollout("rollout --model reference", "episodes", (tasks["library"], sum(tasks.values())), work)}


def ray_actors(ray: Any) -> int:
    """How many actors the cluster has ever had (a run that adds none did not use Ray)."""
    from ray._private import state

    return len(state.actors())


def run_once(command: Command, size: int, workers: int, executor: str, address: str, ray: Any) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="run-", dir=command.work))
    argv = command.argv(size, workers, out)
    if executor == "ray":
        argv += ["--executor", "ray", "--ray-address", address]
    env = {**os.environ, "ENVFORGE_CATALOG": str(out / "catalog")}
    env.pop("RAY_ADDRESS", None)
    before = ray_actors(ray)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), *argv], cwd=out, env=env, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - started
    if not command.ok(done.returncode):
        raise SystemExit(f"{command.name} ({executor}, {workers} workers, size {size}) exited {done.returncode}: "
                         f"{done.stderr.strip().splitlines()[-1:] or done.stdout[-300:]}")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = None
    units = command.units(size, out, report)
    actors = ray_actors(ray) - before
    shutil.rmtree(out, ignore_errors=True)
    say(f"{command.name}: {executor}, {workers} worker(s), {units} {command.unit}: {seconds:.1f} s"
        + (f", {actors} Ray actor(s)" if executor == "ray" else ""))
    return {"seconds": round(seconds, 2), "units": units, "actors": actors}


def measure_command(command: Command, address: str, ray: Any) -> dict[str, Any]:
    small, large = command.sizes
    runs: dict[str, dict[str, Any]] = {}
    wired = True
    for workers, size in ((2, small), (2, large), (1, large)):  # local and Ray back to back: the same load
        for executor in EXECUTORS if wired else ("local",):
            runs[f"{executor}_w{workers}_{'small' if size == small else 'large'}"] = run = \
                run_once(command, size, workers, executor, address, ray)
            if executor == "ray" and run["actors"] == 0:
                wired = False
    result: dict[str, Any] = {"unit": command.unit, "sizes": list(command.sizes)}
    for executor in ("local", "ray") if wired else ("local",):
        s, big, one = (runs[f"{executor}_w2_small"], runs[f"{executor}_w2_large"], runs[f"{executor}_w1_large"])
        fixed, slope = fit((s["units"], s["seconds"]), (big["units"], big["seconds"]))
        result[executor] = {"seconds": {"w2_small": s["seconds"], "w2_large": big["seconds"], "w1_large": one["seconds"]},
                            "units_per_s": {"w1": round(one["units"] / one["seconds"], 3),
                                            "w2": round(big["units"] / big["seconds"], 3)},
                            "speedup_2_workers": round(one["seconds"] / big["seconds"], 2),
                            "fixed_s": round(fixed, 2), "per_unit_ms": round(slope * 1000, 1)}
        if executor == "ray":
            result[executor]["actors_started"] = big["actors"]
    spread = min(result[e]["seconds"]["w2_large"] - result[e]["seconds"]["w2_small"] for e in result if e in EXECUTORS)
    if spread < NOISE_S:
        result["note"] = (f"a large run took less than {NOISE_S} s more than its small run: the per-unit figures are "
                          "within the noise (start-up dominates); compare the fixed costs and units/s")
    if not wired:
        result["ray"] = "not wired: --executor ray started no Ray actor (the command still runs its units locally)"
        return result
    local, ray_ = result["local"], result["ray"]
    result["ray_vs_local_w2"] = round(ray_["units_per_s"]["w2"] / local["units_per_s"]["w2"], 2)
    result["ray_overhead_per_unit_ms"] = round(ray_["per_unit_ms"] - local["per_unit_ms"], 1)
    result["ray_fixed_overhead_s"] = round(ray_["fixed_s"] - local["fixed_s"], 2)
    return result


# --- bare pools -------------------------------------------------------------------------------------
class _Pid:
    def run(self, unit: None) -> int:
        return os.getpid()


class NoOp(Recipe[None, int]):
    """A worker whose unit does nothing but say which process ran it."""

    def open(self) -> _Pid:
        return _Pid()


def bare_pools(sizes: tuple[int, int] = (300, 3000)) -> dict[str, Any]:
    """ms per no-op unit and the fixed start-up of `open_pool`, local processes vs Ray actors."""
    out: dict[str, Any] = {}
    for kind in ("local", "ray"):
        for workers in (1, 2):
            points = []
            for size in sizes:
                started = time.perf_counter()
                with open_pool(ExecutorSpec(kind), NoOp(), workers) as pool:
                    futures = [pool.submit(None) for _ in range(size)]
                    pids = {f.result(timeout=300) for f in futures}
                points.append((size, time.perf_counter() - started))
                assert os.getpid() not in pids
            fixed, slope = fit(points[0], points[1])
            out[f"{kind}_w{workers}"] = {"fixed_s": round(fixed, 3), "per_unit_ms": round(slope * 1000, 3),
                                         "seconds": [round(t, 2) for _, t in points]}
            say(f"bare pool {kind}, {workers} worker(s): {slope * 1000:.3f} ms/unit, {fixed:.2f} s fixed")
    out["units"] = list(sizes)
    out["ray_overhead_per_unit_ms"] = {f"w{w}": round(out[f"ray_w{w}"]["per_unit_ms"] - out[f"local_w{w}"]["per_unit_ms"], 3)
                                       for w in (1, 2)}
    return out


# --- the env actor pool -----------------------------------------------------------------------------
def env_pool(n: int = 256, rounds: int = 10) -> dict[str, Any]:
    """Steps/s of `n` library instances, each on one of its tasks stepping its solution repeated."""
    from serving import make
    from serving.ray_envs import EnvActorPool

    catalog = Catalog(root="/nonexistent-envforge-catalog")
    tasks = catalog.get("library").tasks()
    mine = [tasks[i % len(tasks)] for i in range(n)]
    solutions = [[a.model_dump() for a in t.solution or []] for t in mine]
    scripts = [[s[r % len(s)] for r in range(rounds)] for s in solutions]
    out: dict[str, Any] = {"instances": n, "steps_per_instance": rounds, "env": "library"}

    def local(stepper: Callable[[list[Any], int], object]) -> float:
        envs = [make("library", task=t.id, catalog=catalog, terminate_on_success=False) for t in mine]
        for env in envs:
            env.reset()
        started = time.perf_counter()
        for r in range(rounds):
            stepper(envs, r)
        return n * rounds / (time.perf_counter() - started)

    sequential, threaded = [], []
    with cf.ThreadPoolExecutor(4) as threads:
        for _ in range(REPEATS):  # alternated, best of each: the machine's load moves
            sequential.append(local(lambda envs, r: [e.step(s[r]) for e, s in zip(envs, scripts, strict=True)]))
            threaded.append(local(lambda envs, r: list(threads.map(lambda es: es[0].step(es[1][r]),
                                                                    zip(envs, scripts, strict=True)))))
    out["local_sequential_steps_per_s"], out["local_4_threads_steps_per_s"] = \
        round(max(sequential), 1), round(max(threaded), 1)
    say(f"env pool: local {out['local_sequential_steps_per_s']} steps/s, on 4 threads {out['local_4_threads_steps_per_s']}")
    for actors in (1, 2):
        started = time.perf_counter()
        with EnvActorPool("library", n=n, catalog=catalog, actors=actors, terminate_on_success=False) as pool:
            made = time.perf_counter() - started
            rates = []
            for _ in range(REPEATS):
                pool.reset(options=[{"task": t.id} for t in mine])
                started = time.perf_counter()
                for r in range(rounds):
                    pool.step([s[r] for s in scripts])
                rates.append(n * rounds / (time.perf_counter() - started))
            rate = max(rates)
        out[f"ray_{actors}_actors_steps_per_s"] = round(rate, 1)
        out[f"ray_{actors}_actors_start_s"] = round(made, 2)
        say(f"env pool: {actors} Ray actor(s) {rate:.1f} steps/s (start {made:.1f} s)")
    out["ray_2_actors_vs_local"] = round(out["ray_2_actors_steps_per_s"] / out["local_sequential_steps_per_s"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--commands", default="synthesize,verify,export,audit,rollout",
                        help="which commands to measure (comma-separated; default: all five)")
    args = parser.parse_args()
    from executors.ray_pool import connect

    started = time.perf_counter()
    ray = connect(None, num_cpus=2)
    address = ray.get_runtime_context().gcs_address
    say(f"Ray cluster of 2 CPUs at {address}")
    result: dict[str, Any] = {"cluster": {"cpus": 2, "nodes": 1}, "load_before": round(os.getloadavg()[0], 1),
                              "commands": {}}
    try:
        result["bare_pools"] = bare_pools()
        result["env_pool"] = env_pool()
        with tempfile.TemporaryDirectory(prefix="envforge-bench-executors-") as work:
            chosen = commands(Path(work))
            for key in filter(None, args.commands.split(",")):
                result["commands"][key] = measure_command(chosen[key], address, ray)
    finally:
        ray.shutdown()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    result["load_after"] = round(os.getloadavg()[0], 1)  # 1-minute load: above 2 the machine was shared
    if args.json:
        print(json.dumps(result))
        return
    print(f"bare pools (no-op units): {result['bare_pools']}")
    print(f"env pool: {result['env_pool']}")
    for key, figures in result["commands"].items():
        print(f"{chosen[key].name}: {figures}")
    print(f"wall {result['wall_s']} s")


if __name__ == "__main__":
    main()
