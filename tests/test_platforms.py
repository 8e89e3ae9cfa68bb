"""KServe LLMInferenceService and llm-d modelservice exports (wizard/io/serving_platforms.py), single
and prefill/decode pair, for every preset: validated against the vendored upstream schemas
(tests/data/schemas/README.md: the LLMInferenceService CRD of kserve/kserve aaac4e29 and the
values.schema.json of llm-d-modelservice v0.4.12), the pod templates with kubernetes-validate,
and the round trip -- the command each platform renders from the export re-imports to the same
options (the port aside, which the platform sets)."""

from __future__ import annotations

import gzip
import hashlib
import shlex
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from wizard import api
from wizard.config import ServeConfig
from wizard.engine.options import user_options
from wizard.io.forms import export
from wizard.io.pd import pd_export
from wizard.io.presets import list_presets, load_preset
from wizard.io.scaleout import export_scaleout
from wizard.privacy import redact_config

from test_scaleout import _schema_keys  # every emitted key is one the schema knows (CRDs allow extra keys)

SCHEMAS = Path(__file__).parent / "data" / "schemas"
KSERVE_FILE = SCHEMAS / "kserve-llminferenceservices-aaac4e29.yaml.gz"
LLMD_FILE = SCHEMAS / "llm-d-modelservice-v0.4.12.values.schema.json.gz"
NAMES = [p.name for p in list_presets()]
K8S_VERSION = "1.30"
V = "0.32"


def _raw(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())


CRD = yaml.safe_load(_raw(KSERVE_FILE))
_VERSION = next(v for v in CRD["spec"]["versions"] if v["name"] == "v1alpha2")
KSERVE_SCHEMA = _VERSION["schema"]["openAPIV3Schema"]
LLMD_SCHEMA = yaml.safe_load(_raw(LLMD_FILE))


def test_vendored_files_match_their_recorded_digests():
    readme = (SCHEMAS / "README.md").read_text()
    for path in (KSERVE_FILE, LLMD_FILE):
        assert path.name in readme and hashlib.sha256(_raw(path)).hexdigest() in readme
    assert CRD["spec"]["names"]["kind"] == "LLMInferenceService" and _VERSION["storage"] is True
    # kserve/kserve#5687 (spec.speculator) is not in this CRD: speculation travels in the args
    assert "speculator" not in KSERVE_SCHEMA["properties"]["spec"]["properties"]


def _pod(spec: dict) -> None:
    pt = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}, "template": {"spec": spec}}
    assert kubernetes_validate.validate(pt, K8S_VERSION, strict=True) == K8S_VERSION


def _normal(cfg: ServeConfig) -> dict:
    """Options as the release's parser converts them, without the ones the platform writes itself."""
    opts = user_options(redact_config(cfg), V)
    for k in ("port", "served_model_name"):
        opts.pop(k, None)
    for k in ("tensor_parallel_size", "data_parallel_size"):  # 1 is vLLM's default: the charts write only > 1
        if opts.get(k) == 1:
            opts.pop(k)
    return opts


def _kserve_argv(obj: dict, workload: dict) -> list[str]:
    """What KServe's config-llm-template runs: vllm serve <model> ... --tensor-parallel-size T $@ (eval'd)."""
    (c,) = workload["template"]["containers"]
    argv = ["vllm", "serve", obj["spec"]["model"]["name"], "--port", "8000"]
    tp = workload.get("parallelism", {}).get("tensor")
    if tp:
        argv += ["--tensor-parallel-size", str(tp)]
    return argv + shlex.split(" ".join(c.get("args", [])))  # the template's eval re-reads the args


def _llmd_argv(values: dict, role: str) -> list[str]:
    """What llm-d-modelservice's vllmServeModelCommand renders for ``role``."""
    r = values[role]
    (c,) = r["containers"]
    argv = ["vllm", "serve", values["modelArtifacts"]["name"], "--port", "8000"]
    par = r.get("parallelism", {})
    for key, flag in (("tensor", "--tensor-parallel-size"), ("data", "--data-parallel-size"),
                      ("dataLocal", "--data-parallel-size-local")):
        if int(par.get(key, 1)) > 1:
            argv += [flag, str(par[key])]
    return argv + ["--served-model-name", values["modelArtifacts"]["name"], *c.get("args", [])]


def _kserve_valid(obj: dict) -> None:
    jsonschema.validate(obj, KSERVE_SCHEMA)
    _schema_keys(KSERVE_SCHEMA, obj)
    _pod(obj["spec"]["template"])
    if "prefill" in obj["spec"]:
        _pod(obj["spec"]["prefill"]["template"])


@pytest.mark.parametrize("name", NAMES)
def test_kserve_for_every_preset_validates_and_round_trips(name):
    cfg, hw, _ = load_preset(name)
    text = export(cfg, "kserve")
    assert text == export_scaleout(redact_config(cfg), "kserve")
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert len(docs) == 1
    obj = docs[0]
    _kserve_valid(obj)
    back = api.load(command=_kserve_argv(obj, obj["spec"]))
    assert back.model == cfg.model and _normal(back) == {**_normal(cfg), **_tp(back)}
    assert back.speculative_config == redact_config(cfg).speculative_config


def _tp(back: ServeConfig) -> dict:
    o = _normal(back)
    return {"tensor_parallel_size": o["tensor_parallel_size"]} if "tensor_parallel_size" in o else {}


@pytest.mark.parametrize("name", NAMES)
def test_llmd_for_every_preset_validates_and_round_trips(name):
    cfg, hw, _ = load_preset(name)
    values = yaml.safe_load(export(cfg, "llm-d"))
    jsonschema.validate(values, LLMD_SCHEMA)
    assert values["prefill"] == {"create": False} and values["routing"]["proxy"]["enabled"] is False
    back = api.load(command=_llmd_argv(values, "decode"))
    assert _normal(back) == {**_normal(cfg), **_tp(back)}
    assert back.speculative_config == redact_config(cfg).speculative_config


def test_a_typo_fails_the_schemas():
    cfg, _, _ = load_preset(NAMES[0])
    obj = yaml.safe_load(export(cfg, "kserve"))
    obj["spec"]["parallelism"]["tensr"] = 2
    with pytest.raises(AssertionError, match="tensr"):
        _kserve_valid(obj)
    obj["spec"]["parallelism"] = {"tensor": "two"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, KSERVE_SCHEMA)
    values = yaml.safe_load(export(cfg, "llm-d"))
    values["decode"]["parallelism"]["tensr"] = 2
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(values, LLMD_SCHEMA)


def test_dp_ep_layout_goes_to_the_structured_fields():
    cfg = api.load(command="vllm serve Qwen/Qwen3-235B-A22B -tp 2 -dp 4 --enable-expert-parallel "
                           "--speculative-config '{\"method\":\"eagle3\",\"model\":\"x/e3\",\"num_speculative_tokens\":3}'")
    obj = yaml.safe_load(export(cfg, "kserve"))
    assert obj["spec"]["parallelism"] == {"tensor": 2, "data": 4, "dataLocal": 4, "expert": True}
    _kserve_valid(obj)
    values = yaml.safe_load(export(cfg, "llm-d"))
    jsonschema.validate(values, LLMD_SCHEMA)
    assert values["decode"]["parallelism"] == {"tensor": 2, "data": 4, "dataLocal": 4}
    assert "--data-parallel-size" not in values["decode"]["containers"][0]["args"]
    assert "--enable-expert-parallel" in values["decode"]["containers"][0]["args"]


NIXL = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
E3 = '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'


def _pair():
    p = api.load(command=f"vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{NIXL}' --speculative-config '{E3}'")
    d = api.load(command=f"vllm serve Qwen/Qwen3-8B --port 8200 -tp 2 --kv-transfer-config '{NIXL}' --speculative-config '{E3}'")
    return p, d


def test_pair_as_one_llminferenceservice():
    p, d = _pair()
    obj = yaml.safe_load(pd_export(p, d, "kserve"))
    _kserve_valid(obj)
    assert obj["spec"]["parallelism"]["tensor"] == 2 and obj["spec"]["prefill"]["parallelism"]["tensor"] == 1
    for side, cfg, workload in (("prefill", p, obj["spec"]["prefill"]), ("decode", d, obj["spec"])):
        back = api.load(command=_kserve_argv(obj, workload))
        assert _normal(back) == {**_normal(cfg), **_tp(back)}, side
        env = {e["name"]: e.get("value") for e in workload["template"]["containers"][0]["env"]}
        assert env["VLLM_NIXL_SIDE_CHANNEL_PORT"] == {"prefill": "5600", "decode": "5601"}[side]


def test_pair_as_llmd_values():
    p, d = _pair()
    values = yaml.safe_load(pd_export(p, d, "llm-d"))
    jsonschema.validate(values, LLMD_SCHEMA)
    assert values["routing"]["proxy"] == {"enabled": True, "targetPort": 8200}
    assert values["decode"]["containers"][0]["ports"][0]["containerPort"] == 8200
    # the chart's prefill vLLM listens on routing.servicePort (the prefill config's --port)
    assert values["routing"]["servicePort"] == 8100 == values["prefill"]["containers"][0]["ports"][0]["containerPort"]
    for role, cfg in (("prefill", p), ("decode", d)):
        back = api.load(command=_llmd_argv(values, role))
        assert _normal(back) == {**_normal(cfg), **_tp(back)}, role
        env = {e["name"]: e for e in values[role]["containers"][0]["env"]}
        assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
