"""The OpenEnv adapter: a real uvicorn server with OpenEnv's HTTPEnvServer, driven by OpenEnv's own clients.

The token door, the session cap, the closed stateless routes, and hostile messages on the raw WebSocket.
OpenEnv (~14 s to import) is imported by the tests, not at collection, so only the worker that runs
them pays for it.
"""

import asyncio
import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from websockets.asyncio.client import connect as ws_connect

from catalog.store import CatalogError
from serving.adapters import openenv as adapter
from serving.adapters.openenv import client, create_app
from serving.gym import ServingError
from serving.http_auth import HttpDoor
from serving.listen import bind, url_of
from tests.serving.test_serving_gym import REFUSE_LOAN

TOKEN = "openenv-test-token-0123456789"
TASK = "library-borrow-calvino"
SEARCH = {"name": "search_books", "arguments": {"query": "calvino", "available_only": True}}
BORROW = {"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}}  # EnvforgeClient takes dicts


@contextmanager
def _running(app):
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", ws_max_size=1 << 20))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield url_of(sock, "")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def url(reference):
    door = HttpDoor(tokens=(TOKEN,), max_sessions=8, idle_timeout=0)
    with _running(create_app(["library", "bank"], catalog=reference, task=TASK, door=door)) as address:
        yield address


def _episode(url, *actions, token=TOKEN, **reset):
    async def run():
        async with client(url, token=token) as env:
            results = [await env.reset(**reset)]
            for action in actions:
                results.append(await env.step(action))
            return results, await env.state()
    return asyncio.run(run())


def test_openenv_client_solves_the_task_over_the_websocket(url, reference):
    (start, searched, borrowed), state = _episode(url, SEARCH, BORROW)
    task = next(t for t in reference.get("library").tasks() if t.id == TASK)
    assert start.observation.instruction == task.instruction
    assert start.observation.task == TASK and start.done is False
    assert [t["function"]["name"] for t in start.observation.tools] == \
        [t.name for t in reference.get("library").manifest.tools]
    assert searched.reward == 0.0 and searched.done is False and searched.observation.outcome == "success"
    assert borrowed.reward == 1.0 and borrowed.done is True
    assert borrowed.observation.result["data"]["loan_id"] == "loan-8" and borrowed.observation.check["passed"]
    assert (state.step_count, state.task, state.env_id, state.done) == (2, TASK, "library", True)
    assert len(state.episode_id) == 32  # one is made when the client names none


def test_sessions_are_isolated_and_episodes_end(url):
    async def run():
        async with client(url, token=TOKEN) as first, client(url, token=TOKEN) as second:
            await first.reset()
            await second.reset()
            one, two = await first.step(BORROW), await second.step(BORROW)  # the one copy, in each session
            with pytest.raises(RuntimeError, match="episode is over"):
                await first.step(BORROW)
            await first.reset()  # a fresh episode: the copy is on the shelf again
            again = await first.step(BORROW)
            answered = await second.reset(env_id="bank")
            final = await second.step(adapter.ToolCall(final_message="I cannot help with that."))
            return one, two, again, answered, final
    one, two, again, answered, final = asyncio.run(run())
    assert one.reward == two.reward == again.reward == 1.0
    assert answered.observation.env_id == "bank" and answered.observation.task is None
    assert final.done is True and final.reward == 0.0 and final.observation.check["task"] is None


def _children():
    """This process's child processes (a sandboxed session's worker is one)."""
    me, found = str(os.getpid()), set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                found.add(pid)
        except (OSError, IndexError):
            pass
    return found


def test_a_sandboxed_env_and_the_generic_client(reference):
    from openenv.core import GenericEnvClient

    async def run(address):
        async with GenericEnvClient(address) as env:  # OpenEnv's own dict client, no envforge code
            start = await env.reset(task=TASK)
            step = await env.step({"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}})
            return start, step, _children() - before
    door = HttpDoor(tokens=(), max_sessions=2, idle_timeout=0)
    before = _children()
    with _running(create_app("library", catalog=reference, trusted=False, door=door)) as address:
        start, step, workers = asyncio.run(run(address))
        assert start.observation["task"] == TASK and step.reward == 1.0 and step.done is True
        assert workers  # the session's sandbox worker
        deadline = time.monotonic() + 10
        while workers & _children() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not workers & _children()  # released when the client went away


def test_the_door_refuses_and_the_stateless_routes_are_closed(url):
    assert httpx.get(f"{url}/health").status_code == 401
    assert httpx.get(f"{url}/health", headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
    ok = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{url}/health", headers=ok).status_code == 200
    for path in ("/reset", "/step", "/mcp"):
        assert httpx.post(f"{url}{path}", json={"action": {}}, headers=ok).status_code == 404
    assert httpx.get(f"{url}/state", headers=ok).status_code == 404
    for token in (None, "wrong-token-0123456789"):
        with pytest.raises(ConnectionError):
            _episode(url, token=token)


def test_hostile_messages_get_one_error_each_and_the_session_goes_on(url):
    async def run():
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with ws_connect(f"{url.replace('http', 'ws')}/ws", additional_headers=headers) as ws:
            async def ask(message):
                await ws.send(message if isinstance(message, str) else json.dumps(message))
                return json.loads(await ws.recv())
            replies = [await ask({"type": "step", "data": {"name": "borrow_book", "arguments": {}}}),  # before reset
                       await ask("{not json"),
                       await ask({"type": "reset", "data": {"task": "../../etc/passwd"}}),
                       await ask({"type": "reset", "data": {"state": {"books": []}}}),
                       await ask({"type": "reset", "data": {"env_id": "clinic"}}),
                       await ask({"type": "reset", "data": {"seed": "7"}}),
                       await ask({"type": "reset", "data": {"taks": TASK}}),
                       await ask({"type": "reset", "data": {}}),
                       await ask({"type": "step", "data": {"name": 5}}),
                       await ask({"type": "step", "data": {"name": "x", "final_message": "both"}}),
                       await ask({"type": "step", "data": {"name": "x", "import": "os"}}),
                       await ask({"type": "step", "data": {"name": "no_such_tool", "arguments": {}}}),
                       await ask({"type": "step", "data": {"name": "borrow_book", "arguments": "{not json"}}),
                       await ask({"type": "step", "data": {"name": "borrow_book",
                                                           "arguments": {"member_id": "M002", "book_id": "B010"}}})]
            return replies
    replies = asyncio.run(run())
    kinds = [r["type"] for r in replies]
    assert kinds == ["error"] * 7 + ["observation"] + ["error"] * 3 + ["observation"] * 3
    messages = [r["data"].get("message", "") for r in replies[:7]]
    assert "reset before step" in messages[0] and replies[1]["data"]["code"] == "INVALID_JSON"
    assert "task must be a name" in messages[2] and "state must be a name" in messages[3]
    assert "serves bank, library, not 'clinic'" in messages[4] and "seed must be an integer" in messages[5]
    assert "unknown options ['taks']" in messages[6]
    assert [r["data"]["code"] for r in replies[8:11]] == ["VALIDATION_ERROR"] * 3
    assert [r["data"]["observation"]["outcome"] for r in replies[11:]] == ["invalid", "invalid", "success"]
    assert replies[-1]["data"]["reward"] == 1.0


def test_a_refusal_task_scored_by_the_final_message(reference):
    async def run(address):
        async with client(address) as env:
            await env.reset()
            declined = await env.step({"final_message": "Sorry, I can't lend it: our policy does not allow it."})
            await env.reset()
            await env.step(BORROW)  # the forbidden loan: no decline makes up for it
            after_loan = await env.step({"final_message": "I cannot do that."})
            return declined, after_loan
    door = HttpDoor(tokens=(), max_sessions=2, idle_timeout=0)
    with _running(create_app("library", catalog=reference, task=REFUSE_LOAN, door=door)) as address:
        declined, after_loan = asyncio.run(run(address))
    assert (declined.reward, declined.done) == (1.0, True) and declined.observation.check["refusal"] is True
    assert (after_loan.reward, after_loan.done) == (0.0, True)


def test_the_session_cap_and_bad_servers(reference):
    door = HttpDoor(tokens=(TOKEN,), max_sessions=1, idle_timeout=0)

    async def run(address):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with client(address, token=TOKEN) as first:
            await first.reset()
            async with ws_connect(f"{address.replace('http', 'ws')}/ws", additional_headers=headers) as second:
                refused = json.loads(await second.recv())  # said before the server closes the connection
            assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
            assert (await first.step(BORROW)).observation.outcome == "success"  # the session inside the cap goes on
    with _running(create_app("library", catalog=reference, door=door)) as address:
        asyncio.run(run(address))
    with pytest.raises(CatalogError):
        create_app("library", catalog=reference, task="no-such-task", door=door)
    with pytest.raises(CatalogError):
        create_app("no-such-env", catalog=reference, door=door)
    with pytest.raises(ServingError):
        create_app([], catalog=reference, door=door)
