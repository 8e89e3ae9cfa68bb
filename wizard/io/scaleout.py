"""Scale-out exports of one ServeConfig: multi-GPU, Ray multi-node, Kubernetes, Helm, docker.

    from wizard.io.scaleout import export_scaleout
    text = export_scaleout(cfg, "k8s", hardware="H100-SXMx4")

Every form carries **the same vLLM argv** as the plain command export: the arguments come from
:func:`wizard.io.export.to_argv` (never rebuilt here). Where a form needs a different option (Ray
needs ``--distributed-executor-backend ray``; the Helm chart sets TP and prefix caching from its
own keys) the change is made on a *copy of the ServeConfig* and that copy goes through
``to_argv`` again.

Formats (``to``):

``multi-gpu``
    Shell text: ``CUDA_VISIBLE_DEVICES=0,1,.. vllm serve ...`` for TP x PP (x DP) GPUs on one
    node, with a comment on the drafter's tensor parallelism.
``ray``
    Shell text: ``ray start --head`` on the head node, ``ray start --address=HEAD:PORT`` on each
    worker, then ``vllm serve ... --distributed-executor-backend ray`` on the head; TP x PP
    spans ``ceil(TP*PP / gpus_per_node)`` nodes.
``k8s``
    YAML, two documents: an ``apps/v1`` Deployment (``vllm/vllm-openai`` image, ``command:
    [vllm, serve]``, ``args`` = the argv, GPU requests/limits ``nvidia.com/gpu``, ``/dev/shm``
    memory volume, readiness/liveness probes on ``/health``, ``HF_TOKEN`` from a Secret) and
    a ``v1`` Service.
``helm``
    YAML values for vLLM's production-stack chart ``vllm-stack``
    (https://github.com/vllm-project/production-stack, ``helm/values.yaml`` and
    ``helm/values.schema.json``): ``servingEngineSpec.modelSpec[0]`` with ``modelURL``,
    ``requestGPU``, ``vllmConfig.tensorParallelSize``, ``vllmConfig.enablePrefixCaching`` and
    every other option in ``vllmConfig.extraArgs``. The chart's template
    (``helm/templates/deployment-vllm-multi.yaml``) renders ``vllm serve <modelURL> --host
    0.0.0.0 --port <port>``, then ``--enable-prefix-caching`` or ``--no-enable-prefix-caching``
    (always, from ``enablePrefixCaching``), then ``--tensor-parallel-size``, then extraArgs.
``docker``
    Shell text: ``docker run --gpus ... --ipc=host -p PORT:PORT vllm/vllm-openai:TAG <argv>``
    (the image's entrypoint is ``vllm serve``). Text for the user; nothing is run.

Options (``**opts``), all optional:
    hardware: a GPU spec (``"H100-SXMx8"``) or :class:`wizard.hardware.Hardware`; picks the
        vendor (nvidia / amd / cpu) and the default ``gpus_per_node``.
    image, image_tag: container image and tag (defaults per vendor; tag ``v<vLLM version>``).
    port: server port (default: the config's ``--port``, else 8000).
    name: Kubernetes / Helm name (default: derived from the model id).
    namespace: Kubernetes namespace (default: none, i.e. the current one).
    gpus_per_node: GPUs per node for ``ray`` and for the multi-node note (default: the
        hardware count if given and <= 8, else 8).
    head_address: Ray head address placeholder (default ``$HEAD_IP``); ray_port (6379).
    devices: list of GPU indices for ``multi-gpu`` / ``docker`` (default 0..N-1).
    hf_secret, hf_secret_key: Secret holding the Hugging Face token (``hf-token-secret``,
        ``token``).
    shm_size: size of the shared-memory volume / ``--shm-size`` (default ``16Gi`` / ``16g``).
    replicas: Deployment / modelSpec replicas (default 1).

Raises:
    ValueError: unknown format (the message lists :data:`SCALEOUT_FORMATS`) or a bad option.
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Any

import yaml

from wizard.config import ServeConfig
from wizard.io.export import to_argv
from wizard.vllm.methods import is_lookup

__all__ = ["SCALEOUT_FORMATS", "export_scaleout", "serve_args", "gpu_count"]

#: The export formats this module produces.
SCALEOUT_FORMATS: tuple[str, ...] = ("multi-gpu", "ray", "k8s", "helm", "docker")

_DEFAULT_PORT = 8000
_CPU_IMAGE = "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo"
_ROCM_IMAGE = "rocm/vllm"
_NVIDIA_IMAGE = "vllm/vllm-openai"


# ---- the argv, always from wizard.io.export.to_argv ---------------------------------------

def _to_argv(cfg: ServeConfig) -> list[str]:
    """``wizard.io.export.to_argv(cfg)`` as a list of strings."""
    return [str(a) for a in to_argv(cfg)]


def serve_args(cfg: ServeConfig) -> list[str]:
    """The arguments after ``vllm serve``: ``[MODEL, --flag, value, ...]`` from ``to_argv``.

    Strips a leading ``vllm serve`` (or ``python -m vllm.entrypoints.openai.api_server``)
    if ``to_argv`` includes it; everything else is exactly ``to_argv``'s output.
    """
    argv = _to_argv(cfg)
    if len(argv) >= 2 and argv[0].endswith("vllm") and argv[1] == "serve":
        return argv[2:]
    if len(argv) >= 3 and argv[1] == "-m" and argv[2].startswith("vllm."):
        return argv[3:]
    return argv


def gpu_count(cfg: ServeConfig) -> int:
    """GPUs one server needs: tensor x pipeline x data parallel size (vLLM defaults 1)."""
    return (cfg.tensor_parallel_size or 1) * (cfg.pipeline_parallel_size or 1) * (cfg.data_parallel_size or 1)


def _with(cfg: ServeConfig, *, extra: dict[str, Any] | None = None, **fields: Any) -> ServeConfig:
    """A copy of ``cfg`` with top-level fields replaced and extra_args merged (None removes)."""
    c = cfg.model_copy(deep=True)
    for k, v in fields.items():
        setattr(c, k, v)
        if v is None:
            c.model_fields_set.discard(k)
    if extra:
        ea = dict(c.extra_args)
        for k, v in extra.items():
            if v is None:
                ea.pop(k, None)
            else:
                ea[k] = v
        c.extra_args = ea
    return c


# ---- options ---------------------------------------------------------------------------

def _hardware(opts: dict[str, Any]):
    hw = opts.get("hardware")
    if hw is None or not isinstance(hw, str):
        return hw
    from wizard.hardware.catalog import parse_gpu_spec

    return parse_gpu_spec(hw)


def _vendor(opts: dict[str, Any]) -> str:
    if opts.get("vendor"):
        return str(opts["vendor"])
    hw = _hardware(opts)
    return getattr(hw, "vendor", "nvidia") if hw is not None else "nvidia"


def _image(opts: dict[str, Any]) -> str:
    vendor = _vendor(opts)
    image = opts.get("image") or {"cpu": _CPU_IMAGE, "amd": _ROCM_IMAGE}.get(vendor, _NVIDIA_IMAGE)
    tag = opts.get("image_tag")
    if tag is None:
        if vendor == "amd" and not opts.get("image"):
            tag = "latest"
        else:
            from wizard.vllm.versions import default_version

            tag = f"v{default_version()}"
    return f"{image}:{tag}"


def _port(cfg: ServeConfig, opts: dict[str, Any]) -> int:
    raw = opts.get("port", cfg.extra_args.get("port", _DEFAULT_PORT))
    try:
        port = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"port: {raw!r} is not a port number") from None
    if not 0 < port < 65536:
        raise ValueError(f"port: {port} is outside 1..65535")
    return port


def _gpus_per_node(cfg: ServeConfig, opts: dict[str, Any]) -> int:
    if opts.get("gpus_per_node") is not None:
        n = int(opts["gpus_per_node"])
    else:
        hw = _hardware(opts)
        n = hw.count if hw is not None and getattr(hw, "vendor", "nvidia") != "cpu" and hw.count <= 8 else 8
        n = max(n, 1)
    if n < 1:
        raise ValueError(f"gpus_per_node: {n} must be >= 1")
    return n


#: Most GPUs one host (one ``docker run``) is given: the largest single nodes have 8-16 GPUs;
#: beyond this a device list is a typo (``-tp 1000000000``), and spans nodes anyway (use ray/k8s).
MAX_GPUS_PER_HOST = 64


def _devices(cfg: ServeConfig, opts: dict[str, Any]) -> list[int]:
    devs = opts.get("devices")
    if devs is None:
        n = gpu_count(cfg)
        if n > MAX_GPUS_PER_HOST:
            raise ValueError(
                f"tensor_parallel_size x pipeline_parallel_size x data_parallel_size = {n if n < 10 ** 12 else 'over 10**12'} "
                f"GPUs, more than one host has (at most {MAX_GPUS_PER_HOST} here): lower the parallel sizes, or export "
                "a multi-node form (--to ray or k8s)")
        return list(range(n))
    return [int(d) for d in devs]


def _name(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    """A DNS-1035 label from the model id (``meta-llama/Llama-3.1-8B`` -> ``vllm-llama-3-1-8b``)."""
    raw = opts.get("name") or ("vllm-" + cfg.model.rstrip("/").split("/")[-1])
    name = re.sub(r"[^a-z0-9-]+", "-", str(raw).lower()).strip("-")
    if not name or not name[0].isalpha():
        name = "vllm-" + name
    return name[:53].rstrip("-")  # room for suffixes under the 63-character limit


def _env_prefix(cfg: ServeConfig, extra: dict[str, str] | None = None) -> str:
    env = {**(extra or {}), **cfg.env}
    return " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items())


def _draft_tp_note(cfg: ServeConfig) -> str | None:
    spec = cfg.speculative_config
    if spec is None:
        return None
    tp = cfg.tensor_parallel_size or 1
    dtp = spec.draft_tensor_parallel_size
    method = spec.method or "(inferred)"
    if is_lookup(method):
        return f"# Drafter: method {method} has no draft model, so draft_tensor_parallel_size does not apply."
    if dtp is None:
        return (f"# Drafter: draft_tensor_parallel_size is unset, so the drafter runs at the target TP ({tp}); "
                "vLLM allows 1 or the target TP (draft_model on the V1 runner needs the target TP).")
    return (f"# Drafter: draft_tensor_parallel_size={dtp} (target TP {tp}); vLLM allows 1 or the target TP "
            "(draft_model on the V1 runner needs the target TP).")


# ---- formats ---------------------------------------------------------------------------

def _multi_gpu(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    n = gpu_count(cfg)
    devs = _devices(cfg, opts)
    if len(devs) < n:
        raise ValueError(f"devices: {len(devs)} given, the configuration needs {n} (TP x PP x DP)")
    vendor = _vendor(opts)
    visible = {"amd": "HIP_VISIBLE_DEVICES", "cpu": None}.get(vendor, "CUDA_VISIBLE_DEVICES")
    env = {visible: ",".join(str(d) for d in devs[:n])} if visible else {}
    tp, pp, dp = cfg.tensor_parallel_size or 1, cfg.pipeline_parallel_size or 1, cfg.data_parallel_size or 1
    lines = [
        "#!/bin/sh",
        f"# Single node: {n} GPU(s) = tensor_parallel_size {tp} x pipeline_parallel_size {pp}"
        + (f" x data_parallel_size {dp}" if dp > 1 else "") + ".",
    ]
    if n > _gpus_per_node(cfg, opts):
        lines.append(f"# Note: {n} GPUs exceed one node of {_gpus_per_node(cfg, opts)}; use the 'ray' export.")
    note = _draft_tp_note(cfg)
    if note:
        lines.append(note)
    prefix = _env_prefix(cfg, env)
    cmd = shlex.join(["vllm", "serve", *serve_args(cfg)])
    lines.append(f"{prefix} {cmd}" if prefix else cmd)
    return "\n".join(lines) + "\n"


def _ray(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    tp, pp = cfg.tensor_parallel_size or 1, cfg.pipeline_parallel_size or 1
    per_node = _gpus_per_node(cfg, opts)
    world = tp * pp
    nodes = int(opts.get("nodes") or max(1, math.ceil(world / per_node)))
    head = str(opts.get("head_address", "$HEAD_IP"))
    ray_port = int(opts.get("ray_port", 6379))
    ray_cfg = _with(cfg, extra={"distributed_executor_backend": "ray"})
    # a config needing fewer GPUs than a node has registers only those with Ray
    used = min(per_node, world)
    lines = [
        "#!/bin/sh",
        f"# Multi-node with Ray: tensor_parallel_size {tp} x pipeline_parallel_size {pp} = {world} GPU(s)"
        f" on {nodes} node(s) of {used} GPU(s).",
    ]
    if tp > per_node:
        lines.append(f"# Note: TP {tp} > {per_node} GPUs per node, so tensor parallelism crosses nodes (needs a fast "
                     f"interconnect); TP {per_node} x PP {max(1, world // per_node)} keeps TP inside a node.")
    note = _draft_tp_note(cfg)
    if note:
        lines.append(note)
    lines += [
        "# Every node: same vLLM image/version, the model reachable at the same path, and the same",
        "# environment (HF_TOKEN, NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME if several NICs).",
        "",
        "# 1) On the head node:",
        shlex.join(["ray", "start", "--head", f"--port={ray_port}", f"--num-gpus={used}"]),
        "",
        f"# 2) On each of the {nodes - 1} worker node(s):" if nodes > 1 else "# 2) No worker node needed (1 node).",
        f"ray start --address={head}:{ray_port} --num-gpus={used}" if nodes > 1 else "# (skip)",
        "",
        "# 3) On the head node, once `ray status` shows all GPUs:",
    ]
    prefix = _env_prefix(cfg)
    cmd = shlex.join(["vllm", "serve", *serve_args(ray_cfg)])
    lines.append(f"{prefix} {cmd}" if prefix else cmd)
    return "\n".join(lines) + "\n"


def _k8s_objects(cfg: ServeConfig, opts: dict[str, Any]) -> list[dict[str, Any]]:
    name = _name(cfg, opts)
    port = _port(cfg, opts)
    vendor = _vendor(opts)
    n = gpu_count(cfg)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "vllm-server"}
    resources: dict[str, Any] = {"requests": {"cpu": str(opts.get("cpu", 8)), "memory": str(opts.get("memory", "32Gi"))}}
    if vendor != "cpu":
        gpu_res = opts.get("gpu_resource") or ("amd.com/gpu" if vendor == "amd" else "nvidia.com/gpu")
        resources["requests"][gpu_res] = str(n)
        resources["limits"] = {gpu_res: str(n)}
    env: list[dict[str, Any]] = [{
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {
            "name": str(opts.get("hf_secret", "hf-token-secret")),
            "key": str(opts.get("hf_secret_key", "token")),
            "optional": True,
        }},
    }]
    env += [{"name": str(k), "value": str(v)} for k, v in cfg.env.items()]
    probe_path = {"httpGet": {"path": "/health", "port": port}}
    container = {
        "name": "vllm",
        "image": _image(opts),
        "command": ["vllm", "serve"],
        "args": serve_args(cfg),
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": env,
        "resources": resources,
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}, {"name": "hf-cache", "mountPath": "/root/.cache/huggingface"}],
        "readinessProbe": {**probe_path, "initialDelaySeconds": 60, "periodSeconds": 10, "failureThreshold": 3},
        "livenessProbe": {**probe_path, "initialDelaySeconds": 600, "periodSeconds": 15, "failureThreshold": 5},
        "startupProbe": {**probe_path, "periodSeconds": 10, "failureThreshold": 180},
    }
    meta: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if opts.get("namespace"):
        meta["namespace"] = str(opts["namespace"])
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": int(opts.get("replicas", 1)),
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [container],
                    "volumes": [
                        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": str(opts.get("shm_size", "16Gi"))}},
                        {"name": "hf-cache", "emptyDir": {}},
                    ],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {**{k: v for k, v in meta.items() if k != "labels"}, "labels": dict(labels)},
        "spec": {
            "type": "ClusterIP",
            "selector": dict(labels),
            "ports": [{"name": "http", "port": port, "targetPort": "http", "protocol": "TCP"}],
        },
    }
    return [deployment, service]


def _header(cfg: ServeConfig, opts: dict[str, Any], what: str) -> list[str]:
    lines = [f"# {what} for {cfg.model}, generated by SpecWizard."]
    n = gpu_count(cfg)
    per_node = _gpus_per_node(cfg, opts)
    if n > per_node:
        lines.append(f"# Note: {n} GPUs per server exceed one node of {per_node}: one pod cannot span nodes;"
                     " use a multi-node setup (the 'ray' export, or a LeaderWorkerSet).")
    note = _draft_tp_note(cfg)
    if note:
        lines.append(note)
    return lines


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # no &id001 anchors in user-facing YAML
        return True


def _str_rep(dumper: yaml.SafeDumper, data: str):
    # JSON arguments ({...}) stay on one line and quoted, so they read as one argv item.
    style = "'" if data[:1] in "{[" else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_rep)


def _dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10_000)


def _k8s(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    objs = _k8s_objects(cfg, opts)
    head = "\n".join(_header(cfg, opts, "Kubernetes Deployment + Service"))
    head += "\n# Create the token secret first: kubectl create secret generic hf-token-secret --from-literal=token=$HF_TOKEN"
    return head + "\n" + "---\n".join(_dump(o) for o in objs)


def _helm(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    """values.yaml for vllm-project/production-stack's ``vllm-stack`` chart."""
    vendor = _vendor(opts)
    image = _image(opts)
    repo, _, tag = image.rpartition(":")
    tp = cfg.tensor_parallel_size or 1
    prefix_caching = cfg.enable_prefix_caching
    chart_cfg = _with(cfg, tensor_parallel_size=None, enable_prefix_caching=None)
    args = serve_args(chart_cfg)
    model, extra_args = args[0], args[1:]
    spec: dict[str, Any] = {
        "name": _name(cfg, opts).removeprefix("vllm-") or "model",
        "repository": repo,
        "tag": tag,
        "modelURL": model,
        "replicaCount": int(opts.get("replicas", 1)),
        "requestCPU": int(opts.get("cpu", 8)),
        "requestMemory": str(opts.get("memory", "32Gi")),
    }
    if vendor != "cpu":
        spec["requestGPU"] = gpu_count(cfg)
        if vendor == "amd":
            spec["requestGPUType"] = "amd.com/gpu"
    spec["shmSize"] = str(opts.get("shm_size", "16Gi"))
    spec["vllmConfig"] = {
        # the chart always renders --enable-prefix-caching or --no-enable-prefix-caching;
        # unset in the config means vLLM's default, which is on for generative models.
        "enablePrefixCaching": True if prefix_caching is None else bool(prefix_caching),
        "tensorParallelSize": tp,
        "extraArgs": extra_args,
    }
    spec["hf_token"] = {
        "secretName": str(opts.get("hf_secret", "hf-token-secret")),
        "secretKey": str(opts.get("hf_secret_key", "token")),
    }
    if cfg.env:
        spec["env"] = [{"name": str(k), "value": str(v)} for k, v in cfg.env.items()]
    values = {
        "servingEngineSpec": {
            "enableEngine": True,
            "modelSpec": [spec],
        },
        "routerSpec": {"enableRouter": True},
    }
    head = _header(cfg, opts, "Helm values for vllm-project/production-stack (chart vllm-stack)")
    head += [
        "# helm repo add vllm https://vllm-project.github.io/production-stack",
        "# helm install vllm vllm/vllm-stack -f values.yaml",
        "# The chart renders: vllm serve <modelURL> --host 0.0.0.0 --port 8000"
        " --[no-]enable-prefix-caching --tensor-parallel-size N <extraArgs...>",
    ]
    if prefix_caching is None:
        head.append("# enablePrefixCaching: the chart always passes the flag; true is vLLM's default for generative models.")
    return "\n".join(head) + "\n" + _dump(values)


def _docker(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    vendor = _vendor(opts)
    port = _port(cfg, opts)
    n = gpu_count(cfg)
    hf_cache = str(opts.get("hf_cache", "$HOME/.cache/huggingface"))
    # (token, quote?) pairs: the cache path stays unquoted so the shell expands $HOME
    run: list[tuple[str, bool]] = [("docker", True), ("run", True), ("--rm", True)]
    if vendor == "nvidia":
        devs = _devices(cfg, opts)
        if len(devs) < n:
            raise ValueError(f"devices: {len(devs)} given, the configuration needs {n} (TP x PP x DP)")
        # docker's documented form for a device list: --gpus '"device=0,1"'
        run += [("--gpus", True), ('"device=' + ",".join(str(d) for d in devs[:n]) + '"', True)]
    elif vendor == "amd":
        run += [("--device=/dev/kfd", True), ("--device=/dev/dri", True), ("--group-add=video", True)]
    run += [("--ipc=host", True), ("--shm-size", True), (str(opts.get("docker_shm_size", "16g")), True),
            ("-p", True), (f"{port}:{port}", True),
            ("-v", True), (f"{hf_cache}:/root/.cache/huggingface", False),
            ("-e", True), ("HF_TOKEN", True)]
    for k, v in cfg.env.items():
        run += [("-e", True), (f"{k}={v}", True)]
    run.append((_image(opts), True))
    lines = ["#!/bin/sh", f"# docker run for {cfg.model}; the image's entrypoint is `vllm serve`."]
    note = _draft_tp_note(cfg)
    if note:
        lines.append(note)
    head = " ".join(shlex.quote(t) if q else t for t, q in run)
    lines.append(head + " " + shlex.join(serve_args(cfg)))
    return "\n".join(lines) + "\n"


_FORMATS = {"multi-gpu": _multi_gpu, "ray": _ray, "k8s": _k8s, "helm": _helm, "docker": _docker}


def export_scaleout(cfg: ServeConfig, to: str, **opts: Any) -> str:
    """Export ``cfg`` as one of :data:`SCALEOUT_FORMATS` (see the module docstring).

    Args:
        cfg: the configuration; its argv comes from :func:`wizard.io.export.to_argv`.
        to: ``multi-gpu`` | ``ray`` | ``k8s`` | ``helm`` | ``docker`` (``kubernetes`` is
            accepted for ``k8s``, ``multi_gpu`` for ``multi-gpu``).
        **opts: see the module docstring.

    Returns:
        Text: a shell script (multi-gpu, ray, docker) or YAML (k8s: two documents; helm).

    Raises:
        ValueError: unknown format or an invalid option value (the message names it);
            HardwareError (a ValueError) for an unknown ``hardware`` spec.
    """
    key = str(to).strip().lower().replace("_", "-")
    key = {"kubernetes": "k8s", "multigpu": "multi-gpu", "multinode": "ray", "multi-node": "ray"}.get(key, key)
    fn = _FORMATS.get(key)
    if fn is None:
        raise ValueError(f"unknown scale-out export format {to!r}; known: {', '.join(SCALEOUT_FORMATS)}")
    return fn(cfg, dict(opts))
