"""The executors: the same units give the same results locally and on a Ray cluster, and a killed worker loses none."""

import concurrent.futures as cf
import os
import signal
import threading
import time

import pytest

from executors import ExecutorError, ExecutorSpec, WorkerLost, open_pool
from tests.executors import _executor_units as units

KINDS = [("local", False), ("local", True), ("ray", False)]


@pytest.fixture(params=KINDS, ids=["processes", "threads", "ray"])
def pool(request):
    kind, threads = request.param
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    with open_pool(ExecutorSpec(kind), units.Units(3, threads=threads), 2) as opened:
        yield opened


def test_units_run_once_initialised_and_results_come_back_per_unit(pool):
    futures = [pool.submit(("scaled", k)) for k in range(40)]
    results = [f.result(timeout=60) for f in futures]
    assert [value for value, _pid in results] == [3 * k for k in range(40)]
    if pool.kind == "ray" or not getattr(pool, "threads", False):
        assert all(pid != os.getpid() for _value, pid in results)  # the units ran in worker processes


def test_a_unit_that_raises_fails_its_own_future_only(pool):
    bad, good = pool.submit(("fails", 1)), pool.submit(("scaled", 2))
    with pytest.raises(ValueError, match="unit 1 is bad input"):
        bad.result(timeout=60)
    assert good.result(timeout=60)[0] == 6


def test_futures_work_with_the_concurrent_futures_helpers(pool):
    futures = {pool.submit(("slow", k, 0.05)): k for k in range(6)}
    done = [futures[f] for f in cf.as_completed(futures, timeout=60)]
    assert sorted(done) == list(range(6))


def _kill_one_worker(pool) -> None:
    if pool.kind == "ray":
        os.kill(pool.worker_pids()[0], signal.SIGKILL)
    else:
        os.kill(next(iter(pool._pool._processes.values())).pid, signal.SIGKILL)


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_a_killed_worker_loses_no_unit_and_runs_none_twice_to_the_caller(kind, request):
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    with open_pool(ExecutorSpec(kind), units.Units(1), 2) as opened:
        opened.submit(("scaled", 0)).result(timeout=60)  # the workers are up
        futures = [opened.submit(("slow", k, 0.5)) for k in range(8)]
        time.sleep(0.3)
        _kill_one_worker(opened)
        assert sorted(f.result(timeout=120) for f in futures) == list(range(8))


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_a_unit_that_always_kills_its_worker_ends_in_worker_lost(kind, request):
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    with open_pool(ExecutorSpec(kind), units.Units(), 1) as opened:
        with pytest.raises(WorkerLost):
            opened.submit(("dies", 0)).result(timeout=180)


def test_close_with_cancel_drops_queued_units(ray_cluster):
    opened = open_pool(ExecutorSpec("ray"), units.Units(), 1)
    futures = [opened.submit(("slow", k, 0.5)) for k in range(4)]
    time.sleep(0.2)
    closer = threading.Thread(target=opened.close, kwargs={"cancel": True})
    closer.start()
    closer.join(60)
    assert not closer.is_alive()
    assert all(f.done() for f in futures) and any(f.cancelled() for f in futures)


def test_bad_executor_settings_are_one_line_errors():
    with pytest.raises(ExecutorError, match="unknown executor"):
        ExecutorSpec("dask")  # type: ignore[arg-type]
    with pytest.raises(ExecutorError, match="--ray-address needs --executor ray"):
        ExecutorSpec("local", "auto")
