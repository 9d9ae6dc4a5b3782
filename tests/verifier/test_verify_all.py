"""`verify --all` on the executors: one env per unit, the same reports and exit status locally and on Ray."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from catalog.store import REFERENCE_DIR, Catalog
from tests.test_cli import run
from verifier.executors import ExecutorSpec
from verifier.gate import verify_envs

ROOT = Path(__file__).resolve().parents[2]


def _content(reports: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in reports]


def _catalog_with_a_failing_env(root):
    """The reference envs, and a copy of store whose code does not parse (listed, so it reaches the workers)."""
    shutil.copytree(REFERENCE_DIR / "store", root / "no-parse")
    data = json.loads((root / "no-parse" / "env.json").read_text())
    (root / "no-parse" / "env.json").write_text(json.dumps(dict(data, id="no-parse")))
    (root / "no-parse" / "env.py").write_text("def broken(:\n", encoding="utf-8")
    return root


def test_verify_all_gives_the_same_reports_and_exit_status_locally_and_on_ray(ray_cluster, tmp_path):
    root = _catalog_with_a_failing_env(tmp_path)
    address = ray_cluster.get_runtime_context().gcs_address
    local = run("verify", "--all", "--examples", "5", "--json", catalog=root)
    on_ray = run("verify", "gate", "--all", "--examples", "5", "--json", "--executor", "ray", "--ray-address", address,
                 catalog=root)
    assert local.returncode == on_ray.returncode == 5, (local.stderr, on_ray.stderr)  # no-parse fails the gate
    reports = json.loads(local.stdout)
    assert [r["env"] for r in reports] == ["bank", "clinic", "library", "store", "no-parse"]  # catalog order
    assert _content(reports) == _content(json.loads(on_ray.stdout))
    assert [r["passed"] for r in reports] == [True, True, True, True, False]
    for out in (local, on_ray):  # one line per finished env
        lines = [line for line in out.stderr.splitlines() if line.startswith("verified ")]
        assert sorted(line.split()[1].rstrip(":") for line in lines) == sorted(r["env"] for r in reports)


def test_verify_envs_keeps_the_order_asked_and_an_empty_list_starts_no_worker(tmp_path):
    catalog = Catalog(tmp_path)
    seen = []
    reports = verify_envs(catalog, ["store", "bank"], executor=ExecutorSpec("local"), workers=2, examples=3,
                          progress=lambda r: seen.append(r.env))
    assert [r.env for r in reports] == ["store", "bank"] and sorted(seen) == ["bank", "store"]
    assert verify_envs(catalog, []) == []


def test_the_ray_executor_is_for_verify_all_only(tmp_path):
    out = run("verify", "gate", "bank", "--executor", "ray", catalog=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr and "--all" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_workers_sandbox_as_the_driver_says_and_a_host_without_the_sandbox_is_one_line(tmp_path):
    """No bwrap on this "host": --unsafe-no-isolation must reach the worker processes; without it, one line."""
    shutil.copytree(REFERENCE_DIR / "bank", tmp_path / "mybank")
    data = json.loads((tmp_path / "mybank" / "env.json").read_text())
    (tmp_path / "mybank" / "env.json").write_text(json.dumps(dict(data, id="mybank")))
    env = {**os.environ, "ENVFORGE_BWRAP": str(tmp_path / "no-bwrap")}
    command = [sys.executable, "cli.py", "verify", "--all", "--no-reference", "--examples", "3", "--json",
               "--catalog", str(tmp_path)]
    refused = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert "--unsafe-no-isolation" in refused.stderr
    trusted = subprocess.run([*command, "--unsafe-no-isolation"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
    assert trusted.returncode == 0, trusted.stderr
    assert [r["env"] for r in json.loads(trusted.stdout)] == ["mybank"]
