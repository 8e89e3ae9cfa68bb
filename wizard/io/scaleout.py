"""Scale-out exports of one ServeConfig: multi-GPU, Ray multi-node, Kubernetes, Helm, docker.

    from wizard.io.scaleout import export_scaleout
    text = export_scaleout(cfg, "k8s", hardware="H100-SXMx4")

The shell forms live here, the Kubernetes forms (k8s, lws, helm) in :mod:`wizard.io.k8s`, what
they share in :mod:`wizard.io.deploy`. Every form carries **the same vLLM argv** as the plain command export: the arguments come from
:func:`wizard.io.export.to_argv` (never rebuilt here). Where a form needs a different option (Ray
needs ``--distributed-executor-backend ray``; the Helm chart sets TP and prefix caching from its
own keys) the change is made on a *copy of the ServeConfig* and that copy goes through
``to_argv`` again.

Formats (``to``):

``multi-gpu``
    Shell text: ``CUDA_VISIBLE_DEVICES=0,1,.. vllm serve ...`` for TP x PP (x DP) GPUs on one
    node, with a comment on the drafter's tensor parallelism.
``multinode``
    Shell text: vLLM's native multi-node launch (no Ray), one ``vllm serve`` per node: rank 0
    serves, the others ``--headless``; ``--nnodes/--node-rank/--master-addr`` for TP x PP
    across nodes, ``--data-parallel-size-local/--data-parallel-start-rank/--data-parallel-address``
    for DP (x EP). Details and options in :mod:`wizard.io.multinode`.
``ray``
    Shell text: ``ray start --head`` on the head node, ``ray start --address=HEAD:PORT`` on each
    worker, then ``vllm serve ... --distributed-executor-backend ray`` on the head; TP x PP
    spans ``ceil(TP*PP / gpus_per_node)`` nodes.
``k8s``
    YAML, two documents: an ``apps/v1`` Deployment (``vllm/vllm-openai`` image, ``command:
    [vllm, serve]``, ``args`` = the argv, GPU requests/limits ``nvidia.com/gpu``, ``/dev/shm``
    memory volume, readiness/liveness probes on ``/health``, ``HF_TOKEN`` from a Secret) and
    a ``v1`` Service.
``lws``
    YAML, two documents: a LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``; the leader pod runs
    ``ray start --head`` and ``vllm serve ... --distributed-executor-backend ray``, each worker pod
    joins the Ray cluster; GPUs requested per pod) and a ``v1`` Service on the leader. Details in
    :mod:`wizard.io.k8s`.
``helm``
    YAML values for vLLM's production-stack chart ``vllm-stack``
    (https://github.com/vllm-project/production-stack, ``helm/values.yaml`` and
    ``helm/values.schema.json``): ``servingEngineSpec.modelSpec[0]`` with ``modelURL``,
    ``requestGPU``, ``vllmConfig.tensorParallelSize``, ``vllmConfig.enablePrefixCaching`` and
    every other option in ``vllmConfig.extraArgs``. The chart's template
    (``helm/templates/deployment-vllm-multi.yaml``) renders ``vllm serve <modelURL> --host
    0.0.0.0 --port <port>``, then ``--enable-prefix-caching`` or ``--no-enable-prefix-caching``
    (always, from ``enablePrefixCaching``), then ``--tensor-parallel-size``, then extraArgs.
``kserve``
    YAML: a KServe ``LLMInferenceService`` (``serving.kserve.io/v1alpha2``). ``llm-d``: values
    for llm-d's ``llm-d-modelservice`` Helm chart. Both in :mod:`wizard.io.serving_platforms`.
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
    gpus_per_node: GPUs per node for ``ray`` / ``lws`` and for the multi-node note (default: the
        hardware count if given and <= 8, else 8). nodes: override the node count of ``ray`` / ``lws``.
    head_address: Ray head address placeholder (default ``$HEAD_IP``); ray_port (6379).
    devices: list of GPU indices for ``multi-gpu`` / ``docker`` (default 0..N-1).
    hf_secret, hf_secret_key: Secret holding the Hugging Face token (``hf-token-secret``,
        ``token``).
    shm_size: size of the shared-memory volume / ``--shm-size`` (default ``16Gi`` / ``16g``).
    replicas: Deployment / LeaderWorkerSet group / modelSpec replicas (default 1).

Raises:
    ValueError: unknown format (the message lists :data:`SCALEOUT_FORMATS`) or a bad option.
"""

from __future__ import annotations

import math
import os
import shlex
from typing import Any

from wizard.config import ServeConfig
from wizard.io import k8s as k8s_forms
from wizard.io.multinode import MULTI_NODE_OPTIONS, multinode as _multinode
from wizard.io.serving_platforms import kserve as _kserve, llmd as _llmd
from wizard.io.deploy import (devices_of, draft_tp_note, env_prefix, gpu_count, gpus_per_node, image_of, local_model_paths, port_of,
                              serve_args, vendor_of, with_fields)

__all__ = ["SCALEOUT_FORMATS", "export_scaleout", "serve_args", "gpu_count", "ray_config"]

#: The export formats this module produces.
SCALEOUT_FORMATS: tuple[str, ...] = ("multi-gpu", "multinode", "ray", "k8s", "lws", "helm", "kserve", "llm-d", "docker")


def ray_config(cfg: ServeConfig) -> ServeConfig:
    """``cfg`` for a Ray launch: ``--distributed-executor-backend ray`` and none of vLLM's native
    multi-node options (``--nnodes``, ``--headless``...: vLLM refuses ``--nnodes`` > 1 with Ray, SD125)."""
    return with_fields(cfg, extra={**{k: None for k in MULTI_NODE_OPTIONS}, "distributed_executor_backend": "ray"})


# ---- shell forms -------------------------------------------------------------------------

def _multi_gpu(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    n = gpu_count(cfg)
    devs = devices_of(cfg, opts)
    if len(devs) < n:
        raise ValueError(f"devices: {len(devs)} given, the configuration needs {n} (TP x PP x DP)")
    vendor = vendor_of(opts)
    visible = {"amd": "HIP_VISIBLE_DEVICES", "cpu": None}.get(vendor, "CUDA_VISIBLE_DEVICES")
    env = {visible: ",".join(str(d) for d in devs[:n])} if visible else {}
    tp, pp, dp = cfg.tensor_parallel_size or 1, cfg.pipeline_parallel_size or 1, cfg.data_parallel_size or 1
    lines = [
        "#!/bin/sh",
        f"# Single node: {n} GPU(s) = tensor_parallel_size {tp} x pipeline_parallel_size {pp}"
        + (f" x data_parallel_size {dp}" if dp > 1 else "") + ".",
    ]
    if n > gpus_per_node(cfg, opts):
        lines.append(f"# Note: {n} GPUs exceed one node of {gpus_per_node(cfg, opts)}; use the 'multinode' export "
                     "(vLLM's own --nnodes / --node-rank launch) or the 'ray' export.")
    note = draft_tp_note(cfg)
    if note:
        lines.append(note)
    prefix = env_prefix(cfg, env)
    cmd = shlex.join(["vllm", "serve", *serve_args(cfg)])
    lines.append(f"{prefix} {cmd}" if prefix else cmd)
    return "\n".join(lines) + "\n"


def _ray(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    tp, pp = cfg.tensor_parallel_size or 1, cfg.pipeline_parallel_size or 1
    per_node = gpus_per_node(cfg, opts)
    world = tp * pp
    nodes = int(opts.get("nodes") or max(1, math.ceil(world / per_node)))
    head = str(opts.get("head_address", "$HEAD_IP"))
    ray_port = int(opts.get("ray_port", 6379))
    ray_cfg = ray_config(cfg)
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
    note = draft_tp_note(cfg)
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
    prefix = env_prefix(cfg)
    cmd = shlex.join(["vllm", "serve", *serve_args(ray_cfg)])
    lines.append(f"{prefix} {cmd}" if prefix else cmd)
    return "\n".join(lines) + "\n"


def _docker(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    vendor = vendor_of(opts)
    port = port_of(cfg, opts)
    n = gpu_count(cfg)
    hf_cache = str(opts.get("hf_cache", "$HOME/.cache/huggingface"))
    # (token, quote?) pairs: the cache path stays unquoted so the shell expands $HOME
    run: list[tuple[str, bool]] = [("docker", True), ("run", True), ("--rm", True)]
    if vendor == "nvidia":
        devs = devices_of(cfg, opts)
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
    relative = []
    for path in local_model_paths(cfg):  # the container sees a local model only where it is mounted
        if path.startswith(("/", "~")):
            full = os.path.expanduser(path) if path.startswith("~") else path
            run += [("-v", True), (f"{full}:{full}:ro", True)]
        else:
            relative.append(path)
    run.append((image_of(opts), True))
    lines = ["#!/bin/sh", f"# docker run for {cfg.model}; the image's entrypoint is `vllm serve`."]
    note = draft_tp_note(cfg)
    if note:
        lines.append(note)
    if relative:
        lines.append(f"# Note: {', '.join(relative)}: a relative path means another folder inside the container; "
                     "give the model as an absolute path so it is mounted (-v PATH:PATH:ro).")
    head = " ".join(shlex.quote(t) if q else t for t, q in run)
    lines.append(head + " " + shlex.join(serve_args(cfg)))
    return "\n".join(lines) + "\n"


_FORMATS = {"multi-gpu": _multi_gpu, "multinode": _multinode, "ray": _ray, "k8s": k8s_forms.k8s, "lws": k8s_forms.lws, "helm": k8s_forms.helm,
            "kserve": _kserve, "llm-d": _llmd, "docker": _docker}


def export_scaleout(cfg: ServeConfig, to: str, **opts: Any) -> str:
    """Export ``cfg`` as one of :data:`SCALEOUT_FORMATS` (see the module docstring).

    Args:
        cfg: the configuration; its argv comes from :func:`wizard.io.export.to_argv`.
        to: ``multi-gpu`` | ``multinode`` | ``ray`` | ``k8s`` | ``lws`` | ``helm`` | ``docker`` (``kubernetes`` is
            accepted for ``k8s``, ``leaderworkerset`` for ``lws``, ``multi_gpu`` for ``multi-gpu``, ``multi-node`` for
            ``multinode``).
        **opts: see the module docstring.

    Returns:
        Text: a shell script (multi-gpu, ray, docker) or YAML (k8s, lws: two documents; helm).

    Raises:
        ValueError: unknown format or an invalid option value (the message names it);
            HardwareError (a ValueError) for an unknown ``hardware`` spec.
    """
    key = str(to).strip().lower().replace("_", "-")
    key = {"kubernetes": "k8s", "leaderworkerset": "lws", "multigpu": "multi-gpu", "multi-node": "multinode",
           "native": "multinode", "llmd": "llm-d", "llminferenceservice": "kserve"}.get(key, key)
    fn = _FORMATS.get(key)
    if fn is None:
        raise ValueError(f"unknown scale-out export format {to!r}; known: {', '.join(SCALEOUT_FORMATS)}")
    return fn(cfg, dict(opts))
