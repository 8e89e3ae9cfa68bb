"""Time-to-healthy: through wizard.launch vs the same argv started by hand (Popen + /health poll).

    python benchmarks/launch_overhead.py [--rounds 2] [--model DIR] [--poll 0.1]
    python benchmarks/launch_overhead.py --stand-in [--rounds 10]

Builds a tiny Llama (tests/factory.py) unless --model is given, plans the launch once
(same argv, same environment for both), then alternates: by hand, wizard, by hand, wizard...
"by hand" = subprocess.Popen(argv, start_new_session=True) + GET /health every --poll s until 200.
"wizard"  = wizard.launch.launch(cfg, port=P) + handle.wait_healthy() (/health then /v1/models),
            which also runs the rules check (api.check) and the port test before starting.
Prints one line per run and the median of each side; target: wizard adds < 1 s.
Servers are always stopped (process group killed). Needs the vLLM CPU build; ~1 min per run.

On a shared 2-core machine vLLM's own start time varies by tens of seconds between runs, which
hides a sub-second difference. ``--stand-in`` therefore measures the same two paths against
tests/launch_fake_server.py (a tiny HTTP server that is ready in ~0.1 s), isolating what the
wizard adds: the rules check, the port test, the spawner thread, the log reader and the
/health + /v1/models probes.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from _common import ROOT  # noqa: E402  (sets sys.path)


def by_hand(argv: list[str], env: dict[str, str], url: str, poll: float, timeout: float) -> float:
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while time.perf_counter() - t0 < timeout:
            if p.poll() is not None:
                raise RuntimeError(f"server exited with {p.returncode}")
            try:
                if httpx.get(url + "/health", timeout=2, trust_env=False).status_code == 200:
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                pass
            time.sleep(poll)
        raise TimeoutError("not healthy in time")
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        except ProcessLookupError:
            pass
        time.sleep(0.2)  # let the group finish exiting before the next start


def via_wizard(cfg, port: int, kv: float, timeout: float, stand_in: list[str] | None = None) -> tuple[float, float]:
    from wizard.launch import launch
    from wizard.launch import Launcher, plan_launch
    from wizard.launch.ports import check_port_free

    t0 = time.perf_counter()
    if stand_in is None:
        h = launch(cfg, port=port, kv_cache_space_gib=kv, allow_hub=False, metrics_interval=0)
    else:  # the same steps as launch(): rules check, port test, plan, spawn
        launcher = Launcher(metrics_interval=0)
        launcher.check(cfg, allow_hub=False)
        check_port_free("127.0.0.1", port)
        plan = plan_launch(cfg, port=port, kv_cache_space_gib=kv)
        plan.argv = stand_in + ["--port", str(port)]
        h = launcher.start(plan, cfg)
    t_spawned = time.perf_counter() - t0
    try:
        if not h.wait_healthy(timeout):
            raise RuntimeError(f"wizard launch not healthy: {h.status()}\n" + "\n".join(h.logs(20)))
        return time.perf_counter() - t0, t_spawned
    finally:
        h.stop()
        time.sleep(0.2)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", default=None)
    ap.add_argument("--poll", type=float, default=0.1)
    ap.add_argument("--kv-cache-space-gib", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--stand-in", action="store_true", help="measure against tests/launch_fake_server.py instead of vLLM")
    a = ap.parse_args()
    fake = [sys.executable, str(ROOT / "tests" / "launch_fake_server.py"), "--metrics", str(ROOT / "tests" / "data" / "metrics" / "ngram_cpu.txt")]

    from wizard.config import config_from_dict
    from wizard.launch import find_free_port, plan_launch

    model = a.model
    if model is None and a.stand_in:
        model = "/nonexistent/stand-in-model"
    if model is None:
        from factory import make_tiny_llama

        model = str(make_tiny_llama(Path(tempfile.mkdtemp(prefix="sw-bench-")) / "tiny"))
    cfg = config_from_dict({"model": model, "enforce_eager": True, "max_model_len": 512,
                            "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})
    hand, wiz, pre = [], [], []
    for r in range(a.rounds):
        port = find_free_port()
        plan = plan_launch(cfg, port=port, kv_cache_space_gib=a.kv_cache_space_gib)
        argv = fake + ["--port", str(port)] if a.stand_in else plan.argv
        th = by_hand(argv, plan.env, plan.base_url, a.poll, a.timeout)
        hand.append(th)
        tw, ts = via_wizard(cfg, find_free_port(), a.kv_cache_space_gib, a.timeout, fake if a.stand_in else None)
        wiz.append(tw)
        pre.append(ts)
        print(f"round {r + 1}: by hand {th:6.2f} s | wizard {tw:6.2f} s (check+spawn {ts * 1000:.0f} ms) | added {tw - th:+.2f} s", flush=True)
    mh, mw = statistics.median(hand), statistics.median(wiz)
    print(f"median time-to-healthy: by hand {mh:.2f} s, wizard {mw:.2f} s, added {mw - mh:+.2f} s "
          f"(target < 1 s: {'met' if mw - mh < 1.0 else 'NOT met'}); wizard pre-start (check + port test + spawn) "
          f"median {statistics.median(pre) * 1000:.0f} ms")
    print(f"argv: {' '.join(argv)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
