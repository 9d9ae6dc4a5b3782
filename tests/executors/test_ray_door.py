"""A local Ray cluster envforge starts keeps other hosts out; a dead --ray-address is one line.

Ray 2.60 has no option to bind its gRPC servers (GCS, raylet, core workers) to loopback: they
listen on every interface whatever `_node_ip_address` says (measured: `::`). What keeps other
hosts out is Ray's token auth, which `connect(None)` turns on with a fresh token of the driver's
process. These tests list the listening sockets of the cluster's processes, and show that a
client without the token, or with another token, cannot join while one with it can.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sockets import descendants, listening, off_loopback

ROOT = Path(__file__).resolve().parents[2]
_JOIN = ("import logging, os, ray; ray.init(address={gcs!r}, logging_level=logging.ERROR); "
         "print('JOINED', ray.get(ray.remote(lambda: os.getpid()).remote()))")


def _cluster_pids(ray) -> set[int]:  # type: ignore[no-untyped-def]
    session = os.path.basename(ray._private.worker.global_worker.node.get_session_dir_path())
    pids = descendants(os.getpid())
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if session in Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace"):
                    pids.add(int(entry))
            except OSError:
                continue
    return pids


def _joins(gcs: str, envs: list[dict[str, str]]) -> list[subprocess.CompletedProcess[str]]:
    """Each environment's try to join, all at once: a refused client spends its time in Ray's retries, not CPU."""
    command = [sys.executable, "-c", _JOIN.format(gcs=gcs)]
    started = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for env in envs]
    done = []
    for process in started:
        out, err = process.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return done


def test_the_local_cluster_requires_its_token_and_has_no_dashboard(ray_cluster, tmp_path):
    from catalog.store import Catalog
    from serving.ray_envs import EnvActorPool

    ray = ray_cluster
    assert os.environ["RAY_AUTH_MODE"] == "token" and len(os.environ["RAY_AUTH_TOKEN"]) == 64
    with EnvActorPool("library", n=2, catalog=Catalog(tmp_path / "catalog"), actors=1) as pool:
        pool.reset()
        sockets = listening(_cluster_pids(ray))
    assert sockets, "no listener found for the cluster's processes: the listing is broken"
    assert 8265 not in {port for _, port in sockets}, "the dashboard listens"
    gcs = ray.get_runtime_context().gcs_address
    assert int(gcs.rsplit(":", 1)[1]) in {port for _, port in sockets}
    exposed = off_loopback(sockets)  # what Ray 2.60 binds on every interface: the token is the door
    home = tmp_path / "home"
    home.mkdir()
    bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")} | {"HOME": str(home)}
    tries = {"no token": bare, "another token": bare | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "f" * 64},
             "auth disabled": bare | {"RAY_AUTH_MODE": "disabled"}, "its token": dict(os.environ) | {"HOME": str(home)}}
    outcomes = dict(zip(tries, _joins(gcs, list(tries.values())), strict=True))
    for label in ("no token", "another token", "auth disabled"):
        refused = outcomes[label]
        assert refused.returncode != 0 and "JOINED" not in refused.stdout, (label, exposed, refused.stdout)
    joined = outcomes["its token"]
    assert joined.returncode == 0 and "JOINED" in joined.stdout, joined.stderr[-2000:]


def test_auth_disabled_is_refused_for_a_cluster_envforge_starts(monkeypatch):
    from executors.base import ExecutorError
    from executors.ray_pool import local_cluster_auth

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    with pytest.raises(ExecutorError, match="only with token auth"):
        local_cluster_auth()


@pytest.mark.parametrize("command", [["synthesize", "--n", "1"], ["verify", "--all"],
                                     ["rollout", "--model", "reference", "--env", "library", "--out", "OUT"]])
def test_a_ray_address_nothing_answers_at_is_one_line_fast(command, tmp_path):
    args = [str(tmp_path / "out") if part == "OUT" else part for part in command]
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "--catalog", str(tmp_path / "catalog"), *args,
                           "--executor", "ray", "--ray-address", "127.0.0.1:1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envforge:") and "127.0.0.1:1" in lines[0], done.stderr
    assert not (tmp_path / "out").exists()
