"""Episode handles: state that outlives a request on the sessionless MCP protocol (2026-07-28).

That protocol has no connection: every request stands alone, so the server keeps each episode
under a handle that `reset` returns and every later call brings back. A handle is untrusted
input like any argument: it is unguessable (`secrets.token_urlsafe`, 128 bits), bound to the
owner that opened it (over HTTP, the bearer token's client), capped (`cap` open at once, like
the session cap) and expired (`idle_timeout` seconds without use, like idle sessions). An
unknown, expired, malformed or another owner's handle gets the same one error, so a caller
cannot tell which (or that another client's episode exists).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from serving.gym import ServingError

__all__ = ["Episodes", "EpisodeLimit", "UnknownEpisode", "HANDLE_BYTES"]

HANDLE_BYTES = 16
_MAX_HANDLE_CHARS = 64  # token_urlsafe(16) is 22 characters; anything much longer is not ours
_SWEEP_EVERY = 1.0  # seconds between sweeps for expired episodes

T = TypeVar("T")


class UnknownEpisode(ServingError):
    """A handle that names no open episode of this caller."""


class EpisodeLimit(ServingError):
    """`cap` episodes are open already."""


@dataclass
class _Entry(Generic[T]):
    value: T
    owner: str | None
    last_used: float


class Episodes(Generic[T]):
    """Open episodes by handle; `close(value)` runs when one expires or at `close_all`.

    `busy(value)` tells an episode in the middle of a call, which is never expired under it.
    Not thread-safe: used from the server's event loop only.
    """

    def __init__(self, cap: int, idle_timeout: float, close: Callable[[T], None],
                 busy: Callable[[T], bool] = lambda value: False, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap, self.idle_timeout = cap, idle_timeout
        self._close, self._busy, self._clock = close, busy, clock
        self._open: dict[str, _Entry[T]] = {}
        self._last_sweep = clock()

    def __len__(self) -> int:
        return len(self._open)

    def __iter__(self) -> Iterator[T]:
        return iter([entry.value for entry in self._open.values()])

    def add(self, value: T, owner: str | None) -> str:
        """A new handle for `value`, owned by `owner`; EpisodeLimit when `cap` are open (expired ones first closed)."""
        if len(self._open) >= self.cap:
            for expired in self.sweep(force=True):
                self._close(expired)
        if len(self._open) >= self.cap:
            raise EpisodeLimit(f"the server's limit of {self.cap} open episodes (--max-sessions) is reached: "
                               f"let one expire (--idle-timeout), then call reset again")
        handle = secrets.token_urlsafe(HANDLE_BYTES)
        self._open[handle] = _Entry(value, owner, self._clock())
        return handle

    def get(self, handle: object, owner: str | None) -> T:
        """The episode of `handle` if `owner` opened it and it has not expired; else UnknownEpisode."""
        for expired in self.sweep():
            self._close(expired)
        entry = self._open.get(handle) if isinstance(handle, str) and len(handle) <= _MAX_HANDLE_CHARS else None
        if entry is not None and self._expired(entry):
            self._close(self._open.pop(str(handle)).value)
            entry = None
        if entry is None or entry.owner != owner:
            raise UnknownEpisode("unknown episode (never issued, expired or closed): call reset for a new one "
                                 "and pass the episode it returns")
        entry.last_used = self._clock()
        return entry.value

    def touch(self, handle: str) -> None:
        """Count `handle` as used now (at the end of a call: a long call does not age its episode)."""
        entry = self._open.get(handle)
        if entry is not None:
            entry.last_used = self._clock()

    def discard(self, handle: str) -> None:
        """Forget `handle` without closing its value (an episode whose start failed)."""
        self._open.pop(handle, None)

    def sweep(self, force: bool = False) -> list[T]:
        """Forget the episodes idle for longer than `idle_timeout` and return them, for the caller to close.

        At most once a second unless forced; the caller may close them in a thread (a sandboxed
        env's close waits for its worker).
        """
        now = self._clock()
        if not self.idle_timeout or (not force and now - self._last_sweep < _SWEEP_EVERY):
            return []
        self._last_sweep = now
        return [self._open.pop(h).value for h in [h for h, entry in self._open.items() if self._expired(entry)]]

    def close_all(self) -> None:
        while self._open:
            self._close(self._open.popitem()[1].value)

    def _expired(self, entry: _Entry[T]) -> bool:
        return bool(self.idle_timeout) and self._clock() - entry.last_used > self.idle_timeout \
            and not self._busy(entry.value)
