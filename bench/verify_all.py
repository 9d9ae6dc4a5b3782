"""`verify --all` benchmark: envs one at a time in this process vs one env per unit on an executor.

    python bench/verify_all.py [--synthesized 4] [--examples 40] [--rounds 1] [--ray] [--json]

On the 4 reference envs plus `--synthesized` small procedural envs (synthesized first into a
temporary catalog, seed 5), interleaved per round, the same gate settings each way:
- `loop`: what `verify --all` did before executors: this process runs the gate of each env in
  turn on one SandboxPool of 2 workers (`verify_env`);
- `local`: `verify_envs` on the local executor, 2 spawned workers with one sandbox worker each,
  envs side by side (worker start-up included);
- `ray` (with `--ray`): the same on 2 Ray actors of a local Ray instance started here (its start
  is not timed; actor start-up is).
Prints wall seconds per round, envs per second, and local's speed-up over the loop; reports of
every way must be equal but for their seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from executors import ExecutorSpec  # noqa: E402
from sandbox.pool import SandboxPool  # noqa: E402
from verifier.gate.report import GateReport  # noqa: E402
from verifier.gate.run import verify_env, verify_envs  # noqa: E402


def loop(catalog: Catalog, ids: list[str], examples: int) -> list[GateReport]:
    with SandboxPool(2) as pool:
        return [verify_env(catalog.get(env_id), pool, examples=examples) for env_id in ids]


def content(reports: list[GateReport]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.model_dump(mode="json").items() if k != "seconds"} for r in reports]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthesized", type=int, default=4)
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--ray", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envforge-bench-verify-") as tmp:
        if args.synthesized:
            from synth.run import RunConfig, synthesize

            synthesize(RunConfig(n=args.synthesized, catalog=tmp, workers=2, seed=5, size="small"), progress=False)
        catalog = Catalog(tmp)
        ids = [s.id for s in catalog.list()[0]]
        ways: dict[str, Any] = {"loop": lambda: loop(catalog, ids, args.examples),
                                "local": lambda: verify_envs(catalog, ids, examples=args.examples)}
        if args.ray:
            from executors.ray_pool import connect

            connect(None)
            ways["ray"] = lambda: verify_envs(catalog, ids, executor=ExecutorSpec("ray"), examples=args.examples)
        seconds: dict[str, list[float]] = {name: [] for name in ways}
        first: list[dict[str, Any]] | None = None
        for _ in range(args.rounds):
            for name, run in ways.items():
                started = time.perf_counter()
                reports = run()
                seconds[name].append(round(time.perf_counter() - started, 2))
                first = first or content(reports)
                assert content(reports) == first, f"{name} reports differ from the first way's"
    median = {name: statistics.median(s) for name, s in seconds.items()}
    result = {"envs": len(ids), "examples": args.examples, "rounds": args.rounds, "seconds": seconds,
              "envs_per_s": {name: round(len(ids) / m, 3) for name, m in median.items()},
              "local_speedup_over_loop": round(median["loop"] / median["local"], 2),
              **({"ray_speedup_over_loop": round(median["loop"] / median["ray"], 2)} if "ray" in median else {})}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for name, m in median.items():
            print(f"{name:>6}: {m:7.2f} s  ({result['envs_per_s'][name]} envs/s)")
        print(f"local is {result['local_speedup_over_loop']}x the loop")


if __name__ == "__main__":
    main()
