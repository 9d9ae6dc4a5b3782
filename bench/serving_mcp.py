"""MCP serving benchmark: many concurrent MCP sessions against one `serve --all` process, beside the SDK's floor.

    python bench/serving_mcp.py [--sessions 256] [--steps 10] [--rounds 1] [--json]

Starts `cli.py serve --all --transport http` (one server process, with a bearer token and
--max-sessions set to --sessions), opens --sessions streamable-HTTP sessions with the SDK's own
client (spread over the four reference envs, each on one of its env's tasks, chosen with the endpoint's `?env=&task=`), keeps them all open, then has every
session call `reset` and --steps tools concurrently (its task's solution repeated). Latencies are
client-side round trips (JSON-RPC over HTTP, both ends in Python on the same 2 cores), so they
measure the whole path, not the env. Prints sessions served, the server's peak RSS, reset and
step latency p50/p99 and steps per second, and side by side the in-process gym step p50 of the
same calls (bench/serving.py's setting) for the protocol's share.

The floor: the same client load, in the same run, against a bare MCP SDK server (the low-level
`Server`, streamable HTTP with the same JSON responses, its one tool echoing its arguments, no
auth) started the same way in its own process. `calls_per_s` (reset and tool calls per second, serve --all) over
`floor_calls_per_s` is what envforge adds to the SDK (`floor_ratio`, the floor's rate over ours); the client runs on
the same cores, so the server's CPU per call (`server_cpu_ms_per_call`, over the floor's:
`server_cpu_ratio`) is the steadier figure. `--rounds N` alternates the two N times and reports
each side's median run.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog.store import Catalog  # noqa: E402
from serving import make  # noqa: E402
from serving.mcp_server import KEEP_ALIVE_S  # noqa: E402

ENVS = ("library", "bank", "clinic", "store")
CATALOG = "/nonexistent-envforge-catalog"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat, clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def echo_server(port: int) -> None:
    """The floor: a bare SDK server whose one tool echoes its arguments (run as this script's `--echo-server`)."""
    import mcp_types as types
    import uvicorn
    from mcp.server.lowlevel import Server

    tool = types.Tool(name="echo", description="Echo the arguments.", input_schema={"type": "object"})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(params.arguments))])

    server: Server[Any] = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(max_sessions=100_000, session_idle_timeout=None, json_response=os.environ.get("JR") == "1")
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                  timeout_keep_alive=KEEP_ALIVE_S)).run()


def episodes(sessions: int, steps: int | None) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(env, task, calls) per session: the task's solution repeated to `steps` calls (None: the solution once)."""
    catalog = Catalog(root=CATALOG)
    plan = []
    for number in range(sessions):
        env_id = ENVS[number % len(ENVS)]
        tasks = catalog.get(env_id).tasks()
        task = tasks[(number // len(ENVS)) % len(tasks)]
        solution = [a.model_dump() for a in task.solution or []]
        calls = solution if steps is None else [solution[i % len(solution)] for i in range(steps)]
        plan.append((env_id, task.id, calls))
    return plan


async def drive(url: str, token: str, plan: list[tuple[str, str, list[dict[str, Any]]]],
                echo: bool = False) -> dict[str, Any]:
    """Open every session, then run each one's reset and calls; with `echo`, every call is the floor's `echo`."""
    resets: list[float] = []
    step_times: list[float] = []
    opened = anyio.Event()
    ready = 0
    served = 0
    timeout = httpx2.Timeout(60.0, read=300.0)
    limits = httpx2.Limits(max_connections=len(plan) * 2 + 16, max_keepalive_connections=len(plan) * 2 + 16)

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=timeout, limits=limits, headers=headers) as http:
        async def session(env_id: str, task_id: str, calls: list[dict[str, Any]]) -> None:
            nonlocal ready, served
            async with streamable_http_client(f"{url}?env={env_id}&task={task_id}", http_client=http) as (read, write), \
                    ClientSession(read, write) as client:
                await client.initialize()
                ready += 1
                if ready == len(plan):
                    opened.set()
                await opened.wait()  # every session is open before any episode starts
                started = time.perf_counter()
                await client.call_tool("echo" if echo else "reset", {})
                resets.append(time.perf_counter() - started)
                for call in calls:
                    started = time.perf_counter()
                    await client.call_tool("echo" if echo else call["name"], call["arguments"])
                    step_times.append(time.perf_counter() - started)
                served += 1

        wall = 0.0
        async with anyio.create_task_group() as group:
            for env_id, task_id, calls in plan:
                group.start_soon(session, env_id, task_id, calls)
            await opened.wait()
            wall = time.perf_counter()
        wall = time.perf_counter() - wall
    ms = 1000.0
    return {"sessions": served, "reset_p50_ms": round(statistics.median(resets) * ms, 3),
            "step_p50_ms": round(statistics.median(step_times) * ms, 3),
            "step_p99_ms": round(percentile(step_times, 0.99) * ms, 3),
            "steps_per_s": round(len(step_times) / wall, 1),
            "calls_per_s": round((len(step_times) + len(resets)) / wall, 1)}


def in_process_step_p50(plan: list[tuple[str, str, list[dict[str, Any]]]]) -> float:
    """The same calls through the gym API in this process (no protocol), for comparison."""
    catalog = Catalog(root=CATALOG)
    times = []
    for env_id, task_id, calls in plan[:64]:
        env = make(env_id, task=task_id, catalog=catalog, terminate_on_success=False)
        env.reset()
        for call in calls:
            started = time.perf_counter()
            env.step(call)
            times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000.0, 3)


def started(server: subprocess.Popen[bytes], port: int, seconds: float = 60) -> None:
    """Wait until the server accepts connections (SystemExit if it dies or takes over `seconds`)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start") from None
            time.sleep(0.1)


def run_against(command: list[str], port: int, plan: list[tuple[str, str, list[dict[str, Any]]]], *, token: str,
                echo: bool = False) -> dict[str, Any]:
    """Start one server process, drive the plan against it, and stop it; the result has its peak RSS."""
    server = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL,
                              env={**os.environ, "ENVFORGE_SERVE_TOKEN": token})
    try:
        started(server, port)
        cpu = cpu_seconds(server.pid)
        result = anyio.run(drive, f"http://127.0.0.1:{port}/mcp", token, plan, echo)
        calls = sum(1 + len(calls) for _env, _task, calls in plan)
        result["server_cpu_ms_per_call"] = round((cpu_seconds(server.pid) - cpu) * 1000.0 / calls, 3)
        result["server_rss_mb"] = round(server_peak_rss_mb(server.pid), 1)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return result


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median calls/s (all its figures from that one run)."""
    return sorted(runs, key=lambda run: run["calls_per_s"])[len(runs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1, help="alternate serve --all and the floor this many times; "
                        "report each side's median run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--echo-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server(args.echo_server)
        return
    plan = episodes(args.sessions, args.steps)
    token = secrets.token_urlsafe(32)  # passed in the environment, not on the command line other users can read
    ours: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    for _ in range(args.rounds):  # alternated, so a busy moment of the machine falls on both sides
        port = free_port()
        ours.append(run_against([sys.executable, str(ROOT / "cli.py"), "--catalog", CATALOG, "serve", "--all",
                                 "--transport", "http", "--port", str(port), "--max-sessions", str(args.sessions)],
                                port, plan, token=token))
        port = free_port()
        floors.append(run_against([sys.executable, str(Path(__file__).resolve()), "--echo-server", str(port)], port,
                                  plan, token=token, echo=True))
    result = median_run(ours)
    floor = median_run(floors)
    result["rounds"] = args.rounds
    result["floor_calls_per_s"] = floor["calls_per_s"]
    result["floor_step_p50_ms"] = floor["step_p50_ms"]
    result["floor_server_cpu_ms_per_call"] = floor["server_cpu_ms_per_call"]
    result["floor_ratio"] = round(floor["calls_per_s"] / result["calls_per_s"], 2)
    result["server_cpu_ratio"] = round(result["server_cpu_ms_per_call"] / floor["server_cpu_ms_per_call"], 2)
    result["in_process_step_p50_ms"] = in_process_step_p50(plan)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['sessions']} MCP sessions open at once in one server process (peak RSS "
          f"{result['server_rss_mb']} MiB); reset p50 {result['reset_p50_ms']} ms")
    print(f"tool call round trip p50 {result['step_p50_ms']} ms, p99 {result['step_p99_ms']} ms, "
          f"{result['calls_per_s']} calls/s; the same calls in-process: p50 {result['in_process_step_p50_ms']} ms")
    print(f"floor (bare SDK echo server, same load): {result['floor_calls_per_s']} calls/s, p50 "
          f"{result['floor_step_p50_ms']} ms; the floor is {result['floor_ratio']}x serve --all")
    print(f"server CPU per call (sessions opened, calls and teardown): {result['server_cpu_ms_per_call']} ms, "
          f"the floor's {result['floor_server_cpu_ms_per_call']} ms ({result['server_cpu_ratio']}x)")


if __name__ == "__main__":
    main()
