"""The door of `serve --transport http`: bearer tokens, sessions bound to their token, the session cap,
the idle timeout, loopback-only listening, and bad `serve` input as one line.

Real servers (`cli.py serve` in their own process, on a port the OS picks), driven with the MCP
SDK's own client and, for what a client library would not send, raw httpx.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import cli
from tests.sockets import descendants, listening, off_loopback

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_ONLY = "/nonexistent-envforge-catalog"
TOKEN_A = "alpha-" + "a" * 26
TOKEN_B = "bravo-" + "b" * 26
BORROW = {"member_id": "M002", "book_id": "B010"}
PROTOCOL = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


@contextmanager
def _server(tmp_path: Path, *args: str, catalog: str = REFERENCE_ONLY, env: dict[str, str] | None = None):
    """`cli.py serve ... --transport http --port 0` in its own process; yields (process, URL, stderr path)."""
    log = tmp_path / f"serve-{time.monotonic_ns()}.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "--catalog", catalog, "serve", *args,
                                    "--transport", "http", "--port", "0"], cwd=ROOT, stderr=stderr, text=True,
                                   env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 60
        while not (match := re.search(r"at (http://\S+/mcp)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield process, match.group(1), log
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    """One server, two clients' tokens, at most two sessions."""
    with _server(tmp_path_factory.mktemp("door"), "library", "--token", TOKEN_A, "--token", TOKEN_B,
                 "--max-sessions", "2") as (process, url, _):
        yield process, url


@asynccontextmanager
async def _session(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _rpc(http: httpx.Client, url: str, token: str | None, method: str, params: dict | None = None,
         session_id: str | None = None, request_id: int | None = 2) -> httpx.Response:
    """One raw JSON-RPC POST (a request, or a notification without `request_id`)."""
    headers = {**HEADERS, "mcp-protocol-version": PROTOCOL}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if session_id:
        headers["mcp-session-id"] = session_id
    body = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {}),
            **({"id": request_id} if request_id is not None else {})}
    return http.post(url, json=body, headers=headers)


def _result(response: httpx.Response) -> dict:
    """The JSON-RPC message of a response (JSON, or the one SSE event of a POST's stream)."""
    text = response.text
    data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else text)


def _open_raw(http: httpx.Client, url: str, token: str | None) -> str:
    """A raw session (initialize, then initialized); returns its id."""
    response = _rpc(http, url, token, "initialize", INITIALIZE["params"], request_id=1)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    assert _rpc(http, url, token, "notifications/initialized", session_id=session_id,
                request_id=None).status_code == 202
    return session_id


def _leaves(error: BaseException) -> list[BaseException]:
    nested = getattr(error, "exceptions", None)
    return [leaf for e in nested for leaf in _leaves(e)] if nested else [error]


def _observation(response: httpx.Response) -> dict:
    return json.loads(_result(response)["result"]["content"][0]["text"])


def test_http_without_the_token_is_refused_before_any_session(door):
    _, url = door
    with httpx.Client(timeout=30) as http:
        for headers in ({}, {"Authorization": "Bearer " + "x" * 32}, {"Authorization": f"Basic {TOKEN_A}"},
                        {"Authorization": f"Bearer {TOKEN_A}x"}):
            response = http.post(url, json=INITIALIZE, headers={**HEADERS, **headers})
            assert response.status_code == 401, response.text
            assert response.json() == {"error": "invalid_token", "error_description": "Authentication required"}
            assert "mcp-session-id" not in response.headers
        # none of those opened a session: both slots of --max-sessions 2 are still free
        first, second = _open_raw(http, url, TOKEN_A), _open_raw(http, url, TOKEN_B)
        for token, session_id in ((TOKEN_A, first), (TOKEN_B, second)):
            assert http.delete(url, headers={**HEADERS, "Authorization": f"Bearer {token}",
                                             "mcp-session-id": session_id}).status_code == 200


def test_http_with_the_token_lists_tools_and_steps(door):
    _, url = door

    async def run():
        async with _session(url, TOKEN_A) as session:
            assert "borrow_book" in [t.name for t in (await session.list_tools()).tools]
            step = await session.call_tool("borrow_book", BORROW)
            assert not step.is_error and step.meta["envforge"]["outcome"] == "success"

    anyio.run(run)


def test_a_session_answers_only_the_token_that_created_it(door):
    """Client B holds client A's session id (leaked, guessed): it can neither drive nor end that session."""
    _, url = door
    with httpx.Client(timeout=30) as http:
        session_id = _open_raw(http, url, TOKEN_A)
        borrowed = _rpc(http, url, TOKEN_A, "tools/call", {"name": "borrow_book", "arguments": BORROW},
                        session_id=session_id)
        assert _observation(borrowed)["success"] is True
        for attempt in ({"name": "return_book", "arguments": BORROW}, {"name": "reset", "arguments": {}}):
            refused = _rpc(http, url, TOKEN_B, "tools/call", attempt, session_id=session_id)
            assert refused.status_code == 404 and refused.json()["error"]["message"] == "Session not found"
        assert http.delete(url, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_B}",
                                         "mcp-session-id": session_id}).status_code == 404
        # A's session is untouched: exactly the one loan A made, as in a fresh session after one borrow
        loans = _rpc(http, url, TOKEN_A, "tools/call", {"name": "list_member_loans",
                                                        "arguments": {"member_id": "M002"}}, session_id=session_id)
        assert [loan["book_id"] for loan in _observation(loans)["data"]] == ["B010"]
        assert http.delete(url, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_A}",
                                         "mcp-session-id": session_id}).status_code == 200


def test_max_sessions_holds_and_a_closed_session_frees_its_slot(door):
    _, url = door

    async def run():
        async with _session(url, TOKEN_A) as one:
            async with _session(url, TOKEN_B) as two:
                with httpx.Client(timeout=30) as http:
                    third = http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_A}"})
                assert third.status_code == 503 and "mcp-session-id" not in third.headers
                assert third.json()["error"]["message"] == "Too many open sessions"
                with pytest.raises(BaseExceptionGroup) as refused:  # the SDK client: an MCPError in its task groups
                    async with _session(url, TOKEN_A):
                        pass
                assert [str(e) for e in _leaves(refused.value)] == ["Too many open sessions"]
                assert isinstance(_leaves(refused.value)[0], MCPError)
                assert not (await one.call_tool("borrow_book", BORROW)).is_error  # the open ones still work
                assert not (await two.call_tool("borrow_book", BORROW)).is_error
            async with _session(url, TOKEN_B) as again:  # `two` ended (DELETE): its slot is free
                assert not (await again.call_tool("borrow_book", BORROW)).is_error
            assert (await one.call_tool("borrow_book", BORROW)).is_error  # one's own state: already on loan

    anyio.run(run)


def test_http_server_listens_on_loopback_only(door):
    process, url = door
    sockets = listening(descendants(process.pid))
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert ("127.0.0.1", port) in sockets and off_loopback(sockets) == []


@pytest.fixture
def shop(tmp_path):
    """A catalog with one env that is not a shipped reference env: it is served from a sandbox worker."""
    from catalog.store import REFERENCE_DIR

    shutil.copytree(REFERENCE_DIR / "store", tmp_path / "shop")
    manifest = json.loads((tmp_path / "shop" / "env.json").read_text())
    (tmp_path / "shop" / "env.json").write_text(json.dumps({**manifest, "id": "shop"}))
    return tmp_path


def test_idle_session_is_closed_its_worker_released_and_its_slot_freed(tmp_path, shop):
    """--no-auth on loopback, --idle-timeout 1, --max-sessions 1: an idle session's sandbox worker goes away."""
    with _server(tmp_path, "shop", "--no-auth", "--idle-timeout", "1", "--max-sessions", "1",
                 catalog=str(shop)) as (process, url, log), httpx.Client(timeout=60) as http:
        assert "no auth" in log.read_text()
        before = descendants(process.pid)
        session_id = _open_raw(http, url, None)
        started = _rpc(http, url, None, "tools/call", {"name": "reset", "arguments": {}}, session_id=session_id)
        assert _result(started)["result"]["_meta"]["envforge"]["sandboxed"] is True
        assert descendants(process.pid) - before  # the session's sandbox worker
        deadline = time.monotonic() + 30
        while descendants(process.pid) - before:
            assert time.monotonic() < deadline, "the idle session's worker was not released"
            time.sleep(0.2)
        late = _rpc(http, url, None, "tools/call", {"name": "reset", "arguments": {}}, session_id=session_id)
        assert late.status_code == 404 and late.json()["error"]["message"] == "Session not found"
        _open_raw(http, url, None)  # the cap is 1: the closed session gave its slot back


def test_generated_token_is_printed_once_and_works(tmp_path):
    with _server(tmp_path, "library", env={"ENVFORGE_SERVE_TOKEN": ""}) as (_, url, log):
        lines = log.read_text().splitlines()
        token = re.search(r"Bearer (\S+)'", lines[1]).group(1)
        assert len(lines) == 2 and lines[0].startswith("envforge: serving library") and len(token) >= 40

        async def run():
            async with _session(url, token) as session:
                assert not (await session.call_tool("borrow_book", BORROW)).is_error

        anyio.run(run)


def test_token_from_the_environment(tmp_path):
    with _server(tmp_path, "library", env={"ENVFORGE_SERVE_TOKEN": f"{TOKEN_A},{TOKEN_B}"}) as (_, url, log):
        assert "2 configured" in log.read_text() and TOKEN_A not in log.read_text()
        with httpx.Client(timeout=30) as http:
            assert http.post(url, json=INITIALIZE, headers=HEADERS).status_code == 401
            session_id = _open_raw(http, url, TOKEN_B)
            http.delete(url, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_B}", "mcp-session-id": session_id})


@pytest.mark.parametrize("args, message", [
    (["--port", "99999"], "--port must be 0 to 65535, got 99999"),
    (["--host", "no-such-host.invalid"], "cannot listen on 'no-such-host.invalid'"),
    (["--host", "10.255.255.1"], "cannot listen on 10.255.255.1:"),
    (["--no-auth", "--host", "0.0.0.0"], "--no-auth is allowed only on a loopback host"),
    (["--no-auth", "--host", "::"], "--no-auth is allowed only on a loopback host"),
    (["--token", "short"], "a serve token must be 16 to 512 characters"),
    (["--token", TOKEN_A, "--token", TOKEN_A], "each serve token must be different"),
    (["--token", TOKEN_A, "--no-auth"], "--no-auth and --token exclude each other"),
    (["--idle-timeout", "inf"], "--idle-timeout must be 0 (off) or a number of seconds"),
    (["--max-sessions", "0"], "--max-sessions: must be at least 1"),
])
def test_serve_bad_input_is_one_line_before_serving(args, message, capsys):
    assert cli.main(["--catalog", REFERENCE_ONLY, "serve", "library", "--transport", "http", *args]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("envforge: ") and message in err and "serving" not in err


@pytest.mark.parametrize("args, message", [
    (["nosuch"], "Unknown env 'nosuch'"),
    (["../library"], "../library"),
    (["library", "--task", "../../etc/passwd"], "has no task"),
    (["library", "--state", "nosuch"], "has no state"),
    (["library", "--hide-reset"], "--hide-reset: only with the MCP transports"),
])
def test_serve_openenv_bad_input_is_one_line_before_serving(args, message, capsys):
    assert cli.main(["--catalog", REFERENCE_ONLY, "serve", *args, "--transport", "openenv", "--token", TOKEN_A]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("envforge: ") and message in err and "serving" not in err
    assert "openenv" not in sys.modules  # refused before the library is loaded


def test_http_flags_with_stdio_are_bad_input(capsys):
    assert cli.main(["--catalog", REFERENCE_ONLY, "serve", "library", "--token", TOKEN_A, "--idle-timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert err == ("envforge: --token, --idle-timeout: only with --transport http (stdio has one client, the "
                   "process that started the server)\n")


def test_serve_on_a_port_in_use_is_one_line_exit_1(door):
    """The real process: a busy port is one line and exit 1, and "serving" is never printed."""
    _, url = door
    port = url.rsplit(":", 1)[1].split("/")[0]
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "--catalog", REFERENCE_ONLY, "serve", "library",
                             "--transport", "http", "--port", port], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1 and result.stderr == f"envforge: cannot listen on 127.0.0.1:{port}: " \
                                                        "Address already in use\n"


PYTHON_API_SERVER = f"""
import sys
from catalog.store import Catalog
from serving.http_auth import HttpDoor
from serving.mcp_server import ServeConfig, serve
door = HttpDoor(tokens=({TOKEN_A!r},), max_sessions=1)
serve(ServeConfig(Catalog(root={REFERENCE_ONLY!r}), "library", door=door), "http", port=0,
      ready=lambda url: print("envforge: serving at " + url, file=sys.stderr, flush=True))
"""


def test_python_api_serves_behind_the_door(tmp_path):
    """`serve()` from Python (its own process): the token of its config is required, the cap holds."""
    log = tmp_path / "api.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-c", PYTHON_API_SERVER], cwd=ROOT, stderr=stderr,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not (match := re.search(r"at (http://\S+/mcp)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        url = match.group(1)
        with httpx.Client(timeout=30) as http:
            assert http.post(url, json=INITIALIZE, headers=HEADERS).status_code == 401
            assert http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_B}"}
                             ).status_code == 401
            session_id = _open_raw(http, url, TOKEN_A)
            assert http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {TOKEN_A}"}
                             ).status_code == 503
            step = _rpc(http, url, TOKEN_A, "tools/call", {"name": "borrow_book", "arguments": BORROW},
                        session_id=session_id)
            assert _observation(step)["success"] is True
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_python_api_door_is_checked_before_listening(reference):
    from serving.http_auth import DoorError, HttpDoor
    from serving.listen import ListenError
    from serving.mcp_server import ServeConfig, serve

    default = ServeConfig(reference, "library")
    assert len(default.door.tokens) == 1 and default.door.max_sessions >= 1 and default.door.idle_timeout == 900
    with pytest.raises(DoorError, match="--no-auth is allowed only on a loopback host"):
        serve(ServeConfig(reference, "library", door=HttpDoor(tokens=())), "http", host="0.0.0.0", port=0)
    with pytest.raises(ListenError, match="--port must be 0 to 65535"):
        serve(default, "http", port=70000)
