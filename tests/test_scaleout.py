"""Scale-out exports (wizard/io/scaleout.py, k8s.py) and every export format for every preset, checked
with real parsers and schemas: PyYAML, the Kubernetes OpenAPI schema (kubernetes-validate), the
LeaderWorkerSet CRD of kubernetes-sigs/lws v0.10.0 and the values.schema.json of the
production-stack chart vllm-stack 0.1.12 (both vendored in tests/data/schemas, with their
source), and vLLM's own argument parser."""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import math
import shlex
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from wizard.config import ServeConfig, config_from_dict
from wizard.io.deploy import draft_tp_note
from wizard.io.presets import list_presets, load_preset
from wizard.io.multinode import MULTI_NODE_OPTIONS
from wizard.io.scaleout import SCALEOUT_FORMATS, export_scaleout, gpu_count, ray_config, serve_args
from wizard.vllm.methods import is_lookup

PRESETS = list_presets()
NAMES = [p.name for p in PRESETS]
K8S_VERSION = "1.30"


# ---- vLLM's own parser (one per module) ---------------------------------------------------

@pytest.fixture(scope="module")
def vllm_parse():
    """argv after `vllm serve` -> dict of EngineArgs values, parsed by vLLM 0.32 itself
    (FlexibleArgumentParser + EngineArgs.add_cli_args; the positional model becomes --model)."""
    pytest.importorskip("vllm")
    from vllm.engine.arg_utils import EngineArgs
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = EngineArgs.add_cli_args(FlexibleArgumentParser())

    def parse(args: list[str]) -> dict:
        args = list(args)
        if args and not args[0].startswith("-"):
            args = ["--model", args[0], *args[1:]]
        ns = parser.parse_args(args)
        return vars(ns)

    return parse


def _expected(cfg: ServeConfig, parsed: dict) -> None:
    """The parsed engine args carry the configuration's own values (not just the exporter's)."""
    assert parsed["model"] == cfg.model
    assert parsed["tensor_parallel_size"] == (cfg.tensor_parallel_size or 1)
    assert parsed["pipeline_parallel_size"] == (cfg.pipeline_parallel_size or 1)
    if cfg.max_model_len is not None:
        assert parsed["max_model_len"] == cfg.max_model_len
    if cfg.kv_cache_dtype is not None:
        assert parsed["kv_cache_dtype"] == cfg.kv_cache_dtype
    if cfg.gpu_memory_utilization is not None:
        assert parsed["gpu_memory_utilization"] == cfg.gpu_memory_utilization
    assert parsed["speculative_config"] == cfg.speculative_config.model_dump(exclude_none=True)
    # the Ray forms replace vLLM's native multi-node options (wizard.io.scaleout.ray_config)
    ray = parsed.get("distributed_executor_backend") == "ray"
    for k, v in cfg.extra_args.items():
        if k not in ("port", "host") and not (ray and (k in MULTI_NODE_OPTIONS or k == "distributed_executor_backend")):
            assert parsed[k] == v, k


def _command_args(cfg: ServeConfig) -> list[str]:
    """The command export's argv after `vllm serve` (wizard.io.export.to_argv via serve_args)."""
    return serve_args(cfg)


def _serve_line(text: str) -> list[str]:
    """The argv after `vllm serve` on the (single) vllm serve line of a shell export."""
    lines = [ln for ln in text.splitlines() if " vllm serve " in f" {ln} " and not ln.startswith("#")]
    assert len(lines) == 1, text
    argv = shlex.split(lines[0])
    i = argv.index("vllm")
    assert argv[i + 1] == "serve"
    return argv[i + 2:], argv[:i]


# ---- the command baseline ------------------------------------------------------------------

@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_command_argv_parses_with_vllm_into_the_config(name, vllm_parse):
    cfg, _, _ = load_preset(name)
    _expected(cfg, vllm_parse(_command_args(cfg)))


# ---- multi-gpu -----------------------------------------------------------------------------

@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_multi_gpu(name, vllm_parse):
    cfg, hw, _ = load_preset(name)
    text = export_scaleout(cfg, "multi-gpu", hardware=hw)
    args, env = _serve_line(text)
    assert args == _command_args(cfg)
    _expected(cfg, vllm_parse(args))
    envd = dict(e.split("=", 1) for e in env)
    if hw == "CPU":
        assert "CUDA_VISIBLE_DEVICES" not in envd and envd["VLLM_CPU_KVCACHE_SPACE"] == "4"
    else:
        var = "HIP_VISIBLE_DEVICES" if hw.startswith("MI") else "CUDA_VISIBLE_DEVICES"
        assert envd[var].split(",") == [str(i) for i in range(gpu_count(cfg))]
    note = draft_tp_note(cfg)
    assert ("# Drafter:" in text) == (note is not None) and (note is None or note in text)
    # one GPU and no drafter TP given: nothing to say (the note talked of draft_model on an eagle3 pair)
    spec = cfg.speculative_config
    if (cfg.tensor_parallel_size or 1) == 1 and spec.draft_tensor_parallel_size is None and not is_lookup(spec.method):
        assert note is None
    assert note is None or ("draft_model" in note) == (spec.method == "draft_model")


def test_multi_gpu_devices_option_and_draft_note():
    cfg, _, _ = load_preset("llama33-70b-eagle3-h100x4")
    text = export_scaleout(cfg, "multi-gpu", devices=[4, 5, 6, 7])
    assert text.splitlines()[-1].startswith("CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.3-70B-Instruct ")
    assert "draft_tensor_parallel_size=4 (target TP 4)" in text
    with pytest.raises(ValueError, match="devices: 2 given, the configuration needs 4"):
        export_scaleout(cfg, "multi-gpu", devices=[0, 1])


# ---- ray -----------------------------------------------------------------------------------

@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_ray(name, vllm_parse):
    cfg, _, _ = load_preset(name)
    text = export_scaleout(cfg, "ray", gpus_per_node=2)
    nodes = max(1, -(-gpu_count(cfg) // 2))
    used = min(2, (cfg.tensor_parallel_size or 1) * (cfg.pipeline_parallel_size or 1))
    lines = text.splitlines()
    assert shlex.split(next(ln for ln in lines if ln.startswith("ray start --head"))) == [
        "ray", "start", "--head", "--port=6379", f"--num-gpus={used}"]
    workers = [ln for ln in lines if ln.startswith("ray start --address=")]
    assert len(workers) == (1 if nodes > 1 else 0)
    if workers:
        assert shlex.split(workers[0], posix=True)[2].endswith(":6379")
    args, _ = _serve_line(text)
    parsed = vllm_parse(args)
    assert parsed["distributed_executor_backend"] == "ray"
    _expected(cfg, parsed)
    # the same vLLM arguments as the command, plus the executor backend
    base = vllm_parse(_command_args(ray_config(cfg)))  # without vLLM's native multi-node options
    assert {k: v for k, v in parsed.items() if k != "distributed_executor_backend"} == {
        k: v for k, v in base.items() if k != "distributed_executor_backend"}
    assert f"on {nodes} node(s) of {used} GPU(s)" in text


def test_ray_one_gpu_config_registers_one_gpu():
    from wizard.config import config_from_dict

    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct"})
    text = export_scaleout(cfg, "ray")
    assert "on 1 node(s) of 1 GPU(s)" in text and "--num-gpus=1" in text and "--num-gpus=8" not in text


def test_ray_tp_across_nodes_is_explained():
    cfg, _, _ = load_preset("deepseek-r1-mtp-h200x8")
    text = export_scaleout(cfg, "ray", gpus_per_node=4, head_address="10.0.0.1")
    assert "ray start --address=10.0.0.1:6379 --num-gpus=4" in text
    assert "TP 8 > 4 GPUs per node" in text and "TP 4 x PP 2" in text


# ---- kubernetes ----------------------------------------------------------------------------

@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_k8s_validates_against_the_kubernetes_schema(name, vllm_parse):
    cfg, hw, _ = load_preset(name)
    text = export_scaleout(cfg, "k8s", hardware=hw)
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    for d in docs:
        assert kubernetes_validate.validate(d, K8S_VERSION, strict=True) == K8S_VERSION
    dep, svc = docs
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["command"] == ["vllm", "serve"]
    assert c["args"] == _command_args(cfg)
    _expected(cfg, vllm_parse(c["args"]))
    res = c["resources"]
    if hw == "CPU":
        assert "limits" not in res and c["image"].startswith("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:")
    else:
        key = "amd.com/gpu" if hw.startswith("MI") else "nvidia.com/gpu"
        assert res["limits"][key] == res["requests"][key] == str(gpu_count(cfg))
        if key == "nvidia.com/gpu":
            assert c["image"] == "vllm/vllm-openai:v0.32.0"
    assert c["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    assert {"name": "shm", "mountPath": "/dev/shm"} in c["volumeMounts"]
    assert {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    hf = next(e for e in c["env"] if e["name"] == "HF_TOKEN")
    assert hf["valueFrom"]["secretKeyRef"] == {"name": "hf-token-secret", "key": "token", "optional": True}
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    assert svc["spec"]["selector"] == dep["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["ports"][0]["port"] == 8000


def test_k8s_invalid_object_is_caught_by_the_schema():
    """The validator is real: a Deployment without a selector fails."""
    cfg, _, _ = load_preset("llama31-8b-eagle3-h100")
    dep = next(yaml.safe_load_all(export_scaleout(cfg, "k8s")))
    del dep["spec"]["selector"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(dep, K8S_VERSION, strict=True)
    dep = next(yaml.safe_load_all(export_scaleout(cfg, "k8s")))
    dep["spec"]["template"]["spec"]["containers"][0]["argz"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(dep, K8S_VERSION, strict=True)


def test_k8s_options():
    cfg, _, _ = load_preset("llama31-8b-eagle3-h100")
    cfg.extra_args["port"] = 9001
    docs = list(yaml.safe_load_all(export_scaleout(cfg, "k8s", name="My Server", namespace="ml", replicas=2,
                                                   hf_secret="hf", hf_secret_key="tok", image_tag="v0.33.0")))
    dep, svc = docs
    assert dep["metadata"]["name"] == svc["metadata"]["name"] == "my-server"
    assert dep["metadata"]["namespace"] == "ml" and dep["spec"]["replicas"] == 2
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "vllm/vllm-openai:v0.33.0" and c["ports"][0]["containerPort"] == 9001
    assert c["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "hf"
    for d in docs:
        kubernetes_validate.validate(d, K8S_VERSION, strict=True)
    with pytest.raises(ValueError, match="port"):
        export_scaleout(cfg, "k8s", port=70000)


# ---- vendored upstream schemas (tests/data/schemas/README.md: source, version, digest) --------

SCHEMAS = Path(__file__).parent / "data" / "schemas"
HELM_SCHEMA_FILE = SCHEMAS / "production-stack-vllm-stack-0.1.12.values.schema.json"
LWS_CRD_FILE = SCHEMAS / "lws-v0.10.0-leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz"
HELM_SCHEMA = json.loads(HELM_SCHEMA_FILE.read_text())
LWS_CRD = yaml.safe_load(gzip.decompress(LWS_CRD_FILE.read_bytes()))
(_LWS_VERSION,) = [v for v in LWS_CRD["spec"]["versions"] if v["served"] and v["storage"]]
LWS_SCHEMA = _LWS_VERSION["schema"]["openAPIV3Schema"]


def test_vendored_schemas_are_the_upstream_files():
    """Unchanged since vendoring: the digests recorded next to them (README) still match."""
    readme = (SCHEMAS / "README.md").read_text()
    assert hashlib.sha256(HELM_SCHEMA_FILE.read_bytes()).hexdigest() in readme
    assert hashlib.sha256(gzip.decompress(LWS_CRD_FILE.read_bytes())).hexdigest() in readme
    assert HELM_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert LWS_CRD["kind"] == "CustomResourceDefinition" and LWS_CRD["spec"]["names"]["kind"] == "LeaderWorkerSet"


def _schema_keys(schema: dict, value, path="") -> None:
    """Stricter than upstream (which allows extra keys): every emitted key is one the chart knows."""
    if isinstance(value, dict) and "properties" in schema:
        for k, v in value.items():
            assert k in schema["properties"], f"{path}.{k} is not a key of the chart's values schema"
            _schema_keys(schema["properties"][k], v, f"{path}.{k}")
    elif isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            _schema_keys(schema["items"], v, f"{path}[{i}]")


# ---- helm (vllm-project/production-stack, chart vllm-stack) --------------------------------

def _helm_rendered_args(spec: dict) -> list[str]:
    """What helm/templates/deployment-vllm-multi.yaml renders after `vllm serve`, for the keys we use."""
    vc = spec["vllmConfig"]
    args = [spec["modelURL"], "--host", "0.0.0.0", "--port", "8000"]
    args.append("--enable-prefix-caching" if vc.get("enablePrefixCaching") else "--no-enable-prefix-caching")
    for key, flag in (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"),
                      ("tensorParallelSize", "--tensor-parallel-size"), ("maxNumSeqs", "--max-num-seqs")):
        if key in vc:
            args += [flag, str(vc[key])]
    return args + [str(a) for a in vc.get("extraArgs", [])]


@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_helm_values_match_the_chart_schema(name, vllm_parse):
    cfg, hw, _ = load_preset(name)
    values = yaml.safe_load(export_scaleout(cfg, "helm", hardware=hw))
    jsonschema.validate(values, HELM_SCHEMA)  # the chart's own values.schema.json (vllm-stack 0.1.12)
    _schema_keys(HELM_SCHEMA, values)
    (spec,) = values["servingEngineSpec"]["modelSpec"]
    assert spec["modelURL"] == cfg.model
    if hw != "CPU":
        assert spec["requestGPU"] == gpu_count(cfg)
    assert spec["hf_token"] == {"secretName": "hf-token-secret", "secretKey": "token"}
    rendered = _helm_rendered_args(spec)
    assert rendered[1:5] == ["--host", "0.0.0.0", "--port", "8000"]  # frontend args, not EngineArgs
    parsed = vllm_parse([rendered[0], *rendered[5:]])
    _expected(cfg, parsed)
    base = vllm_parse(_command_args(cfg))
    # same engine args; the chart always passes the prefix-caching flag (vLLM's default: on)
    expected_pc = True if cfg.enable_prefix_caching is None else cfg.enable_prefix_caching
    assert parsed["enable_prefix_caching"] is expected_pc
    assert {k: v for k, v in parsed.items() if k != "enable_prefix_caching"} == {
        k: v for k, v in base.items() if k != "enable_prefix_caching"}


def test_helm_schema_is_real():
    cfg, _, _ = load_preset("llama31-8b-eagle3-h100")
    values = yaml.safe_load(export_scaleout(cfg, "helm"))
    values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]["extraArgs"].append(3)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(values, HELM_SCHEMA)


def test_helm_keeps_explicit_prefix_caching_off():
    cfg, _, _ = load_preset("qwen3-next-80b-mtp-h100x4")
    cfg.enable_prefix_caching = False
    values = yaml.safe_load(export_scaleout(cfg, "helm"))
    vc = values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]
    assert vc["enablePrefixCaching"] is False and vc["tensorParallelSize"] == 4
    assert not any("prefix-caching" in a or "tensor-parallel" in a for a in vc["extraArgs"])


# ---- lws (kubernetes-sigs/lws LeaderWorkerSet, multi-node with Ray) --------------------------

def _lws_docs(text: str) -> tuple[dict, dict]:
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert [d["kind"] for d in docs] == ["LeaderWorkerSet", "Service"]
    return docs[0], docs[1]


def _validate_lws(lws: dict) -> None:
    """The LWS CRD's openAPIV3Schema (v0.10.0), every key known to it, and kubernetes-validate on
    the pod templates inside (as core v1 PodTemplates)."""
    assert lws["apiVersion"] == f"{LWS_CRD['spec']['group']}/{_LWS_VERSION['name']}"
    jsonschema.validate(lws, LWS_SCHEMA)
    _schema_keys(LWS_SCHEMA, lws)
    tpl = lws["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        pt = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"{lws['metadata']['name']}-{role.lower()}"},
              "template": tpl[role]}
        assert kubernetes_validate.validate(pt, K8S_VERSION, strict=True) == K8S_VERSION


@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_lws_validates_against_the_crd_and_carries_the_argv(name, vllm_parse):
    cfg, hw, _ = load_preset(name)
    per_node = 4
    text = export_scaleout(cfg, "lws", hardware=hw, gpus_per_node=per_node)
    lws, svc = _lws_docs(text)
    _validate_lws(lws)
    assert kubernetes_validate.validate(svc, K8S_VERSION, strict=True) == K8S_VERSION
    world = (cfg.tensor_parallel_size or 1) * (cfg.pipeline_parallel_size or 1)
    size, gpus = max(1, math.ceil(world / per_node)), min(per_node, world)
    tpl = lws["spec"]["leaderWorkerTemplate"]
    assert tpl["size"] == size and tpl["restartPolicy"] == "RecreateGroupOnPodRestart"
    (leader,) = tpl["leaderTemplate"]["spec"]["containers"]
    (worker,) = tpl["workerTemplate"]["spec"]["containers"]
    # the leader: Ray head for `size` nodes, then vllm serve with the command's argv + the Ray backend
    assert leader["command"] == ["/bin/sh", "-c"]
    join, serve = leader["args"][0].split(" && exec ")
    assert shlex.split(join) == ["bash", "/vllm-workspace/examples/online_serving/multi-node-serving.sh", "leader",
                                 f"--ray_cluster_size={size}", f"--num-gpus={gpus}"]
    words = shlex.split(serve)
    assert words[:2] == ["vllm", "serve"]
    parsed = vllm_parse(words[2:])
    assert parsed["distributed_executor_backend"] == "ray"
    _expected(cfg, parsed)  # the speculative config included, parsed back by vLLM itself
    base = vllm_parse(_command_args(ray_config(cfg)))  # without vLLM's native multi-node options
    assert {k: v for k, v in parsed.items() if k != "distributed_executor_backend"} == {
        k: v for k, v in base.items() if k != "distributed_executor_backend"}
    # workers join the leader's Ray cluster (LWS injects LWS_LEADER_ADDRESS; no shell)
    assert worker["command"] == ["bash", "/vllm-workspace/examples/online_serving/multi-node-serving.sh", "worker",
                                 "--ray_address=$(LWS_LEADER_ADDRESS)", f"--num-gpus={gpus}"]
    assert "readinessProbe" in leader and "readinessProbe" not in worker
    for c in (leader, worker):
        res = c["resources"]
        if hw == "CPU":
            assert "limits" not in res
        else:
            key = "amd.com/gpu" if hw.startswith("MI") else "nvidia.com/gpu"
            assert res["limits"][key] == res["requests"][key] == str(gpus)  # GPUs per pod
    assert svc["spec"]["selector"] == {"leaderworkerset.sigs.k8s.io/name": lws["metadata"]["name"], "role": "leader"}
    assert tpl["leaderTemplate"]["metadata"]["labels"]["role"] == "leader"
    assert f"Each group: {size} pod(s)" in text


def test_lws_sixteen_gpus_over_two_nodes():
    """The issue's case: 16 GPUs (TP 8 x PP 2) on nodes of 8: two pods of 8 GPUs, no
    'use a LeaderWorkerSet' comment in place of a manifest."""
    cfg, _, _ = load_preset("deepseek-r1-mtp-h200x8")
    cfg.pipeline_parallel_size = 2
    text = export_scaleout(cfg, "lws", hardware="H200x8")
    lws, _ = _lws_docs(text)
    tpl = lws["spec"]["leaderWorkerTemplate"]
    assert tpl["size"] == 2
    assert tpl["workerTemplate"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    assert "--ray_cluster_size=2 --num-gpus=8" in tpl["leaderTemplate"]["spec"]["containers"][0]["args"][0]
    assert "exceed one node" not in text
    assert "'lws' export" in export_scaleout(cfg, "k8s", hardware="H200x8")  # the one-node form points here
    _validate_lws(lws)


def test_lws_invalid_object_is_caught_by_the_crd_schema():
    cfg, _, _ = load_preset("llama31-8b-eagle3-h100")
    lws, _ = _lws_docs(export_scaleout(cfg, "lws"))
    bad = json.loads(json.dumps(lws))
    bad["spec"]["leaderWorkerTemplate"]["size"] = "two"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, LWS_SCHEMA)
    bad = json.loads(json.dumps(lws))
    del bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    with pytest.raises(jsonschema.ValidationError, match="workerTemplate"):
        jsonschema.validate(bad, LWS_SCHEMA)
    bad = json.loads(json.dumps(lws))
    bad["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Sometimes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, LWS_SCHEMA)
    bad = json.loads(json.dumps(lws))
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["argz"] = []
    with pytest.raises(AssertionError, match="argz"):
        _schema_keys(LWS_SCHEMA, bad)


# ---- docker --------------------------------------------------------------------------------

@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_docker(name, vllm_parse):
    cfg, hw, _ = load_preset(name)
    text = export_scaleout(cfg, "docker", hardware=hw)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("docker run")]
    argv = shlex.split(line)
    image_i = next(i for i, a in enumerate(argv) if a.split(":")[0] in (
        "vllm/vllm-openai", "rocm/vllm", "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo"))
    args = argv[image_i + 1:]
    assert args == _command_args(cfg)
    _expected(cfg, vllm_parse(args))
    opts = argv[:image_i]
    assert "--ipc=host" in opts and opts[opts.index("-p") + 1] == "8000:8000"
    if hw.startswith("MI"):
        assert "--device=/dev/kfd" in opts and argv[image_i] == "rocm/vllm:latest"
    elif hw == "CPU":
        assert "--gpus" not in opts and "VLLM_CPU_KVCACHE_SPACE=4" in opts
    else:
        assert opts[opts.index("--gpus") + 1] == '"device=' + ",".join(map(str, range(gpu_count(cfg)))) + '"'
        assert argv[image_i] == "vllm/vllm-openai:v0.32.0"


def test_unknown_format_lists_the_known_ones():
    cfg = config_from_dict({"model": "m/x"})
    with pytest.raises(ValueError) as err:
        export_scaleout(cfg, "slurm")
    assert all(f in str(err.value) for f in SCALEOUT_FORMATS)
    assert export_scaleout(cfg, "kubernetes") == export_scaleout(cfg, "k8s")


# ---- every export format for every preset --------------------------------------------------

BASIC_FORMATS = ("command", "dotted", "yaml", "python")


@pytest.mark.vllm
@pytest.mark.parametrize("name", NAMES)
def test_every_export_format_for_every_preset(name, vllm_parse, tmp_path):
    from wizard.io.forms import export

    cfg, hw, _ = load_preset(name)
    out = {}
    for fmt in BASIC_FORMATS + SCALEOUT_FORMATS:
        text = export(cfg, fmt)
        assert isinstance(text, str) and cfg.model in text, fmt
        out[fmt] = text
    # the scale-out formats are delegated unchanged
    for fmt in SCALEOUT_FORMATS:
        assert out[fmt] == export_scaleout(cfg, fmt)
    # command and dotted: vLLM's parser gives the configuration back
    for fmt in ("command", "dotted"):
        args, _ = _serve_line(out[fmt])
        _expected(cfg, vllm_parse(args))
    # yaml: a mapping that loads back into the same configuration (a --config file has no env)
    data = yaml.safe_load(out["yaml"])
    assert isinstance(data, dict)
    back = config_from_dict({"model": cfg.model, **data}) if "model" not in data else config_from_dict(data)
    assert {k: v for k, v in back.to_dict().items() if k != "env"} == {
        k: v for k, v in cfg.to_dict().items() if k != "env"}
    # python: valid Python that names the model and the speculative method
    tree = ast.parse(out["python"])
    consts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert cfg.model in consts and cfg.speculative_config.method in consts
    # k8s / helm are YAML; the shell forms split with shlex
    assert len([d for d in yaml.safe_load_all(out["k8s"]) if d]) == 2
    assert [d["kind"] for d in yaml.safe_load_all(out["lws"]) if d] == ["LeaderWorkerSet", "Service"]
    assert yaml.safe_load(out["helm"])["servingEngineSpec"]["modelSpec"][0]["modelURL"] == cfg.model
    for fmt in ("multi-gpu", "ray", "docker"):
        for ln in out[fmt].splitlines():
            if ln and not ln.startswith("#"):
                shlex.split(ln)
    json.dumps(out)  # all plain text


def test_local_model_paths_are_mounted_in_docker_and_noted_for_pods():
    """Found by a new-user trial (2026-12-04): a local target was not visible in the container."""
    from wizard import api
    from wizard.io.scaleout import export_scaleout

    cfg = api.load(command="vllm serve /models/llama --speculative-config "
                           "'{\"method\":\"eagle3\",\"model\":\"/models/eagle3\",\"num_speculative_tokens\":3}'")
    docker = export_scaleout(cfg, "docker", hardware="H100")
    assert "-v /models/llama:/models/llama:ro" in docker and "-v /models/eagle3:/models/eagle3:ro" in docker
    k8s = export_scaleout(cfg, "k8s", hardware="H100")
    assert "# Note: /models/llama, /models/eagle3 are local paths on this machine" in k8s
    rel = export_scaleout(api.load(command="vllm serve ./llama"), "docker", hardware="H100")
    assert "give the model as an absolute path" in rel and "-v ./llama" not in rel
    hub = export_scaleout(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), "docker", hardware="H100")
    assert ":ro" not in hub and "local path" not in export_scaleout(
        api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), "k8s", hardware="H100")


def test_lws_gives_a_data_parallel_command_all_its_gpus():
    """CLI trial round 2, defect 6: `export --to lws` of a --data-parallel-size 2 command asked for one
    GPU (size 1, --num-gpus=1, nvidia.com/gpu '1') while k8s/kserve/llm-d asked for 2."""
    from wizard.config import config_from_dict
    from wizard.io.k8s import lws_layout

    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "data_parallel_size": 2})
    assert lws_layout(cfg, {"gpus_per_node": 2}) == (1, 2)
    assert lws_layout(cfg, {"gpus_per_node": 1}) == (2, 1)
    tp = config_from_dict({"model": "m", "tensor_parallel_size": 4, "data_parallel_size": 2})
    assert lws_layout(tp, {"gpus_per_node": 8}) == (1, 8)
