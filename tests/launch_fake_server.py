"""Stand-in for a vLLM server, for fault injection in tests/test_launch_unit.py only.

Serves /health, /v1/models (after --models-delay s) and /metrics (a captured vLLM page).
--ignore-term: ignore SIGTERM (forces the launcher's SIGKILL escalation).
--grandchild: also start a child process that ignores SIGTERM and sleeps.
--grandchild-session: the same child, in a session of its own (setsid: not in the server's group).
--crash TEXT: print a traceback ending in TEXT and exit 1 before serving.
"""

import argparse
import http.server
import json
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--metrics", required=True)
p.add_argument("--ignore-term", action="store_true")
p.add_argument("--grandchild", action="store_true")
p.add_argument("--grandchild-session", action="store_true")
p.add_argument("--models-delay", type=float, default=0.0)
p.add_argument("--crash", default=None)
a = p.parse_args()

if a.crash:
    print("INFO starting fake server", flush=True)
    print("Traceback (most recent call last):", flush=True)
    print('  File "fake.py", line 1, in <module>', flush=True)
    print(a.crash, flush=True)
    sys.exit(1)
if a.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if a.grandchild or a.grandchild_session:
    subprocess.Popen([sys.executable, "-c", "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
                     start_new_session=a.grandchild_session)
T0 = time.monotonic()
METRICS = open(a.metrics, encoding="utf-8").read().encode()


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self._send(200, b"")
        elif self.path == "/v1/models":
            if time.monotonic() - T0 < a.models_delay:
                self._send(503, b"{}")
            else:
                self._send(200, json.dumps({"data": [{"id": "fake-model"}]}).encode())
        elif self.path == "/metrics":
            self._send(200, METRICS, "text/plain")
        else:
            self._send(404, b"")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), H)
print(f"fake server listening on {a.port}", flush=True)
srv.serve_forever()
