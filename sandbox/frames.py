"""Length-prefixed JSON frames between the sandbox supervisor and its workers.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (an object).
Lines would let env code that prints or writes to the protocol descriptor shift every later
answer; a length prefix with a size cap lets the supervisor tell garbage from a frame, and a
frame larger than the cap is refused before it is read (no unbounded buffering).
"""

from __future__ import annotations

import json
import os
import select
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
    try:
        body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
    except UnicodeEncodeError:  # a lone surrogate in a str: escaped, so the str arrives unchanged
        body = json.dumps(message, ensure_ascii=True, allow_nan=False).encode()
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
    """Reads frames from a pipe or socket with a deadline, never buffering more than a capped frame and a chunk.

    A read takes whatever has arrived (often several frames at once), and the reader waits (one
    poll object per reader) only when it has nothing to parse.
    """

    CHUNK = 1 << 20
    SMALL = 1 << 16

    def __init__(self, fd: int, cap: int = MAX_FRAME) -> None:
        self.fd, self.cap = fd, cap
        self.buffer = bytearray()
        self.ended = False
        self.openings = 0  # `[` and `{` bytes in the last frame read: no value in it nests deeper than that
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def _wait(self, seconds: float) -> bool:
        try:
            return bool(self._poll.poll(max(0, int(seconds * 1000))))
        except (OSError, ValueError):
            return True  # let the read report the broken channel

    def _read_available(self, want: int = 0) -> bool | None:
        """Append what has arrived: True if something did, None if nothing yet, False at end of stream.

        A read asks for what the frame still needs (at least `SMALL`, at most `CHUNK`): the buffer
        a read allocates costs in proportion to what it asks, whatever arrives.
        """
        if not self._wait(0):
            return None
        try:
            chunk = os.read(self.fd, min(max(want, self.SMALL), self.CHUNK))
        except OSError:  # the peer died with bytes unread (ECONNRESET) or the channel was closed
            chunk = b""
        if not chunk:
            self.ended = True
            return False
        self.buffer += chunk
        return True

    def pending(self) -> bool:
        """True if bytes arrived that no frame was asked for, or the stream ended (not reusable either)."""
        return bool(self.buffer) or self.ended or self._read_available() is not None

    def _fill(self, size: int, deadline: float) -> bool | None:
        """Read until the buffer holds `size` bytes: True, None on timeout, False at end of stream."""
        while len(self.buffer) < size:
            got = self._read_available(size - len(self.buffer))
            if got is False:
                return False
            if got:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._wait(min(remaining, 3600))
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
        body = bytes(self.buffer[HEADER.size:HEADER.size + size])
        del self.buffer[:HEADER.size + size]
        self.openings = body.count(b"[") + body.count(b"{")
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
