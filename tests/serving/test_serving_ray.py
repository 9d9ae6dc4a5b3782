"""Env instances as Ray actors: 256 concurrent instances behave as local ToolEnvs, stay isolated, and a lost actor is reported."""

import os
import shutil
import signal
import time

import pytest

from catalog.store import REFERENCE_DIR, Catalog, CatalogError
from serving import EpisodeOver, ServingError, make
from serving.ray_envs import EnvActorPool, InstanceError, InstancesLost, shares


def local_episode(catalog, env_id, task):
    """What a local ToolEnv gives for `task`'s reference solution: every step's (reward, terminated) and the final state."""
    with make(env_id, task=task.id, catalog=catalog) as env:
        env.reset()
        steps = [env.step(action.model_dump())[1:3] for action in task.solution]
        return steps, env.state()


def test_256_instances_equal_local_tool_envs_and_stay_isolated(reference, ray_cluster):
    tasks = reference.get("library").tasks()
    expected = {t.id: local_episode(reference, "library", t) for t in tasks}
    n = 256
    with EnvActorPool("library", n=n, catalog=reference, actors=2) as pool:
        assert [len(s) for s in pool.shares] == [128, 128] and len(set(pool.worker_pids())) == 2
        mine = [tasks[i % len(tasks)] for i in range(n)]  # neighbours on different tasks: different actions
        answers = pool.reset(seeds=10, options=[{"task": t.id} for t in mine])
        assert [info["task"] for _, info in answers] == [t.id for t in mine]
        assert [info["seed"] for _, info in answers] == list(range(10, 10 + n))
        got: list[list[tuple[float, bool]]] = [[] for _ in range(n)]
        for number in range(max(len(t.solution) for t in tasks)):
            actions = [t.solution[number].model_dump() if number < len(t.solution) else None for t in mine]
            for i, result in enumerate(pool.step(actions)):
                assert (result is None) == (actions[i] is None)
                if result is not None:
                    got[i].append((result[1], result[2]))
        states = pool.states()
        for i, task in enumerate(mine):
            assert (got[i], states[i]) == expected[task.id], f"instance {i} ({task.id})"
        assert pool.evaluate([0, 1]) == [(1.0, {"task": t.id, "passed": True, "error": None, "check": True,
                                                "cut_off": False, "refusal": False}) for t in mine[:2]]
        assert [r for r, _ in pool.evaluate([0], final_messages=["I cannot."])] == [1.0]
        with pytest.raises(ServingError, match="final_messages"):
            pool.evaluate([0, 1], final_messages=[{"role": "assistant"}, None])  # type: ignore[list-item]
        assert len({repr(states[i]) for i in range(len(tasks))}) == len(tasks)  # isolated: different episodes, states
        with pytest.raises(ServingError, match="one action per instance"):
            pool.step([None])
        with pytest.raises(EpisodeOver):  # one instance asked: its own exception
            pool.step_one(0, tasks[0].solution[0].model_dump())
        with pytest.raises(InstanceError, match="2 env instance"):  # two asked: the batch keeps the other answers
            pool.step([tasks[0].solution[0].model_dump()] * 2 + [None] * (n - 2))


def test_a_killed_actor_loses_only_its_own_instances(reference, ray_cluster):
    task = reference.get("bank").tasks()[0]
    with EnvActorPool("bank", n=6, task=task.id, catalog=reference, actors=2) as pool:
        pool.reset()
        os.kill(pool.worker_pids()[1], signal.SIGKILL)
        read = {"name": "get_account", "arguments": {"account_id": "A001"}}
        with pytest.raises(InstancesLost, match="3 env instance") as lost:
            pool.step([read] * 6)
        assert lost.value.indices == [3, 4, 5] and pool.restarts == 1
        assert [r is not None for r in lost.value.results] == [True, True, True, False, False, False]
        with pytest.raises(EpisodeOver, match="call reset"):  # the restarted actor's instances are fresh
            pool.step_one(4, read)
        assert pool.reset_one(4)[1]["task"] == task.id and pool.step_one(4, read)[4]["outcome"] == "success"
        first = pool.worker_pids()[0]
        os.kill(first, signal.SIGKILL)  # a death between calls: the next reset meets the restarted actor
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if pool.worker_pids()[0] != first:
                    break
            except Exception:  # noqa: BLE001 - the actor is restarting
                time.sleep(0.2)
        assert [info["task"] for _, info in pool.reset()] == [task.id] * 6 and pool.restarts == 2
        assert [r[4]["outcome"] for r in pool.step([read] * 6)] == ["success"] * 6


def test_untrusted_instances_run_in_the_actors_sandbox_workers(tmp_path, ray_cluster):
    shutil.copytree(REFERENCE_DIR / "store", tmp_path / "store")
    catalog = Catalog(tmp_path, include_reference=False)
    task = catalog.get("store").tasks()[0]
    with EnvActorPool("store", n=2, task=task.id, catalog=catalog, actors=2) as pool:
        assert all(info["sandboxed"] for _, info in pool.reset())
        for action in task.solution:
            results = pool.step([action.model_dump()] * 2)
        assert [r[1:3] for r in results] == [(1.0, True)] * 2


def test_bad_pool_settings_are_one_clear_error(reference, ray_cluster):
    with pytest.raises(CatalogError):
        EnvActorPool("no-such-env", n=2, catalog=reference)
    with pytest.raises(CatalogError, match="has no task 'nope'"):  # found in the actor, raised here as itself
        EnvActorPool("library", n=2, task="nope", catalog=reference, actors=1)
    with pytest.raises(ServingError, match="n must be"):
        EnvActorPool("library", n=0, catalog=reference)


def test_shares_split_evenly():
    assert [len(s) for s in shares(10, 3)] == [4, 3, 3] and [s.start for s in shares(10, 3)] == [0, 4, 7]
