"""Serve catalog envs over MCP (the official `mcp` SDK, 2.x): one env instance per MCP session or episode.

`build_server(config)` returns an `mcp.server.lowlevel.Server`; `serve(config, transport, port)`
runs it over stdio or streamable HTTP. The low-level server is used rather than `MCPServer`
because the tools are per session (with `--all` each session picks its env) and come with JSON
schemas already (the manifest's), which `MCPServer`'s decorator API, built from Python
signatures, cannot list per session.

What a session sees:
- tools: the env's tools (name, description, the manifest's JSON schema; read tools are marked
  `readOnlyHint`) and `reset` (arguments `state`, `task`, and with `--all` `env`), which starts
  the episode again, optionally from another state, task or env, and returns the instruction.
  `config.hide_reset` (`serve --hide-reset`) leaves `reset` out of the list: a harness that
  starts episodes itself still calls it, the model does not see it.
- a tool result's content is the observation as JSON text; `isError` is set when the call did not
  succeed (outcome failure, invalid or crash) or the episode cannot continue. What the agent
  should not see but a harness wants (outcome, delta, reward, the check's verdict, step number) is
  in the result's `_meta["envforge"]`.
- `check` (arguments `final_message`, the agent's last answer, and `cut_off`): the episode's
  score as `ToolEnv.evaluate` gives it (`reward`, `passed`, `check`, `cut_off`, `refusal`, `step`)
  as JSON text, for harnesses whose client drops `_meta` (langchain-mcp-adapters does). It is
  callable but never listed: the agent does not get to ask whether it has passed. An env tool
  named `reset` or `check` is shadowed by these.
- prompts: `task` (the session's current task instruction) and one per task of the env (named by
  task id), each a single user message.

Where the state lives depends on the protocol the client speaks:
- the handshake protocol (2025-11-25 and before, `ClientSession.initialize()`): each MCP
  connection (a stdio process, or a streamable-HTTP session with its `Mcp-Session-Id`) gets its
  own `ToolEnv` (serving/gym.py), created and reset on first use and closed when the connection
  ends; many sessions share one process, their states in memory.
- the sessionless protocol (2026-07-28; what the SDK's `mcp.Client`, fastmcp's client and
  openai-agents negotiate by default): no connection outlives a request. Over stdio (and for an
  in-process client) the server process is the state: it has one client, the process that started
  it, so every request acts on the same `ToolEnv`, as one session would. Over HTTP each episode
  lives under a handle: `reset` without one starts a new episode and returns its handle (in the
  text, for the model, and in `_meta["envforge"]["episode"]`); every other tool, `reset` and
  `check` take it as the `episode` argument (added, required, to each listed tool's schema) or
  from the endpoint URL (`/mcp?episode=HANDLE`: a harness's client then passes none, and the
  listed schemas have no `episode`). A call without a handle is refused with one error that says
  to call `reset` first: it never gets a silent fresh env. Handles (serving/episodes.py) are
  unguessable, bound to the bearer token that started them, capped by `--max-sessions` and
  closed after `--idle-timeout`; an unknown, expired or another token's handle is one error. An
  env tool with its own `episode` parameter keeps it: such an env needs the handle in the URL.
With `--all`, the env is the `env` query parameter of the endpoint URL (`/mcp?env=library&task=...`,
read when the session's env is first needed) or the `env` argument of `reset`. On sessionless
HTTP, pick it in the URL: the tool list cannot change under a client that has no session to
notify (an `?episode=` URL lists that episode's env).

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
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from catalog.errors import EnvforgeError
from catalog.models import ToolDescriptor
from catalog.store import Catalog, CatalogError, EnvHandle
from catalog.tasks import Task
from serving.episodes import Episodes
from serving.gym import ServingError, ToolEnv
from serving.http_auth import HttpDoor
from serving.listen import bind, url_of

__all__ = ["CHECK", "EPISODE", "KEEP_ALIVE_S", "RESET", "ServeConfig", "build_server", "serve"]

RESET = "reset"
CHECK = "check"  # the harness's verdict: callable, never listed (the agent does not get to ask it)
EPISODE = "episode"  # the handle's argument (and `?episode=` query parameter) on the sessionless protocol
_HARNESS_TOOLS = (RESET, CHECK)
# uvicorn closes an idle keep-alive connection after 5 s by default; a client that sends on it just
# then gets a read error its POST is not retried on (seen with 256 busy sessions). Agents pause longer.
KEEP_ALIVE_S = 75
_STATE_KEY = "envforge.session"
_NO_EPISODE = (f"this server keeps each episode's state under a handle on the sessionless MCP protocol "
               f"(2026-07-28, no session): call {RESET} first, then pass the {EPISODE} it returns to every tool "
               f"(the `{EPISODE}` argument, or ?{EPISODE}= in the endpoint URL)")
_EPISODE_ARGUMENT = {"type": "string", "description": f"The episode handle {RESET} returned."}
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
    hide_reset: bool = False  # leave `reset` out of the tool list (it stays callable, for the harness)

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
    """One connection's or episode's env (None until chosen, with `--all`) and the lock that orders its calls."""

    env: ToolEnv | None = None
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    episode: str | None = None  # its handle, for an episode of the sessionless protocol over HTTP

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


@dataclass(frozen=True)
class _EnvFacts:
    """What a listing shows of an env without opening one (sessionless HTTP: listing starts no episode)."""

    env_id: str
    tool_descriptors: Mapping[str, ToolDescriptor]
    state_names: tuple[str, ...]
    tasks: Mapping[str, Task]
    task: Task | None = None


_Where = Literal["connection", "process", "episode"]


def _where(ctx: Any) -> _Where:
    """Where a request's state lives.

    The handshake protocol (2025-11-25 and before): its MCP connection. The sessionless protocol
    (2026-07-28): over stdio or in process the server process (one client, the process that started
    or holds the server); over HTTP the episode its handle names.
    """
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return "connection"
    return "episode" if getattr(ctx, "request", None) is not None else "process"


def _close_all(sessions: list[_Session]) -> None:
    for session in sessions:
        session.close()


def _owner() -> str | None:
    """Who may use an episode: the bearer token's client over HTTP (None without auth)."""
    token = get_access_token()
    return token.client_id if token is not None else None


def _with_episode(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema with the required `episode` argument (a tool's own `episode` parameter wins)."""
    properties = schema.get("properties") or {}
    if EPISODE in properties:
        return schema
    return {**schema, "properties": {**properties, EPISODE: _EPISODE_ARGUMENT},
            "required": [*(schema.get("required") or []), EPISODE]}


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
        self._facts: dict[str, _EnvFacts] = {}
        self._process = _Session()  # the sessionless protocol's one client over stdio
        self.episodes: Episodes[_Session] = Episodes(config.door.max_sessions, config.door.idle_timeout,
                                                     close=_Session.close, busy=lambda s: s.lock.locked())

    def close(self) -> None:
        """Close every env this server still holds outside connections (at the server's end)."""
        self._process.close()
        self.episodes.close_all()

    async def expire_episodes(self) -> None:
        """Close idle episodes as they expire, not only when a request comes (their workers are memory)."""
        if not self.episodes.idle_timeout:
            return
        while True:
            await anyio.sleep(max(1.0, min(60.0, self.episodes.idle_timeout / 4)))
            expired = self.episodes.sweep(force=True)
            if expired:
                await anyio.to_thread.run_sync(_close_all, expired)

    # --- sessions -----------------------------------------------------------------------------
    def _session(self, ctx: Any) -> _Session:
        state, exit_stack = _connection_state(ctx)
        session = state.get(_STATE_KEY)
        if session is None:
            session = state[_STATE_KEY] = _Session()
            exit_stack.callback(session.close)
        return session

    def _call_session(self, ctx: Any, name: str, arguments: dict[str, Any]) -> tuple[_Session, bool]:
        """The session a tool call acts on, and whether it is a new episode.

        Sessionless HTTP: takes the `episode` argument out of `arguments` (unless the URL names the
        episode); raises EnvforgeError for a missing, unknown or another token's episode.
        """
        where = _where(ctx)
        if where != "episode":
            return (self._session(ctx) if where == "connection" else self._process), False
        handle = _query(ctx).get(EPISODE)
        if handle is None:
            handle = arguments.pop(EPISODE, None)
        if handle is not None:
            return self.episodes.get(handle, _owner()), False
        if name != RESET:
            raise ServingError(_NO_EPISODE)
        session = _Session()
        session.episode = self.episodes.add(session, _owner())
        return session, True

    @asynccontextmanager
    async def _turn(self, session: _Session) -> AsyncIterator[None]:
        """One call's hold on the session; an episode counts as used when the call ends, not when it began."""
        async with session.lock:
            try:
                yield
            finally:
                if session.episode is not None:
                    self.episodes.touch(session.episode)

    def _forget(self, session: _Session) -> None:
        """Drop a new episode whose start failed."""
        if session.episode is not None:
            self.episodes.discard(session.episode)
        session.close()

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

    async def _listed_env(self, ctx: Any) -> ToolEnv | _EnvFacts | None:
        """The session's env for a listing request; a bad `?env=&state=&task=&episode=` is a request error.

        Sessionless HTTP: the `?episode=`'s env, else the facts of the served or `?env=` env (no episode starts).
        """
        try:
            where = _where(ctx)
            if where == "episode":
                return self._episode_listing(ctx)
            session = self._session(ctx) if where == "connection" else self._process
            async with session.lock:
                return await self._env(ctx, session)
        except EnvforgeError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    def _episode_listing(self, ctx: Any) -> ToolEnv | _EnvFacts | None:
        query = _query(ctx)
        if EPISODE in query:
            return self.episodes.get(query[EPISODE], _owner()).env
        env_id = self.config.env_id or query.get("env")
        if env_id is None:
            return None
        if env_id not in self.env_ids:
            raise CatalogError(f"unknown env {env_id!r}; served: {', '.join(self.env_ids)}")
        if env_id not in self._facts:
            handle = self._handle(env_id)
            self._facts[env_id] = _EnvFacts(env_id, {t.name: t for t in handle.manifest.tools},
                                            tuple(handle.state_names()), {t.id: t for t in handle.tasks()})
        facts = self._facts[env_id]
        task = query.get("task", self.config.task)
        if task is None:
            return facts
        if task not in facts.tasks:
            raise CatalogError(f"env {env_id!r} has no task {task!r}. Tasks: {', '.join(facts.tasks) or 'none'}")
        return _EnvFacts(facts.env_id, facts.tool_descriptors, facts.state_names, facts.tasks, facts.tasks[task])

    # --- tools --------------------------------------------------------------------------------
    def _reset_tool(self, env: ToolEnv | _EnvFacts | None, episode_argument: bool) -> types.Tool:
        properties: dict[str, Any] = {}
        if episode_argument:
            properties[EPISODE] = {"type": "string", "description": "The episode to start again (default: a new "
                                   f"one, whose handle the result names: pass it as {EPISODE} to every tool)."}
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
        episode_argument = _where(ctx) == "episode" and EPISODE not in _query(ctx)
        tools = [] if env is None else [
            types.Tool(name=t.name, description=t.description,
                       input_schema=_with_episode(t.parameters) if episode_argument else t.parameters,
                       annotations=types.ToolAnnotations(read_only_hint=True) if t.kind == "read" else None)
            for t in env.tool_descriptors.values() if t.name not in _HARNESS_TOOLS]
        listed = [] if self.config.hide_reset else [self._reset_tool(env, episode_argument)]
        return types.ListToolsResult(tools=[*listed, *tools])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        try:
            session, new = self._call_session(ctx, params.name, arguments)
        except EnvforgeError as exc:
            return _error(str(exc))
        async with self._turn(session):
            try:
                env = await self._env(ctx, session)
                if params.name == RESET:
                    result = await self._reset(ctx, session, env, arguments)
                    if new and result.is_error:
                        self._forget(session)
                    return result
                if env is None:
                    return _error(f"no env chosen yet: call {RESET} with env (one of {', '.join(self.env_ids)})")
                if params.name == CHECK:
                    return await self._check(env, arguments)
                if params.name not in env.tool_descriptors:
                    return _error(f"unknown tool {params.name!r}; tools: {', '.join(env.tool_descriptors)}")
                step = await self._run(env.step, {"name": params.name, "arguments": arguments},
                                       sandboxed=not env.in_process)
            except EnvforgeError as exc:
                if new:
                    self._forget(session)
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
        if session.episode is not None:  # the model must see the handle to pass it on; a harness reads it here
            info[EPISODE] = session.episode
            observation += f"\n\n({EPISODE} {session.episode}: pass it as {EPISODE} to every tool)"
        return types.CallToolResult(content=[types.TextContent(type="text", text=observation)],
                                    _meta={"envforge": info})

    async def _check(self, env: ToolEnv, arguments: dict[str, Any]) -> types.CallToolResult:
        """The episode's score as the gym scores it (`ToolEnv.evaluate`).

        In the result's text too, not only its `_meta`: for harnesses whose MCP client drops `_meta`
        (langchain-mcp-adapters).
        """
        final_message, cut_off = arguments.pop("final_message", None), arguments.pop("cut_off", False)
        if arguments or not isinstance(final_message, str | None) or not isinstance(cut_off, bool):
            raise ServingError(f"{CHECK} takes final_message (the agent's last answer, text) and cut_off "
                               f"(true if the harness stopped the episode at its step limit)")
        reward, details = await self._run(lambda: env.evaluate(final_message, cut_off=cut_off),
                                          sandboxed=not env.in_process)
        verdict = {"env_id": env.env_id, "reward": reward, "step": env.steps, **details}
        return types.CallToolResult(content=[types.TextContent(type="text", text=_json_text(verdict))],
                                    _meta={"envforge": verdict})

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

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(handlers.expire_episodes)
                yield {}
                group.cancel_scope.cancel()
        finally:
            handlers.close()

    return Server(name, instructions="envforge environments: call the tools; `reset` starts again (on the "
                  f"sessionless protocol over HTTP it returns the {EPISODE} every tool takes).", lifespan=lifespan,
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
