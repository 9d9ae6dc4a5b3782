"""envforge envs behind an OpenEnv (`openenv-core`) server, driven by OpenEnv's own clients.

    create_app(env_ids, *, catalog=None, task=None, state=None, trusted=None, max_steps=None, door=HttpDoor())
        -> ASGI app
    serve(env_ids, *, host="127.0.0.1", port=8000, door=..., ready=None, ...) -> None (until stopped)
    client(base_url, *, token=None, **kwargs) -> EnvforgeClient (an `openenv.core.EnvClient`)
    ToolCall, ToolObservation, EpisodeState, EnvforgeEnvironment, EnvforgeClient (built on first use)

OpenEnv's `HTTPEnvServer` serves one `EnvforgeEnvironment` (one `serving.gym.ToolEnv`, made at
the first reset) per WebSocket session at `/ws`, where OpenEnv's `EnvClient` speaks reset / step
/ state. Only that stateful door is open: OpenEnv's stateless `/reset`, `/step`, `/state` and
`/mcp` routes would each act on a fresh env (a step there could never continue an episode), so
the app is built in OpenEnv's production mode and this module's door answers 404 to every path
but `/ws`, `/health`, `/schema` and `/metadata`. The door is `serve`'s (serving/http_auth.py):
a bearer token on every request (HTTP 401, or the WebSocket refused before it opens; checked in
constant time by `HttpDoor.verify_token`), `max_sessions` as OpenEnv's session cap (a client
past it gets CAPACITY_REACHED) and `idle_timeout` as its idle-session reaper. A session is its
connection, so no other client can reach it.

Every message is untrusted and validated where it enters: the action is a `ToolCall`
(`{"name", "arguments"}` for a tool call, or `{"final_message"}` to end the episode and score
it with `ToolEnv.evaluate`; nothing else), reset takes only `seed`, `episode_id`, `env_id`,
`task` and `state` (names, checked before they meet a catalog path). A message that fails is one
OpenEnv error reply and the session goes on. Reward and termination are the gym's: a step's
reward is the task's check, `done` when it is solved or cut off at `max_steps`; a final message
scores the episode by catalog.tasks.episode_passed (a refusal task needs its decline).

The library (~54 packages with fastapi, fastmcp and gradio, ~14 s to import) is imported only
when used: `pip install "envforge[openenv]"`.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from catalog.names import is_name
from catalog.store import Catalog, CatalogError, EnvHandle
from catalog.tasks import Task
from serving.gym import EpisodeOver, ServingError, ToolEnv
from serving.http_auth import HttpDoor

__all__ = ["create_app", "serve", "client", "OPEN_PATHS"]  # and the classes of _LAZY, made on first access

OPEN_PATHS = frozenset({"/health", "/schema", "/metadata"})  # HTTP GETs; the episodes are at /ws
_LAZY = ("ToolCall", "ToolObservation", "EpisodeState", "EnvforgeEnvironment", "EnvforgeClient")
_TEXT_LIMIT = 100_000  # characters of a final message


def _library() -> None:
    try:
        import openenv.core  # noqa: F401
    except ImportError as exc:
        raise ServingError(f"the OpenEnv adapter needs openenv-core ({exc}): pip install 'envforge[openenv]'") from None


@dataclass(frozen=True)
class _Served:
    """What every session of one app may reset to: the envs, and the default env, task and state."""

    handles: dict[str, EnvHandle]
    default: str
    task: str | Task | None
    state: str | None
    trusted: bool | None
    max_steps: int | None


def _name(kind: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not is_name(value):
        raise ServingError(f"reset: {kind} must be a name (letters, digits, '-', '_', '.'), got {value!r}"[:300])
    return value


@functools.cache
def _types() -> SimpleNamespace:
    """The OpenEnv classes, defined on first use: the library is imported only then."""
    _library()
    from openenv.core import EnvClient
    from openenv.core.client_types import StepResult
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import Field, JsonValue, model_validator
    from pydantic_core import PydanticCustomError
    from websockets.asyncio.client import connect as ws_connect

    class ToolCall(Action):
        """One action: a tool call (`name`, `arguments` an object or its JSON text), or the agent's final message."""

        name: str | None = Field(None, min_length=1, max_length=256)
        arguments: dict[str, JsonValue] | str = Field(default_factory=dict)
        final_message: str | None = Field(None, max_length=_TEXT_LIMIT)

        @model_validator(mode="after")
        def _one_kind(self) -> ToolCall:
            if (self.name is None) == (self.final_message is None):
                # a PydanticCustomError, not a ValueError: OpenEnv sends errors() as JSON, and a ValueError
                # in their context does not serialize (the session would be dropped)
                raise PydanticCustomError("one_action", "an action is a tool call ('name', 'arguments') or a "
                                          "'final_message': one of the two")
            return self

    class ToolObservation(Observation):
        """What a reset or a step returns (OpenEnv sends `reward` and `done` beside the fields)."""

        result: JsonValue = None  # the tool's return value
        instruction: str | None = None  # at reset: what the agent is asked
        # the tools as OpenAI function schemas: at a session's first reset and when a reset changes env_id
        tools: list[dict[str, JsonValue]] | None = None
        env_id: str | None = None
        task: str | None = None
        state: str | None = None
        outcome: str | None = None  # success / failure / invalid / crash (a step)
        step: int = 0
        check: dict[str, JsonValue] | None = None  # the task check's verdict (with a task)
        truncated: bool = False  # cut off at max_steps

    class EpisodeState(State):
        """`state`: the episode's bookkeeping (OpenEnv's episode_id and step_count, and envforge's names)."""

        env_id: str | None = None
        task: str | None = None
        state: str | None = None
        done: bool = False

    class EnvforgeEnvironment(Environment):
        """One session's episode: its own ToolEnv, made at the first reset and closed with the session."""

        SUPPORTS_CONCURRENT_SESSIONS = True  # every instance owns its runtime (serving/gym.py)

        def __init__(self, served: _Served) -> None:
            super().__init__()
            self._served = served
            self._env: ToolEnv | None = None
            self._episode_id: str | None = None
            self._ended: str | None = None  # why the episode takes no more steps (solved, cut off, answered)

        def reset(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
                  task: str | None = None, state: str | None = None, **unknown: Any) -> ToolObservation:
            if unknown:  # taken here, so a misspelt option is refused rather than dropped by OpenEnv's filter
                raise ServingError(f"reset: unknown options {sorted(unknown)[:5]}: expected seed, episode_id, "
                                   f"env_id, task, state"[:300])
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
                raise ServingError(f"reset: seed must be an integer, got {seed!r}"[:300])
            if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 255):
                raise ServingError("reset: episode_id must be text of at most 255 characters")
            env_id, task, state = _name("env_id", env_id), _name("task", task), _name("state", state)
            served = self._served
            chosen = env_id or (self._env.env_id if self._env is not None else served.default)
            if chosen not in served.handles:
                raise ServingError(f"reset: this server serves {', '.join(sorted(served.handles))}, not {chosen!r}")
            env = self._env
            fresh = env is None or env.env_id != chosen
            if fresh:
                if env is not None:
                    self._env = None
                    env.close()
                first = chosen == served.default
                env = self._env = ToolEnv(served.handles[chosen], task=served.task if first else None,
                                          state=served.state if first else None, trusted=served.trusted,
                                          max_steps=served.max_steps)
            assert env is not None
            options = {k: v for k, v in (("task", task), ("state", state)) if v is not None}
            instruction, info = env.reset(seed=seed, options=options)
            self._episode_id, self._ended = episode_id or uuid.uuid4().hex, None
            return ToolObservation(instruction=instruction, tools=info["tools"] if fresh else None,
                                   env_id=info["env_id"], task=info["task"], state=info["state"], reward=None,
                                   done=False)

        def step(self, action: ToolCall, timeout_s: float | None = None, **kwargs: Any) -> ToolObservation:
            if self._env is None:
                raise EpisodeOver("send reset before step")
            if self._ended is not None:
                raise EpisodeOver(f"the episode is over ({self._ended}): send reset")
            env = self._env
            if action.final_message is not None:
                reward, details = env.evaluate(action.final_message)
                self._ended = "the agent gave its final message"
                return ToolObservation(env_id=env.env_id, task=details.get("task"), step=env.steps,
                                       check=json.loads(json.dumps(details)), reward=reward, done=True)
            observation, reward, terminated, truncated, info = env.step({"name": action.name,
                                                                         "arguments": action.arguments})
            if terminated or truncated:
                self._ended = "task solved" if terminated else f"max_steps {env.max_steps} reached"
            return ToolObservation(result=observation, env_id=env.env_id, task=env.task.id if env.task else None,
                                   outcome=info["outcome"], step=info["step"], check=info.get("check"),
                                   truncated=truncated, reward=reward, done=terminated or truncated)

        @property
        def state(self) -> EpisodeState:
            """Bookkeeping only, no snapshot: OpenEnv reads this on its event loop."""
            env = self._env
            return EpisodeState(episode_id=self._episode_id, step_count=env.steps if env else 0,
                                env_id=env.env_id if env else None,
                                task=env.task.id if env and env.task else None,
                                state=env.state_name if env else None, done=self._ended is not None)

        def close(self) -> None:
            if self._env is not None:
                self._env.close()
                self._env = None

    class EnvforgeClient(EnvClient[ToolCall, ToolObservation, EpisodeState]):
        """OpenEnv's WebSocket client for these servers, with the bearer token on the upgrade request."""

        def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
            super().__init__(base_url, **kwargs)
            self._token = token

        async def connect(self) -> EnvforgeClient:
            if self._ws is None and self._token is not None:  # type: ignore[has-type]  # the library's attribute
                try:
                    self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout,
                                                max_size=self._max_message_size, proxy=None,
                                                additional_headers={"Authorization": f"Bearer {self._token}"})
                except Exception as exc:  # the library's own wording for a refused connection
                    raise ConnectionError(f"Failed to connect to {self._ws_url}: {exc}") from exc
            await super().connect()
            return self

        def _step_payload(self, action: ToolCall | dict[str, Any]) -> dict[str, Any]:
            call = action if isinstance(action, ToolCall) else ToolCall.model_validate(action)
            return call.model_dump(mode="json", exclude_none=True, exclude={"metadata"})

        def _parse_result(self, payload: dict[str, Any]) -> Any:
            observation = ToolObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                          done=payload.get("done", False))
            return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

        def _parse_state(self, payload: dict[str, Any]) -> EpisodeState:
            return EpisodeState(**payload)

    return SimpleNamespace(ToolCall=ToolCall, ToolObservation=ToolObservation, EpisodeState=EpisodeState,
                           EnvforgeEnvironment=EnvforgeEnvironment, EnvforgeClient=EnvforgeClient)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_types(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Door:
    """ASGI middleware: only the open paths and `/ws`, and with tokens only a request that carries one."""

    def __init__(self, app: Any, door: HttpDoor) -> None:
        self.app, self.door = app, door

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        path = scope.get("path", "")
        if not ((kind == "websocket" and path == "/ws") or (kind == "http" and path in OPEN_PATHS)):
            await self._refuse(scope, receive, send, 404, "not found: episodes are at the WebSocket /ws")
            return
        if not self.door.open:
            header = dict(scope.get("headers") or ()).get(b"authorization", b"").decode("latin-1")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or await self.door.verify_token(token.strip()) is None:
                await self._refuse(scope, receive, send, 401, "a valid bearer token is required")
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any], status: int,
                      message: str) -> None:
        from starlette.responses import JSONResponse

        if scope["type"] == "websocket":  # refused before it opens: the client sees HTTP 403
            await send({"type": "websocket.close", "code": 1008, "reason": message})
            return
        await JSONResponse({"error": message}, status_code=status,
                           headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)(scope, receive, send)


def create_app(env_ids: str | Sequence[str], *, catalog: Catalog | Path | str | None = None,
               task: str | Task | None = None, state: str | None = None, trusted: bool | None = None,
               max_steps: int | None = None, door: HttpDoor | None = None) -> Any:
    """The ASGI app serving `env_ids` (the first is the default of a reset; `task`/`state` apply to it).

    Raises CatalogError for an env, task or state that does not exist (before anything is served).
    """
    _library()
    from fastapi import FastAPI
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.types import ConcurrencyConfig, ServerMode

    types = _types()
    if not isinstance(catalog, Catalog):
        catalog = Catalog(catalog)
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if not ids:
        raise ServingError("create_app needs at least one env to serve")
    handles = {env_id: catalog.get(env_id) for env_id in ids}
    door = door or HttpDoor()
    first = handles[ids[0]]
    if isinstance(task, str) and task not in {t.id for t in first.tasks()}:
        raise CatalogError(f"env {first.id!r} has no task {task!r}")
    if state is not None:
        first.state(state)  # raises for a missing state or a name that is not one
    if max_steps is not None and max_steps < 1:
        raise ServingError(f"max_steps must be at least 1, got {max_steps}")
    served = _Served(handles, ids[0], task, state, trusted, max_steps)
    app = FastAPI(title="envforge over OpenEnv", docs_url=None, redoc_url=None, openapi_url=None)
    config = ConcurrencyConfig(max_concurrent_envs=door.max_sessions, session_timeout=door.idle_timeout or None)
    server = HTTPEnvServer(functools.partial(types.EnvforgeEnvironment, served), types.ToolCall,
                           types.ToolObservation, concurrency_config=config)
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    return _Door(app, door)


def serve(env_ids: str | Sequence[str], *, host: str = "127.0.0.1", port: int = 8000, door: HttpDoor | None = None,
          ready: Callable[[str], None] | None = None, **options: Any) -> None:
    """Serve until stopped; the door is checked and the socket bound before `ready(url)` is called."""
    import uvicorn

    from serving.listen import bind, url_of

    door = door or HttpDoor()
    door.check_host(host)
    app = create_app(env_ids, door=door, **options)
    sock = bind(host, port)
    try:
        door.check_host(sock.getsockname()[0])
        url = url_of(sock, "")
        if ready is not None:
            ready(url)
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        sock.close()


def client(base_url: str, *, token: str | None = None, **kwargs: Any) -> Any:
    """OpenEnv's async client for an envforge server (`.sync()` gives its synchronous wrapper)."""
    return _types().EnvforgeClient(base_url, token=token, **kwargs)
