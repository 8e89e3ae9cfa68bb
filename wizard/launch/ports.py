"""TCP ports for the server: parse, test, pick a free one.

    port = parse_port("8000")          # 8000, or LaunchError naming the field
    check_port_free("127.0.0.1", port) # PortInUse(.free_port) when something listens there
    find_free_port()                   # a port the kernel says is free now
"""

from __future__ import annotations

import errno
import socket
from typing import Any

from wizard.config import ServeConfig
from wizard.launch.errors import LaunchError, PortInUse

__all__ = ["find_free_port", "parse_port", "check_port_free", "port_from_cfg"]


def find_free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on now (bind port 0 and read what the kernel picked)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def parse_port(value: Any, field: str = "port") -> int:
    """``value`` as a TCP port number (1..65535), else :class:`LaunchError` naming ``field``.

    Accepts ints and digit strings; refuses booleans (a bare ``--port``), floats, NaN, out-of-range
    and oversized numbers (``socket.bind`` would raise OverflowError: "port must be 0-65535")."""
    if isinstance(value, bool) or value is None:
        raise LaunchError(f"{field}: no port number given; use a number in 1..65535")
    if isinstance(value, str):
        v = value.strip()
        if not v.isascii() or not v.isdigit() or len(v) > 6:
            raise LaunchError(f"{field}: {value[:40]!r} is not a port number; use a number in 1..65535")
        value = int(v)
    if not isinstance(value, int):
        raise LaunchError(f"{field}: {str(value)[:40]!r} is not a port number; use a number in 1..65535")
    if not 0 < value < 65536:
        shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
        raise LaunchError(f"{field}: {shown} is outside 1..65535; use a free port in that range")
    return value


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUse` if ``host:port`` cannot be bound (bind test, no SO_REUSEADDR
    games: uvicorn binds with SO_REUSEADDR, which still fails on a *listening* port)."""
    port = parse_port(port)
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
    except OSError as err:
        if err.errno in (errno.EADDRINUSE, errno.EACCES):
            try:
                alt = find_free_port(host)
            except OSError:
                alt = None
            raise PortInUse(host, int(port), alt) from None
        raise LaunchError(f"cannot bind {host}:{port}: {err.strerror or err}") from None
    finally:
        s.close()


def port_from_cfg(cfg: ServeConfig) -> int | None:
    """``--port`` of the configuration (``extra_args['port']``, or a bare ``--port`` kept in
    ``invalid_values``), None when not given.
    Raises LaunchError for a value that is not a port number (1..65535)."""
    p = cfg.extra_args.get("port", cfg.invalid_values.get("port"))
    if p is None:
        return None
    return parse_port(p, "--port (in the command)")
