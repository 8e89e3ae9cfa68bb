"""Time-to-healthy: through wizard.launch vs the same argv started by hand (Popen + /health poll).

    python benchmarks/launch_overhead.py [--rounds 2] [--model DIR] [--poll 0.1]

Builds a tiny Llama (tests/factory.py) unless --model is given, plans the launch once
(same argv, same environment for both), then alternates: by hand, wizard, by hand, wizard...
"by hand" = subprocess.Popen(argv, start_new_session=True) + GET /health every --poll s until 200.
"wizard"  = wizard.launch.launch(cfg, port=P) + handle.wait_healthy() (/health then /v1/models),
            which also runs the rules check (api.check) and the port test before starting.
Prints one line per run and the median of each side; target: wizard adds < 1 s.
Servers are always stopped (process group killed). Needs the vLLM CPU build; ~1 min per run.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


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
        time.sleep(1)  # let the group finish exiting before the next start


def via_wizard(cfg, port: int, kv: float, timeout: float) -> tuple[float, float]:
    from wizard.launch import launch

    t0 = time.perf_counter()
    h = launch(cfg, port=port, kv_cache_space_gib=kv, allow_hub=False, metrics_interval=0)
    t_spawned = time.perf_counter() - t0
    try:
        if not h.wait_healthy(timeout):
            raise RuntimeError(f"wizard launch not healthy: {h.status()}\n" + "\n".join(h.logs(20)))
        return time.perf_counter() - t0, t_spawned
    finally:
        h.stop()
        time.sleep(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", default=None)
    ap.add_argument("--poll", type=float, default=0.1)
    ap.add_argument("--kv-cache-space-gib", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args()

    from wizard.config import config_from_dict
    from wizard.launch import find_free_port, plan_launch

    model = a.model
    if model is None:
        from factory import make_tiny_llama

        model = str(make_tiny_llama(Path(tempfile.mkdtemp(prefix="sw-bench-")) / "tiny"))
    cfg = config_from_dict({"model": model, "enforce_eager": True, "max_model_len": 512,
                            "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})
    hand, wiz, pre = [], [], []
    for r in range(a.rounds):
        port = find_free_port()
        plan = plan_launch(cfg, port=port, kv_cache_space_gib=a.kv_cache_space_gib)
        th = by_hand(plan.argv, plan.env, plan.base_url, a.poll, a.timeout)
        hand.append(th)
        tw, ts = via_wizard(cfg, find_free_port(), a.kv_cache_space_gib, a.timeout)
        wiz.append(tw)
        pre.append(ts)
        print(f"round {r + 1}: by hand {th:6.2f} s | wizard {tw:6.2f} s (check+spawn {ts * 1000:.0f} ms) | added {tw - th:+.2f} s", flush=True)
    mh, mw = statistics.median(hand), statistics.median(wiz)
    print(f"median time-to-healthy: by hand {mh:.2f} s, wizard {mw:.2f} s, added {mw - mh:+.2f} s "
          f"(target < 1 s: {'met' if mw - mh < 1.0 else 'NOT met'}); wizard pre-start (check + port test + spawn) "
          f"median {statistics.median(pre) * 1000:.0f} ms")
    print(f"argv: {' '.join(plan.argv)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
