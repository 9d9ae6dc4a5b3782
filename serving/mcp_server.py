"""Serve catalog envs over MCP (the official `mcp` SDK, 2.x): one env instance per MCP session.

`build_server(config)` returns an `mcp.server.lowlevel.Server`; `serve(config, transport, port)`
runs it over stdio or streamable HTTP. The low-level server is used rather than `MCPServer`
because the tools are per session (with `--all` each session picks its env) and come with JSON
schemas already (the manifest's), which `MCPServer`'s decorator API, built from Python
signatures, cannot list per session.

What a session sees:
- tools: the env's tools (name, description, the manifest's JSON schema; read tools are marked
  `readOnlyHint`) and `reset` (arguments `state`, `task`, and with `--all` `env`), which starts
  the episode again, optionally from another state, task or env, and returns the instruction.
- a tool result's content is the observation as JSON text; `isError` is set when the call did not
  succeed (outcome failure, invalid or crash) or the episode cannot continue. What the agent
  should not see but a harness wants (outcome, delta, reward, the check's verdict, step number) is
  in the result's `_meta["envforge"]`.
- prompts: `task` (the session's current task instruction) and one per task of the env (named by
  task id), each a single user message.

Sessions: each MCP connection (a stdio process, or a streamable-HTTP session with its
`Mcp-Session-Id`) gets its own `ToolEnv` (serving/gym.py), created and reset on first
use and closed when the connection ends; many sessions share one process, their states in memory.
With `--all`, the env is the `env` query parameter of the endpoint URL (`/mcp?env=library&task=...`,
read when the session's env is first needed) or the `env` argument of `reset`. Sessions need the
initialize handshake (protocol 2025-11-25 and before, what `ClientSession.initialize()` speaks):
the sessionless 2026-07-28 era has no connection that outlives a request.

Reference envs run in the server's process; other envs each in their own sandbox worker, whose
calls run in a thread so one slow env does not stall the other sessions.

Over HTTP the door is `config.door` (serving/http_auth.py): bearer tokens, each session
bound to its token, the session cap and the idle timeout. stdio has one client, the process that
started the server, and no door.

Cost per call over HTTP (bench/serving_mcp.py, beside a bare SDK echo server): the SDK's
transport is most of it; envforge's handlers add little beyond the env step itself. Two settings
cut what they can: each POST is answered with one JSON body rather than an SSE stream (nothing
here streams: no progress, no server-initiated requests; list-changed notifications after an
env switch go over the session's GET stream, where a client keeps one), about 40% of the
server's CPU per call; and what was loaded at start (catalog, SDK, env modules) is frozen out of
the garbage collector's generations (`gc.freeze`), so full collections walk only what sessions
allocate, about 15% more.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from catalog.errors import EnvforgeError
from catalog.store import Catalog, CatalogError, EnvHandle
from serving.gym import ServingError, ToolEnv
from serving.http_auth import HttpDoor
from serving.listen import bind, url_of

__all__ = ["KEEP_ALIVE_S", "RESET", "ServeConfig", "build_server", "serve"]

RESET = "reset"
# uvicorn closes an idle keep-alive connection after 5 s by default; a client that sends on it just
# then gets a read error its POST is not retried on (seen with 256 busy sessions). Agents pause longer.
KEEP_ALIVE_S = 75
_STATE_KEY = "envforge.session"
Transport = Literal["stdio", "http"]


@dataclass(frozen=True)
class ServeConfig:
    """What `serve` serves: one env (`env_id`) or the whole catalog (`env_id=None`), and how."""

    catalog: Catalog
    env_id: str | None = None
    state: str | None = None
    task: str | None = None
    trusted: bool | None = None
    door: HttpDoor = field(default_factory=HttpDoor)  # HTTP only: by default one fresh token, door.tokens[0]

    def env_ids(self) -> list[str]:
        return [self.env_id] if self.env_id is not None else [s.id for s in self.catalog.list()[0]]

    def check(self) -> None:
        """Raise CatalogError for an unknown env, state or task before any session starts."""
        if self.env_id is None:
            return
        handle = self.catalog.get(self.env_id)
        if self.state is not None and self.state not in handle.state_names():
            raise CatalogError(f"env {self.env_id!r} has no state {self.state!r}. Available: "
                               f"{', '.join(handle.state_names())}")
        tasks = [t.id for t in handle.tasks()]
        if self.task is not None and self.task not in tasks:
            raise CatalogError(f"env {self.env_id!r} has no task {self.task!r}. Tasks: {', '.join(tasks) or 'none'}")


@dataclass
class _Session:
    """One connection's env (None until chosen, with `--all`) and the lock that orders its calls."""

    env: ToolEnv | None = None
    lock: anyio.Lock = field(default_factory=anyio.Lock)


def _connection_state(ctx: Any) -> tuple[dict[str, Any], Any]:
    """The MCP connection's scratch state and teardown stack.

    mcp 2.3 keeps per-connection state on `Connection` (`state`, `exit_stack`) but hands low-level
    handlers only the per-request `ServerSession`, which holds the connection privately; the SDK is
    pinned below 3 for this.
    """
    connection = getattr(ctx.session, "_connection", None)
    if connection is None or not isinstance(getattr(connection, "state", None), dict):
        raise RuntimeError("this mcp version does not expose the connection of a request (mcp>=2.3,<3 is required)")
    return connection.state, connection.exit_stack


def _query(ctx: Any) -> dict[str, str]:
    """The endpoint URL's query parameters (streamable HTTP), else nothing (stdio)."""
    request = getattr(ctx, "request", None)
    params = getattr(request, "query_params", None)
    return {k: v for k, v in params.items()} if params is not None else {}


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _error(message: str, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True,
                                _meta={"envforge": meta} if meta else None)


class _Handlers:
    """The request handlers of one server; every env call goes through the session's lock."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        config.check()
        self.env_ids = config.env_ids()
        self._handles: dict[str, EnvHandle] = {}

    # --- sessions -----------------------------------------------------------------------------
    def _session(self, ctx: Any) -> _Session:
        state, exit_stack = _connection_state(ctx)
        session = state.get(_STATE_KEY)
        if session is None:
            session = state[_STATE_KEY] = _Session()
            exit_stack.callback(lambda: session.env.close() if session.env is not None else None)
        return session

    async def _open(self, session: _Session, env_id: str, state: str | None, task: str | None) -> ToolEnv:
        """A new, reset env for the session (the old one closed); raises EnvforgeError on bad names."""
        if env_id not in self.env_ids:
            raise CatalogError(f"unknown env {env_id!r}; served: {', '.join(self.env_ids)}")

        handle = self._handle(env_id)

        def build() -> ToolEnv:
            env = ToolEnv(handle, state=state, task=task, trusted=self.config.trusted, terminate_on_success=False)
            try:
                env.reset()
            except BaseException:
                env.close()
                raise
            return env

        in_process = handle.reference if self.config.trusted is None else self.config.trusted
        env = await self._run(build, sandboxed=not in_process)
        if session.env is not None:
            session.env.close()
        session.env = env
        return env

    def _handle(self, env_id: str) -> EnvHandle:
        """The env's handle, read once per server (its manifest is validated on reading)."""
        if env_id not in self._handles:
            self._handles[env_id] = self.config.catalog.get(env_id)
        return self._handles[env_id]

    @staticmethod
    async def _run(function: Any, *args: Any, sandboxed: bool) -> Any:
        """In-process envs answer in well under a millisecond: run inline; sandboxed ones in a thread."""
        return await anyio.to_thread.run_sync(function, *args) if sandboxed else function(*args)

    async def _env(self, ctx: Any, session: _Session) -> ToolEnv | None:
        """The session's env, opened on first use: the served env, or `--all`'s `?env=` choice."""
        if session.env is None:
            query = _query(ctx)
            env_id = self.config.env_id or query.get("env")
            if env_id is not None:
                await self._open(session, env_id, query.get("state", self.config.state),
                                 query.get("task", self.config.task))
        return session.env

    async def _listed_env(self, ctx: Any) -> ToolEnv | None:
        """The session's env for a listing request; a bad `?env=&state=&task=` is a request error."""
        session = self._session(ctx)
        async with session.lock:
            try:
                return await self._env(ctx, session)
            except EnvforgeError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    # --- tools --------------------------------------------------------------------------------
    def _reset_tool(self, env: ToolEnv | None) -> types.Tool:
        properties: dict[str, Any] = {}
        if self.config.env_id is None:
            properties["env"] = {"type": "string", "enum": self.env_ids,
                                 "description": "The env to start (default: the session's current env)."}
        if env is not None:
            properties["state"] = {"type": "string", "enum": list(env.state_names),
                                   "description": "Initial state (default: the task's, else the env's default)."}
            properties["task"] = {"type": "string", "enum": list(env.tasks),
                                  "description": "Task to attempt (default: the current one)."}
        return types.Tool(name=RESET, description="Start the episode again from an initial state; returns the "
                          "instruction. Every other tool acts on the state this leaves.",
                          input_schema={"type": "object", "properties": properties, "required": []})

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        env = await self._listed_env(ctx)
        tools = [] if env is None else [
            types.Tool(name=t.name, description=t.description, input_schema=t.parameters,
                       annotations=types.ToolAnnotations(read_only_hint=True) if t.kind == "read" else None)
            for t in env.tool_descriptors.values() if t.name != RESET]
        return types.ListToolsResult(tools=[self._reset_tool(env), *tools])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = self._session(ctx)
        arguments = dict(params.arguments or {})
        async with session.lock:
            try:
                env = await self._env(ctx, session)
                if params.name == RESET:
                    return await self._reset(ctx, session, env, arguments)
                if env is None:
                    return _error(f"no env chosen yet: call {RESET} with env (one of {', '.join(self.env_ids)})")
                if params.name not in env.tool_descriptors:
                    return _error(f"unknown tool {params.name!r}; tools: {', '.join(env.tool_descriptors)}")
                step = await self._run(env.step, {"name": params.name, "arguments": arguments},
                                       sandboxed=not env.in_process)
            except EnvforgeError as exc:
                return _error(str(exc))
        observation, reward, terminated, truncated, info = step
        meta = {**info, "reward": reward, "terminated": terminated, "truncated": truncated}
        return types.CallToolResult(content=[types.TextContent(type="text", text=_json_text(observation))],
                                    is_error=info["outcome"] != "success", _meta={"envforge": meta})

    async def _reset(self, ctx: Any, session: _Session, env: ToolEnv | None,
                     arguments: dict[str, Any]) -> types.CallToolResult:
        allowed = {"state", "task"} | ({"env"} if self.config.env_id is None else set())
        if set(arguments) - allowed:
            raise ServingError(f"{RESET} takes {', '.join(sorted(allowed))}; got {', '.join(sorted(arguments))}")
        env_id = arguments.get("env")
        if env_id is not None and (env is None or env_id != env.env_id):
            env = await self._open(session, env_id, arguments.get("state"), arguments.get("task"))
            await ctx.session.send_tool_list_changed()
            await ctx.session.send_prompt_list_changed()
            observation, info = env.instruction, self._reset_info(env)
        elif env is None:
            return _error(f"no env chosen yet: call {RESET} with env (one of {', '.join(self.env_ids)})")
        else:
            options = {k: arguments[k] for k in ("task", "state") if k in arguments}
            observation, info = await self._run(env.reset, None, options, sandboxed=not env.in_process)
            info = {k: v for k, v in info.items() if k != "tools"}
        return types.CallToolResult(content=[types.TextContent(type="text", text=observation)],
                                    _meta={"envforge": info})

    @staticmethod
    def _reset_info(env: ToolEnv) -> dict[str, Any]:
        return {"env_id": env.env_id, "state": env.state_name, "task": env.task.id if env.task else None,
                "instruction": env.instruction, "sandboxed": not env.in_process}

    # --- prompts ------------------------------------------------------------------------------
    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        env = await self._listed_env(ctx)
        if env is None:
            return types.ListPromptsResult(prompts=[])
        prompts = [types.Prompt(name=t.id, description=t.instruction) for t in env.tasks.values()]
        if env.task is not None:
            prompts.insert(0, types.Prompt(name="task", description="The current task's instruction."))
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        env = await self._listed_env(ctx)
        tasks = env.tasks if env is not None else {}
        task = env.task if env is not None and params.name == "task" else tasks.get(params.name)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; prompts: task, {', '.join(tasks)}")
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=task.instruction))
        return types.GetPromptResult(description=f"task {task.id}", messages=[message])


def build_server(config: ServeConfig) -> Server[Any]:
    """The MCP server of `config` (raises CatalogError for an unknown env before any session)."""
    handlers = _Handlers(config)
    name = f"envforge-{config.env_id}" if config.env_id else "envforge"
    return Server(name, instructions="envforge environments: call the tools; `reset` starts again.",
                  on_list_tools=handlers.list_tools, on_call_tool=handlers.call_tool,
                  on_list_prompts=handlers.list_prompts, on_get_prompt=handlers.get_prompt)


def serve(config: ServeConfig, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve until stopped: stdio (one session, this process's stdin/stdout) or streamable HTTP at `/mcp`.

    HTTP: the door is checked and the socket bound (EnvforgeError if either fails) before
    `ready(url)` is called and the first request is accepted.
    """
    server = build_server(config)
    if transport == "stdio":
        async def run_stdio() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn

    config.door.check_host(host)
    sock = bind(host, port)
    try:
        config.door.check_host(sock.getsockname()[0])  # what the name resolved to
        url = url_of(sock)
        app = server.streamable_http_app(host=host, json_response=True, **config.door.app_options(url.removesuffix("/mcp")))
        if ready is not None:
            ready(url)
        gc.collect()
        gc.freeze()
        uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)).run(sockets=[sock])
    finally:
        sock.close()
