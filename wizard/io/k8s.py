"""Kubernetes forms of one ServeConfig: a Deployment + Service (one node), a LeaderWorkerSet +
Service (several nodes, Ray), and Helm values for vLLM's production-stack chart.

    from wizard.io.scaleout import export_scaleout
    export_scaleout(cfg, "k8s"); export_scaleout(cfg, "lws", gpus_per_node=8); export_scaleout(cfg, "helm")

``lws``
    YAML, two documents: a ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet and a ``v1`` Service
    on its leader. Each group is ``size = ceil(TP x PP / gpus_per_node)`` pods, one per node, each
    requesting ``min(gpus_per_node, TP x PP)`` GPUs. The leader runs vLLM's
    ``examples/online_serving/multi-node-serving.sh leader`` (``ray start --head``, then waits until
    ``size`` Ray nodes are alive) and then ``vllm serve <the argv of to_argv>
    --distributed-executor-backend ray``; each worker runs ``multi-node-serving.sh worker
    --ray_address=$(LWS_LEADER_ADDRESS)`` (LWS injects ``LWS_LEADER_ADDRESS``; Kubernetes expands
    ``$(VAR)`` in ``command``). The shape follows LWS's own vLLM example
    (kubernetes-sigs/lws v0.10.0 ``docs/examples/vllm/GPU/lws.yaml``) and the script of the
    vllm/vllm-openai image (vllm-project/vllm ``examples/online_serving/multi-node-serving.sh``).
    The leader's command goes through ``/bin/sh -c`` to run the two steps in order; every word
    of it is shell-quoted (``shlex.join``), the speculative config JSON included.

See :mod:`wizard.io.scaleout` for ``k8s`` and ``helm`` and the options.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from wizard.config import ServeConfig
from wizard.io.multinode import MULTI_NODE_OPTIONS
from wizard.io.deploy import (dump_yaml, gpu_count, gpus_per_node, header_lines, image_of, name_of, port_of, serve_args,
                              vendor_of, with_fields)

__all__ = ["k8s", "lws", "helm", "k8s_objects", "lws_objects", "MULTI_NODE_SCRIPT"]

MULTI_NODE_SCRIPT = "/vllm-workspace/examples/online_serving/multi-node-serving.sh"
"""Where the vllm/vllm-openai image keeps vLLM's Ray cluster helper (used by LWS's vLLM example)."""

_SECRET_HINT = ("# Create the token secret first: kubectl create secret generic hf-token-secret "
                "--from-literal=token=$HF_TOKEN")


def _resources(opts: dict[str, Any], gpus: int) -> dict[str, Any]:
    vendor = vendor_of(opts)
    resources: dict[str, Any] = {"requests": {"cpu": str(opts.get("cpu", 8)), "memory": str(opts.get("memory", "32Gi"))}}
    if vendor != "cpu":
        gpu_res = opts.get("gpu_resource") or ("amd.com/gpu" if vendor == "amd" else "nvidia.com/gpu")
        resources["requests"][gpu_res] = str(gpus)
        resources["limits"] = {gpu_res: str(gpus)}
    return resources


def _env(cfg: ServeConfig, opts: dict[str, Any]) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {
            "name": str(opts.get("hf_secret", "hf-token-secret")),
            "key": str(opts.get("hf_secret_key", "token")),
            "optional": True,
        }},
    }]
    return env + [{"name": str(k), "value": str(v)} for k, v in cfg.env.items()]


def _container(cfg: ServeConfig, opts: dict[str, Any], *, name: str, command: list[str], args: list[str] | None,
               gpus: int, serves: bool) -> dict[str, Any]:
    """A vLLM container; ``serves``: it runs the API server (port and probes on /health)."""
    port = port_of(cfg, opts)
    c: dict[str, Any] = {"name": name, "image": image_of(opts), "command": command}
    if args is not None:
        c["args"] = args
    if serves:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    c["env"] = _env(cfg, opts)
    c["resources"] = _resources(opts, gpus)
    c["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"},
                         {"name": "hf-cache", "mountPath": "/root/.cache/huggingface"}]
    if serves:
        probe_path = {"httpGet": {"path": "/health", "port": port}}
        c["readinessProbe"] = {**probe_path, "initialDelaySeconds": 60, "periodSeconds": 10, "failureThreshold": 3}
        c["livenessProbe"] = {**probe_path, "initialDelaySeconds": 600, "periodSeconds": 15, "failureThreshold": 5}
        c["startupProbe"] = {**probe_path, "periodSeconds": 10, "failureThreshold": 180}
    return c


def _volumes(opts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": str(opts.get("shm_size", "16Gi"))}},
            {"name": "hf-cache", "emptyDir": {}}]


def _meta(name: str, opts: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if opts.get("namespace"):
        meta["namespace"] = str(opts["namespace"])
    return meta


def _service(name: str, opts: dict[str, Any], port: int, labels: dict[str, str], selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, opts, labels),
        "spec": {
            "type": "ClusterIP",
            "selector": dict(selector),
            "ports": [{"name": "http", "port": port, "targetPort": "http", "protocol": "TCP"}],
        },
    }


# ---- k8s: Deployment + Service ---------------------------------------------------------------

def k8s_objects(cfg: ServeConfig, opts: dict[str, Any]) -> list[dict[str, Any]]:
    """[Deployment, Service] for one server on one node."""
    name = name_of(cfg, opts)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "vllm-server"}
    container = _container(cfg, opts, name="vllm", command=["vllm", "serve"], args=serve_args(cfg), gpus=gpu_count(cfg),
                           serves=True)
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, opts, labels),
        "spec": {
            "replicas": int(opts.get("replicas", 1)),
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [container], "volumes": _volumes(opts)},
            },
        },
    }
    return [deployment, _service(name, opts, port_of(cfg, opts), labels, labels)]


def k8s(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    head = "\n".join(header_lines(cfg, opts, "Kubernetes Deployment + Service")) + "\n" + _SECRET_HINT
    return head + "\n" + "---\n".join(dump_yaml(o) for o in k8s_objects(cfg, opts))


# ---- lws: LeaderWorkerSet + Service ------------------------------------------------------------

def lws_layout(cfg: ServeConfig, opts: dict[str, Any]) -> tuple[int, int]:
    """(pods per group = nodes, GPUs per pod) for the GPUs one server needs (TP x PP x DP,
    :func:`wizard.io.deploy.gpu_count`, as the k8s/kserve/llm-d forms) over ``gpus_per_node``
    (CLI trial: a --data-parallel-size 2 command got one GPU)."""
    world = gpu_count(cfg)
    per_node = gpus_per_node(cfg, opts)
    size = int(opts.get("nodes") or max(1, math.ceil(world / per_node)))
    return size, min(per_node, world)


def lws_objects(cfg: ServeConfig, opts: dict[str, Any]) -> list[dict[str, Any]]:
    """[LeaderWorkerSet, Service] (see the module docstring)."""
    name = name_of(cfg, opts)
    size, gpus = lws_layout(cfg, opts)
    ray_cfg = with_fields(cfg, extra={**{k: None for k in MULTI_NODE_OPTIONS}, "distributed_executor_backend": "ray"})
    join = ["bash", MULTI_NODE_SCRIPT, "leader", f"--ray_cluster_size={size}", f"--num-gpus={gpus}"]
    leader_cmd = f"{shlex.join(join)} && exec {shlex.join(['vllm', 'serve', *serve_args(ray_cfg)])}"
    worker_cmd = ["bash", MULTI_NODE_SCRIPT, "worker", "--ray_address=$(LWS_LEADER_ADDRESS)", f"--num-gpus={gpus}"]
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "vllm-server"}
    leader = _container(cfg, opts, name="vllm-leader", command=["/bin/sh", "-c"], args=[leader_cmd], gpus=gpus, serves=True)
    worker = _container(cfg, opts, name="vllm-worker", command=worker_cmd, args=None, gpus=gpus, serves=False)
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": _meta(name, opts, labels),
        "spec": {
            "replicas": int(opts.get("replicas", 1)),
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {
                    "metadata": {"labels": {**labels, "role": "leader"}},
                    "spec": {"containers": [leader], "volumes": _volumes(opts)},
                },
                "workerTemplate": {
                    "metadata": {"labels": {**labels, "role": "worker"}},
                    "spec": {"containers": [worker], "volumes": _volumes(opts)},
                },
            },
        },
    }
    selector = {"leaderworkerset.sigs.k8s.io/name": name, "role": "leader"}
    return [lws, _service(name, opts, port_of(cfg, opts), labels, selector)]


def lws(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    size, gpus = lws_layout(cfg, opts)
    tp, pp = cfg.tensor_parallel_size or 1, cfg.pipeline_parallel_size or 1
    head = header_lines(cfg, opts, "LeaderWorkerSet (multi-node, Ray) + Service", multi_node=True)
    head += [
        f"# Each group: {size} pod(s) (1 leader + {size - 1} worker(s)), one per node, {gpus} GPU(s) each, for "
        f"tensor_parallel_size {tp} x pipeline_parallel_size {pp} over Ray.",
        "# Needs the LeaderWorkerSet controller (kubernetes-sigs/lws, tested against the v0.10.0 CRD) and the",
        f"# vllm/vllm-openai image, which holds {MULTI_NODE_SCRIPT}.",
        _SECRET_HINT,
    ]
    if (cfg.data_parallel_size or 1) > 1:
        head.append(f"# data_parallel_size {cfg.data_parallel_size}: each group serves one replica of the "
                    "data-parallel engines vLLM starts itself; or use LWS replicas for independent servers.")
    return "\n".join(head) + "\n" + "---\n".join(dump_yaml(o) for o in lws_objects(cfg, opts))


# ---- helm: production-stack values ----------------------------------------------------------------

def helm(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    """values.yaml for vllm-project/production-stack's ``vllm-stack`` chart."""
    vendor = vendor_of(opts)
    image = image_of(opts)
    repo, _, tag = image.rpartition(":")
    tp = cfg.tensor_parallel_size or 1
    prefix_caching = cfg.enable_prefix_caching
    chart_cfg = with_fields(cfg, tensor_parallel_size=None, enable_prefix_caching=None)
    args = serve_args(chart_cfg)
    model, extra_args = args[0], args[1:]
    spec: dict[str, Any] = {
        "name": name_of(cfg, opts).removeprefix("vllm-") or "model",
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
    head = header_lines(cfg, opts, "Helm values for vllm-project/production-stack (chart vllm-stack)")
    head += [
        "# helm repo add vllm https://vllm-project.github.io/production-stack",
        "# helm install vllm vllm/vllm-stack -f values.yaml",
        "# The chart renders: vllm serve <modelURL> --host 0.0.0.0 --port 8000"
        " --[no-]enable-prefix-caching --tensor-parallel-size N <extraArgs...>",
    ]
    if prefix_caching is None:
        head.append("# enablePrefixCaching: the chart always passes the flag; true is vLLM's default for generative models.")
    return "\n".join(head) + "\n" + dump_yaml(values)


