"""OpenEnv serving benchmark: many concurrent OpenEnv sessions against one `serve --all --transport openenv`.

    python bench/serving_openenv.py [--sessions 256] [--steps 10] [--no-mcp] [--json]

Starts `cli.py serve --all --transport openenv` (one server process, loopback, --max-sessions set
to --sessions), opens --sessions WebSockets with OpenEnv's own `GenericEnvClient` (spread over
the four reference envs, each reset on one of its env's tasks), keeps them all open, then has
every session take --steps tool calls concurrently (its task's solution in order; when a call
solves the task the episode is done and the session resets, as an RL trainer's loop does).
Latencies are client-side round trips (both ends in Python on the same cores).

Side by side in the same run: the same episodes through the gym API in this process, one after
another (the env's own cost, no protocol); the floor, OpenEnv's own `HTTPEnvServer` serving a bare env whose
step only echoes (same library, transport and client; `ratio` is the floor's steps/s over
envforge's), and, unless --no-mcp, bench/serving_mcp.py with the same sessions and steps (the MCP
SDK path of `serve --transport http`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serving_mcp import CATALOG, episodes, free_port, percentile, started  # noqa: E402  (bench/, this script's folder)
from serving_mcp import server_peak_rss_mb as peak_rss_mb  # noqa: E402

from catalog.store import Catalog  # noqa: E402


def echo_server(port: int, sessions: int) -> None:
    """The floor: OpenEnv's HTTPEnvServer with an env whose step only echoes (run in its own process)."""
    import uvicorn
    from fastapi import FastAPI
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, ServerMode, State
    from pydantic import JsonValue

    class Call(Action):
        name: str
        arguments: dict[str, JsonValue] = {}

    class Echo(Observation):
        result: JsonValue = None

    class EchoEnv(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Echo:
            return Echo(result="ready")

        def step(self, action: Call, timeout_s: float | None = None, **kwargs: Any) -> Echo:
            return Echo(result=action.arguments, reward=0.0)

        @property
        def state(self) -> State:
            return State()

    app = FastAPI()
    HTTPEnvServer(EchoEnv, Call, Echo, concurrency_config=ConcurrencyConfig(max_concurrent_envs=sessions)) \
        .register_routes(app, mode=ServerMode.PRODUCTION)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def drive(url: str, plan: list[tuple[str, str, list[dict[str, Any]]]], steps: int,
                floor: bool) -> dict[str, Any]:
    from openenv.core import GenericEnvClient

    resets: list[float] = []
    step_times: list[float] = []
    clients = [GenericEnvClient(url, message_timeout_s=300) for _ in plan]
    await asyncio.gather(*(c.connect() for c in clients))  # every session open before any episode starts

    async def session(env: Any, env_id: str, task_id: str, solution: list[dict[str, Any]]) -> None:
        options = {} if floor else {"env_id": env_id, "task": task_id}
        done, position = True, 0
        for _ in range(steps):
            if done:
                started = time.perf_counter()
                await env.reset(**options)
                resets.append(time.perf_counter() - started)
                position = 0
            started = time.perf_counter()
            result = await env.step(solution[position % len(solution)])
            step_times.append(time.perf_counter() - started)
            done, position = result.done, position + 1

    started = time.perf_counter()
    await asyncio.gather(*(session(c, *p) for c, p in zip(clients, plan, strict=True)))
    wall = time.perf_counter() - started
    await asyncio.gather(*(c.close() for c in clients))
    ms = 1000.0
    return {"sessions": len(plan), "steps": len(step_times), "resets": len(resets),
            "reset_p50_ms": round(statistics.median(resets) * ms, 3),
            "step_p50_ms": round(statistics.median(step_times) * ms, 3),
            "step_p99_ms": round(percentile(step_times, 0.99) * ms, 3),
            "steps_per_s": round(len(step_times) / wall, 1)}


def in_process(plan: list[tuple[str, str, list[dict[str, Any]]]], steps: int) -> dict[str, float]:
    """The same episodes through the gym API in this process, one after another (no protocol): the env's share.

    steps/s here is the steps over the time of the timed resets and steps alone (making the
    instances is left out), so it is the env's own rate on one core.
    """
    from serving.gym import ToolEnv

    catalog = Catalog(root=CATALOG)
    resets: list[float] = []
    step_times: list[float] = []
    for env_id, task_id, solution in plan:
        env = ToolEnv(catalog.get(env_id))
        done, position = True, 0
        for _ in range(steps):
            if done:
                started = time.perf_counter()
                env.reset(options={"task": task_id})
                resets.append(time.perf_counter() - started)
                position = 0
            started = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(solution[position % len(solution)])
            step_times.append(time.perf_counter() - started)
            done, position = terminated or truncated, position + 1
        env.close()
    wall = sum(step_times) + sum(resets)
    return {"in_process_step_p50_ms": round(statistics.median(step_times) * 1000, 3),
            "in_process_reset_p50_ms": round(statistics.median(resets) * 1000, 3),
            "in_process_steps_per_s": round(len(step_times) / wall, 1)}


def measure(command: list[str], port: int, plan: list[tuple[str, str, list[dict[str, Any]]]], steps: int,
            floor: bool) -> dict[str, Any]:
    server = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        started(server, port, 120)
        result = asyncio.run(drive(f"http://127.0.0.1:{port}", plan, steps, floor))
        result["server_rss_mb"] = round(peak_rss_mb(server.pid), 1)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP side (bench/serving_mcp.py)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--echo-server", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the floor's process
    args = parser.parse_args()
    if args.echo_server:
        echo_server(args.echo_server, args.sessions)
        return
    plan = episodes(args.sessions, None)
    port = free_port()
    result = measure([sys.executable, str(ROOT / "cli.py"), "--catalog", CATALOG, "serve", "--all", "--transport",
                      "openenv", "--no-auth", "--port", str(port), "--max-sessions", str(args.sessions),
                      "--idle-timeout", "0"], port, plan, args.steps, floor=False)
    port = free_port()
    floor = measure([sys.executable, __file__, "--echo-server", str(port), "--sessions", str(args.sessions)], port,
                    plan, args.steps, floor=True)
    result.update({f"floor_{k}": floor[k] for k in ("steps_per_s", "step_p50_ms", "reset_p50_ms", "server_rss_mb")})
    result["ratio"] = round(floor["steps_per_s"] / result["steps_per_s"], 2)
    result.update(in_process(plan, args.steps))
    if not args.no_mcp:
        mcp = subprocess.run([sys.executable, str(ROOT / "bench" / "serving_mcp.py"), "--sessions", str(args.sessions),
                              "--steps", str(args.steps), "--json"], cwd=ROOT, capture_output=True, text=True,
                             check=True)
        figures = json.loads(mcp.stdout.strip().splitlines()[-1])
        result["mcp_calls_per_s"] = figures.get("calls_per_s", figures.get("steps_per_s"))
        result["mcp_step_p50_ms"] = figures.get("step_p50_ms")
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['sessions']} OpenEnv sessions open at once in one server process (peak RSS "
          f"{result['server_rss_mb']} MiB); reset p50 {result['reset_p50_ms']} ms ({result['resets']} resets)")
    print(f"step round trip p50 {result['step_p50_ms']} ms, p99 {result['step_p99_ms']} ms, "
          f"{result['steps_per_s']} steps/s; OpenEnv's echo floor {result['floor_steps_per_s']} steps/s "
          f"(p50 {result['floor_step_p50_ms']} ms): ratio {result['ratio']}")
    print(f"the same episodes in-process, one at a time (the env's own cost): {result['in_process_steps_per_s']} "
          f"steps/s, step p50 {result['in_process_step_p50_ms']} ms, reset p50 {result['in_process_reset_p50_ms']} ms")
    if "mcp_calls_per_s" in result:
        print(f"the same sessions over MCP (serve --transport http): {result['mcp_calls_per_s']} calls/s, "
              f"p50 {result['mcp_step_p50_ms']} ms")


if __name__ == "__main__":
    main()
