"""The listening socket of `serve --transport http`, bound before anything says it is serving.

uvicorn binds inside its own startup and reports a bad host or a busy port by logging and exiting
3; binding here first turns those into one `ListenError` (bad input), and lets the caller print
the address only once the socket is really listening (with `--port 0`, the port it got).
"""

from __future__ import annotations

import socket

from catalog.errors import EnvforgeError

__all__ = ["ListenError", "bind", "url_of"]


class ListenError(ValueError, EnvforgeError):
    """The server cannot listen where asked (a bad port, an unknown host, an address in use)."""


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port); raises ListenError, leaving nothing open."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ListenError(f"--port must be 0 to 65535, got {port!r}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ListenError(f"cannot listen on {host!r}: not a host name or address this machine resolves "
                          f"({exc})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket, path: str = "/mcp") -> str:
    """The http URL the socket serves `path` at (IPv6 addresses in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"
