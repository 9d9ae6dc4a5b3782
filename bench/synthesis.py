"""Synthesis throughput: envs/s with 1 and 2 workers, the gate's CPU, and (optionally) a baseline checkout.

    python bench/synthesis.py [--n 20] [--baseline DIR]
    python bench/synthesis.py --yield-curve 200,500,1000,2000 [--seed 0]

All runs use the same seed on fresh temporary catalogs, back to back, so the ratios are measured
under the same machine load. Prints:
- registered envs per second with 1 and 2 workers, the speed-up of two, each stage's share of
  the summed stage time, and the wall time 200 envs would take at that rate;
- the quality gate's CPU seconds (the checking process and its sandbox processes, which wall
  time on a shared machine does not show) over the envs the 2-worker run registered;
- with `--baseline DIR` (another checkout of envforge, e.g. a git worktree of main): the same
  gate CPU measured with that checkout's code on the same envs, whether both gates reached the
  same verdict on every check, and the wall time of `synthesize --n N` with each checkout's CLI.

`--yield-curve N,N,...` measures instead how far the procedural backend goes before topic dedup
runs out, as JSON: the run's own mining and dedup (its generator, its domain order for the seed,
a fresh catalog's dedup filter, ids claimed once) proposing up to each N's default cap, with the
ontology's niches and, side by side, without them (base domains only). Per N: the proposals it
took to have N distinct topics (null if the cap came first), the distinct topics found within
the cap, yield = N / proposals, and for the first N topics their distinct table schemas and
largest pairwise cosine (below the dedup threshold by construction; measured, not assumed). It
runs no gate: a full `synthesize --n N` registers what passes the gate out of these (the gate
rejected 0 of 200 procedural envs at the last measurement), so its report's registered/proposed
is this curve's yield times the gate's pass rate.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def one(n: int, workers: int, seed: int, keep: Path | None = None) -> tuple[float, Any]:
    """One in-process run; `keep` receives a copy of its catalog."""
    from synth.run import RunConfig, synthesize

    with tempfile.TemporaryDirectory(prefix="envforge-bench-") as root:
        started = time.monotonic()
        report = synthesize(RunConfig(n=n, catalog=root, workers=workers, seed=seed), progress=False)
        seconds = time.monotonic() - started
        if keep is not None:
            shutil.copytree(root, keep, ignore=shutil.ignore_patterns(".runs"))
        return seconds, report


def tree_cpu(pid: int) -> float:
    """CPU seconds of the live descendants of `pid` (with what they reaped): the sandbox processes."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    used: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        children[int(fields[1])].append(int(entry))
        used[int(entry)] = sum(map(int, fields[11:15]))  # utime, stime, cutime, cstime
    total, todo = 0, list(children[pid])
    while todo:
        child = todo.pop()
        total += used.get(child, 0)
        todo += children[child]
    return total / os.sysconf("SC_CLK_TCK")


def gate_cpu(catalog: str, out: str) -> None:
    """(In a child process, with the checkout to measure first on sys.path.) Gate every synthesized env once."""
    from catalog.store import Catalog
    from sandbox.pool import SandboxPool
    from verifier.gate.run import verify_env
    from verifier.gate.settings import SYNTHESIS

    store = Catalog(catalog, include_reference=False)
    ids = sorted(summary.id for summary in store.list()[0])
    pool = SandboxPool(workers=1)
    started, wall = time.process_time(), time.monotonic()
    verdicts = {}
    for env_id in ids:
        report = verify_env(store.get(env_id), pool, examples=SYNTHESIS.examples, effort=SYNTHESIS.effort).model_dump(mode="json")
        verdicts[env_id] = {c["name"]: [c["ok"], c.get("detail")] for c in report["checks"]}
    main_cpu = time.process_time() - started
    sandbox_cpu = tree_cpu(os.getpid())
    pool.close()
    Path(out).write_text(json.dumps({"envs": len(ids), "main_cpu": main_cpu, "sandbox_cpu": sandbox_cpu,
                                     "wall": time.monotonic() - wall, "verdicts": verdicts}))


def measure_gate(checkout: Path, catalog: Path) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--gate-cpu", str(catalog), "--out", out.name],
                       check=True, cwd=checkout, env=env)
        return json.loads(Path(out.name).read_text())


def cli_wall(checkout: Path, n: int, seed: int) -> float:
    with tempfile.TemporaryDirectory(prefix="envforge-bench-") as root:
        started = time.monotonic()
        subprocess.run([sys.executable, "cli.py", "synthesize", "--n", str(n), "--seed", str(seed), "--catalog", root,
                        "--json"], check=True, cwd=checkout, stdout=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(checkout)})
        return time.monotonic() - started


def topic_curve(targets: list[int], seed: int, niches: bool) -> dict[str, Any]:
    """Mining and dedup as a run does them, up to the largest target's cap; see the module docstring."""
    import numpy as np

    from catalog.search.index import catalog_dedup_filter
    from catalog.store import Catalog
    from synth.generators import ProceduralGenerator
    from synth.mining import domain_order
    from synth.run import _schema_signature
    from synth.shortfall import default_max_proposals

    generator = ProceduralGenerator(domain_order(seed), niches=niches)  # what the procedural backend builds
    with tempfile.TemporaryDirectory(prefix="envforge-bench-curve-") as root:
        dedup = catalog_dedup_filter(Catalog(root))  # a fresh catalog: the reference envs' topics only
    started, cap = time.monotonic(), default_max_proposals(max(targets))
    accepted: list[tuple[int, dict[str, Any]]] = []  # (proposals so far, topic)
    proposed = 0
    for slot in range(cap):
        proposed = slot + 1
        topic, _ = generator.topic(slot, seed)
        if topic["env_id"] not in dedup.index and dedup.accept(topic["env_id"], topic["topic"]).accepted:
            accepted.append((proposed, topic))
            if len(accepted) >= max(targets):
                break
    seconds = time.monotonic() - started
    curve = []
    for n in targets:
        first = [topic for _, topic in accepted[:n]]
        proposals = accepted[n - 1][0] if len(accepted) >= n else None
        vectors = dedup.embedder.embed([t["topic"] for t in first])
        cosines = vectors @ vectors.T
        np.fill_diagonal(cosines, -1.0)
        schemas = {_schema_signature(generator.blueprint(t)[0].model_dump(mode="json")) for t in first}
        curve.append({"n": n, "cap": default_max_proposals(n), "proposals": proposals,
                      "distinct_topics_within_cap": min(n, sum(p <= default_max_proposals(n) for p, _ in accepted)),
                      "yield": round(n / proposals, 4) if proposals else None, "distinct_schemas": len(schemas),
                      "max_pairwise_cosine": round(float(cosines.max()), 6) if len(first) > 1 else None})
    return {"niches": niches, "designable_domains": len(set(generator.order)), "seconds": round(seconds, 1),
            "proposed": proposed, "distinct_topics": len(accepted), "dedup_threshold": dedup.threshold, "curve": curve}


def yield_curve(targets: list[int], seed: int) -> dict[str, Any]:
    """The curve with the ontology's niches and without them, and the ratio of their distinct topics."""
    ours, base = topic_curve(targets, seed, niches=True), topic_curve(targets, seed, niches=False)
    return {"seed": seed, "with_niches": ours, "base_domains_only": base,
            "distinct_topics_ratio": round(ours["distinct_topics"] / max(1, base["distinct_topics"]), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another envforge checkout to compare with (e.g. main's)")
    parser.add_argument("--yield-curve", metavar="N,N,...",
                        help="instead: distinct topics vs proposals up to each N's cap (no gate), as JSON")
    parser.add_argument("--gate-cpu", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.yield_curve:
        sys.path.insert(0, str(ROOT))  # before bench/ (its executors.py is not the package); --gate-cpu uses PYTHONPATH
        targets = sorted({int(n) for n in args.yield_curve.split(",")})
        print(json.dumps(yield_curve(targets, args.seed), indent=1))
        return
    if args.gate_cpu:
        gate_cpu(args.gate_cpu, args.out)
        return
    with tempfile.TemporaryDirectory(prefix="envforge-bench-envs-") as scratch:
        envs = Path(scratch) / "catalog"
        results = {}
        for workers in (1, 2):
            seconds, report = one(args.n, workers, args.seed, keep=envs if workers == 2 else None)
            results[workers] = (seconds, report)
            print(f"workers={workers}: {report.registered} envs in {seconds:.1f} s = {report.registered / seconds:.2f} "
                  f"envs/s ({report.proposed} proposed, {report.deduplicated} duplicates, {report.rejected} rejected)")
        print(f"speed-up of 2 workers over 1: {results[1][0] / results[2][0]:.2f}x")
        stages = results[2][1].model_dump(mode="json")["stages"]
        total = sum(s["wall_s"] for s in stages.values()) or 1.0
        print("stage share of summed stage time (2 workers): " + ", ".join(
            f"{name} {s['wall_s'] / total:.0%}" for name, s in sorted(stages.items(), key=lambda kv: -kv[1]["wall_s"])))
        per_env = results[2][0] / max(1, results[2][1].registered)
        print(f"projected wall time for 200 envs at this rate: {per_env * 200:.0f} s")
        checkouts = [("this checkout", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
        gates = {}
        for label, checkout in checkouts:
            gates[label] = gate = measure_gate(checkout, envs)
            print(f"gate CPU, {label}: {gate['main_cpu']:.2f} s checking + {gate['sandbox_cpu']:.2f} s in the sandbox "
                  f"over {gate['envs']} envs = {(gate['main_cpu'] + gate['sandbox_cpu']) / max(1, gate['envs']):.2f} s/env")
        if args.baseline:
            ours, theirs = gates["this checkout"], gates["baseline"]
            ratio = (theirs["main_cpu"] + theirs["sandbox_cpu"]) / max(1e-9, ours["main_cpu"] + ours["sandbox_cpu"])
            same = ours["verdicts"] == theirs["verdicts"]
            print(f"gate CPU, baseline / this checkout: {ratio:.2f}x; same verdict and detail on every check: {same}")
            walls = {label: cli_wall(checkout, args.n, args.seed) for label, checkout in checkouts}
            print(f"synthesize --n {args.n} wall: this checkout {walls['this checkout']:.1f} s, baseline "
                  f"{walls['baseline']:.1f} s ({walls['baseline'] / walls['this checkout']:.2f}x)")


if __name__ == "__main__":
    main()
