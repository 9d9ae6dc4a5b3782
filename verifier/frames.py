"""Length-prefixed JSON frames between the sandbox supervisor and its workers.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (an object).
Lines would let env code that prints or writes to the protocol descriptor shift every later
answer; a length prefix with a size cap lets the supervisor tell garbage from a frame, and a
frame larger than the cap is refused before it is read (no unbounded buffering).
"""

from __future__ import annotations

import json
import os
import selectors
import struct
import time
from typing import Any

__all__ = ["HEADER", "MAX_FRAME", "FrameError", "FrameTooLarge", "encode", "FrameReader", "read_frame_blocking"]

HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 2**20  # the largest frame either side accepts (bytes of JSON)


class FrameError(Exception):
    """The peer sent something that is not a frame: the peer is broken or hostile."""


class FrameTooLarge(FrameError):
    """A frame announced more bytes than the cap."""


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding `message` as JSON."""
    body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
    return HEADER.pack(len(body)) + body


def _decode(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"malformed frame ({exc})") from None
    except RecursionError:  # JSON nested too deep to decode: garbage, never the reader's exception
        raise FrameError("malformed frame (nested too deep)") from None
    if not isinstance(message, dict):
        raise FrameError("malformed frame (not a JSON object)")
    return message


class FrameReader:
    """Reads frames from a pipe with a deadline, never buffering more than one capped frame."""

    def __init__(self, fd: int, cap: int = MAX_FRAME) -> None:
        self.fd, self.cap = fd, cap
        self.buffer = b""

    def pending(self) -> bool:
        """True if bytes arrived that no frame was asked for (leftovers are a protocol anomaly)."""
        if self.buffer:
            return True
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self.fd, selectors.EVENT_READ)
                return bool(selector.select(0))
        except (OSError, ValueError):
            return True  # a closed channel: the worker is not reusable either

    def _fill(self, size: int, deadline: float) -> bool | None:
        """Read until the buffer holds `size` bytes: True, None on timeout, False at end of stream."""
        while len(self.buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                with selectors.DefaultSelector() as selector:
                    selector.register(self.fd, selectors.EVENT_READ)
                    if not selector.select(remaining):
                        return None
            except (OSError, ValueError):
                return False
            try:
                chunk = os.read(self.fd, min(1 << 20, size - len(self.buffer)))
            except OSError:  # the peer died with bytes unread (ECONNRESET) or the channel was closed
                return False
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def read(self, deadline: float) -> dict[str, Any] | None | bool:
        """The next frame; None if none came by `deadline`; False if the stream ended.

        Raises FrameError for bytes that are not a frame, FrameTooLarge above the cap.
        """
        filled = self._fill(HEADER.size, deadline)
        if filled is not True:
            return filled
        (size,) = HEADER.unpack(self.buffer[:HEADER.size])
        if size > self.cap:
            raise FrameTooLarge(f"frame of {size} bytes exceeds the {self.cap}-byte cap")
        filled = self._fill(HEADER.size + size, deadline)
        if filled is not True:
            return filled
        body = self.buffer[HEADER.size:HEADER.size + size]
        self.buffer = self.buffer[HEADER.size + size:]
        return _decode(body)


def read_frame_blocking(fd: int, cap: int = MAX_FRAME) -> dict[str, Any] | None:
    """The next frame from `fd`, waiting as long as it takes; None at end of stream (the worker side)."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > cap:
        raise FrameTooLarge(f"frame of {size} bytes exceeds the {cap}-byte cap")
    body = _read_exactly(fd, size)
    if body is None:
        raise FrameError("stream ended inside a frame")
    return _decode(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            if data:
                raise FrameError("stream ended inside a frame")
            return None
        data += chunk
    return data
