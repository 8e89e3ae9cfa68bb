"""Launch and monitor `vllm serve`: checks, process group, diagnosis, metrics, smoke test.

API for faces (CLI, Gradio UI)::

    from wizard.launch import launch, LaunchRefused, PortInUse
    compare_machine(cfg, "H100x4")   # [Difference]: what will differ on this machine (say it first)
    h = launch(cfg, kv_cache_space_gib=1)      # raises before starting anything
    h.wait_healthy(240)
    h.status()            # dict: state starting|healthy|exited|stopped|failed, url, exit_code, diagnosis...
    h.logs(200)           # last lines, without the monitor's own /health and /metrics requests
    h.latest_metrics()    # MetricsSnapshot (acceptance_rate, mean_acceptance_length, per_position, ...)
    h.metrics_history()   # list of MetricsSnapshot (bounded)
    run_smoke(h.url, 8)   # SmokeResult
    advice(h.latest_metrics(), method, k)
    h.stop()
    h.diagnosis           # Diagnosis(fixes=[Patch], commands) after a failure -> apply_patch(cfg, fix) and relaunch
    install_hint()        # what to run when vLLM is missing (VllmMissing carries it too)

Modules: errors, ports, argv, env, machine (GPUs, this machine vs the chosen hardware), install,
process (LaunchPlan, ServerHandle), spawn (start_server), launcher (plan_launch, Launcher,
launch, relaunch_with_fix), diagnosis, metrics, smoke, watchdog, cli.

The names below are loaded on first use (PEP 562 ``__getattr__``): the submodules import one
another at module level, and an ``__init__`` that imported them all would put every one of
them in an import cycle with the package (tests/test_imports.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "launch": "launcher", "Launcher": "launcher", "plan_launch": "launcher", "review_launch": "launcher", "PolicyRefused": "review", "relaunch_with_fix": "launcher",
    "ServerHandle": "process", "LaunchPlan": "process", "live_handles": "process",
    "LaunchError": "errors", "LaunchRefused": "errors", "PortInUse": "errors", "VllmMissing": "errors",
    "find_free_port": "ports",
    "Diagnosis": "diagnosis", "diagnose": "diagnosis",
    "MetricsSnapshot": "metrics", "scrape": "metrics", "advice": "metrics", "Advice": "metrics",
    "summary_line": "metrics", "plot_data": "metrics",
    "SmokeResult": "smoke", "run_smoke": "smoke",
    "compare_machine": "machine", "this_machine": "machine", "ThisMachine": "machine", "Difference": "machine",
    "render_differences": "machine",
    "install_hint": "install", "install_commands": "install", "vllm_importable": "install",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ loads them
    from wizard.launch.diagnosis import Diagnosis, diagnose
    from wizard.launch.errors import LaunchError, LaunchRefused, PortInUse, VllmMissing
    from wizard.launch.install import install_commands, install_hint, vllm_importable
    from wizard.launch.launcher import Launcher, launch, plan_launch, relaunch_with_fix, review_launch
    from wizard.launch.review import PolicyRefused
    from wizard.launch.machine import Difference, ThisMachine, compare_machine, render_differences, this_machine
    from wizard.launch.metrics import Advice, MetricsSnapshot, advice, plot_data, scrape, summary_line
    from wizard.launch.ports import find_free_port
    from wizard.launch.process import LaunchPlan, ServerHandle, live_handles
    from wizard.launch.smoke import SmokeResult, run_smoke


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'wizard.launch' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"wizard.launch.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
