"""The door of `serve --transport http`: who gets in (bearer tokens), how many sessions, for how long.

Every MCP client is untrusted. Over HTTP a request must carry `Authorization: Bearer <token>`
with one of the server's tokens; the SDK's own auth hooks check it (`BearerAuthBackend` and
`RequireAuthMiddleware`: a 401 with a short JSON body, before any session exists), and the SDK's
session manager binds each session to the token that created it (another token's request for
that session id is answered 404, as if it did not exist). Each token is its own client
(`client_id` "token-N"), so several clients of one server cannot drive each other's sessions.
`tokens=()` is no auth at all, allowed only on a loopback address (`check_host`).

The session cap and the idle timeout are the SDK's too (`max_sessions`: a 503 with a JSON-RPC
error; `session_idle_timeout`: the session's connection is torn down, which closes its ToolEnv
and releases its sandbox worker).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from catalog.errors import EnvforgeError

__all__ = ["HttpDoor", "DoorError", "TOKEN_ENV", "SESSION_MB", "DEFAULT_IDLE_TIMEOUT", "new_token",
           "default_max_sessions", "parse_tokens", "is_loopback"]

TOKEN_ENV = "ENVFORGE_SERVE_TOKEN"
SESSION_MB = 100  # what one sandboxed session costs (its worker), for the default cap
SDK_MAX_SESSIONS = 10_000  # the SDK's own default cap, the ceiling of ours
DEFAULT_IDLE_TIMEOUT = 900.0
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]{16,512}=*")  # RFC 6750's b64token, at least 16 characters
_LOOPBACK_NAMES = ("localhost",)


class DoorError(ValueError, EnvforgeError):
    """A door that cannot be built as asked (a weak token, a cap below 1, no auth off loopback)."""


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe): what `serve` uses when none is given."""
    return secrets.token_urlsafe(32)


def parse_tokens(text: str) -> tuple[str, ...]:
    """The tokens of `ENVFORGE_SERVE_TOKEN`: one, or several separated by commas."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def default_max_sessions(meminfo: Path = Path("/proc/meminfo")) -> int:
    """MemAvailable / 100 MiB (one sandboxed session each), at least 1, at most the SDK's 10,000.

    Read once at start; where /proc/meminfo cannot be read the cap is 16.
    """
    try:
        kib = next(int(line.split()[1]) for line in meminfo.read_text().splitlines()
                   if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return 16
    return max(1, min(SDK_MAX_SESSIONS, kib // (SESSION_MB * 1024)))


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback name or address (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class HttpDoor:
    """The tokens (empty: no auth, loopback only), the session cap and the idle timeout (0: off).

    The default is one fresh token (read it from `tokens[0]`), the memory-derived cap and 900 s.
    """

    tokens: tuple[str, ...] = field(default_factory=lambda: (new_token(),))
    max_sessions: int = field(default_factory=default_max_sessions)
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    def __post_init__(self) -> None:
        for token in self.tokens:
            if not isinstance(token, str) or not _TOKEN.fullmatch(token):
                raise DoorError("a serve token must be 16 to 512 characters of A-Z a-z 0-9 . _ ~ + / - "
                                "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
        if len(set(self.tokens)) != len(self.tokens):
            raise DoorError("each serve token must be different (one per client)")
        if isinstance(self.max_sessions, bool) or not isinstance(self.max_sessions, int) or self.max_sessions < 1:
            raise DoorError(f"--max-sessions must be at least 1, got {self.max_sessions!r}")
        if not math.isfinite(self.idle_timeout) or self.idle_timeout < 0:
            raise DoorError(f"--idle-timeout must be 0 (off) or a number of seconds, got {self.idle_timeout!r}")

    @property
    def open(self) -> bool:
        """No auth: anyone who reaches the socket gets in."""
        return not self.tokens

    def check_host(self, host: str) -> None:
        """No auth is refused unless the server listens on loopback only."""
        if self.open and not is_loopback(host):
            raise DoorError(f"--no-auth is allowed only on a loopback host (127.0.0.1, ::1, localhost), not "
                            f"{host!r}: anyone who reaches {host} could drive the sessions; give a --token instead")

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's `TokenVerifier`: compares against every token in constant time (digests, no early exit)."""
        offered = _digest(token)
        match = None
        for number, known in enumerate(self.tokens):
            if hmac.compare_digest(offered, _digest(known)):
                match = number
        return None if match is None else AccessToken(token="", client_id=f"token-{match}", scopes=[])

    def app_options(self, url: str) -> dict[str, Any]:
        """The keyword arguments of the SDK's `streamable_http_app` that set this door up."""
        options: dict[str, Any] = {"max_sessions": self.max_sessions,
                                   "session_idle_timeout": self.idle_timeout or None}
        if not self.open:
            # issuer_url is required by AuthSettings; with no provider and no resource URL the SDK
            # mounts no OAuth routes, only the bearer check.
            options["auth"] = AuthSettings(issuer_url=AnyHttpUrl(url), resource_server_url=None)
            options["token_verifier"] = self
        return options
