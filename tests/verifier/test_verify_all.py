"""`verify --all` on the executors: one env per unit, the same reports and exit status locally and on Ray."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from catalog.store import REFERENCE_DIR, Catalog
from executors import ExecutorSpec
from tests.test_cli import run
from verifier.gate.run import verify_envs

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
    for out in (local, on_ray):  # one line per finished env, with the count and the time left
        lines = [line for line in out.stderr.splitlines() if line.startswith("verified ")]
        assert sorted(line.split()[1].rstrip(":") for line in lines) == sorted(r["env"] for r in reports)
        assert [line.split("[")[1].split(",")[0] for line in lines] == [f"{n}/5 envs" for n in range(1, 6)]
        assert "left]" in lines[0] and out.stderr.splitlines()[-1].startswith("verify gate --all: 5/5 envs (100%) in ")


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


FORGE = '''

import functools as _functools
import json as _json
import random as _random


def _forge_a_frame():
    """Env code writing a call frame whose outcome is not an Outcome (and a delta that is no ops) to every descriptor."""
    os, frame, job, instance = _random._os, _random._os.sys._getframe(), 1, None
    while frame is not None:  # the job's number and instance copied, so the frame reaches the wire model
        if hasattr(frame.f_locals.get("channel"), "job"):
            job, instance = frame.f_locals["channel"].job, getattr(frame.f_locals["channel"], "instance", None)
            break
        frame = frame.f_back
    body = _json.dumps({"outcome": {"pwned": 1}, "delta": "not ops", "job": job, "instance": instance}).encode()
    for fd in range(1, 11):
        try:
            os.write(fd, len(body).to_bytes(4, "big") + body)
        except BaseException:
            pass


def _forging(method):
    @_functools.wraps(method)
    def forged(self, account_id, *args, **kwargs):
        if account_id == "A002":  # one account: forging on every call makes the gate's searches take minutes
            _forge_a_frame()
        return method(self, account_id, *args, **kwargs)
    return forged


BankEnv.get_account = _forging(BankEnv.get_account)  # one tool forges; the others answer as bank's
'''


def _copy(root, source, env_id):
    shutil.copytree(REFERENCE_DIR / source, root / env_id)
    data = json.loads((root / env_id / "env.json").read_text())
    (root / env_id / "env.json").write_text(json.dumps(dict(data, id=env_id)))
    return root / env_id


def _hostile_catalog(root):
    """A good env, one whose code forges worker frames, and one whose state file is corrupt."""
    _copy(root, "bank", "good")
    forger = _copy(root, "bank", "forger")
    (forger / "env.py").write_text((forger / "env.py").read_text() + FORGE)
    bad = _copy(root, "bank", "badstate")
    (bad / "states" / "busy_day.json").write_text('{"accounts": [1, 2')
    return root


def test_verify_all_reports_every_env_when_one_forges_frames_and_one_has_a_bad_state_file(tmp_path):
    hostile = run("verify", "--all", "--no-reference", "--examples", "3", "--json", catalog=_hostile_catalog(tmp_path / "h"))
    fresh_root = tmp_path / "fresh"
    fresh_root.mkdir()
    _copy(fresh_root, "bank", "good")
    fresh = run("verify", "--all", "--no-reference", "--examples", "3", "--json", catalog=fresh_root)
    assert hostile.returncode == 5 and "Traceback" not in hostile.stderr, hostile.stderr
    reports = {r["env"]: r for r in json.loads(hostile.stdout)}
    assert sorted(reports) == ["badstate", "forger", "good"]
    assert _content([reports["good"]]) == _content(json.loads(fresh.stdout))  # identical to a fresh run's
    assert reports["good"]["passed"] and not reports["badstate"]["passed"]
    bad = [c for c in reports["badstate"]["checks"] if not c["ok"]]
    assert len(bad) == 1 and "busy_day.json is not valid JSON" in bad[0]["detail"], bad


def test_catalog_run_on_a_frame_forging_env_and_verify_on_a_bad_state_file_are_one_line(tmp_path):
    root = _hostile_catalog(tmp_path)
    out = run("catalog", "run", "forger", "get_account", "--args", '{"account_id": "A002"}', catalog=root)
    assert out.returncode == 3 and "Traceback" not in out.stderr, out.stderr  # a crash outcome, said in the result
    # the frame forges both fields; the message names the first one the wire model checks
    assert re.search(r"protocol: malformed call frame \((outcome|delta):", out.stdout), out.stdout
    out = run("verify", "badstate", "--examples", "3", catalog=root)
    lines = out.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("envforge: ")]
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert len(errors) == 1 and lines[-1] == errors[0] and "busy_day.json is not valid JSON" in errors[0], out.stderr
