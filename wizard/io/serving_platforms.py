"""KServe ``LLMInferenceService`` and llm-d ``llm-d-modelservice`` Helm values for one ServeConfig
or a prefill/decode pair.

    from wizard.io.serving_platforms import kserve, llmd
    kserve(cfg, {}); llmd(cfg, {}); kserve_pair(prefill, decode, {}); llmd_pair(prefill, decode, {})

Both platforms render the ``vllm serve`` command themselves from structured fields and append
the container's arguments, so each form moves the options it has fields for out of the argv and
passes every other option -- the speculative config included -- as arguments (from
:func:`wizard.io.export.to_argv` of a copy without the moved options, as the Helm export does).

``kserve`` (``serving.kserve.io/v1alpha2`` LLMInferenceService; CRD of kserve/kserve at
aaac4e29, vendored in tests/data/schemas): the well-known config
``config/llmisvcconfig/config-llm-template.yaml`` runs ``eval "exec vllm serve /mnt/models
--served-model-name <spec.model.name> ... --port 8000 [--tensor-parallel-size
<spec.parallelism.tensor>] ... $@"`` -- the container ``args`` are the ``$@``, *re-read by the
shell's eval*, so each argument is written shell-quoted (``shlex.quote``: the JSON of
``--speculative-config`` stays one word). ``spec.model.uri`` is ``hf://<model>`` (KServe's
storage initializer downloads it to ``/mnt/models``); ``spec.parallelism`` carries TP, PP, DP,
local DP and expert parallelism. ``--port`` is the template's 8000. The CRD at that commit has no
``spec.speculator`` (kserve/kserve#5687 proposes one), so speculation travels in the arguments.
A pair puts the decode side in ``spec.template`` and the prefill side in ``spec.prefill``.

``llm-d`` (values of llm-d-incubation/llm-d-modelservice chart v0.4.12, its values.schema.json
vendored): ``modelCommand: vllmServe`` renders ``vllm serve <model from modelArtifacts.uri>
--port <routing port> [--tensor-parallel-size] [--data-parallel-size]
[--data-parallel-size-local] --served-model-name <modelArtifacts.name> <container args>``
(templates/_helpers.tpl ``vllmServeModelCommand``); arguments are passed as a list, no shell.
One config fills ``decode`` (``prefill.create: false``, routing proxy off); a pair fills both,
with the routing sidecar on (decode's vLLM listens on ``routing.proxy.targetPort``) and NIXL's
side-channel host/port per pod as in the chart's ``examples/values-pd.yaml``.
"""

from __future__ import annotations

import shlex
from typing import Any

from wizard.config import ServeConfig
from wizard.engine.layout import layout_of
from wizard.engine.options import user_options
from wizard.io.deploy import (dump_yaml, gpu_count, header_lines, image_of, name_of, port_of, serve_args, vendor_of,
                              with_fields)
from wizard.privacy import redact_config

__all__ = ["kserve", "kserve_pair", "llmd", "llmd_pair", "kserve_object", "llmd_values", "KSERVE_TEMPLATE_PORT",
           "platform_args"]

KSERVE_TEMPLATE_PORT = 8000
_NIXL = ("NixlConnector", "NixlPullConnector", "NixlPushConnector")


def platform_args(cfg: ServeConfig, *, move_dp: bool) -> list[str]:
    """The argv after the model with TP (and DP / local DP when ``move_dp``) and ``--port``
    removed: what the platform's template does not write itself. (``--served-model-name`` stays:
    given after the template's, it wins.)"""
    extra: dict[str, Any] = {"port": None}
    fields: dict[str, Any] = {"tensor_parallel_size": None}
    if move_dp:
        fields["data_parallel_size"] = None
        extra["data_parallel_size_local"] = None
    return serve_args(with_fields(cfg, extra=extra, **fields))[1:]


def _uses_nixl(cfg: ServeConfig) -> bool:
    kt = cfg.extra_args.get("kv_transfer_config")
    return any(n in (kt if isinstance(kt, str) else repr(kt)) for n in _NIXL)


def _resources(opts: dict[str, Any], gpus: int) -> dict[str, Any]:
    if vendor_of(opts) == "cpu":
        return {"requests": {"cpu": str(opts.get("cpu", 8)), "memory": str(opts.get("memory", "32Gi"))}}
    res = opts.get("gpu_resource") or ("amd.com/gpu" if vendor_of(opts) == "amd" else "nvidia.com/gpu")
    return {"limits": {res: str(gpus)}, "requests": {res: str(gpus)}}


def _env(cfg: ServeConfig, opts: dict[str, Any]) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": str(opts.get("hf_secret", "hf-token-secret")), "key": str(opts.get("hf_secret_key", "token")),
        "optional": True}}}]
    return env + [{"name": str(k), "value": str(v)} for k, v in cfg.env.items()]


# ---- KServe ------------------------------------------------------------------------------------

def _kserve_parallelism(cfg: ServeConfig) -> dict[str, Any]:
    lay = layout_of(user_options(cfg))
    par: dict[str, Any] = {"tensor": lay.tp}
    if lay.pp > 1:
        par["pipeline"] = lay.pp
    if lay.dp > 1:
        par["data"] = lay.dp
        par["dataLocal"] = lay.dp_local if lay.dp_local is not None else lay.dp
    if lay.expert_parallel:
        par["expert"] = True
    return par


def _kserve_workload(cfg: ServeConfig, opts: dict[str, Any]) -> dict[str, Any]:
    # DP options stay in the argv: the template renders only --tensor-parallel-size itself
    args = [shlex.quote(a) for a in platform_args(cfg, move_dp=False)]
    container: dict[str, Any] = {"name": "main", "image": image_of(opts), "env": _env(cfg, opts),
                                 "resources": _resources(opts, gpu_count(cfg))}
    if args:
        container["args"] = args
    return {"parallelism": _kserve_parallelism(cfg), "template": {"containers": [container]}}


def kserve_object(decode: ServeConfig, opts: dict[str, Any], prefill: ServeConfig | None = None) -> dict[str, Any]:
    """The LLMInferenceService (decode = the only side of a single config)."""
    decode = redact_config(decode)
    meta: dict[str, Any] = {"name": name_of(decode, opts)}
    if opts.get("namespace"):
        meta["namespace"] = str(opts["namespace"])
    spec: dict[str, Any] = {"model": {"uri": f"hf://{decode.model}", "name": decode.model},
                            "replicas": int(opts.get("replicas", 1))}
    spec.update(_kserve_workload(decode, opts))
    if prefill is not None:
        spec["prefill"] = {"replicas": int(opts.get("prefill_replicas", 1)),
                           **_kserve_workload(redact_config(prefill), opts)}
    spec["router"] = {"route": {}, "gateway": {}, "scheduler": {}}
    return {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService", "metadata": meta, "spec": spec}


def _kserve_head(cfg: ServeConfig, opts: dict[str, Any], what: str) -> list[str]:
    head = header_lines(cfg, opts, what, multi_node=True)
    head += ["# KServe renders: vllm serve /mnt/models --served-model-name <spec.model.name> --port 8000",
             "#   [--tensor-parallel-size <spec.parallelism.tensor>] <args, re-read by the shell: each one is quoted>",
             "# (kserve config/llmisvcconfig/config-llm-template.yaml; CRD of kserve/kserve aaac4e29, no spec.speculator)."]
    if cfg.extra_args.get("port") not in (None, KSERVE_TEMPLATE_PORT, str(KSERVE_TEMPLATE_PORT)):
        head.append(f"# --port {cfg.extra_args.get('port')} dropped: KServe's template serves on {KSERVE_TEMPLATE_PORT}.")
    return head


def kserve(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    return "\n".join(_kserve_head(cfg, opts, "KServe LLMInferenceService")) + "\n" + dump_yaml(kserve_object(cfg, opts))


def kserve_pair(prefill: ServeConfig, decode: ServeConfig, opts: dict[str, Any]) -> str:
    head = _kserve_head(decode, opts, "KServe LLMInferenceService (prefill/decode pair)")
    return "\n".join(head) + "\n" + dump_yaml(kserve_object(decode, opts, prefill))


# ---- llm-d (llm-d-modelservice values) ---------------------------------------------------------

def _llmd_role(cfg: ServeConfig, opts: dict[str, Any], role: str, proxy: bool) -> dict[str, Any]:
    lay = layout_of(user_options(cfg))
    container: dict[str, Any] = {"name": "vllm", "image": image_of(opts), "modelCommand": "vllmServe"}
    args = platform_args(cfg, move_dp=True)
    if args:
        container["args"] = args
    env = _env(cfg, opts)
    port = port_of(cfg, opts) if role == "prefill" or not proxy else int(opts.get("target_port", 8200))
    ports = [{"containerPort": port, "protocol": "TCP"}]
    if _uses_nixl(cfg):
        side = str(cfg.env.get("VLLM_NIXL_SIDE_CHANNEL_PORT", 5600))
        if "VLLM_NIXL_SIDE_CHANNEL_PORT" not in cfg.env:
            env.append({"name": "VLLM_NIXL_SIDE_CHANNEL_PORT", "value": side})
        env.append({"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        ports.append({"containerPort": int(side), "protocol": "TCP"})
    container["env"] = env
    container["ports"] = ports
    container["resources"] = _resources(opts, gpu_count(cfg))
    container["mountModelVolume"] = True
    par: dict[str, Any] = {"tensor": lay.tp}
    if lay.dp > 1:
        par["data"] = lay.dp
        par["dataLocal"] = lay.dp_local if lay.dp_local is not None else lay.dp
    return {"create": True, "replicas": int(opts.get(f"{role}_replicas", opts.get("replicas", 1))),
            "parallelism": par, "containers": [container]}


def llmd_values(decode: ServeConfig, opts: dict[str, Any], prefill: ServeConfig | None = None) -> dict[str, Any]:
    decode = redact_config(decode)
    name = name_of(decode, opts)
    vendor = vendor_of(opts)
    values: dict[str, Any] = {
        "multinode": False,
        "accelerator": {"type": {"nvidia": "nvidia", "amd": "amd", "cpu": "cpu"}.get(vendor, "nvidia")},
        "modelArtifacts": {"name": decode.model, "uri": f"hf://{decode.model}",
                           "authSecretName": str(opts.get("hf_secret", "hf-token-secret")),
                           "labels": {"llm-d.ai/inference-serving": "true", "llm-d.ai/model": name}},
        "routing": {"servicePort": port_of(prefill or decode, opts), "proxy": {"enabled": prefill is not None}},
        "decode": _llmd_role(decode, opts, "decode", proxy=prefill is not None),
    }
    if prefill is not None:
        values["routing"]["proxy"]["targetPort"] = int(opts.get("target_port", 8200))
        values["prefill"] = _llmd_role(redact_config(prefill), opts, "prefill", proxy=True)
    else:
        values["prefill"] = {"create": False}
    return values


def _llmd_head(cfg: ServeConfig, opts: dict[str, Any], what: str) -> list[str]:
    head = header_lines(cfg, opts, what, multi_node=True)
    head += ["# helm install <release> llm-d-modelservice/llm-d-modelservice -f values.yaml",
             "# The chart (v0.4.12) renders: vllm serve <model> --port <routing port> [--tensor-parallel-size N]",
             "#   [--data-parallel-size N] [--data-parallel-size-local N] --served-model-name <model> <args...>"]
    if cfg.extra_args.get("port") is not None:
        head.append("# --port moved to routing.servicePort / routing.proxy.targetPort (the chart writes it).")
    return head


def llmd(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    return "\n".join(_llmd_head(cfg, opts, "llm-d modelservice Helm values")) + "\n" + dump_yaml(llmd_values(cfg, opts))


def llmd_pair(prefill: ServeConfig, decode: ServeConfig, opts: dict[str, Any]) -> str:
    head = _llmd_head(decode, opts, "llm-d modelservice Helm values (prefill/decode pair)")
    return "\n".join(head) + "\n" + dump_yaml(llmd_values(decode, opts, prefill))
