"""Which TCP sockets are listening, and on what address: for tests that a server stays on loopback.

Read from /proc/net/tcp and /proc/net/tcp6 (psutil is not a dependency); `pids` narrows the list
to sockets those processes hold (matched by inode through /proc/PID/fd), since other programs on
the machine may listen wherever they like.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable
from pathlib import Path

LISTEN = "0A"


def _address(hex_address: str) -> str:
    """/proc/net/tcp{,6} spell an address as 32-bit words in host byte order, in hex."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words)) if len(raw) == 4 else socket.inet_ntop(socket.AF_INET6, words)


def _inodes(pids: Iterable[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:  # gone, or not ours
            continue
        inodes |= {link[len("socket:["):-1] for link in links if link.startswith("socket:[")}
    return inodes


def listening(pids: Iterable[int] | None = None) -> list[tuple[str, int]]:
    """(address, port) of each listening TCP socket (IPv4 and IPv6), only those of `pids` if given."""
    wanted = None if pids is None else _inodes(pids)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != LISTEN or (wanted is not None and fields[9] not in wanted):
                continue
            host, port = fields[1].split(":")
            found.append((_address(host), int(port, 16)))
    return found


def descendants(pid: int) -> set[int]:
    """`pid` and every process below it (read from /proc/*/stat)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    family, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return family


def off_loopback(addresses: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """The addresses not on loopback (0.0.0.0 and :: count as every interface, so off loopback)."""
    return [(host, port) for host, port in addresses if not ipaddress.ip_address(host).is_loopback]
