"""Launch and monitor `vllm serve` (issue 4): process group, diagnosis, metrics, smoke test.

API for faces (CLI, Gradio UI)::

    from wizard.launch import launch, LaunchRefused, PortInUse
    h = launch(cfg, kv_cache_space_gib=1)      # raises before starting anything
    h.wait_healthy(240)
    h.status()            # dict: state starting|healthy|exited|stopped|failed, url, exit_code, diagnosis...
    h.logs(200)           # last lines
    h.latest_metrics()    # MetricsSnapshot (acceptance_rate, mean_acceptance_length, per_position, ...)
    h.metrics_history()   # list of MetricsSnapshot (bounded)
    run_smoke(h.url, 8)   # SmokeResult
    advice(h.latest_metrics(), method, k)
    h.stop()
    h.diagnosis           # Diagnosis(fixes=[Patch]) after a failure -> apply_patch(cfg, fix) and relaunch
"""

from wizard.launch.diagnose import Diagnosis, diagnose
from wizard.launch.metrics import Advice, MetricsSnapshot, advice, plot_data, scrape, summary_line
from wizard.launch.process import (
    LaunchError,
    LaunchPlan,
    LaunchRefused,
    Launcher,
    PortInUse,
    ServerHandle,
    find_free_port,
    launch,
    live_handles,
    plan_launch,
)
from wizard.launch.smoke import SmokeResult, run_smoke

__all__ = [
    "launch", "Launcher", "ServerHandle", "LaunchPlan", "plan_launch", "LaunchError", "LaunchRefused", "PortInUse",
    "find_free_port", "live_handles", "Diagnosis", "diagnose", "MetricsSnapshot", "scrape", "advice", "Advice",
    "summary_line", "plot_data", "SmokeResult", "run_smoke", "relaunch_with_fix",
]


def relaunch_with_fix(handle: ServerHandle, fix, **launch_kwargs) -> ServerHandle:
    """"Apply fix and relaunch": stop ``handle`` (if still running), apply the Patch ``fix`` to its
    configuration and launch again with the same port/host unless overridden.
    Raises what :func:`launch` raises."""
    from wizard.config import apply_patch

    handle.stop()
    cfg = apply_patch(handle.cfg, fix)
    launch_kwargs.setdefault("host", handle.plan.host)
    return launch(cfg, **launch_kwargs)
