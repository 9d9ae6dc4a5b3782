"""Dense sandboxed instances (sandbox/dense.py): many instances of one env version in one worker.

One pool for the module (its fork server starts once). Each test checks what sharing must not
change: every instance's state is its own (a concurrent run ends where a solo run of the same
seed does), a job or a frame naming another instance is refused, and an env whose calls change
module-level state gets a worker per instance, says so, and its sessions still answer as solo.
"""

import random
import threading
from pathlib import Path

import pytest

from catalog.importing.importer import import_env
from catalog.store import Catalog
from sandbox.dense import DensePool
from sandbox.pool import Job
from sandbox.session import SandboxRuntime

FORGED_INSTANCE = """
import json
import random

_os = random._os


def _channel():
    frame = _os.sys._getframe()
    while frame is not None:
        channel = frame.f_locals.get("channel")
        if channel is not None and hasattr(channel, "instance"):
            return channel
        frame = frame.f_back


class Liar:
    def lie(self) -> dict:
        \"\"\"Answer as another instance of this worker.\"\"\"
        channel = _channel()
        body = json.dumps({"done": True, "job": channel.job, "instance": (channel.instance or 0) + 1}).encode()
        _os.write(3, len(body).to_bytes(4, "big") + body)
        return {"ok": True}
"""

GLOBAL_STATE = """
SEEN = []


class Counter:
    def __init__(self) -> None:
        self.mine = 0

    def add(self, x: int) -> dict:
        \"\"\"Count a call, in the module and in the instance.\"\"\"
        SEEN.append(x)
        self.mine += 1
        return {"seen": len(SEEN), "mine": self.mine}
"""


@pytest.fixture(scope="module")
def dense():
    with DensePool(per_worker=4, idle_seconds=0.0) as pool:
        yield pool


@pytest.fixture(scope="module")
def library(reference: Catalog):
    handle = reference.get("library")
    actions = [a.model_dump() for task in handle.tasks() for a in task.solution or []]
    return handle, actions


def _drive(runtime: SandboxRuntime, actions: list[dict], seed: int) -> dict:
    rng = random.Random(seed)
    runtime.reset("default")
    for _ in range(6):
        runtime.call(rng.choice(actions))
    return runtime.snapshot()


def test_instances_share_workers_round_robin_and_each_keeps_its_own_state(dense, library):
    handle, actions = library
    runtimes = [SandboxRuntime(handle, dense=dense) for _ in range(6)]
    try:
        finals = {}
        for number, runtime in enumerate(runtimes):
            runtime.reset("default")
            finals[number] = runtime.snapshot()
        slots = [r._lease.slot for r in runtimes]
        assert [slots.count(s) for s in (slots[0], slots[-1])] == [4, 2]  # a new worker when the first was full
        assert runtimes[0].call({"name": "register_member", "arguments": {"name": "Zed", "email": "z@x.org"}}).delta
        assert runtimes[0].snapshot() != finals[0]
        assert [r.snapshot() for r in runtimes[1:]] == [finals[n] for n in range(1, 6)]  # nobody else moved
        assert all(r.isolated is None for r in runtimes)
        assert dense.workers() == 2
        for runtime in runtimes[:4]:
            runtime.close()
        assert dense.workers() == 1  # the worker left without an instance is closed (idle_seconds=0 here)
    finally:
        for runtime in runtimes:
            runtime.close()


def test_concurrent_instances_end_where_solo_runs_of_the_same_seed_do(dense, library):
    handle, actions = library
    seeds = list(range(12))
    with DensePool(per_worker=1) as solo_pool:
        solo_runtime = SandboxRuntime(handle, dense=solo_pool)
        solo = {seed: _drive(solo_runtime, actions, seed) for seed in seeds}  # one at a time, alone
        solo_runtime.close()
    assert len({str(s) for s in solo.values()}) > 1  # the seeds really differ
    finals: dict[int, dict] = {}

    def episode(seed: int) -> None:
        runtime = SandboxRuntime(handle, dense=dense)
        try:
            finals[seed] = _drive(runtime, actions, seed)
        finally:
            runtime.close()

    threads = [threading.Thread(target=episode, args=(seed,)) for seed in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert finals == solo


def test_a_job_for_another_instance_is_refused(dense, library):
    handle, _ = library
    first, second = SandboxRuntime(handle, dense=dense), SandboxRuntime(handle, dense=dense)
    try:
        first.reset("default")
        second.reset("default")
        assert first._lease is not None and second._lease is not None
        crafted = Job.for_env(handle, [{"name": "search_books", "arguments": {"query": ""}}])
        crafted.resume, crafted.snapshot = True, True
        crafted.instance = second._lease.instance
        with pytest.raises(ValueError, match="another instance"):
            dense.run_for(first._lease, crafted)
        other = Job.for_env(Catalog(root="/nonexistent-envforge-catalog").get("bank"), [])
        with pytest.raises(ValueError, match="another env"):
            dense.run_for(first._lease, other)
        first.close()
        with pytest.raises(ValueError, match="not a live instance"):
            dense.run_for(first._lease, Job.for_env(handle, []))
    finally:
        first.close()
        second.close()


def test_a_frame_tagged_with_another_instance_ends_the_job(dense, tmp_path: Path):
    (tmp_path / "env.py").write_text(FORGED_INSTANCE)
    job = Job(str(tmp_path), "class", [{"name": "lie", "arguments": {}}], entry="Liar", state={})
    lease = dense.open(job)
    try:
        result = dense.run_for(lease, job)
        assert result.event == "protocol: a frame for another instance", result
        assert result.calls == []
    finally:
        dense.release(lease)


def test_module_level_state_gets_a_worker_per_instance_and_says_so(dense, tmp_path: Path):
    source = tmp_path / "counter.py"
    source.write_text(GLOBAL_STATE)
    handle = import_env(source, Catalog(root=tmp_path / "catalog")).handle
    runtimes = [SandboxRuntime(handle, dense=dense) for _ in range(3)]
    try:
        for runtime in runtimes:
            runtime.reset(handle.default_state())
        assert len({id(r._lease.slot) for r in runtimes}) == 1  # not known yet: they share a worker
        assert runtimes[0].call({"name": "add", "arguments": {"x": 1}}).observation == {"seen": 1, "mine": 1}
        assert runtimes[0].isolated is not None and "SEEN" in runtimes[0].isolated
        # each answers as if it were alone: the shared worker (and what it leaked) is gone
        for runtime in runtimes[1:]:
            assert runtime.call({"name": "add", "arguments": {"x": 2}}).observation == {"seen": 1, "mine": 1}
        assert runtimes[0].call({"name": "add", "arguments": {"x": 3}}).observation == {"seen": 2, "mine": 2}
        assert len({id(r._lease.slot) for r in runtimes}) == 3
        later = SandboxRuntime(handle, dense=dense)
        later.reset(handle.default_state())
        assert later._lease is not None and len(later._lease.slot.instances) == 1 and later.isolated
        later.close()
    finally:
        for runtime in runtimes:
            runtime.close()


@pytest.mark.parametrize("env_id", ["library"])
def test_sandboxed_episodes_score_every_step_as_in_process_ones(reference, env_id):
    """Resets by state name, the kept initial state and checks judged along with the calls: the same verdicts."""
    from serving import make

    handle = reference.get(env_id)
    for task in handle.tasks():
        script = [*task.solution, *task.solution] if task.solution else []
        seen = []
        for trusted in (True, False):
            with make(env_id, task=task, catalog=reference, trusted=trusted, terminate_on_success=False) as env:
                env.reset()
                steps = [env.step(action) for action in script]
                seen.append(([(s[0], s[1], s[4]["outcome"], s[4]["check"]["passed"]) for s in steps],
                             env.evaluate("I cannot do that."), env.state()))
        assert seen[0] == seen[1], task.id
