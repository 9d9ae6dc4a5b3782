"""State on the sessionless MCP protocol (2026-07-28), with the clients that speak it by default.

The SDK's high-level `mcp.Client`, fastmcp's client and openai-agents' MCP servers negotiate the
sessionless protocol: no connection outlives a request. Over stdio the server process is the one
client's state; over HTTP each episode lives under the handle `reset` returns, bound to the caller's
token. The test that matters everywhere: borrowing the same book twice fails the second time (state
kept) or the call gets a clear error, never a silent fresh env.
"""

import json
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from fastmcp import Client as FastClient
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from serving.episodes import EpisodeLimit, Episodes, UnknownEpisode
from tests.serving.test_serving_door import TOKEN_A, TOKEN_B, _server, shop  # noqa: F401 (a fixture)
from tests.sockets import descendants

ROOT = Path(__file__).resolve().parents[2]
BORROW = {"member_id": "M002", "book_id": "B010"}
TASK = "library-borrow-calvino"
SERVE = [str(ROOT / "cli.py"), "--catalog", "/nonexistent-envforge-catalog", "serve", "library", "--task", TASK]


@pytest.fixture(scope="module")
def http_url(tmp_path_factory):
    """`serve --all --transport http`, two clients' tokens."""
    with _server(tmp_path_factory.mktemp("sessionless"), "--all", "--token", TOKEN_A, "--token", TOKEN_B) as (_, url, _):
        yield url


def _text(result) -> str:
    return result.content[0].text


def _sdk_http(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(url, http_client=http))


# --- stdio: the server process is the client's state --------------------------------------------
def test_sdk_client_over_stdio_keeps_state():
    async def run():
        async with Client(StdioServerParameters(command=sys.executable, args=SERVE, cwd=str(ROOT))) as client:
            assert client.protocol_version == "2026-07-28"
            first = await client.call_tool("borrow_book", BORROW)
            again = await client.call_tool("borrow_book", BORROW)
            assert not first.is_error and again.is_error and "on_loan" in _text(again)
            verdict = json.loads(_text(await client.call_tool("check", {})))
            assert verdict["passed"] is True and verdict["reward"] == 1.0 and verdict["step"] == 2
            await client.call_tool("reset", {})
            assert not (await client.call_tool("borrow_book", BORROW)).is_error  # reset started again

    anyio.run(run)


def test_fastmcp_client_over_stdio_keeps_state():
    async def run():
        async with FastClient(StdioTransport(command=sys.executable, args=SERVE, cwd=str(ROOT))) as client:
            first = await client.call_tool("borrow_book", BORROW, raise_on_error=False)
            again = await client.call_tool("borrow_book", BORROW, raise_on_error=False)
            assert not first.is_error and again.is_error and "on_loan" in _text(again)

    anyio.run(run)


def test_openai_agents_stdio_keeps_state_with_reset_hidden_and_check_for_the_harness():
    """The model sees neither reset nor check (--hide-reset; check is never listed); the harness calls both."""
    async def run():
        params = {"command": sys.executable, "args": [*SERVE, "--hide-reset"], "cwd": str(ROOT)}
        async with MCPServerStdio(params=params, client_session_timeout_seconds=30) as server:
            names = [t.name for t in await server.list_tools()]
            assert "borrow_book" in names and "reset" not in names and "check" not in names
            assert not (await server.call_tool("borrow_book", BORROW)).is_error
            again = await server.call_tool("borrow_book", BORROW)
            assert again.is_error and "on_loan" in _text(again)
            started = await server.call_tool("reset", {})
            assert not started.is_error and _text(started).startswith("Grace Hopper")
            verdict = json.loads(_text(await server.call_tool("check", {"final_message": "Done."})))
            assert verdict["passed"] is False and verdict["step"] == 0  # reset undid the loan
            bad = await server.call_tool("check", {"final_message": 3})
            assert bad.is_error and "check takes final_message" in _text(bad)

    anyio.run(run)


# --- HTTP: episodes by handle, bound to the token -------------------------------------------------
def test_sdk_client_over_http_keeps_state_by_episode_and_refuses_without_one(http_url):
    async def run():
        async with _sdk_http(f"{http_url}?env=library&task={TASK}", TOKEN_A) as client:
            assert client.protocol_version == "2026-07-28"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "episode" in tools["borrow_book"].input_schema["required"]
            assert "episode" in tools["reset"].input_schema["properties"]
            refused = await client.call_tool("borrow_book", BORROW)  # no handle: a clear error, no fresh env
            assert refused.is_error and "call reset first" in _text(refused)
            started = await client.call_tool("reset", {})
            episode = started.meta["envforge"]["episode"]
            assert f"episode {episode}" in _text(started)  # the model sees the handle it must pass on
            assert not (await client.call_tool("borrow_book", {**BORROW, "episode": episode})).is_error
            again = await client.call_tool("borrow_book", {**BORROW, "episode": episode})
            assert again.is_error and "on_loan" in _text(again)
            verdict = json.loads(_text(await client.call_tool("check", {"episode": episode})))
            assert verdict["passed"] is True and verdict["task"] == TASK
            other = (await client.call_tool("reset", {})).meta["envforge"]["episode"]
            assert other != episode and not (await client.call_tool("borrow_book", {**BORROW, "episode": other})).is_error

    anyio.run(run)


def test_fastmcp_and_openai_agents_over_http_carry_the_episode_in_the_url(http_url):
    """A harness starts the episode, then points its client at /mcp?episode=: the model passes no handle."""
    async def run():
        async with _sdk_http(http_url, TOKEN_A) as harness:
            started = await harness.call_tool("reset", {"env": "library", "task": TASK})
            episode = started.meta["envforge"]["episode"]
        url = f"{http_url}?episode={episode}"
        async with FastClient(StreamableHttpTransport(url, auth=TOKEN_A)) as client:
            tools = {t.name: t for t in await client.list_tools()}
            assert "episode" not in tools["borrow_book"].input_schema["properties"]
            assert not (await client.call_tool("borrow_book", BORROW, raise_on_error=False)).is_error
        params = {"url": url, "headers": {"Authorization": f"Bearer {TOKEN_A}"}, "timeout": 30}
        async with MCPServerStreamableHttp(params=params, client_session_timeout_seconds=30) as server:
            again = await server.call_tool("borrow_book", BORROW)  # another client, the same episode
            assert again.is_error and "on_loan" in _text(again)
            verdict = json.loads(_text(await server.call_tool("check", {})))
            assert verdict["passed"] is True and verdict["env_id"] == "library"

    anyio.run(run)


def test_http_episode_of_another_token_or_unknown_is_refused(http_url):
    async def run():
        async with _sdk_http(f"{http_url}?env=library", TOKEN_A) as alice, \
                _sdk_http(f"{http_url}?env=library", TOKEN_B) as bob:
            episode = (await alice.call_tool("reset", {})).meta["envforge"]["episode"]
            for hostile in (episode, episode[:-1] + ("A" if episode[-1] != "A" else "B"), "", "x" * 10_000, 7, None):
                stolen = await bob.call_tool("borrow_book", {**BORROW, "episode": hostile})
                assert stolen.is_error, hostile
                assert "unknown episode" in _text(stolen) or "call reset first" in _text(stolen)
            assert not (await alice.call_tool("borrow_book", {**BORROW, "episode": episode})).is_error  # untouched
        async with _sdk_http(f"{http_url}?episode={episode}", TOKEN_B) as bob:
            with pytest.raises(MCPError, match="unknown episode"):
                await bob.list_tools()
            assert "unknown episode" in _text(await bob.call_tool("borrow_book", BORROW))

    anyio.run(run)


def test_http_episodes_are_capped_and_an_idle_one_releases_its_worker(tmp_path, shop):  # noqa: F811
    """--max-sessions 1 --idle-timeout 2, a sandboxed env: the idle episode's worker goes away unasked."""
    with _server(tmp_path, "shop", "--token", TOKEN_A, "--idle-timeout", "2", "--max-sessions", "1",
                 catalog=str(shop)) as (process, url, _):
        before = descendants(process.pid)

        async def run():
            async with _sdk_http(url, TOKEN_A) as client:
                started = await client.call_tool("reset", {})
                assert started.meta["envforge"]["sandboxed"] is True and descendants(process.pid) - before
                full = await client.call_tool("reset", {})
                assert full.is_error and "limit of 1 open episodes" in _text(full)
                deadline = time.monotonic() + 30
                while descendants(process.pid) - before:  # no request needed: the server expires it
                    assert time.monotonic() < deadline, "the idle episode's worker was not released"
                    await anyio.sleep(0.2)
                late = await client.call_tool("get_product", {"product_id": "P001", "episode": started.meta["envforge"]["episode"]})
                assert late.is_error and "unknown episode" in _text(late)
                assert not (await client.call_tool("reset", {})).is_error  # the slot is free again

        anyio.run(run)


# --- the registry: cap and expiry ----------------------------------------------------------------
def test_episodes_are_capped_expired_and_closed():
    now, closed = [0.0], []
    episodes: Episodes[str] = Episodes(2, 10.0, close=closed.append, busy=lambda v: v == "busy",
                                       clock=lambda: now[0])
    a, busy = episodes.add("a", "token-0"), episodes.add("busy", "token-0")
    assert len({a, busy}) == 2 and len(a) >= 22
    with pytest.raises(EpisodeLimit, match="limit of 2 open episodes"):
        episodes.add("c", "token-0")
    with pytest.raises(UnknownEpisode):
        episodes.get(a, "token-1")  # another token's
    now[0] = 11.0
    c = episodes.add("c", "token-0")  # at the cap, the idle one is closed; the one mid-call is kept
    assert closed == ["a"] and episodes.get(busy, "token-0") == "busy" and episodes.get(c, "token-0") == "c"
    with pytest.raises(UnknownEpisode):
        episodes.get(a, "token-0")
    now[0] = 22.0
    episodes.touch(c)  # a call on c ended just now: c is not idle
    assert episodes.sweep(force=True) == [] and episodes.get(c, "token-0") == "c"
    episodes.close_all()
    assert sorted(closed) == ["a", "busy", "c"] and len(episodes) == 0
