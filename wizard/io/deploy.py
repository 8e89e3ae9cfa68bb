"""What every scale-out form of one ServeConfig shares: the argv after ``vllm serve`` (always
from :func:`wizard.io.export.to_argv`), GPUs per server and per node, image, port, names, the
header notes and the YAML writer. Used by :mod:`wizard.io.scaleout` (shell forms) and
:mod:`wizard.io.k8s` (Kubernetes, LeaderWorkerSet, Helm); option names as in scaleout's docstring.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import yaml

from wizard.config import ServeConfig
from wizard.hardware.catalog import parse_gpu_spec
from wizard.io.export import to_argv
from wizard.security import is_local_path
from wizard.vllm.methods import DRAFT_MODEL, is_lookup
from wizard.vllm.versions import default_version

__all__ = ["serve_args", "gpu_count", "with_fields", "hardware_of", "vendor_of", "image_of", "port_of", "gpus_per_node",
           "devices_of", "name_of", "env_prefix", "draft_tp_note", "header_lines", "dump_yaml", "DEFAULT_PORT",
           "MAX_GPUS_PER_HOST"]

DEFAULT_PORT = 8000
_CPU_IMAGE = "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo"
_ROCM_IMAGE = "rocm/vllm"
_NVIDIA_IMAGE = "vllm/vllm-openai"


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


def with_fields(cfg: ServeConfig, *, extra: dict[str, Any] | None = None, **fields: Any) -> ServeConfig:
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

def hardware_of(opts: dict[str, Any]):
    hw = opts.get("hardware")
    if hw is None or not isinstance(hw, str):
        return hw
    return parse_gpu_spec(hw)


def vendor_of(opts: dict[str, Any]) -> str:
    if opts.get("vendor"):
        return str(opts["vendor"])
    hw = hardware_of(opts)
    return getattr(hw, "vendor", "nvidia") if hw is not None else "nvidia"


def image_of(opts: dict[str, Any]) -> str:
    vendor = vendor_of(opts)
    image = opts.get("image") or {"cpu": _CPU_IMAGE, "amd": _ROCM_IMAGE}.get(vendor, _NVIDIA_IMAGE)
    tag = opts.get("image_tag")
    if tag is None:
        if vendor == "amd" and not opts.get("image"):
            tag = "latest"
        else:
            tag = f"v{default_version()}"
    return f"{image}:{tag}"


def port_of(cfg: ServeConfig, opts: dict[str, Any]) -> int:
    raw = opts.get("port", cfg.extra_args.get("port", DEFAULT_PORT))
    try:
        port = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"port: {raw!r} is not a port number") from None
    if not 0 < port < 65536:
        raise ValueError(f"port: {port} is outside 1..65535")
    return port


def gpus_per_node(cfg: ServeConfig, opts: dict[str, Any]) -> int:
    if opts.get("gpus_per_node") is not None:
        n = int(opts["gpus_per_node"])
    else:
        hw = hardware_of(opts)
        n = hw.count if hw is not None and getattr(hw, "vendor", "nvidia") != "cpu" and hw.count <= 8 else 8
        n = max(n, 1)
    if n < 1:
        raise ValueError(f"gpus_per_node: {n} must be >= 1")
    return n


#: Most GPUs one host (one ``docker run``) is given: the largest single nodes have 8-16 GPUs;
#: beyond this a device list is a typo (``-tp 1000000000``), and spans nodes anyway (use ray/k8s).
MAX_GPUS_PER_HOST = 64


def devices_of(cfg: ServeConfig, opts: dict[str, Any]) -> list[int]:
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


def name_of(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    """A DNS-1035 label from the model id (``meta-llama/Llama-3.1-8B`` -> ``vllm-llama-3-1-8b``)."""
    raw = opts.get("name") or ("vllm-" + cfg.model.rstrip("/").split("/")[-1])
    name = re.sub(r"[^a-z0-9-]+", "-", str(raw).lower()).strip("-")
    if not name or not name[0].isalpha():
        name = "vllm-" + name
    return name[:53].rstrip("-")  # room for suffixes under the 63-character limit


def env_prefix(cfg: ServeConfig, extra: dict[str, str] | None = None) -> str:
    env = {**(extra or {}), **cfg.env}
    return " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items())


def draft_tp_note(cfg: ServeConfig) -> str | None:
    spec = cfg.speculative_config
    if spec is None:
        return None
    tp = cfg.tensor_parallel_size or 1
    dtp = spec.draft_tensor_parallel_size
    method = spec.method or "(inferred)"
    if is_lookup(method):
        return f"# Drafter: method {method} has no draft model, so draft_tensor_parallel_size does not apply."
    v1_note = " (draft_model on the V1 runner needs the target TP)" if method == DRAFT_MODEL else ""
    if dtp is None:
        if tp == 1:
            return None  # one GPU: nothing to choose
        return (f"# Drafter: draft_tensor_parallel_size is unset, so the drafter runs at the target TP ({tp}); "
                f"vLLM allows 1 or the target TP{v1_note}.")
    return f"# Drafter: draft_tensor_parallel_size={dtp} (target TP {tp}); vLLM allows 1 or the target TP{v1_note}."


def local_model_paths(cfg: ServeConfig) -> list[str]:
    """The target and drafter vLLM would read as local paths (:func:`wizard.security.is_local_path`):
    a container or a pod sees them only when they are mounted at the same path."""
    spec = cfg.speculative_config
    names = [cfg.model, spec.model if spec is not None else None]
    return [n.strip() for n in dict.fromkeys(names) if is_local_path(n)]


def local_path_note(cfg: ServeConfig, where: str) -> str | None:
    """A comment line for manifests whose container cannot see this machine's files."""
    paths = local_model_paths(cfg)
    if not paths:
        return None
    return (f"# Note: {', '.join(paths)} {'is a local path' if len(paths) == 1 else 'are local paths'} on this machine; "
            f"{where} sees only what is mounted: put the weights on a volume mounted at the same path (a PVC or "
            "hostPath), or use the Hub id.")


def header_lines(cfg: ServeConfig, opts: dict[str, Any], what: str, *, multi_node: bool = False) -> list[str]:
    """Comment lines opening a manifest: what and for which model, a note when one server needs
    more GPUs than one node has (forms that are not ``multi_node``), the drafter's TP note."""
    lines = [f"# {what} for {cfg.model}, generated by SpecWizard."]
    n = gpu_count(cfg)
    per_node = gpus_per_node(cfg, opts)
    if n > per_node and not multi_node:
        lines.append(f"# Note: {n} GPUs per server exceed one node of {per_node}: one pod cannot span nodes;"
                     " use a multi-node form (the 'lws' export: a LeaderWorkerSet with Ray; or 'ray').")
    for note in (draft_tp_note(cfg), local_path_note(cfg, "the pod")):
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


def dump_yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10_000)


