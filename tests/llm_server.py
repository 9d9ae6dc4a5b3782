"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests of the LLM path.

Tests run the real ``openai`` client over real HTTP against it. Each test scripts the replies:
a list consumed in order (one per POST /v1/chat/completions) or a function of the request.
A reply is a :class:`Reply`, or shorthand: a ``str`` (assistant content), a ``dict`` (content as
JSON), an ``int`` (an HTTP error status), or :data:`HANG` (accept, never answer). ``Reply(tool_calls=
[(name, arguments), ...])`` answers with native tool calls (arguments a dict, or a str sent as is). Every request
received is recorded, so tests can assert prompts, ``response_format`` and call counts.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer to a chat completion request."""

    content: str | None = ""
    status: int = 200
    prompt_tokens: int | None = 10
    completion_tokens: int | None = 5
    finish_reason: str = "stop"
    delay: float = 0.0
    hang: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""
    tool_calls: list[tuple[str, Any]] | None = None


HANG = Reply(hang=True)
Script = list[Any] | Callable[[dict[str, Any]], Any]


def as_reply(item: Any) -> Reply:
    """Turn script shorthand into a Reply."""
    if isinstance(item, Reply):
        return item
    if isinstance(item, bool):
        raise TypeError("a bool is not a reply")
    if isinstance(item, int):
        return Reply(status=item, content=None)
    if isinstance(item, str):
        return Reply(content=item)
    if isinstance(item, dict | list):
        return Reply(content=json.dumps(item))
    raise TypeError(f"cannot turn {item!r} into a scripted reply")


class ScriptedServer:
    """ThreadingHTTPServer in a daemon thread serving /v1/chat/completions and /v1/models."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.models = models or ["gpt-4o-mini", "test-model"]
        self.requests: list[dict[str, Any]] = []
        self._script: Script = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Any) -> ScriptedServer:
        """Set the replies: ``script(r1, r2, ...)`` in order, or ``script(fn)`` with fn(request)."""
        with self._lock:
            if len(replies) == 1 and callable(replies[0]) and not isinstance(replies[0], Reply):
                self._script = replies[0]
            else:
                self._script = list(replies)
        return self

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat completion requests received, in order."""
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            script = self._script
            if callable(script):
                return as_reply(script(request))
            if not script:
                return Reply(status=500, content=None, error="scripted server: no reply left in the script")
            return as_reply(script.pop(0))

    def wait_released(self, seconds: float) -> None:
        self._release.wait(seconds)

    def close(self) -> None:
        """Release hanging handlers and stop serving."""
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def client(self, model: str = "gpt-4o-mini", ledger: Any = None, **kwargs: Any) -> Any:
        """An LLMClient for a registry model pointed at this server (tiny retry delays)."""
        from synth.llm import LLMClient, load_registry

        spec = load_registry(user=False)[model]
        options = {"api_key": "test-key", "timeout": 2.0, "attempts": 3, "base_delay": 0.001, **kwargs}
        return LLMClient(spec, ledger, base_url=self.base_url, **options)

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_GET(self) -> None:
            server.requests.append({"method": "GET", "path": self.path, "body": None,
                                    "headers": dict(self.headers)})
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in server.models]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            request = {"method": "POST", "path": self.path, "body": body, "headers": dict(self.headers),
                       "received_at": time.monotonic()}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                server.requests.append(request)
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            reply = server.next_reply(request)
            if reply.hang:
                server.wait_released(60)
                self.close_connection = True
                return
            if reply.delay:
                server.wait_released(reply.delay)
            if reply.status != 200:
                message = reply.error or f"scripted HTTP {reply.status}"
                self._send(reply.status, {"error": {"message": message, "type": "scripted", "code": reply.status}},
                           reply.headers)
                return
            model = body.get("model", "") if isinstance(body, dict) else ""
            payload: dict[str, Any] = {
                "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                             "message": {"role": "assistant", "content": reply.content}}],
            }
            if reply.tool_calls:
                payload["choices"][0]["finish_reason"] = "tool_calls"
                payload["choices"][0]["message"]["tool_calls"] = [
                    {"id": f"call_{len(server.requests)}_{n}", "type": "function",
                     "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                    for n, (name, args) in enumerate(reply.tool_calls)]
            if reply.prompt_tokens is not None:
                pt, ct = reply.prompt_tokens, reply.completion_tokens or 0
                payload["usage"] = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
            self._send(200, payload, reply.headers)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing to answer

    return Handler
