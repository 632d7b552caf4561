"""What a process listens on, read from /proc (no ss or netstat needed)."""

from __future__ import annotations

import os
from pathlib import Path


def listening_addresses(pid: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp{,6} writes them) ``pid`` listens on."""
    return {address for address, _ in _listening(pid)}


def listening_ports(pid: int) -> set[int]:
    """The TCP ports ``pid`` listens on."""
    return {int(port, 16) for _, port in _listening(pid)}


def _listening(pid: int) -> set[tuple[str, str]]:
    """(address, port), both hex as /proc/net/tcp{,6} writes them, of ``pid``'s listeners."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                address, port = fields[1].rsplit(":", 1)
                found.add((address, port))
    return found


def is_loopback(hex_address: str) -> bool:
    """127.0.0.0/8 (the first octet comes last in /proc's little-endian words), ::1, or
    ::ffff:127.x.y.z."""
    if len(hex_address) == 8:
        return hex_address.endswith("7F")
    return hex_address == "00000000000000000000000001000000" or (
        hex_address.startswith("0000000000000000FFFF0000") and hex_address.endswith("7F")
    )
