"""synthesize on the executors: the same seed registers the same envs locally and on a Ray cluster, also
when a worker is killed mid-run (nothing lost, nothing twice), and the CLI flags reach the driver.

Each run is real (graph, sandbox, catalog) on the small size; the local run of n=6 is made once per
module and is what the other runs must match (6 envs over 2 workers: each worker registers several, and
the killed runs' 4 leave slots in flight after the first registers). A killed run asks for fewer envs: the envs of a run are
the first n slots (in slot order) whose pipeline registers, which is what makes them independent of
timing, so its ids are the first n of the local run's.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from executors import ExecutorSpec
from synth.run import RunConfig, synthesize

ROOT = Path(__file__).resolve().parents[2]
N, SEED, SIZE = 6, 5, "small"
SAME = ("requested", "proposed", "registered", "rejected", "deduplicated", "existing", "failed", "distinct_schemas")


def _config(root: Path, n: int = N, run_id: str = "") -> RunConfig:
    return RunConfig(n=n, catalog=str(root), workers=2, seed=SEED, size=SIZE, run_id=run_id)


def _user_envs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def _slots(root: Path, run_id: str) -> list[tuple[int, str | None, str]]:
    with sqlite3.connect(root / ".runs" / run_id / "run.sqlite") as db:
        return list(db.execute("SELECT slot, env_id, status FROM slots ORDER BY slot"))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("local")
    report = synthesize(_config(root), progress=False)
    registered = [env_id for _slot, env_id, status in _slots(root, report.run_id) if status == "registered"]
    return {"report": report.model_dump(mode="json"), "ids": sorted(e.env_id for e in report.envs), "in_slot_order": registered}


def test_ray_registers_the_same_envs_as_local_for_the_same_seed(ray_cluster, local_run, tmp_path):
    report = synthesize(_config(tmp_path), progress=False, executor=ExecutorSpec("ray"))
    assert report.registered == N
    assert sorted(e.env_id for e in report.envs) == local_run["ids"] == _user_envs(tmp_path)
    assert {k: report.model_dump(mode="json")[k] for k in SAME} == {k: local_run["report"][k] for k in SAME}
    assert [e.quality for e in sorted(report.envs, key=lambda e: e.env_id)] == [
        e["quality"] for e in sorted(local_run["report"]["envs"], key=lambda e: e["env_id"])]
    assert report.executor == {"kind": "ray", "workers": 2} and local_run["report"]["executor"]["kind"] == "local"
    run_dir = tmp_path / ".runs" / report.run_id  # Ray workers staged in their own scratch, never in the run folder
    assert not (run_dir / "staging").exists() and not (run_dir / "static").exists()
    with sqlite3.connect(run_dir / "checkpoints.sqlite") as db:  # yet every slot's checkpoints are in its file
        threads = {row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert {f"{report.run_id}:{slot}" for slot, _env, _status in _slots(tmp_path, report.run_id)} == threads


def _ray_worker_pid(ray: Any, prefix: str) -> tuple[str, int] | None:
    """A live actor of the run's pool, read from the cluster's actor table (the pool is inside synthesize)."""
    from ray._private import state

    for actor in state.actors().values():
        if actor["Name"].startswith(prefix) and actor["State"] == "ALIVE" and actor["Pid"]:
            return actor["Name"], int(actor["Pid"])
    return None


def _local_worker_pid(_ray: Any, _prefix: str) -> tuple[str, int] | None:
    """A process-pool worker of this process (spawned: its command line runs multiprocessing's spawn_main)."""
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        ppid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:"))
        if ppid == os.getpid() and b"spawn_main" in cmdline:
            return "local", int(entry.name)
    return None


@pytest.mark.parametrize("kind", ["ray", "local"])
def test_a_worker_killed_mid_run_loses_no_slot_and_duplicates_none(kind, local_run, tmp_path, request):
    n, run_id = 4, f"kill-{kind}"
    ray = request.getfixturevalue("ray_cluster") if kind == "ray" else None
    find = _ray_worker_pid if kind == "ray" else _local_worker_pid
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["report"] = synthesize(_config(tmp_path, n, run_id), progress=False, executor=ExecutorSpec(kind))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome["error"] = exc

    driver = threading.Thread(target=run)
    driver.start()
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and driver.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
        run_db = tmp_path / ".runs" / run_id / "run.sqlite"
        if not run_db.is_file():
            continue
        try:
            statuses = [status for _slot, _env, status in _slots(tmp_path, run_id)]
        except sqlite3.OperationalError:  # the driver is still creating its table
            continue
        if statuses.count("registered") >= 1 and "running" in statuses:  # mid-run: envs done, slots in flight
            killed = find(ray, f"synthesize-{run_id}")
            if killed is not None:
                os.kill(killed[1], signal.SIGKILL)
    driver.join(timeout=600)
    assert killed is not None, "the run ended before a worker could be killed"
    assert "error" not in outcome, outcome.get("error")
    report = outcome["report"]
    assert report.registered == n and report.failed == 0
    slots = _slots(tmp_path, run_id)
    registered = [env_id for _slot, env_id, status in slots if status == "registered"]
    named = [env_id for _slot, env_id, _status in slots if env_id]
    assert len(named) == len(set(named)) and len(registered) == n  # no env id twice (slots are the primary key)
    assert sorted(registered) == _user_envs(tmp_path) == sorted(local_run["in_slot_order"][:n])
    if kind == "ray":  # the killed actor really died and was restarted
        from ray._private import state

        assert any(a["Name"] == killed[0] and a["NumRestarts"] >= 1 for a in state.actors().values())


def test_the_cli_runs_synthesize_on_the_ray_cluster_it_is_pointed_at(ray_cluster, tmp_path):
    address = ray_cluster.get_runtime_context().gcs_address
    done = subprocess.run([sys.executable, "cli.py", "synthesize", "--n", "2", "--size", SIZE, "--seed", str(SEED),
                           "--catalog", str(tmp_path), "--executor", "ray", "--ray-address", address, "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["registered"] == 2 == len(_user_envs(tmp_path))
    assert report["executor"] == {"kind": "ray", "workers": 2}


def test_a_ray_address_without_the_ray_executor_is_one_line_of_bad_input(tmp_path):
    done = subprocess.run([sys.executable, "cli.py", "synthesize", "--n", "2", "--catalog", str(tmp_path),
                           "--ray-address", "auto"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "--executor ray" in done.stderr
    assert not (tmp_path / ".runs").exists()  # nothing was started
