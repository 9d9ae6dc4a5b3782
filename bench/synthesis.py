"""Synthesis throughput, CPU per stage, and the gate's verdicts, against a baseline checkout in the same run.

    python bench/synthesis.py [--n 200] [--seed 1] [--baseline DIR] [--stage-envs 20] [--agree 3] [--json]
    python bench/synthesis.py --yield-curve 200,500,1000,2000 [--seed 0]

Every measurement runs each checkout's own code (a child process with the checkout first on
sys.path), back to back, so ratios are taken under the same machine load. Prints:
- `wall_s`, `envs`: `cli.py synthesize --n N --seed S` (2 workers, the CLI's default) on a
  fresh catalog, wall time and registered envs, for this checkout and the baseline;
- `cpu_s_per_env`: CPU seconds per env by stage (this process and its sandbox processes, which
  wall time on a shared machine does not show), the pipeline's nodes run one slot at a time on
  the first `--stage-envs` topics of the seed;
- `gate`: both checkouts' gates (synthesis effort, seed 0) on the envs this checkout's run
  registered: CPU per env and every check's verdict compared (`verdict_differences` lists
  env/check pairs whose verdict differs; details such as call counts may differ);
- `agreement`: on `--agree` of those envs, `verify gate ENV --json` (full effort) against the
  manifest's `quality` (the score and every check's verdict).

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("mine", "dedup", "plan", "schema", "code", "static_check", "states", "execute", "tasks", "gate", "register")


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


def cpu_now() -> float:
    return time.process_time() + tree_cpu(os.getpid())


# --- child-process measurements (run with the checkout to measure first on sys.path) ---------------

def stage_cpu(n: int, seed: int, out: str) -> None:
    """The pipeline's nodes in order on `n` topics, one slot at a time, with each node's CPU (no dedup)."""
    from catalog.store import Catalog
    from synth.generators import ProceduralGenerator
    from synth.nodes import NODES
    from synth.slot import Context
    from verifier.gate.settings import SYNTHESIS

    cpu: dict[str, float] = collections.defaultdict(float)
    registered = 0
    with tempfile.TemporaryDirectory(prefix="envforge-bench-") as root:
        run_dir = Path(root) / ".runs" / "bench"
        run_dir.mkdir(parents=True)
        ctx = Context(run_dir=run_dir, catalog=Catalog(root, include_reference=False),
                      generator=ProceduralGenerator(), gate_examples=SYNTHESIS.examples, gate_effort=SYNTHESIS.effort)
        try:
            for slot in range(n):
                state: Any = {"run_id": "bench", "slot": slot, "seed": seed, "stages": {}}  # a SlotState
                for name in STAGES:
                    before = cpu_now()
                    state = {**state, **NODES[name](state, ctx)}
                    cpu[name] += cpu_now() - before
                    if state.get("status") not in (None, "running"):
                        break
                registered += state.get("status") == "registered"
        finally:
            ctx.close()
    Path(out).write_text(json.dumps({"envs": n, "registered": registered, "cpu_s": dict(cpu)}))


def gate_cpu(catalog: str, out: str) -> None:
    """Gate every env of `catalog` once at the synthesis effort; CPU, wall and each check's verdict."""
    from catalog.store import Catalog
    from sandbox.pool import SandboxPool
    from verifier.gate.run import verify_env
    from verifier.gate.settings import SYNTHESIS

    store = Catalog(catalog, include_reference=False)
    ids = sorted(summary.id for summary in store.list()[0])
    pool = SandboxPool(workers=1)
    started, wall = cpu_now(), time.monotonic()
    verdicts = {}
    for env_id in ids:
        report = verify_env(store.get(env_id), pool, examples=SYNTHESIS.examples, effort=SYNTHESIS.effort)
        verdicts[env_id] = {c.name: [c.ok, c.detail] for c in report.checks}
    cpu = cpu_now() - started
    pool.close()
    Path(out).write_text(json.dumps({"envs": len(ids), "cpu_s": cpu, "wall_s": time.monotonic() - wall,
                                     "verdicts": verdicts}))


# --- the driver ------------------------------------------------------------------------------------

def python(checkout: Path) -> str:
    """The checkout's own venv interpreter if it has one (its dependencies as it pinned them), else this one."""
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.is_file() else sys.executable


def child(checkout: Path, *args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([python(checkout), str(Path(__file__).resolve()), *args, "--out", out.name], check=True,
                       cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)})
        return json.loads(Path(out.name).read_text())


def cli_run(checkout: Path, n: int, seed: int, catalog: Path) -> tuple[float, int]:
    """`synthesize --n N` with the checkout's CLI into `catalog`: wall seconds and envs registered."""
    started = time.monotonic()
    done = subprocess.run([python(checkout), "cli.py", "synthesize", "--n", str(n), "--seed", str(seed), "--catalog",
                           str(catalog), "--json"], cwd=checkout, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(checkout)})
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):  # 1: fewer registered than asked, still a measurement
        raise SystemExit(f"synthesize failed with {checkout}: {done.stderr.strip()[-500:]}")
    return seconds, int(json.loads(done.stdout)["registered"])


def agreement(catalog: Path, count: int) -> dict[str, Any]:
    """`verify gate ENV --json` (this checkout, full effort) against each env's manifest quality."""
    ids = sorted(p.name for p in catalog.iterdir() if (p / "env.json").is_file())[:count]
    rows = {}
    for env_id in ids:
        done = subprocess.run([python(ROOT), "cli.py", "verify", "gate", env_id, "--catalog", str(catalog), "--json"],
                              cwd=ROOT, capture_output=True, text=True)
        report = json.loads(done.stdout)
        quality = json.loads((catalog / env_id / "env.json").read_text())["quality"]
        checks = {c["name"]: c["ok"] for c in report["checks"]}
        rows[env_id] = {"verify_score": report["score"], "manifest_score": quality["score"],
                        "equal": report["score"] == quality["score"] and checks == quality["checks"],
                        "differing": sorted(k for k in checks if checks[k] != quality["checks"].get(k))}
    return {"envs": len(rows), "all_equal": all(r["equal"] for r in rows.values()), "per_env": rows}


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, list[str]]:
    """Checks whose verdict (pass/fail) differs, per env (details such as call counts are not compared)."""
    out: dict[str, list[str]] = {}
    for env_id, checks in ours.items():
        other = theirs.get(env_id, {})
        differing = sorted(name for name in set(checks) | set(other)
                           if (checks.get(name) or [None])[0] != (other.get(name) or [None])[0])
        if differing:
            out[env_id] = differing
    return out


def measure(checkout: Path, args: argparse.Namespace, catalog: Path) -> dict[str, Any]:
    wall, envs = cli_run(checkout, args.n, args.seed, catalog)
    stages = child(checkout, "--stage-cpu", str(args.stage_envs), "--seed", str(args.seed))
    per_env = {name: round(stages["cpu_s"].get(name, 0.0) / max(1, stages["envs"]), 3) for name in STAGES}
    return {"wall_s": round(wall, 1), "envs": envs, "cpu_s_per_env": per_env,
            "cpu_s_per_env_total": round(sum(per_env.values()), 3)}


def topic_curve(targets: list[int], seed: int, niches: bool) -> dict[str, Any]:
    """Mining and dedup as a run does them, up to the largest target's cap; see the module docstring."""
    import numpy as np

    from catalog.search.index import catalog_dedup_filter
    from catalog.store import Catalog
    from synth.generators import ProceduralGenerator
    from synth.mining import domain_order
    from synth.run import schema_signature
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
        schemas = {schema_signature(generator.blueprint(t)[0].model_dump(mode="json")) for t in first}
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
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another envforge checkout to compare with (e.g. main's)")
    parser.add_argument("--stage-envs", type=int, default=20, help="topics the per-stage CPU is measured on")
    parser.add_argument("--agree", type=int, default=3, help="envs `verify gate` is compared with the manifest on")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    parser.add_argument("--yield-curve", metavar="N,N,...",
                        help="instead: distinct topics vs proposals up to each N's cap (no gate), as JSON")
    parser.add_argument("--stage-cpu", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--gate-cpu", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.yield_curve:
        sys.path.insert(0, str(ROOT))  # before bench/ (its executors.py is not the package)
        targets = sorted({int(n) for n in args.yield_curve.split(",")})
        print(json.dumps(yield_curve(targets, args.seed), indent=1))
        return
    if args.stage_cpu is not None or args.gate_cpu:  # the checkout's packages, not bench/'s scripts (bench/sandbox.py)
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    if args.stage_cpu is not None:
        stage_cpu(args.stage_cpu, args.seed, args.out)
        return
    if args.gate_cpu:
        gate_cpu(args.gate_cpu, args.out)
        return
    checkouts = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory(prefix="envforge-bench-envs-") as scratch:
        result: dict[str, Any] = {"n": args.n, "seed": args.seed}
        for label, checkout in checkouts.items():
            measured = measure(checkout, args, Path(scratch) / label)
            result.update(measured) if label == "this" else result.update({label: measured})
        ours = Path(scratch) / "this"
        gates = {label: child(checkout, "--gate-cpu", str(ours)) for label, checkout in checkouts.items()}
        result["gate"] = {label: {"envs": g["envs"], "cpu_s_per_env": round(g["cpu_s"] / max(1, g["envs"]), 3),
                                  "wall_s_per_env": round(g["wall_s"] / max(1, g["envs"]), 3)}
                          for label, g in gates.items()}
        if args.baseline:
            diff = differences(gates["this"]["verdicts"], gates["baseline"]["verdicts"])
            result["verdict_differences"] = diff
            result["verdicts_equal"] = not diff
            result["ratio_wall"] = round(result["baseline"]["wall_s"] / max(1e-9, result["wall_s"]), 2)
            result["ratio_cpu_per_env"] = round(result["baseline"]["cpu_s_per_env_total"]
                                                / max(1e-9, result["cpu_s_per_env_total"]), 2)
        if args.agree:
            result["agreement"] = agreement(ours, args.agree)
    if args.json:
        print(json.dumps(result))
        return
    for label in checkouts:
        row = result if label == "this" else result[label]
        print(f"{label}: synthesize --n {args.n} in {row['wall_s']} s wall, {row['envs']} envs; CPU s/env by stage: "
              + ", ".join(f"{k} {v}" for k, v in row["cpu_s_per_env"].items() if v >= 0.005)
              + f" (total {row['cpu_s_per_env_total']})")
        print(f"{label}: gate on this checkout's envs: {result['gate'][label]['cpu_s_per_env']} CPU s/env, "
              f"{result['gate'][label]['wall_s_per_env']} wall s/env")
    if args.baseline:
        print(f"baseline / this: wall {result['ratio_wall']}x, CPU per env {result['ratio_cpu_per_env']}x; "
              f"every check's verdict equal: {result['verdicts_equal']}"
              + (f" (differing: {result['verdict_differences']})" if result["verdict_differences"] else ""))
    if args.agree:
        agree = result["agreement"]
        print(f"verify gate vs manifest quality on {agree['envs']} envs: all equal {agree['all_equal']}; "
              + ", ".join(f"{k} {v['verify_score']}/{v['manifest_score']}" for k, v in agree["per_env"].items()))


if __name__ == "__main__":
    main()
