"""Soundness benchmark: is the spec-only simulator ever wrong on code written to trip it?

    python bench/soundness.py [--envs 2000] [--seed 0] [--workers 2] [--json] [--show-wrong N]
    python bench/soundness.py --faithful --exported [--envs 200] [--samples 400]

Draws `--envs` random small env classes from the hypothesis strategy of
tests/constraints/adversarial.py (int/str keys, sets, tuples, Decimal/float mixing, early
returns, helpers, try/except, loops, aliasing, hidden attributes, RNG and clock use), runs their
random call sequences for real in the sandbox, predicts every call from the state before it
with the spec-only simulator, and counts exact / abstained / wrong by the rules of
`constraints --completeness`. `wrong` must be 0. Exit status 4 if it is not.

`--exported` takes the other road, the one a user takes: the envs are imported into a temporary
catalog (`import`, sandboxed load check; imported envs have `strict_args: false`), `--samples`
samples are exported from them (`bench export`) and the spec-only simulator is audited on the
samples (`audit-sim --model spec`); `wrong` counts the answered samples it got wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from sandbox.pool import SandboxPool  # noqa: E402
from tests.constraints.adversarial import (  # noqa: E402
    EnvCase,
    Tally,
    audit_exported,
    draw_cases,
    import_corpus,
    run_corpus,
    wrong_answers,
)

BATCH = 200  # envs per sandbox batch (one temporary folder each)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--faithful", action="store_true",
                        help="check arguments as for imported envs: ill-typed calls run as Python would")
    parser.add_argument("--exported", action="store_true",
                        help="import the envs into a temporary catalog, export samples, audit the spec simulator on "
                             "them (imported envs: --faithful is implied)")
    parser.add_argument("--samples", type=int, default=400, help="with --exported: samples to export")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-wrong", type=int, default=0, metavar="N", help="print the first N wrong cases")
    args = parser.parse_args(argv)
    if args.envs < 1 or args.workers < 1:
        print("envforge: --envs and --workers must be positive", file=sys.stderr)
        return 1
    started = time.monotonic()
    cases = draw_cases(args.envs, args.seed)
    if args.exported:
        return _exported(cases, args, started)
    tally = Tally()
    with SandboxPool(args.workers, timeout=5.0) as pool:
        for start in range(0, len(cases), BATCH):
            run_corpus(cases[start:start + BATCH], pool, tally, strict_args=not args.faithful)
    report = {**tally.summary(), "abstained_share": round(tally.abstained / tally.calls, 4) if tally.calls else 0.0,
              "skipped": tally.skipped, "faithful": args.faithful, "seed": args.seed, "elapsed": round(time.monotonic() - started, 1)}
    if args.json:
        print(json.dumps(report))
    else:
        print(" ".join(f"{k}={v}" for k, v in report.items()))
        print("top abstain reasons:")
        for reason, count in tally.reasons.most_common(15):
            print(f"  {count:6d}  {reason}")
    for case in tally.wrong_cases[:args.show_wrong]:
        print(json.dumps(case, indent=1, default=str), file=sys.stderr)
    return 4 if tally.wrong else 0


def _exported(cases: list[EnvCase], args: argparse.Namespace, started: float) -> int:
    with tempfile.TemporaryDirectory(prefix="envforge-soundness-") as root:
        catalog = Catalog(Path(root) / "catalog")
        with SandboxPool(1, load_timeout=20.0) as pool:
            ids = import_corpus(cases, catalog, pool, Path(root) / "sources")
        items, records = audit_exported(catalog, ids, args.samples, Path(root) / "audit", seed=args.seed,
                                        workers=args.workers)
    wrong = wrong_answers(records)
    missed = sum(1 for r in records if r["abstained"] or r["error"] is not None)
    report: dict[str, Any] = {
        "envs": len(ids), "samples": len(items), "answered": len(records) - missed, "abstained": missed,
        "wrong": len(wrong), "strict_args": sorted({item.env_strict_args for item in items}),
        "seed": args.seed, "elapsed": round(time.monotonic() - started, 1)}
    print(json.dumps(report) if args.json else " ".join(f"{k}={v}" for k, v in report.items()))
    for record in wrong[:args.show_wrong]:
        print(json.dumps({"item": record["item"], "prediction": record["prediction"]}, indent=1, default=str),
              file=sys.stderr)
    return 4 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
