"""Synthesis throughput: envs/s with 1 and 2 workers in one run, and where the time goes.

    python bench/synthesis.py [--n 20]

Both runs use the same seed on fresh temporary catalogs, back to back, so the ratio is
measured under the same machine load. Prints the registered envs per second, the speed-up of
two workers, and each stage's share of the summed stage time.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from synth.run import RunConfig, synthesize


def one(n: int, workers: int, seed: int) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory(prefix="envforge-bench-") as root:
        started = time.monotonic()
        report = synthesize(RunConfig(n=n, catalog=root, workers=workers, seed=seed), progress=False)
        return time.monotonic() - started, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    results = {}
    for workers in (1, 2):
        seconds, report = one(args.n, workers, args.seed)
        results[workers] = (seconds, report)
        print(f"workers={workers}: {report['registered']} envs in {seconds:.1f} s = {report['registered'] / seconds:.2f} "
              f"envs/s ({report['proposed']} proposed, {report['deduplicated']} duplicates, {report['rejected']} "
              f"rejected)")
    print(f"speed-up of 2 workers over 1: {results[1][0] / results[2][0]:.2f}x")
    stages = results[2][1]["stages"]
    total = sum(s["wall_s"] for s in stages.values()) or 1.0
    print("stage share of summed stage time (2 workers): " +
          ", ".join(f"{name} {s['wall_s'] / total:.0%}" for name, s in sorted(stages.items(), key=lambda kv: -kv[1]["wall_s"])))
    per_env = results[2][0] / max(1, results[2][1]["registered"])
    print(f"projected wall time for 200 envs at this rate: {per_env * 200:.0f} s")


if __name__ == "__main__":
    main()
