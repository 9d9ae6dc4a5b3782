"""The GRPO run of bench/train_grpo.py (TRL + torch, CPU, a few minutes): marked `train`, outside the default run.

    .venv/bin/python -m pytest -m train tests/serving/adapters/test_train_grpo.py

The envs are synthesized by the real pipeline (gated) into a temporary catalog; the script trains
a tiny random model on them through serving.adapters.trl and replays every scored episode.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.train
ROOT = Path(__file__).resolve().parents[3]


def test_grpo_loop_closes_on_synthesized_envs(tmp_path):
    pytest.importorskip("trl")
    steps = 3
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "train_grpo.py"), "--catalog", str(tmp_path / "c"),
                          "--envs", "2", "--steps", str(steps), "--json"],
                         capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(result["envs"]) == 2 and result["tasks"] >= 4
    assert [line["step"] for line in result["reward_log"]] == list(range(1, steps + 1))
    replay = result["replay"]
    # every completion was scored by the env's check through the adapter (8 rollouts a step), and a fresh
    # ToolEnv replaying its calls from the task's start gives the same reward and final state
    assert replay["episodes"] == 8 * steps and replay["mismatches"] == []
    # the reward log is the episodes' rewards: the mean of each step's 8
    assert sum(line["reward"] for line in result["reward_log"]) * 8 == pytest.approx(replay["rewarded"], abs=1e-3)
