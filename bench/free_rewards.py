"""Rewards for nothing: how many tasks of a catalog an empty episode passes, by the check alone and by the episode rule.

    python bench/free_rewards.py [--catalog DIR] [--json]

For every task of every synthesized env in the catalog (reference envs too with
--with-reference), one episode with no call and no answer is scored through serving: `ToolEnv`
reset to the task, then `evaluate()` (no final message). `check_only` counts the tasks whose
check holds on that empty episode (the reward before rewards required a refusal's decline);
`passed_empty` counts the tasks the episode rule (catalog.tasks.episode_passed) passes, which must
be 0. Env code runs in the sandbox (one worker per env, reset per task).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.store import Catalog  # noqa: E402
from serving import ToolEnv  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", default=None, help="catalog folder (default: the usual one)")
    parser.add_argument("--with-reference", action="store_true", help="score the reference envs' tasks too")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    catalog = Catalog(args.catalog, include_reference=args.with_reference)
    t0 = time.perf_counter()
    figures = {"envs": 0, "tasks": 0, "refusal_tasks": 0, "check_only": 0, "check_only_refusal": 0, "passed_empty": 0}
    offenders: list[str] = []
    for summary in catalog.list()[0]:
        handle = catalog.get(summary.id)
        tasks = handle.tasks()
        if not tasks:
            continue
        figures["envs"] += 1
        with ToolEnv(handle, task=tasks[0]) as env:
            for task in tasks:
                env.reset(options={"task": task.id})
                reward, details = env.evaluate()
                figures["tasks"] += 1
                figures["refusal_tasks"] += task.refusal
                figures["check_only"] += details.get("check") is True
                figures["check_only_refusal"] += details.get("check") is True and task.refusal
                if reward:
                    figures["passed_empty"] += 1
                    offenders.append(f"{handle.id}/{task.id}")
        print(f"{figures['envs']} envs, {figures['tasks']} tasks scored", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    out = {**figures, "offenders": offenders[:20], "seconds": round(time.perf_counter() - t0, 1)}
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
