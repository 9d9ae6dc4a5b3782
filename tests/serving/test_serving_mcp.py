"""`cli.py serve` with the MCP SDK's own client, over stdio and over streamable HTTP (a real server process)."""

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[2]
BORROW = {"member_id": "M002", "book_id": "B010"}
TASK = "library-borrow-calvino"
TOKEN = "serving-test-token-0123456789"


def _serve_args(*args: str) -> list[str]:
    return [str(ROOT / "cli.py"), "--catalog", "/nonexistent-envforge-catalog", "serve", *args]


@asynccontextmanager
async def _stdio_session(*args: str):
    params = StdioServerParameters(command=sys.executable, args=_serve_args(*args), cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def _http_session(url: str):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving_http(command: list[str], log: Path) -> Iterator[str]:
    """`command` (a `cli.py ... serve --transport http` line without --port) in its own process, behind TOKEN.

    Yields its endpoint URL once it accepts connections; stops it at the end.
    """
    port = _free_port()
    with log.open("w") as stderr:
        process = subprocess.Popen([*command, "--port", str(port), "--token", TOKEN], cwd=ROOT, stderr=stderr, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """`serve --all --transport http` in its own process; yields its endpoint URL."""
    with serving_http([sys.executable, *_serve_args("--all", "--transport", "http")],
                      tmp_path_factory.mktemp("serve") / "stderr.txt") as url:
        yield url


def _observation(result):
    return json.loads(result.content[0].text)


def test_stdio_tools_state_errors_reset_and_prompt():
    async def run():
        async with _stdio_session("library", "--task", TASK) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert "reset" in tools and tools["borrow_book"].input_schema["required"] == ["member_id", "book_id"]
            assert tools["search_books"].annotations.read_only_hint is True
            assert set(tools["reset"].input_schema["properties"]) == {"state", "task"}

            first = await session.call_tool("borrow_book", BORROW)
            assert not first.is_error and _observation(first)["success"] is True
            meta = first.meta["envforge"]
            assert meta["outcome"] == "success" and meta["reward"] == 1.0 and meta["check"]["passed"] is True
            again = await session.call_tool("borrow_book", BORROW)  # the state changed: now a rule failure
            assert again.is_error and "on_loan" in _observation(again)["error"]
            verdict = _observation(await session.call_tool("check", {}))  # the harness's score, never listed
            assert verdict["passed"] is True and verdict["reward"] == 1.0 and "check" not in tools
            bad = await session.call_tool("borrow_book", {"member_id": "M002"})
            assert bad.is_error and bad.meta["envforge"]["outcome"] == "invalid"
            unknown = await session.call_tool("no_such_tool", {})
            assert unknown.is_error and "unknown tool" in unknown.content[0].text

            reset = await session.call_tool("reset", {})
            assert not reset.is_error and reset.content[0].text.startswith("Grace Hopper")
            assert not (await session.call_tool("borrow_book", BORROW)).is_error  # the loan is possible again
            wrong = await session.call_tool("reset", {"env": "bank"})
            assert wrong.is_error and "reset takes state, task" in wrong.content[0].text

            prompts = [p.name for p in (await session.list_prompts()).prompts]
            assert prompts[0] == "task" and TASK in prompts
            prompt = await session.get_prompt("task")
            assert prompt.messages[0].role == "user" and prompt.messages[0].content.text.startswith("Grace Hopper")

    anyio.run(run)


def test_http_sessions_are_isolated(http_server):
    async def run():
        async with _http_session(f"{http_server}?env=library") as one, _http_session(f"{http_server}?env=library") as two:
            assert not (await one.call_tool("borrow_book", BORROW)).is_error
            assert not (await two.call_tool("borrow_book", BORROW)).is_error  # its own copy: the book is still free
            assert (await one.call_tool("borrow_book", BORROW)).is_error
            loans = _observation(await two.call_tool("list_member_loans", {"member_id": "M002"}))
            assert len(loans["data"]) == 1

    anyio.run(run)


def test_http_many_concurrent_sessions_in_one_process(http_server):
    """Eight sessions open at once, each lends the same book: every one succeeds on its own state."""
    outcomes = []

    async def borrow(url):
        async with _http_session(url) as session:
            first = await session.call_tool("borrow_book", BORROW)
            second = await session.call_tool("borrow_book", BORROW)
            outcomes.append((first.is_error, second.is_error, first.meta["envforge"]["delta"] != []))

    async def run():
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(borrow, f"{http_server}?env=library&task={TASK}")

    anyio.run(run)
    assert outcomes == [(False, True, True)] * 8


def test_http_all_picks_env_per_session(http_server):
    async def run():
        async with _http_session(http_server) as session:
            assert [t.name for t in (await session.list_tools()).tools] == ["reset"]
            assert set((await session.list_tools()).tools[0].input_schema["properties"]["env"]["enum"]) >= \
                {"library", "bank", "clinic", "store"}
            early = await session.call_tool("borrow_book", BORROW)
            assert early.is_error and "no env chosen" in early.content[0].text
            started = await session.call_tool("reset", {"env": "store", "task": "store-cancel-order"})
            assert not started.is_error and started.meta["envforge"]["task"] == "store-cancel-order"
            names = [t.name for t in (await session.list_tools()).tools]
            assert "reset" in names and "checkout" in names and "borrow_book" not in names
            switched = await session.call_tool("reset", {"env": "library"})
            assert switched.meta["envforge"]["env_id"] == "library"
            assert not (await session.call_tool("borrow_book", BORROW)).is_error
            missing = await session.call_tool("reset", {"env": "nope"})
            assert missing.is_error and "unknown env" in missing.content[0].text
        async with _http_session(f"{http_server}?env=library&task=nope") as session:
            with pytest.raises(MCPError, match="no task 'nope'"):
                await session.list_tools()

    anyio.run(run)


def test_serve_bad_input_is_one_line():
    result = subprocess.run([sys.executable, *_serve_args("library", "--state", "nope")], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "has no state 'nope'" in result.stderr


def test_stdio_untrusted_env_is_served_from_the_sandbox(tmp_path):
    """A catalog env that is not a shipped reference env: its calls and checks run in a sandbox worker."""
    import shutil

    from catalog.store import REFERENCE_DIR

    shutil.copytree(REFERENCE_DIR / "store", tmp_path / "shop")  # another id: reference ids name the shipped envs
    manifest = json.loads((tmp_path / "shop" / "env.json").read_text())
    (tmp_path / "shop" / "env.json").write_text(json.dumps({**manifest, "id": "shop"}))

    async def run():
        params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), args=[
            str(ROOT / "cli.py"), "--catalog", str(tmp_path), "serve", "shop", "--task", "store-cancel-order"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            started = await session.call_tool("reset", {})
            assert started.meta["envforge"]["sandboxed"] is True
            assert "cancel_order" in [t.name for t in (await session.list_tools()).tools]
            prompt = await session.get_prompt("task")
            task = next(line for line in (REFERENCE_DIR / "store" / "tasks.jsonl").read_text().splitlines()
                        if '"store-cancel-order"' in line)
            solution = json.loads(task)["solution"]
            results = [await session.call_tool(a["name"], a["arguments"]) for a in solution]
            assert [r.is_error for r in results] == [False] * len(solution)
            assert results[-1].meta["envforge"]["reward"] == 1.0 and prompt.messages[0].content.text
            again = await session.call_tool(solution[-1]["name"], solution[-1]["arguments"])
            assert again.is_error and again.meta["envforge"]["outcome"] == "failure"

    anyio.run(run)
