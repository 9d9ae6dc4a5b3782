"""SkyRL-gym's BaseTextEnv over envforge envs, made through skyrl_gym's own registry (the installed library)."""

from __future__ import annotations

import json

import pytest
import skyrl_gym

from catalog.store import CatalogError
from serving.adapters.skyrl import AdapterError, EnvforgeTextEnv, register


def _call(name: str, arguments: dict) -> str:
    return f"I will call it.\n<tool><{name}>{json.dumps(arguments)}</{name}></tool>"


@pytest.fixture(scope="module")
def envforge_id() -> str:
    register()
    register()  # twice is fine
    return "envforge"


def test_solution_earns_the_check_reward_and_episodes_reset(reference, envforge_id):
    task = next(t for t in reference.get("library").tasks() if not t.refusal)
    env = skyrl_gym.make(envforge_id, env_config={"catalog": reference}, extras={"env_id": "library", "task": task.id})
    assert isinstance(env, EnvforgeTextEnv)
    other = skyrl_gym.make(envforge_id, env_config={"catalog": reference}, extras={"env_id": "library", "task": task.id})
    other.init([])
    before = other.env.state()
    prompt, info = env.init([])
    assert prompt[-1] == {"role": "user", "content": task.instruction} and "<tool><NAME>" in prompt[0]["content"]
    assert info["task"] == task.id
    for action in task.solution:
        out = env.step(_call(action.name, action.arguments))
        assert out["reward"] == 0.0 and not out["done"] and out["metadata"]["outcome"] == "success"
        assert out["observations"][0]["role"] == "user" and json.loads(out["observations"][0]["content"])["success"]
    assert other.env.state() == before
    out = env.step("<solution>It is done.</solution>")
    assert (out["reward"], out["done"], out["metadata"]["passed"]) == (1.0, True, True)
    assert env.get_metrics()["passed"] == 1.0
    given = [{"role": "user", "content": "from the dataset"}]
    assert env.init(given)[0] == given and env.env.state() == before  # init resets
    assert env.step("<solution>Done.</solution>")["reward"] == 0.0  # nothing done: the check fails
    env.close()
    other.close()


def test_bad_actions_are_observations_and_max_turns_cut_off(reference, envforge_id):
    env = EnvforgeTextEnv({"catalog": reference}, {"env_id": "bank", "max_turns": 3,
                                                   "task": reference.get("bank").tasks()[0].id})
    env.init([])
    no_call = env.step("I think I should look at the account.")
    assert "No <tool>" in no_call["observations"][0]["content"] and not no_call["done"]
    bad_json = env.step("<tool><get_account>{not json</get_account></tool>")
    assert bad_json["metadata"]["outcome"] == "invalid" and "not valid JSON" in bad_json["observations"][0]["content"]
    last = env.step(_call("get_account", {"account_id": "A001"}))
    assert last["done"] and last["reward"] == 0.0 and last["metadata"]["cut_off"] is True


def test_a_synthesized_env_runs_sandboxed(synthesized, envforge_id):
    catalog, ids = synthesized
    task = next(t for t in catalog.get(ids[1]).tasks() if not t.refusal and t.solution)
    env = skyrl_gym.make(envforge_id, env_config={"catalog": catalog}, extras={"env_id": ids[1], "task": task.id})
    env.init([])
    assert not env.env.in_process
    for action in task.solution:
        env.step(_call(action.name, action.arguments))
    assert env.step("<solution>done</solution>")["reward"] == 1.0
    env.close()


@pytest.mark.parametrize("extras, error", [
    ({}, AdapterError), ({"env_id": "../../etc"}, CatalogError), ({"env_id": "library", "task": "../x"}, CatalogError),
    ({"env_id": "library", "max_turns": 10**9}, AdapterError), ({"env_id": "library", "max_turns": "5"}, AdapterError),
])
def test_hostile_extras_are_refused(reference, extras, error):
    with pytest.raises(error):
        EnvforgeTextEnv({"catalog": reference}, extras)
