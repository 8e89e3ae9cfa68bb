"""HTTP-level guards of the wizard's Gradio app, and whether its dangerous actions are allowed.

* :class:`RequestGuard` (ASGI middleware, installed by ``build_app().launch()``):

  - **DNS rebinding / cross-site requests** (issue 10, item 2): when no login is set, every
    HTTP request must name this server in its ``Host`` header (a loopback name, any port, so SSH
    tunnels work; the address the connection arrived on, with its port; or the Gradio share
    host), and an ``Origin`` header, when sent, must be that same origin. Anything else gets
    403. A page on another site that rebinds its name to 127.0.0.1, or posts to
    http://127.0.0.1:PORT from the browser (another site, or another local port), is refused
    before Gradio sees the request.
  - **Login attempts** (item 5; issue 20 item 4): every ``POST /login`` is *reserved* before
    Gradio checks the password, and the reservation counts against the budgets until the answer
    is ready (the delay included). A client address may have one attempt in flight; each failure
    is answered after a growing delay (0.25 s doubling, at most 4 s) and after ``max_failures``
    failures in a row the address is locked out for ``lockout_s`` seconds (doubling on each
    lockout, at most 15 min). Across all addresses at most ``global_max_failures`` failures (in
    flight included) are allowed per ``global_window_s`` seconds; then *every* login is locked
    out for ``lockout_s`` (doubling the same way). A refused attempt gets 429 without the
    password being checked, so a parallel burst, or one spread over many source addresses, gets
    no more checks than the budget.

* :func:`exposure` (item 3): launching servers and running vLLM's own config check in a
  subprocess are allowed only when the UI is bound to loopback without a share link, or a login
  is set, whatever started it (app.py, ``build_app().launch(server_name="0.0.0.0")`` in a
  notebook, or a hosted notebook where Gradio turns sharing on by itself).
"""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import re
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RequestGuard", "exposure", "is_loopback", "bind_is_loopback", "LOOPBACK_NAMES"]

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback(host: str | None) -> bool:
    """Whether bind address / host name ``host`` is loopback-only (127.0.0.0/8, ::1, localhost)."""
    if not host:
        return False
    h = str(host).strip().strip("[]").lower()
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


#: the characters of an IPv4 address in inet_aton's forms (127.1, 0x7f.1, 2130706433): no spaces,
#: as inet_aton would ignore what follows one
_INET_ATON_FORM = re.compile(r"[0-9A-Fa-fXx.]{1,64}")


def bind_is_loopback(host: str | None) -> bool:
    """Whether bind address ``host`` is loopback-only, reading the short IPv4 forms the way the OS
    does when it binds (``socket.inet_aton``: ``127.1`` is 127.0.0.1, ``0x7f.1`` too): any address
    of 127.0.0.0/8, ``::1`` or ``localhost``. Only a bind address: a Host header is judged by
    :func:`is_loopback` (browsers send the canonical form)."""
    if is_loopback(host):
        return True
    h = str(host or "").strip()
    if not _INET_ATON_FORM.fullmatch(h):
        return False
    try:
        return ipaddress.ip_address(socket.inet_ntoa(socket.inet_aton(h))).is_loopback
    except (OSError, ValueError):
        return False


def exposure(demo: Any) -> str | None:
    """Why the app is reachable beyond this machine without a login (a sentence), or None when
    it is bound to loopback without a share link, or a login is set.

    Reads what ``Blocks.launch`` recorded (``auth``, ``share``, ``server_name``); an app that was
    never launched by Gradio itself (mounted in another server) counts as exposed."""
    if demo is None:
        return "the UI was not started by Gradio's launch()"
    if getattr(demo, "auth", None):
        return None
    if getattr(demo, "share", False) or getattr(demo, "share_url", None):
        return "the UI has a public Gradio share link and no login"
    name = getattr(demo, "server_name", None)
    if name is None:
        return "the UI was not started by Gradio's launch() (its bind address is unknown) and has no login"
    if not bind_is_loopback(name):
        return f"the UI is bound to {name}, beyond loopback, without a login"
    return None


def _host_port(value: str) -> tuple[str, int | None]:
    parts = urlsplit("//" + value)
    try:
        port = parts.port
    except ValueError:
        port = -1
    return (parts.hostname or "").lower(), port


class RequestGuard:
    """ASGI middleware; see the module docstring. ``demo`` is the Blocks (read at request time,
    so the login/share state of the running app is used)."""

    def __init__(self, app, demo: Any = None, max_failures: int = 5, lockout_s: float = 60.0,
                 max_lockout_s: float = 900.0, delay_base_s: float = 0.25, delay_max_s: float = 4.0,
                 global_max_failures: int = 20, global_window_s: float = 60.0):
        self.app = app
        self.demo = demo
        self.max_failures = max_failures
        self.lockout_s = lockout_s
        self.max_lockout_s = max_lockout_s
        self.delay_base_s = delay_base_s
        self.delay_max_s = delay_max_s
        self.global_max_failures = global_max_failures
        self.global_window_s = global_window_s
        self._lock = threading.Lock()
        self._fails: dict[str, int] = {}
        self._locks: dict[str, tuple[float, float]] = {}  # client -> (locked until, last lockout length)
        self._inflight: set[str] = set()  # clients with an attempt being checked (or its delay running)
        self._recent: collections.deque[float] = collections.deque()  # times of recent failures, all clients
        self._global_lock: tuple[float, float] = (0.0, 0.0)  # (locked until, last lockout length)

    # ---- host / origin -------------------------------------------------------------------------
    def _host_ok(self, scope, h: str, p: int | None) -> bool:
        """A loopback name (any port: SSH tunnels and editors forward to other local ports; a
        rebinding page can never make the browser send one), the address the connection arrived
        on with its port, or the Gradio share host."""
        if h.strip("[]") in {x.strip("[]") for x in LOOPBACK_NAMES} or is_loopback(h):
            return True
        server = scope.get("server") or (None, None)
        if server[0] and h.strip("[]") == str(server[0]).lower().strip("[]") and p in (None, server[1]):
            return True
        share = getattr(self.demo, "share_url", None)
        return bool(share) and h == (urlsplit(share).hostname or "").lower()

    def _host_problem(self, scope) -> str | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host")
        if host is None:
            return "no Host header"
        h, p = _host_port(host)
        if p == -1 or not self._host_ok(scope, h, p):
            return f"Host {host[:80]!r} does not name this server"
        origin = headers.get("origin")
        if origin is not None:  # same origin as the Host the browser addressed, or refused
            o = urlsplit(origin)
            try:
                op = o.port or (443 if o.scheme == "https" else 80)
            except ValueError:
                op = -1
            default = 443 if o.scheme == "https" else 80
            if o.scheme not in ("http", "https") or (o.hostname or "").lower() != h or op != (p or default):
                return f"Origin {origin[:80]!r} is not this server"
        return None

    # ---- login throttling ----------------------------------------------------------------------
    def _lockout(self, last: float) -> tuple[float, float]:
        length = min(self.max_lockout_s, last * 2 if last else self.lockout_s)
        return time.monotonic() + length, length

    def _reserve(self, client: str) -> tuple[float, str] | None:
        """Reserve a login attempt for ``client`` before its password is checked: None when it may
        go on (release it with :meth:`_record`), else (seconds to wait, why) for a 429."""
        now = time.monotonic()
        with self._lock:
            while self._recent and self._recent[0] <= now - self.global_window_s:
                self._recent.popleft()
            until, _ = self._global_lock
            if until > now:
                return until - now, "too many failed logins on this server"
            until, _ = self._locks.get(client, (0.0, 0.0))
            if until > now:
                return until - now, "too many failed logins"
            if client in self._inflight:
                return 1.0, "a login from this address is being checked"
            if len(self._recent) + len(self._inflight) >= self.global_max_failures:
                # should every attempt in flight fail, the global budget would be spent: wait for
                # them (a burst over many addresses gets no more checks than the budget)
                return 1.0, "too many logins are being checked on this server"
            self._inflight.add(client)
            return None

    def _record(self, client: str, ok: bool | None) -> float:
        """Record the result of a reserved attempt (None: the password was not checked); returns
        the delay (s) to apply before answering a failure. The reservation stays until
        :meth:`_release`."""
        with self._lock:
            if ok is None:
                return 0.0
            if ok:
                self._fails.pop(client, None)
                self._locks.pop(client, None)
                return 0.0
            now = time.monotonic()
            self._recent.append(now)
            n = self._fails.get(client, 0) + 1
            self._fails[client] = n
            if n >= self.max_failures:
                self._locks[client] = self._lockout(self._locks.get(client, (0.0, 0.0))[1])
                self._fails[client] = 0
                if len(self._locks) > 4096:  # many addresses (IPv6): forget expired lockouts
                    for c in [c for c, (u, _) in self._locks.items() if u <= now and c != client]:
                        self._locks.pop(c, None)
                        self._fails.pop(c, None)
            if len(self._recent) >= self.global_max_failures:
                self._global_lock = self._lockout(self._global_lock[1])
                self._recent.clear()
            return min(self.delay_max_s, self.delay_base_s * (2 ** (n - 1)))

    def _release(self, client: str) -> None:
        with self._lock:
            self._inflight.discard(client)

    async def _respond(self, send, code: int, text: str, extra: list | None = None) -> None:
        body = text.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": code, "headers": headers + (extra or [])})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope.get("type") not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        auth = getattr(self.demo, "auth", None)
        if not auth:
            problem = self._host_problem(scope)
            if problem is not None:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                return await self._respond(send, 403, f"Forbidden: {problem} (SpecWizard accepts requests for "
                                                      "127.0.0.1/localhost only unless a login is set).")
            return await self.app(scope, receive, send)
        path = scope.get("path") or ""
        if scope["type"] != "http" or scope.get("method") != "POST" or not path.rstrip("/").endswith("/login"):
            return await self.app(scope, receive, send)
        client = (scope.get("client") or ("?",))[0]
        refused = self._reserve(client)
        if refused is not None:
            wait, why = refused
            return await self._respond(send, 429, f"{why[0].upper()}{why[1:]}; try again in {max(1.0, wait):.0f} s.",
                                       [(b"retry-after", str(int(wait) + 1).encode())])
        status: dict[str, int] = {}
        held: list[dict] = []

        async def capture(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            held.append(message)

        try:
            ok: bool | None = None
            try:
                await self.app(scope, receive, capture)
            finally:
                code = status.get("code", 500)
                if code < 300 or code in (302, 303, 307):
                    ok = True
                elif code in (400, 401, 403):
                    ok = False
                delay = self._record(client, ok)
            if delay:
                await asyncio.sleep(delay)  # still reserved: the next attempt of this client waits for it
        finally:
            # released before the answer goes out, so a client that waits for it is never refused
            self._release(client)
        for m in held:
            await send(m)
