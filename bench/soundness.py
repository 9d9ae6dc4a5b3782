"""Soundness benchmark: is the spec-only simulator ever wrong on code written to trip it?

    python bench/soundness.py [--envs 2000] [--seed 0] [--workers 2] [--json] [--show-wrong N]

Draws `--envs` random small env classes from the hypothesis strategy of
tests/constraints/adversarial.py (int/str keys, sets, tuples, Decimal/float mixing, early
returns, helpers, try/except, loops, aliasing, hidden attributes, RNG and clock use), runs their
random call sequences for real in the sandbox, predicts every call from the state before it
with the spec-only simulator, and counts exact / abstained / wrong by the rules of
`constraints --completeness`. `wrong` must be 0. Exit status 4 if it is not.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.pool import SandboxPool  # noqa: E402
from tests.constraints.adversarial import Tally, draw_cases, run_corpus  # noqa: E402

BATCH = 200  # envs per sandbox batch (one temporary folder each)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--faithful", action="store_true",
                        help="check arguments as for imported envs: ill-typed calls run as Python would")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-wrong", type=int, default=0, metavar="N", help="print the first N wrong cases")
    args = parser.parse_args(argv)
    if args.envs < 1 or args.workers < 1:
        print("envforge: --envs and --workers must be positive", file=sys.stderr)
        return 1
    started = time.monotonic()
    cases = draw_cases(args.envs, args.seed)
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


if __name__ == "__main__":
    sys.exit(main())
