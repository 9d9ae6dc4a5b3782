"""The decode attack through every door: a state naming a stdlib class whose finalizer unlinks a file.

`tempfile._TemporaryFileCloser` with `file=1, name=<canary>` unlinks the canary when it is
finalized. Sent as (part of) a reset state of the `store` reference env, which runs in the
serving process, it used to delete a host file through `make()`, MCP (stdio and HTTP), a Ray
actor and `cli.py replay --state FILE`. Each door must now refuse it naming the class, the
canary must survive, and other sessions and instances must answer as a fresh run does.
"""

import gc
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from catalog.state.codec import TAG
from serving import make
from serving.ray_envs import EnvActorPool, InstanceError
from tests.serving.test_serving_mcp import _http_session, _stdio_session, http_server  # noqa: F401
from verifier.replay import ReplayError, replay

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "catalog" / "reference" / "store"
TASK = "store-address-then-checkout"
GADGET = "tempfile:_TemporaryFileCloser"
REFUSED = f"refused to decode class '{GADGET}'"


@pytest.fixture
def canary(tmp_path):
    path = tmp_path / "canary.txt"
    path.write_text("host file")
    return path


def hostile_state(canary: Path) -> dict:
    state = json.loads((STORE / "states" / "default.json").read_text())
    state["audit"] = {TAG: "object", "type": GADGET, "attrs": {"file": 1, "name": str(canary), "delete": True}}
    return state


@pytest.fixture(scope="module")
def fresh(reference):
    """The task's solution run on a fresh in-process env: what every unaffected session must answer."""
    env = make("store", task=TASK, catalog=reference)
    env.reset()
    return [env.step(a)[:3] for a in env.task.solution], env.task.solution


def survives(canary: Path) -> bool:
    gc.collect()  # a finalizer of anything decode built has run by now
    return canary.read_text() == "host file"


def test_python_api_refuses_the_state_in_process_and_in_the_sandbox(reference, fresh, canary):
    expected, solution = fresh
    env = make("store", task=TASK, catalog=reference)
    with pytest.raises(ValueError, match=REFUSED):
        env.reset(options={"state": hostile_state(canary)})
    with pytest.raises(ValueError, match=REFUSED):
        make("store", state=hostile_state(canary), catalog=reference).reset()
    env.reset()  # the refused reset left the env usable and unchanged
    assert [env.step(a)[:3] for a in solution] == expected
    with make("store", task=TASK, catalog=reference, trusted=False) as sandboxed:  # decoded in the worker
        with pytest.raises(RuntimeError, match=REFUSED):
            sandboxed.reset(options={"state": hostile_state(canary)})
        sandboxed.reset()
        assert [sandboxed.step(a)[:3] for a in solution] == expected
    assert survives(canary)


def _text(result) -> str:
    return result.content[0].text


async def _solve(session, solution) -> list:
    out = []
    for action in solution:
        result = await session.call_tool(action.name, action.arguments)
        meta = result.meta["envforge"]
        out.append((json.loads(_text(result)), meta["reward"], meta["terminated"]))
    return out


def _expected_over_mcp(fresh) -> list:
    return [(o, r, False) for o, r, _ in fresh[0]]  # the server never ends an episode (terminate_on_success=False)


def test_mcp_stdio_refuses_the_state(fresh, canary):
    async def run():
        async with _stdio_session("store", "--task", TASK) as session:
            refused = await session.call_tool("reset", {"state": hostile_state(canary)})
            assert refused.is_error and REFUSED in _text(refused) and "\n" not in _text(refused)
            assert not (await session.call_tool("reset", {})).is_error
            return await _solve(session, fresh[1])

    assert anyio.run(run) == _expected_over_mcp(fresh)
    assert survives(canary)


def test_mcp_http_refuses_the_state_and_other_sessions_are_unaffected(http_server, fresh, canary):  # noqa: F811
    async def attacker():
        async with _http_session(http_server) as session:
            opened = await session.call_tool("reset", {"env": "store", "state": hostile_state(canary)})
            assert opened.is_error and REFUSED in _text(opened)
            assert not (await session.call_tool("reset", {"env": "store", "task": TASK})).is_error
            again = await session.call_tool("reset", {"state": hostile_state(canary)})
            assert again.is_error and REFUSED in _text(again)
            return await _solve(session, fresh[1])

    async def bystander():
        async with _http_session(http_server) as session:
            assert not (await session.call_tool("reset", {"env": "store", "task": TASK})).is_error
            return await _solve(session, fresh[1])

    async def run():
        results = {}

        async def keep(name, function):
            results[name] = await function()

        async with anyio.create_task_group() as group:
            group.start_soon(keep, "attacker", attacker)
            group.start_soon(keep, "bystander", bystander)
        return results

    results = anyio.run(run)
    assert results["attacker"] == results["bystander"] == _expected_over_mcp(fresh)
    assert survives(canary)


def test_ray_actor_refuses_the_state_and_the_other_instance_is_unaffected(reference, ray_cluster, fresh, canary):
    expected, solution = fresh
    with EnvActorPool("store", n=2, task=TASK, catalog=reference, actors=1) as pool:
        with pytest.raises(InstanceError) as refused:
            pool.reset(options=[{"state": hostile_state(canary)}, None])
        assert list(refused.value.errors) == [0] and REFUSED in str(refused.value.errors[0])
        assert refused.value.results[1] is not None  # instance 1 was reset as asked
        assert [pool.step([None, a.model_dump()])[1][:3] for a in solution] == expected
        pool.reset_one(0)
        assert [pool.step([a.model_dump(), None])[0][:3] for a in solution] == expected
    assert survives(canary)


def test_replay_refuses_a_crafted_state_file(reference, canary, tmp_path):
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(hostile_state(canary)))
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"name": "get_customer", "arguments": {"customer_id": "U1"}}) + "\n")
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "replay", "store", "--calls", str(calls), "--state",
                          str(state_file), "--catalog", "/nonexistent-envforge-catalog"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("envforge: ") and out.stderr.count("\n") == 1 and REFUSED in out.stderr
    with pytest.raises(ReplayError, match=REFUSED):
        replay("store", hostile_state(canary), [json.loads(calls.read_text())], catalog=reference)
    assert survives(canary)
