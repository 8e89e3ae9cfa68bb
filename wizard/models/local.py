"""Inspect a local model folder: config.json (or Mistral ``params.json``), safetensors *headers*
and ``model.safetensors.index.json``. Tensor data is never read.

Public entry points:

* :func:`inspect_folder` -- a folder on disk -> :class:`~wizard.models.info.ModelInfo`.
* :func:`info_from_config` -- a config.json-like dict -> ModelInfo. The catalog
  (:mod:`wizard.models.catalog`) and the Hub reader (:mod:`wizard.models.hub`) call this same
  function, so a catalog id or a Hub id resolves exactly like a local folder.
* :func:`read_safetensors_header` -- one ``*.safetensors`` file -> ``{name: TensorInfo}``
  (8-byte little-endian header length + JSON header, as specified by the safetensors format,
  https://github.com/huggingface/safetensors#format).
* :func:`apply_tensor_facts` -- tensor names/shapes -> has_lm_head, has_embed_tokens, has_d2t,
  has_t2d, has_mtp_weights, param_count, weight_bytes.

Error policy: a missing folder or a folder without config.json/params.json raises
:class:`wizard.models.ModelLookupError`. Anything else that is wrong (config.json that is not
JSON, a truncated or corrupt safetensors file, an index that does not parse, a field of the
wrong type) is written to ``ModelInfo.notes`` and the affected fields stay ``None``.

Field sources (vLLM 0.32 ``vllm/config/model.py``, ``vllm/transformers_utils/config.py``,
``vllm/config/speculative.py:hf_config_override``; transformers config classes):
``text_config`` is merged over the top level (multimodal wrappers), ``transformer_layer_config``
likewise for speculators-format drafters (``vllm/transformers_utils/configs/speculators``).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from wizard.models.info import ModelInfo, TensorInfo
from wizard.vllm.methods import MEDUSA

__all__ = [
    "inspect_folder",
    "info_from_config",
    "read_safetensors_header",
    "apply_tensor_facts",
    "SafetensorsHeaderError",
    "DTYPE_BYTES",
]

# bytes per element of safetensors dtypes (https://github.com/huggingface/safetensors, Dtype enum)
DTYPE_BYTES: dict[str, float] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "F8_E4M3FNUZ": 1,
    "F8_E5M2FNUZ": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8, "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75, "C64": 8,
}

# largest header we accept (safetensors itself caps it at 100 MB)
_MAX_HEADER = 100 * 1024 * 1024
_MAX_CONFIG = 50 * 1024 * 1024

# hybrid layer-type spellings that carry recurrent state instead of KV
_STATE_LAYER_TYPES = {"mamba", "mamba2", "linear_attention", "gdn", "gated_deltanet", "ssm", "m", "recurrent", "conv", "short_conv", "lightning_attention"}
_PURE_SSM_TYPES = {"mamba", "mamba2", "falcon_mamba"}

# Sparse multimodal configs rely on transformers defaults; these are the defaults of the
# transformers 5.x config classes (Gemma3TextConfig), which vLLM gets when it loads the config.
_TEXT_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "vocab_size": 262208,
        "hidden_size": 2304,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
    },
}
_TEXT_DEFAULT_FOR_PARENT = {"gemma3": "gemma3_text"}

_MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")
_LAYER_RE = re.compile(r"(?:^|\.)layers\.(\d+)\.")


class SafetensorsHeaderError(ValueError):
    """A safetensors file whose header cannot be read (too short, bad length, bad JSON)."""


def _lookup_error(msg: str) -> Exception:
    from wizard.models import ModelLookupError

    return ModelLookupError(msg)


# ------------------------------------------------------------------------------------------
# small typed getters that never raise


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: Sizes a checkpoint's config may give, each with the largest value SpecWizard accepts. vLLM and
#: transformers bound none of them: they build that many layers / allocate that many rows, so an
#: absurd value means minutes of loading and an out-of-memory crash. The bounds are ~50x the
#: largest real checkpoints (layers: DeepSeek-V3 61, Llama-3.1-405B 126; hidden 16384-25600;
#: vocab ~262k; context 10M for Llama 4 Scout); token ids are int32 in vLLM (vocab < 2**31).
SIZE_LIMITS: dict[str, int] = {
    "num_hidden_layers": 10_000, "n_layers": 10_000, "num_kv_shared_layers": 10_000,
    "hidden_size": 1 << 20, "dim": 1 << 20, "target_hidden_size": 1 << 20, "intermediate_size": 1 << 24,
    "moe_intermediate_size": 1 << 24,
    "num_attention_heads": 1 << 16, "num_key_value_heads": 1 << 16, "head_dim": 1 << 16,
    "kv_lora_rank": 1 << 16, "qk_rope_head_dim": 1 << 16,
    "vocab_size": 2 ** 31 - 1, "draft_vocab_size": 2 ** 31 - 1,
    "max_position_embeddings": 2 ** 32, "sliding_window": 2 ** 32, "attention_chunk_size": 2 ** 32,
    "num_nextn_predict_layers": 10_000, "mtp_num_hidden_layers": 10_000, "num_mtp_modules": 10_000,
    "n_predict": 10_000, "speculative_tokens": 10_000,
}


def _shown(v: Any) -> str:
    if _is_int(v) and abs(v) > 10 ** 30:
        return f"a {len(str(abs(v)))}-digit number"
    return f"{v!r:.60}"


def _get_int(cfg: Mapping[str, Any], key: str, notes: list[str], *, where: str = "config.json",
             errors: list[str] | None = None) -> int | None:
    """A non-negative integer field (an integral float is accepted, as transformers does). A value
    of the wrong type, NaN/inf, negative or beyond :data:`SIZE_LIMITS` is ignored with a note --
    or, for a size in SIZE_LIMITS when ``errors`` is given, an error naming the file and key."""
    if key not in cfg or cfg[key] is None:
        return None
    v = cfg[key]
    limit = SIZE_LIMITS.get(key)
    if isinstance(v, float) and v.is_integer() and v >= 0 and (limit is None or v <= limit):
        v = int(v)
    if _is_int(v) and v >= 0 and (limit is None or v <= limit):
        return v
    if limit is not None and errors is not None:
        if isinstance(v, float) and v != v:
            why = "NaN, not a number"
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and v > limit:
            why = f"{_shown(v)}, beyond any real model (SpecWizard accepts at most {limit:,})"
        else:
            why = f"{_shown(v)}, not a non-negative integer"
        errors.append(f"{where}: '{key}' is {why}; vLLM would fail (or build an impossibly large model) loading it. "
                      f"Fix '{key}' in {where.split(' ')[0]}")
        return None
    notes.append(f"{where}: '{key}' is {_shown(v)}, expected a non-negative integer; ignored")
    return None


def _get_str(cfg: Mapping[str, Any], key: str, notes: list[str], *, where: str = "config.json") -> str | None:
    v = cfg.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        return v
    notes.append(f"{where}: '{key}' is {v!r:.60}, expected a string; ignored")
    return None


def _get_int_list(cfg: Mapping[str, Any], key: str, notes: list[str], *, where: str = "config.json") -> list[int] | None:
    v = cfg.get(key)
    if v is None:
        return None
    if isinstance(v, list) and all(_is_int(x) for x in v):
        return list(v)
    notes.append(f"{where}: '{key}' is {v!r:.60}, expected a list of integers; ignored")
    return None


# ------------------------------------------------------------------------------------------
# config.json -> ModelInfo


def _merge_text(raw: dict[str, Any], notes: list[str]) -> tuple[dict[str, Any], bool, str]:
    """Top level with ``text_config`` (multimodal) or ``transformer_layer_config`` (speculators)
    merged over it. Returns (merged, is_multimodal, prefix of the merged sub-config)."""
    merged = dict(raw)
    is_mm = False
    prefix = ""
    for key in ("text_config", "llm_config", "language_config", "transformer_layer_config"):
        sub = raw.get(key)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            notes.append(f"config.json: '{key}' is not an object; ignored")
            continue
        for k, v in sub.items():
            if k in ("architectures",) and key != "transformer_layer_config":
                continue
            if k == "model_type" and key != "transformer_layer_config":
                merged["text_model_type"] = v
                continue
            if k in ("quantization_config",) and k in raw:
                continue
            merged[k] = v
        prefix = key + "."
        if key != "transformer_layer_config":
            archs = raw.get("architectures") if isinstance(raw.get("architectures"), list) else []
            is_mm = bool(
                any(k in raw for k in ("vision_config", "audio_config", "vision_tower", "image_token_index", "image_token_id"))
                or any(isinstance(a, str) and "ConditionalGeneration" in a for a in archs)
            )
        break
    return merged, is_mm, prefix


def _apply_text_defaults(merged: dict[str, Any], raw: dict[str, Any], notes: list[str]) -> None:
    tmt = merged.get("text_model_type")
    if not isinstance(tmt, str):
        tmt = _TEXT_DEFAULT_FOR_PARENT.get(raw.get("model_type")) if isinstance(raw.get("model_type"), str) else None
    if not isinstance(tmt, str):
        mt = raw.get("model_type")
        tmt = mt if isinstance(mt, str) else None
    defaults = _TEXT_DEFAULTS.get(tmt or "")
    if not defaults:
        return
    filled = []
    for k, v in defaults.items():
        if merged.get(k) is None:
            merged[k] = v
            filled.append(k)
    if filled:
        notes.append(
            f"filled {', '.join(filled)} from transformers' {tmt} config defaults (config.json omits them; "
            "vLLM loads the same defaults)"
        )


def _kv_cache_quant(q: Mapping[str, Any], notes: list[str]) -> str | None:
    """KV dtype a checkpoint forces under ``--kv-cache-dtype auto`` (R101).

    ModelOpt: ``vllm/utils/torch_utils.py:get_kv_cache_quant_algo_string`` (0.32): kv_cache_scheme
    or kv_cache_quant_algo, top level or under ``quantization``; dict {dynamic: false, num_bits: 8,
    type: float} -> fp8, {num_bits: 4, type: float} -> nvfp4, strings fp8/nvfp4.
    compressed-tensors: ``kv_cache_scheme`` {num_bits: 8, type: float} -> fp8 at load
    (``CompressedTensorsKVCacheMethod.validate_kv_cache_scheme``).
    """
    method = q.get("quant_method")
    method = method if isinstance(method, str) else ""
    inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
    algo = None
    for src in (inner, q):
        for key in ("kv_cache_scheme", "kv_cache_quant_algo"):
            if src.get(key):
                algo = src.get(key)
                break
        if algo:
            break
    if not algo:
        return None
    if method.startswith("modelopt"):
        if isinstance(algo, dict):
            if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
                return "fp8"
            if algo.get("num_bits") == 4 and algo.get("type") == "float":
                return "nvfp4"
            notes.append(f"quantization_config: unknown kv_cache_scheme {algo!r:.80}; vLLM falls back to auto")
            return None
        if isinstance(algo, str):
            low = algo.lower()
            if low in ("fp8", "nvfp4"):
                return low
            notes.append(f"quantization_config: unknown kv_cache_quant_algo {algo!r:.80}; vLLM falls back to auto")
        return None
    if isinstance(algo, dict):
        if algo.get("num_bits") == 8 and algo.get("type") == "float":
            return "fp8"
        if algo.get("num_bits") == 4 and algo.get("type") == "float":
            return "nvfp4"
        notes.append(f"quantization_config: kv_cache_scheme {algo!r:.80} is not fp8; vLLM rejects it at load")
        return None
    if isinstance(algo, str) and algo.lower() in ("fp8", "nvfp4"):
        return algo.lower()
    return None


def _count_state_layers(merged: dict[str, Any], layers: int | None, layer_types: list[str] | None, model_type: str | None) -> int:
    if layer_types:
        return sum(1 for t in layer_types if t.lower() in _STATE_LAYER_TYPES)
    lbt = merged.get("layers_block_type")
    if isinstance(lbt, list) and all(isinstance(x, str) for x in lbt):
        return sum(1 for t in lbt if t.lower() in _STATE_LAYER_TYPES)
    pat = merged.get("hybrid_override_pattern")
    if isinstance(pat, str):
        return pat.count("M")
    if model_type in _PURE_SSM_TYPES and layers:
        return layers
    if layers:
        interval = merged.get("full_attention_interval")
        if _is_int(interval) and interval > 0:  # Qwen3-Next: every interval-th layer is full attention
            return layers - layers // interval
        period, offset = merged.get("attn_layer_period"), merged.get("attn_layer_offset")
        if _is_int(period) and period > 0 and _is_int(offset):  # Jamba: layer i is attention when i % period == offset
            attn = layers // period + (1 if 0 <= offset < layers % period else 0) if 0 <= offset < period else 0
            return layers - attn
    return 0


def info_from_config(
    raw: Any,
    *,
    id: str,
    source: str = "local",
    path: str | None = None,
    notes: list[str] | None = None,
    native_mistral: bool = False,
    errors: list[str] | None = None,
) -> ModelInfo:
    """Build a ModelInfo from a config.json-like mapping (no tensor facts).

    ``raw`` that is not a dict gives a ModelInfo with only an error (``errors``: the config is
    not a JSON object). With ``native_mistral`` the mapping is a Mistral ``params.json`` (dim,
    n_layers, n_heads, n_kv_heads, head_dim, vocab_size), converted to HF names. Sizes that are
    NaN, negative, of the wrong type or beyond :data:`SIZE_LIMITS` go to ``errors`` (rule SD007).
    Never raises.
    """
    notes = list(notes or [])
    errors = list(errors or [])
    fname = "params.json" if native_mistral else "config.json"
    if not isinstance(raw, dict):
        what = "empty (null)" if raw is None else f"a JSON {type(raw).__name__}, not an object"
        errors.append(f"{fname} is {what}; vLLM cannot read the model from it. Give the checkpoint's "
                      f"{fname} (a JSON object with model_type, hidden_size, ...)")
        return ModelInfo(id=id, source=source, path=path, notes=notes, errors=errors)
    if native_mistral:
        cfg = _from_mistral_params(raw, notes)
    else:
        cfg = raw
    merged, is_mm, prefix = _merge_text(cfg, notes)
    _apply_text_defaults(merged, cfg, notes)

    archs_raw = cfg.get("architectures")
    if isinstance(archs_raw, list) and all(isinstance(a, str) for a in archs_raw):
        archs = list(archs_raw)
    else:
        archs = []
        if archs_raw is not None:
            notes.append(f"config.json: 'architectures' is {archs_raw!r:.60}, expected a list of strings; ignored")
    model_type = _get_str(cfg, "model_type", notes)
    if model_type is None and isinstance(merged.get("model_type"), str):
        model_type = merged["model_type"]

    g_int = lambda k: _get_int(merged, k, notes, where=fname, errors=errors)  # noqa: E731
    hidden = g_int("hidden_size")
    layers = g_int("num_hidden_layers")
    heads = g_int("num_attention_heads")
    kv_heads = g_int("num_key_value_heads")
    if kv_heads is None and heads is not None and "num_key_value_heads" not in merged:
        kv_heads = heads  # transformers default: MHA when num_key_value_heads is absent
    kv_lora_rank = g_int("kv_lora_rank")
    qk_rope = g_int("qk_rope_head_dim")
    use_mla = kv_lora_rank is not None
    head_dim = g_int("head_dim")
    if use_mla and qk_rope is not None:
        head_dim = kv_lora_rank + qk_rope  # vLLM ModelConfig.get_head_size for MLA (e.g. 512+64=576)
    elif head_dim is None and hidden and heads:
        head_dim = hidden // heads

    dtype = merged.get("torch_dtype", merged.get("dtype"))
    if dtype is not None and not isinstance(dtype, str):
        notes.append(f"config.json: 'torch_dtype' is {dtype!r:.60}, expected a string; ignored")
        dtype = None
    if isinstance(dtype, str) and dtype.startswith("torch."):
        dtype = dtype[len("torch."):]

    q = cfg.get("quantization_config", merged.get("quantization_config"))
    if q is None:
        q = cfg.get("compression_config")
    quant_method = kv_quant = None
    if q is not None:
        if isinstance(q, dict):
            quant_method = q.get("quant_method") if isinstance(q.get("quant_method"), str) else None
            if quant_method is None and isinstance(q.get("quantization"), dict):
                # ModelOpt hf_quant_config.json layout
                quant_method = "modelopt"
            kv_quant = _kv_cache_quant(q, notes)
        else:
            notes.append("config.json: 'quantization_config' is not an object; ignored")

    sliding = g_int("sliding_window")
    if merged.get("use_sliding_window") is False and sliding is not None:
        # Qwen2/MiMo: transformers drops sliding_window when use_sliding_window is false
        sliding = None
    lt = merged.get("layer_types")
    layer_types: list[str] | None = None
    if isinstance(lt, list) and all(isinstance(x, str) for x in lt):
        layer_types = list(lt)
    elif lt is not None:
        notes.append(f"config.json: 'layer_types' is {lt!r:.60}, expected a list of strings; ignored")
    pattern = merged.get("sliding_window_pattern")
    if layer_types is None and _is_int(pattern) and pattern > 0 and layers and sliding and layers <= 100_000:
        # Gemma3TextConfig: layer i is full attention when (i + 1) % pattern == 0
        layer_types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(layers)]

    # MTP (hf_config_override spellings; text_config variants through the merge)
    mtp_layers = mtp_field = None
    for key in _MTP_KEYS:
        if key in cfg and cfg[key] is not None:
            mtp_layers, mtp_field = _get_int(cfg, key, notes, where=fname, errors=errors), key
            break
        if key in merged and merged[key] is not None:
            mtp_layers, mtp_field = _get_int(merged, key, notes, where=fname, errors=errors), (prefix or "text_config.") + key
            break
    if mtp_field and mtp_layers is None:
        mtp_field = None

    eagle_cfg = merged.get("eagle_config") if isinstance(merged.get("eagle_config"), dict) else {}
    aux = _get_int_list(merged, "eagle_aux_hidden_state_layer_ids", notes)
    if aux is None and eagle_cfg:
        aux = _get_int_list(eagle_cfg, "eagle_aux_hidden_state_layer_ids", notes, where="config.json eagle_config")
    spec_cfg = cfg.get("speculators_config")
    if spec_cfg is not None and not isinstance(spec_cfg, dict):
        notes.append("config.json: 'speculators_config' is not an object; ignored")
        spec_cfg = None
    n_predict = g_int("n_predict")
    if n_predict is None and spec_cfg:
        pm = spec_cfg.get("proposal_methods")
        if isinstance(pm, list) and pm and isinstance(pm[0], dict):
            n_predict = _get_int(pm[0], "speculative_tokens", notes, where=f"{fname} speculators_config.proposal_methods[0]",
                                 errors=errors)
    if n_predict is None and model_type == MEDUSA:
        n_predict = g_int("num_heads")

    num_mamba = _count_state_layers(merged, layers, layer_types, model_type)
    kv_shared = g_int("num_kv_shared_layers") or 0
    try:
        return ModelInfo(
            id=id,
            source=source,
            path=path,
            raw_config=raw,
            architectures=archs,
            model_type=model_type,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            head_dim=head_dim,
            vocab_size=g_int("vocab_size"),
            max_position_embeddings=g_int("max_position_embeddings"),
            torch_dtype=dtype,
            is_multimodal=is_mm or (native_mistral and isinstance(raw.get("vision_encoder"), dict)),
            quant_method=quant_method,
            kv_cache_quant=kv_quant,
            use_mla=use_mla,
            kv_lora_rank=kv_lora_rank,
            qk_rope_head_dim=qk_rope,
            sliding_window=sliding,
            layer_types=layer_types,
            attention_chunk_size=g_int("attention_chunk_size"),
            num_kv_shared_layers=kv_shared,
            num_mamba_layers=num_mamba,
            mtp_layers=mtp_layers,
            mtp_field=mtp_field,
            speculators_config=spec_cfg,
            draft_vocab_size=g_int("draft_vocab_size"),
            target_hidden_size=g_int("target_hidden_size") if "target_hidden_size" in merged else (
                _get_int(eagle_cfg, "target_hidden_size", notes, where=f"{fname} eagle_config", errors=errors) if eagle_cfg else None
            ),
            eagle_aux_hidden_state_layer_ids=aux,
            n_predict=n_predict,
            notes=notes,
            errors=errors,
        )
    except Exception as err:  # pragma: no cover - validation of values we already typed
        errors.append(f"{fname} could not be converted ({type(err).__name__}: {str(err)[:200]}); check its values")
        return ModelInfo(id=id, source=source, path=path, notes=notes, errors=errors)


def _from_mistral_params(p: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Mistral native ``params.json`` -> HF config names (vLLM
    ``transformers_utils/configs/mistral.py:adapt_config_dict`` does the same mapping)."""
    mapping = {
        "dim": "hidden_size",
        "n_layers": "num_hidden_layers",
        "n_heads": "num_attention_heads",
        "n_kv_heads": "num_key_value_heads",
        "head_dim": "head_dim",
        "hidden_dim": "intermediate_size",
        "vocab_size": "vocab_size",
        "rope_theta": "rope_theta",
        "sliding_window": "sliding_window",
        "max_seq_len": "max_position_embeddings",
        "max_position_embeddings": "max_position_embeddings",
        "quantization": "quantization_config",
    }
    cfg: dict[str, Any] = {k2: p[k] for k, k2 in mapping.items() if k in p}
    if isinstance(p.get("vision_encoder"), dict):
        cfg["architectures"] = ["PixtralForConditionalGeneration"]
        cfg["model_type"] = "pixtral"
        cfg["vision_config"] = p["vision_encoder"]
    elif p.get("moe"):
        cfg["architectures"] = ["MixtralForCausalLM"]
        cfg["model_type"] = "mixtral"
    else:
        cfg["architectures"] = ["MistralForCausalLM"]
        cfg["model_type"] = "mistral"
    notes.append("read Mistral native params.json (no config.json); names mapped to the HF config (vLLM mistral format)")
    return cfg


# ------------------------------------------------------------------------------------------
# safetensors headers


class _HeaderScan:
    """One safetensors header, kept small: tensor names, the shapes of the tensors the rules
    read (``keep``), parameter and byte sums. Built by :func:`_scan_header`."""

    __slots__ = ("names", "param_counts", "shapes", "params", "nbytes", "weighted_bytes", "meta", "header_bytes")

    def __init__(self) -> None:
        self.header_bytes = 0
        self.param_counts: list[int] = []
        self.names: list[str] = []
        self.shapes: dict[str, TensorInfo] = {}
        self.params = 0
        self.nbytes = 0
        self.weighted_bytes = 0.0
        self.meta: dict[str, Any] = {}


def _open_header(p: Path, budget: int | None) -> tuple[bytes, int, int]:
    """(header JSON bytes, file size, header length n) of a safetensors file, reading 8 + n bytes
    only. Raises SafetensorsHeaderError, or _OverBudget when n exceeds ``budget``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as err:
        raise SafetensorsHeaderError(f"{p.name}: cannot read: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SafetensorsHeaderError(f"{p.name}: not a regular file (a FIFO or device); not read")
        size = st.st_size
        with os.fdopen(os.dup(fd), "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise SafetensorsHeaderError(f"{p.name}: file has {len(head)} bytes, too short for a safetensors header")
            (n,) = struct.unpack("<Q", head)
            if n == 0 or n > _MAX_HEADER or n > size - 8:
                raise SafetensorsHeaderError(
                    f"{p.name}: header length {n} does not fit the file ({size} bytes): truncated or not safetensors"
                )
            if budget is not None and n > budget:
                raise _OverBudget(n)
            blob = fh.read(n)
    except OSError as err:
        raise SafetensorsHeaderError(f"{p.name}: cannot read: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(blob) < n:
        raise SafetensorsHeaderError(f"{p.name}: truncated header ({len(blob)} of {n} bytes)")
    return blob, size, n


class _OverBudget(Exception):
    def __init__(self, n: int):
        self.n = n


def _scan_header(path: Path, keep: Callable[[str], bool], budget: int | None = None) -> _HeaderScan:
    """Parse one header into a :class:`_HeaderScan`; tensor entries become small tuples while
    parsing (``object_pairs_hook``), so memory stays a few times the header size."""
    p = Path(path)
    blob, size, n = _open_header(p, budget)

    def hook(pairs: list[tuple[str, Any]]) -> Any:
        if len(pairs) == 3 or len(pairs) == 4:
            d = dict(pairs)
            if "dtype" in d and "shape" in d and "data_offsets" in d:
                return ("\0tensor", d["dtype"], d["shape"], d["data_offsets"])
        return dict(pairs)

    try:
        if blob.count(b",") + blob.count(b"{") + blob.count(b"[") > 4 * 1024 * 1024:
            raise SafetensorsHeaderError(f"{p.name}: header holds more than 4 million JSON values; not read")
        header = json.loads(blob.decode("utf-8"), object_pairs_hook=hook)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise SafetensorsHeaderError(f"{p.name}: header is not valid JSON ({type(err).__name__})") from None
    del blob
    if not isinstance(header, dict):
        raise SafetensorsHeaderError(f"{p.name}: header is not a JSON object")
    meta = header.pop("__metadata__", None)
    scan = _HeaderScan()
    scan.header_bytes = 8 + n
    scan.meta = meta if isinstance(meta, dict) else {}
    data_end = 0
    for name, entry in header.items():
        if not (isinstance(entry, tuple) and len(entry) == 4 and entry[0] == "\0tensor"):
            raise SafetensorsHeaderError(f"{p.name}: entry {name!r:.80} is not an object with dtype, shape and data_offsets")
        _, dtype, shape, offs = entry
        if not isinstance(dtype, str) or not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has no valid dtype/shape")
        if not (isinstance(offs, list) and len(offs) == 2 and all(_is_int(o) for o in offs) and 0 <= offs[0] <= offs[1]):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has no valid data_offsets")
        if len(shape) > 64 or any(d > 2 ** 53 for d in shape):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has an impossible shape")
        scan.names.append(name)
        if keep(name):
            scan.shapes[name] = TensorInfo(shape=list(shape), dtype=dtype)
        count = math.prod(shape)
        scan.param_counts.append(count)
        scan.params += count
        scan.weighted_bytes += count * DTYPE_BYTES.get(dtype.upper(), 0)
        data_end = max(data_end, offs[1])
        scan.nbytes += offs[1] - offs[0]
    if 8 + n + data_end > size:
        raise SafetensorsHeaderError(f"{p.name}: truncated: header says {8 + n + data_end} bytes, file has {size}")
    return scan


def read_safetensors_header(path: str | os.PathLike) -> tuple[dict[str, TensorInfo], dict[str, Any], int]:
    """Read one safetensors header (never the tensor data).

    Returns ({name: TensorInfo(shape, dtype)}, __metadata__ dict, data bytes of the tensors).
    Raises SafetensorsHeaderError for a file that is not a regular file, too short, a header
    length beyond the file (or beyond safetensors' own 100 MB cap), a header that is not a JSON
    object, or entries without dtype/shape/data_offsets.
    """
    p = Path(path)
    scan = _scan_header(p, lambda _name: True)
    return scan.shapes, scan.meta, scan.nbytes


def _is_lm_head(name: str) -> bool:
    return name == "lm_head.weight" or name.endswith(".lm_head.weight")


def _is_embed(name: str) -> bool:
    return name == "embed_tokens.weight" or name.endswith(".embed_tokens.weight")


def _is_map(name: str, key: str) -> bool:
    return name == key or name.endswith("." + key)


def _selected(name: str) -> bool:
    return (
        _is_lm_head(name)
        or _is_embed(name)
        or _is_map(name, "d2t")
        or _is_map(name, "t2d")
        or name in ("fc.weight", "model.fc.weight", "mask_hidden", "model.mask_hidden")
    )


def _is_mtp_name(name: str, layers: int | None) -> bool:
    if "mtp" in name.split(".")[0] or ".mtp" in name or name.startswith("mtp"):
        return True
    if layers is not None:
        m = _LAYER_RE.search(name)
        if m and int(m.group(1)) >= layers and "vision" not in name and "visual" not in name:
            return True
    return False


def _shortest(names: Iterable[str]) -> str | None:
    names = sorted(names, key=lambda s: (len(s), s))
    return names[0] if names else None


def apply_tensor_facts(
    info: ModelInfo,
    names: Iterable[str],
    shapes: Mapping[str, TensorInfo] | None = None,
    *,
    total_size: int | None = None,
    param_count: int | None = None,
) -> ModelInfo:
    """Fill the tensor facts of ``info`` in place from the full list of tensor names.

    ``shapes`` (name -> TensorInfo) may cover all or part of the names; the lm_head,
    embed_tokens, d2t, t2d (any prefix), ``fc`` and ``mask_hidden`` entries are copied into
    ``info.tensors``. has_mtp_weights: names under ``*mtp*`` or ``layers.{i}.`` with
    i >= num_hidden_layers (DeepSeek ``model.layers.61.*``, MiMo ``model.mtp_layers.*``).
    ``total_size`` (bytes) and ``param_count`` override the sums over ``shapes``.
    Returns ``info``.
    """
    names = list(names)
    shapes = shapes or {}
    info.tensor_names_known = True
    main = [n for n in names if not _is_mtp_name(n, info.num_hidden_layers)]
    lm = [n for n in main if _is_lm_head(n) and "shared_head" not in n]
    emb = [n for n in main if _is_embed(n)]
    d2t = [n for n in names if _is_map(n, "d2t")]
    t2d = [n for n in names if _is_map(n, "t2d")]
    info.has_lm_head = bool(lm)
    info.has_embed_tokens = bool(emb)
    info.has_d2t = bool(d2t)
    info.has_t2d = bool(t2d)
    info.has_mtp_weights = any(_is_mtp_name(n, info.num_hidden_layers) for n in names)
    for key, group in (("lm_head.weight", lm), ("embed_tokens.weight", emb), ("d2t", d2t), ("t2d", t2d)):
        best = _shortest(group)
        if best and best in shapes:
            info.tensors[best] = shapes[best]
    for n in names:
        if n in shapes and _selected(n) and n not in info.tensors and not _is_mtp_name(n, info.num_hidden_layers):
            info.tensors[n] = shapes[n]
    if shapes and len(shapes) == len(set(names)):
        info.param_count = param_count if param_count is not None else sum(math.prod(t.shape) for t in shapes.values())
        if total_size is None:
            total = 0.0
            for t in shapes.values():
                total += math.prod(t.shape) * DTYPE_BYTES.get(t.dtype.upper(), 0)
            info.weight_bytes = int(total)
    elif param_count is not None:
        info.param_count = param_count
    if total_size is not None:
        info.weight_bytes = total_size
    return info


# ------------------------------------------------------------------------------------------
# folder


#: JSON values (rough count) read from one config.json / params.json / hf_quant_config.json
#: (real ones hold hundreds to a few thousand; a quantization "ignore" list can hold ~10k).
_CONFIG_VALUES = 200_000
#: ... and from one model.safetensors.index.json (one weight_map entry per tensor: ~92k for
#: DeepSeek-V3, ~200k for the largest MoE checkpoints).
_INDEX_VALUES = 1_000_000
#: Header bytes read per model folder over all safetensors files (after de-duplicating files
#: that resolve to the same path). Real folders: ~10 KB to ~20 MB. Beyond it the remaining
#: headers are skipped with a note and the tensor facts that needed them stay unknown.
HEADER_BUDGET_BYTES = 32 * 1024 * 1024
#: Most *.safetensors files looked at in one folder (Llama-3.1-405B has 191 shards).
MAX_WEIGHT_FILES = 4096


def _read_json_problem(path: Path, max_values: int = _CONFIG_VALUES) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, one-line problem naming the file). Never raises; bounded
    in bytes (:data:`_MAX_CONFIG`), JSON values and nesting; refuses FIFOs and devices."""
    from wizard.io.safeio import InputRefused, json_loads_bounded, read_regular_file

    try:
        data = read_regular_file(path, limit=_MAX_CONFIG, what=path.name)
    except InputRefused as err:
        return None, str(err).replace(f"{path.name} {path}", path.name)
    except OSError as err:
        return None, f"{path.name}: cannot read ({err.strerror or err})"
    if not data.strip():
        return None, f"{path.name} is empty"
    try:
        return json_loads_bounded(data, what=path.name, max_values=max_values, max_depth=64), None
    except InputRefused as err:
        return None, str(err)


def _read_json(path: Path, notes: list[str], max_values: int = _CONFIG_VALUES) -> Any:
    """Parse a JSON file; a problem goes to ``notes`` and gives None."""
    value, problem = _read_json_problem(path, max_values)
    if problem:
        notes.append(problem + "; ignored")
    return value


def _present(p: Path) -> bool:
    """Something named ``p`` is there (a file, a FIFO, a broken symlink...): then it is read and
    its problem reported, rather than reported as missing."""
    return os.path.lexists(p)


def inspect_folder(path: str | os.PathLike, *, id: str | None = None) -> ModelInfo:
    """Inspect a local model folder (headers only; tensor data is never read).

    Reads ``config.json`` (else Mistral ``params.json``), ``hf_quant_config.json`` (ModelOpt,
    when config.json has no quantization_config), ``model.safetensors.index.json`` (weight_map
    names, metadata.total_size / total_parameters) and the ``*.safetensors`` headers, within
    budgets: 50 MiB and 200k values per JSON file, :data:`HEADER_BUDGET_BYTES` of headers per
    folder (files reached through links to the same file are read once), :data:`MAX_WEIGHT_FILES`.
    has_lm_head/has_embed_tokens/has_d2t/has_t2d/has_mtp_weights stay None when no tensor
    names could be read (no weights file, only ``*.bin``, corrupt headers).

    A config.json that vLLM could not load (not JSON, empty, ``null``, a list, over 50 MiB,
    unreadable, a FIFO, NaN or absurd sizes) is reported in ``ModelInfo.errors`` (rule SD007).

    Raises:
        ModelLookupError: the folder does not exist, or holds neither config.json nor params.json.
    """
    folder = Path(path)
    ident = id or str(path)
    try:
        is_dir = folder.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        raise _lookup_error(f"model folder '{path}' does not exist (or is not a directory)")
    cfg_path = folder / "config.json"
    params_path = folder / "params.json"
    notes: list[str] = []
    errors: list[str] = []
    native = False
    raw: Any = None
    if _present(cfg_path):
        raw, problem = _read_json_problem(cfg_path)
        if problem and _present(params_path):
            notes.append(f"{problem}; reading params.json instead")
            raw, problem = _read_json_problem(params_path)
            native = True
        if problem:
            errors.append(f"{problem}; vLLM cannot load the model from it. Fix or restore "
                          f"{'params.json' if native else 'config.json'} (re-download the checkpoint)")
    elif _present(params_path):
        raw, problem = _read_json_problem(params_path)
        native = True
        if problem:
            errors.append(f"{problem}; vLLM cannot load the model from it. Fix or restore params.json")
    else:
        raise _lookup_error(
            f"model folder '{path}' has no config.json (nor a Mistral params.json): "
            "point --model at the checkpoint folder that contains config.json"
        )
    if errors:
        info = ModelInfo(id=ident, source="local", path=str(folder), notes=notes, errors=errors)
    else:
        info = info_from_config(raw, id=ident, source="local", path=str(folder), notes=notes, native_mistral=native)
    if isinstance(info.raw_config, dict) and info.quant_method is None and (folder / "hf_quant_config.json").is_file():
        hq = _read_json(folder / "hf_quant_config.json", info.notes)
        if isinstance(hq, dict):
            info.quant_method = "modelopt"
            info.kv_cache_quant = _kv_cache_quant({"quant_method": "modelopt", **hq}, info.notes)
    try:  # the quantization config files get_quant_config looks for (vLLM globs *.json)
        info.json_files = sorted(p.name for p in folder.glob("*.json"))[:200]
    except OSError:
        info.json_files = None
    _inspect_weights(folder, info)
    return info


def _inspect_weights(folder: Path, info: ModelInfo) -> None:
    notes = info.notes
    index_names: list[str] | None = None
    weight_map: dict[str, Any] = {}
    total_size = total_params = None
    for idx_name in ("model.safetensors.index.json", "consolidated.safetensors.index.json"):
        idx_path = folder / idx_name
        if not idx_path.is_file():
            continue
        idx = _read_json(idx_path, notes, _INDEX_VALUES)
        if isinstance(idx, dict):
            wm = idx.get("weight_map")
            if isinstance(wm, dict):
                index_names = [str(k) for k in wm]
                weight_map = wm
            else:
                notes.append(f"{idx_name}: no 'weight_map' object; ignored")
            meta = idx.get("metadata") if isinstance(idx.get("metadata"), dict) else {}
            ts = meta.get("total_size")
            if _is_int(ts) and 0 <= ts <= 2 ** 63:
                total_size = ts
            elif isinstance(ts, str) and ts.isascii() and ts.isdigit() and len(ts) <= 19:
                total_size = int(ts)
            elif isinstance(ts, float) and ts.is_integer() and 0 <= ts <= 2 ** 63:
                total_size = int(ts)
            tp = meta.get("total_parameters")
            if _is_int(tp) and 0 <= tp <= 2 ** 63:
                total_params = tp
        elif idx is not None:
            notes.append(f"{idx_name}: not a JSON object; ignored")
        break

    files: list[Path] = []
    try:
        for p in folder.glob("*.safetensors"):
            if len(files) >= MAX_WEIGHT_FILES:
                notes.append(f"more than {MAX_WEIGHT_FILES} *.safetensors files; only the first {MAX_WEIGHT_FILES} are read")
                break
            if p.is_file():
                files.append(p)
    except OSError as err:
        notes.append(f"cannot list safetensors files: {err}")
    files.sort()
    # shards holding the tensors the rules read first (lm_head is usually in the last one)
    wanted = {str(v) for k, v in weight_map.items() if _selected(str(k))}
    files.sort(key=lambda f: f.name not in wanted)
    counts: dict[str, int] = {}
    shapes: dict[str, TensorInfo] = {}
    file_names: list[str] = []
    ok = bool(files)
    data_bytes = 0
    budget = HEADER_BUDGET_BYTES
    seen: set[str] = set()
    for f in files:
        try:
            real = os.path.realpath(f)
        except (OSError, ValueError):
            real = str(f)
        if real in seen:
            notes.append(f"{f.name} is the same file as another shard (a link); read once")
            continue
        seen.add(real)
        try:
            scan = _scan_header(f, _selected, budget)
        except _OverBudget as over:
            notes.append(f"{f.name}: header of {over.n:,} bytes is beyond the {HEADER_BUDGET_BYTES // 2**20} MiB of "
                         "safetensors headers SpecWizard reads per model; the remaining headers were not read")
            ok = False
            break
        except SafetensorsHeaderError as err:
            notes.append(f"safetensors header unreadable: {err}")
            ok = False
            continue
        budget -= scan.header_bytes
        shapes.update(scan.shapes)
        file_names.extend(scan.names)
        data_bytes += scan.nbytes
        counts.update(zip(scan.names, scan.param_counts))

    if index_names is not None:
        known = set(counts)
        missing = [n for n in index_names if n not in known]
        if files and missing:
            notes.append(f"{len(missing)} tensors of the index are not in a readable shard; shapes partly unknown")
        elif not files:
            notes.append("index found but no shard files: tensor names known, shapes unknown")
        names = list(dict.fromkeys(index_names + file_names))
        params = total_params
        if params is None and counts and all(n in known for n in names):
            params = sum(counts.values())
        apply_tensor_facts(
            info,
            names,
            {n: shapes[n] for n in names if n in shapes},
            total_size=total_size if total_size is not None else (data_bytes if ok and not missing else None),
            param_count=params,
        )
        if missing and not total_params:
            info.param_count = None
        return
    if files and ok:
        apply_tensor_facts(info, file_names, shapes, total_size=data_bytes, param_count=sum(counts.values()))
        return
    if files and file_names:
        notes.append("some safetensors files are unreadable: tensor facts unknown")
    try:
        bins = sorted(p.name for pat in ("*.bin", "*.pt", "*.pth") for p in _first(folder.glob(pat), 16))
    except OSError:
        bins = []
    if bins and not files:
        notes.append(
            f"weights are in {', '.join(sorted(bins)[:3])} (pickle): tensor names not read; has_lm_head etc. unknown"
        )


def _first(it: Iterable[Any], n: int) -> list[Any]:
    out = []
    for x in it:
        if len(out) >= n:
            break
        out.append(x)
    return out
