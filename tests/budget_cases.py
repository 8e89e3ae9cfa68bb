"""Byte budgets (issue 20 item 3): the hostile inputs that are small in *count* but large in
*bytes*, shared by tests/test_budgets.py and benchmarks/hostile_input.py (``--families budgets``).

* an alias bomb: one ~900 KB YAML scalar repeated through N aliases (10,000 aliases: 10,002
  nodes, far below the node budget, but 8.4 GiB expanded; importing it in the UI reached 20 GB);
* a 200,000-key "Other options" box, and the same configuration as the browser's copy of the
  tab (``/restore``) and as a session file (``/do_load_session``);
* hostile ``/metrics`` pages: ``position="10000000"`` (a 10^7-entry list per scrape), a page of
  60,000 per-position lines, and a page that never ends (served from a thread of this process).

Each case returns what it observed (refused or not, the message) so that callers assert on
values; time and memory are measured around them by :class:`hostile.Budget`.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any

BIG_SCALAR = 900_000


def alias_bomb_yaml(n_aliases: int, scalar: int = BIG_SCALAR) -> str:
    """``model: m``, one ``scalar``-character string anchored as ``&a`` and a list of ``*a``."""
    return f"model: m\nbig: &a '{'x' * scalar}'\nmany: [" + ", ".join(["*a"] * n_aliases) + "]\n"


def many_options(n: int = 200_000) -> dict[str, int]:
    return {f"k{i}": i for i in range(n)}


def wide_box(n: int = 200_000) -> str:
    """The "Other options" box holding ``n`` options as JSON (200,000: 2.9 MB)."""
    return json.dumps(many_options(n))


LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def wide_bstate(n: int = 200_000) -> dict[str, Any]:
    """The browser's copy of a tab whose Other options hold ``n`` options (what /restore gets)."""
    return {"v": 1, "config": {"model": LLAMA, "max_num_seqs": 8, "extra_args": many_options(n)},
            "gpu": {"name": "H100", "count": 1}, "raw": {"acceptance": "0.7"}}


def wide_session(n: int = 200_000) -> bytes:
    return json.dumps({"specwizard_session": 1, **wide_bstate(n)}).encode()


# ---- /metrics ---------------------------------------------------------------------------------

def real_metrics_page() -> str:
    return (Path(__file__).parent / "data" / "metrics" / "ngram_cpu.txt").read_text()


PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"


def metrics_far_position() -> str:
    """A real page plus one per-position line at ``position="10000000"``."""
    return real_metrics_page() + f'{PER_POS}{{engine="0",position="10000000"}} 1.0\n'


def metrics_many_positions(n: int = 60_000) -> str:
    """A real page plus ``n`` per-position lines (positions 0..n-1, ~5 MB at 60,000)."""
    return real_metrics_page() + "".join(f'{PER_POS}{{engine="0",position="{i}"}} 1.0\n' for i in range(n))


class MetricsServer:
    """A /metrics endpoint on a loopback port, served from a thread of this process: ``body``
    (bytes), or with ``endless=True`` a page that never ends (chunks of per-position lines)."""

    def __init__(self, body: bytes = b"", endless: bool = False):
        self.body, self.endless = body, endless
        self.sent = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                if outer.endless:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    line = f'{PER_POS}{{engine="0",position="7"}} 1.0\n'.encode() * 1000
                    try:
                        while outer.sent < 1 << 30:  # stops on its own after 1 GiB at most
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                            outer.sent += len(line)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)
                outer.sent += len(outer.body)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.srv.handle_error = lambda request, client_address: None  # the client hanging up is the point
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


def scrape_case(url: str, scrapes: int = 1) -> dict[str, Any]:
    """Scrape ``url`` ``scrapes`` times into a MetricsSeries: what was kept."""
    from wizard.launch.metrics import MetricsSeries, scrape

    series = MetricsSeries()
    for _ in range(scrapes):
        series.add(scrape(url, prev=series.latest(), timeout=30))
    snap = series.latest()
    return {"positions": len(snap.raw["accepted_per_pos"]), "notes": snap.notes, "kept": len(series),
            "history_bytes": series.nbytes, "num_drafts": snap.raw["num_drafts"]}


def series_case(text: str, n: int = 1800) -> dict[str, Any]:
    """``n`` snapshots of ``text`` in a MetricsSeries (the monitor keeps 1,800; each scrape builds
    new lists): what it holds. The page is parsed once; each snapshot gets fresh lists and floats."""
    from wizard.launch.metrics import MetricsSeries, snapshot_from_text

    first = snapshot_from_text(text, prev=snapshot_from_text(text, now=0.0), now=1.0)
    series = MetricsSeries()

    def fresh(xs):
        return [x + 0.0 for x in xs]

    for i in range(n):
        raw = {**first.raw, "accepted_per_pos": fresh(first.raw["accepted_per_pos"])}
        series.add(type(first)(time=float(i), raw=raw, dt=1.0, per_position=fresh(first.per_position),
                               window_per_position=fresh(first.window_per_position)))
    return {"kept": len(series), "history_bytes": series.nbytes, "positions": len(first.raw["accepted_per_pos"]),
            "series": series}


# ---- the UI's HTTP API --------------------------------------------------------------------------

def session_call(server, name: str, data: list[Any], sess: str) -> tuple[str, Any]:
    """(event, decoded data) of one call to endpoint ``name`` in browser session ``sess`` (the
    gr.State and the wizard's newest state carry over between calls of one session)."""
    event, body = server.call(name, data, session=sess)
    if event == "none":
        return event, body
    try:
        return event, json.loads(body)
    except ValueError:
        return event, body


def texts_of(payload: Any) -> str:
    """Every string in an event's output (component updates included), joined: what to search
    for the message."""
    out: list[str] = []
    stack = [payload]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.append(cur)
        elif isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return "\n".join(out)
