"""Facts behind vLLM's cross-field config checks per release, from the generated ``checks.json``,
and the derivations that read them (the model's maximum length, what ``--quantization`` does to a
checkpoint).

    from wizard.vllm import checks
    checks.derived_max_len(info, "0.32", hf_overrides={"rope_scaling": {...}})   # DerivedLen(value=131072, key=...)
    checks.quant_method("fp8", "0.33")            # {'config_filenames': [], 'no_arg_init': True, ...}
    checks.reasoning_parsers("0.32")               # ('deepseek_r1', 'qwen3', ...)
    checks.needs_remote_code(info, "0.32")         # True for a model_type transformers does not know

``scripts/dump_vllm_checks.py`` writes ``wizard/data/vllm/<X.Y>/checks.json`` inside each
release's own environment, calling that release's code (rope probes of
``_get_and_verify_max_len``, each quantization config class, the reasoning-parser registry,
transformers' config mapping); ``version`` is anything
:func:`wizard.vllm.releases.nearest_release` accepts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from wizard.vllm.releases import load, nearest_release

__all__ = ["DerivedLen", "checks", "derived_max_len", "rope_parameters", "quant_method", "online_shorthands",
           "deprecated_quantization", "reasoning_parsers", "needs_remote_code", "knows_model_type", "allow_long_max_model_len",
           "quant_without_checkpoint_config", "num_experts", "checkpoint_quantization", "resolve_quantization",
           "quantization_methods", "user_quantization", "supports_pp", "draft_inherits_pp", "engram_layers",
           "supports_replayssm", "NAME"]

NAME = "checks.json"


def checks(version: Any) -> dict[str, Any]:
    """The whole ``checks.json`` of the release nearest ``version`` (read-only)."""
    return load(version, NAME)


def _text_config(info) -> dict[str, Any]:
    """A copy of ``info``'s merged text view (``ModelInfo.text_config``, vLLM's hf_text_config)."""
    return dict(getattr(info, "text_config", None) or {})


def rope_parameters(cfg: dict[str, Any], hf_overrides: Any = None) -> list[dict[str, Any]]:
    """RoPE parameter sets of a config.json (``rope_parameters``, legacy ``rope_scaling``; one set
    per layer type when nested), after ``--hf-overrides`` of either key; the legacy ``type`` key
    read as ``rope_type`` (vLLM's ``patch_rope_parameters``)."""
    cfg = dict(cfg)
    if isinstance(hf_overrides, dict):
        for key in ("rope_scaling", "rope_parameters"):
            if isinstance(hf_overrides.get(key), dict):
                cfg.pop("rope_scaling", None)
                cfg.pop("rope_parameters", None)
                cfg[key] = hf_overrides[key]
    out: list[dict[str, Any]] = []
    for key in ("rope_parameters", "rope_scaling"):
        v = cfg.get(key)
        if isinstance(v, dict) and v:
            sets = list(v.values()) if all(isinstance(x, dict) for x in v.values()) else [v]
            for p in sets:
                p = dict(p)
                p.setdefault("rope_type", p.get("type") or "default")
                out.append(p)
            break
    return out


@dataclass(frozen=True)
class DerivedLen:
    """vLLM's derived maximum length of a model: ``value`` (tokens, None when the config has no
    length key), ``key`` (the config key it came from, 'sliding_window' when
    ``--disable-sliding-window`` caps it), ``default`` (what vLLM uses when ``max_model_len`` is
    unset: ``value``, or ``original_max_position_embeddings`` under LongRoPE), ``model_max_length``
    (config.json's, which allows a longer user value)."""

    value: int | None
    key: str | None
    default: int | None
    model_max_length: int | None = None


def derived_max_len(info, version: Any, hf_overrides: Any = None, disable_sliding_window: bool = False) -> DerivedLen:
    """vLLM's derived maximum length for target ``info`` (a ModelInfo), mirroring
    vllm/config/model.py ``_get_and_verify_max_len`` (0.28-0.33) with the release's generated rope
    facts: the smallest of the length keys the release reads (``model_max_length`` wins when set),
    capped by the sliding window when ``--disable-sliding-window`` is given, times the RoPE factor
    for scaling types whose length is not pre-scaled (none for Gemma 3), or the YaRN original
    length times the factor where the release does that (0.28/0.29). Not modelled: a pooling
    model's tokenizer_config.json length and an encoder's ``max_seq_length``."""
    cfg = _text_config(info)
    if isinstance(hf_overrides, dict):
        cfg.update({k: v for k, v in hf_overrides.items() if not isinstance(v, dict)})
    facts = checks(version)["max_len"]
    derived: float = float("inf")
    key = None
    for k in facts["keys"]:
        v = cfg.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if v < derived:
                key = k
            derived = min(derived, v)
    mml = cfg.get("model_max_length")
    if isinstance(mml, (int, float)) and not isinstance(mml, bool) and mml:
        derived, key = mml, "model_max_length"
    sw = cfg.get("sliding_window")
    if cfg.get("use_sliding_window") is False:
        sw = None
    if disable_sliding_window and isinstance(sw, int) and sw and sw < derived:
        derived, key = sw, "sliding_window"
    if derived == float("inf"):
        return DerivedLen(None, None, None, None)
    model_type = str(cfg.get("model_type") or getattr(info, "model_type", "") or "")
    params = rope_parameters(cfg, hf_overrides)
    default = None
    if params and "gemma3" not in model_type:
        factor: Any = 1.0
        for p in params:
            how = facts["rope_types"].get(str(p["rope_type"]), "max_pos*factor")
            if how in ("max_pos*factor", "original*factor"):
                factor = p.get("factor", factor)
            if how == "original*factor" and isinstance(p.get("original_max_position_embeddings"), (int, float)):
                derived = p["original_max_position_embeddings"]
            if how == "original":
                orig = cfg.get("original_max_position_embeddings")
                default = int(orig) if isinstance(orig, (int, float)) else None
        if not isinstance(factor, (int, float)) or isinstance(factor, bool):
            factor = 1.0
        derived = derived * factor
    value = int(derived)
    return DerivedLen(value, key, default if default is not None else value,
                      int(mml) if isinstance(mml, (int, float)) and not isinstance(mml, bool) else None)


def allow_long_max_model_len(env: dict[str, str] | None, version: Any) -> bool:
    """Whether ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` in the launch environment lets a length above the
    derived one through (vllm/envs.py: '1' / 'true', case-insensitive)."""
    v = (env or {}).get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
    if v is None:
        return False
    table = checks(version)["max_len"].get("allow_long_values") or {}
    if v in table:
        return bool(table[v])
    return str(v).strip().lower() in ("1", "true")


def quant_method(name: str, version: Any) -> dict[str, Any] | None:
    """Facts of one ``--quantization`` method (None: the release does not have it):
    ``config_filenames``, ``no_arg_init``, ``min_capability``, ``act_dtypes`` (None when they
    depend on the checkpoint's config), ``overrides_method``."""
    return checks(version)["quantization"]["methods"].get(name)


def online_shorthands(version: Any) -> tuple[str, ...]:
    """Methods that quantize an unquantized checkpoint at load time (``_ONLINE_SHORTHANDS``)."""
    return tuple(checks(version)["quantization"].get("online_shorthands") or ())


def deprecated_quantization(version: Any) -> tuple[str, ...]:
    """``DEPRECATED_QUANTIZATION_METHODS`` (need ``--allow-deprecated-quantization``)."""
    return tuple(checks(version)["quantization"].get("deprecated") or ())


def quant_without_checkpoint_config(name: str, version: Any, json_files: list[str] | None) -> str | None:
    """What ``get_quant_config`` (vllm/model_executor/model_loader/weight_utils.py) does with
    ``--quantization name`` on a checkpoint whose config.json has no ``quantization_config``:
    None when it builds a config (online quantization, a class that needs no checkpoint config, or
    a quantization file it finds among ``json_files``, the folder's ``*.json`` names; None =
    unknown folder: assumed absent), else vLLM's message."""
    q = quant_method(name, version)
    if q is None or "error" in q:
        return None
    files = q.get("config_filenames")
    if files is None:
        return None
    online = name in online_shorthands(version)
    if not files:
        if name == "fp8" or online or q.get("no_arg_init"):
            return None
        return f"{q.get('class', name)}.__init__() needs the checkpoint's quantization config"
    if json_files and any(f.endswith(x) for f in json_files for x in files):
        return None
    if online:
        return None
    return f"Cannot find the config file for {name}"


@functools.lru_cache(maxsize=None)
def _parsers(release: str) -> tuple[str, ...]:
    return tuple(load(release, NAME).get("reasoning_parsers") or ())


def reasoning_parsers(version: Any) -> tuple[str, ...]:
    """Names ``--reasoning-parser`` accepts (``ReasoningParserManager``)."""
    return _parsers(nearest_release(version, NAME))


@functools.lru_cache(maxsize=None)
def _model_types(release: str) -> frozenset[str]:
    return frozenset(load(release, NAME).get("hf_model_types") or ())


def knows_model_type(model_type: str, version: Any) -> bool | None:
    """Whether the release loads a config.json of ``model_type`` without remote code: known to its
    transformers or registered in vLLM's own config registry (``checks.json`` ``hf_model_types``,
    generated from that release's environment); None when the table has no list."""
    known = _model_types(nearest_release(version, NAME))
    return (model_type in known) if known else None


def needs_remote_code(info, version: Any) -> bool:
    """True when ``info``'s ``model_type`` is unknown to the release's transformers and vLLM's own
    config registry and the checkpoint ships custom code (``auto_map``): transformers then refuses
    to load config.json without ``--trust-remote-code``."""
    mt = getattr(info, "model_type", None)
    known = _model_types(nearest_release(version, NAME))
    if not known or not isinstance(mt, str) or not mt:
        return False
    return mt not in known and getattr(info, "auto_map", None) is not None


def num_experts(info, version: Any) -> int:
    """The expert count vLLM reads from the target's (text) config: the first of the release's
    expert keys (``get_num_experts``: num_experts, moe_num_experts, n_routed_experts,
    num_local_experts ...) present, 0 for a dense model."""
    cfg = _text_config(info)
    keys = checks(version).get("expert_keys") or ()
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
    return 0


def checkpoint_quantization(quant_method: str, user: str | None, version: Any) -> dict[str, Any] | None:
    """What ``ModelConfig._verify_quantization`` decides for a checkpoint quantized with
    ``quant_method`` and ``--quantization user`` (None: not given): ``{"method": name}`` (the
    method vLLM settles on, its override chain applied) or ``{"error": message}``; None when no
    checkpoint of that ``quant_method`` was probed for the release."""
    ck = checks(version)["quantization"].get("checkpoints") or {}
    row = ck.get(quant_method)
    if not isinstance(row, dict):
        return None
    return row.get("decisions", {}).get(user or "")


def quantization_methods(version: Any) -> tuple[str, ...]:
    """``QUANTIZATION_METHODS`` of the release (``--quantization`` values)."""
    return tuple(checks(version)["quantization"]["methods"])


def user_quantization(value: Any) -> Any:
    """``--quantization`` as ModelConfig receives it: lower-cased (``validate_quantization_before``,
    vllm/config/model.py 0.28-0.33), anything not a string unchanged."""
    return value.lower() if isinstance(value, str) else value


def resolve_quantization(checkpoint_method: str | None, user: str | None, version: Any) -> tuple[str | None, str | None]:
    """(method vLLM settles on, error vLLM raises) for a checkpoint quantized with
    ``checkpoint_method`` (None: unquantized) and ``--quantization user``: the probed decision of
    :func:`checkpoint_quantization`; for a checkpoint method the release was not probed with, the
    user's method when given, else the checkpoint's (no error predicted)."""
    if not checkpoint_method:
        return user, None
    d = checkpoint_quantization(checkpoint_method, user, version)
    if d is None:
        return user or checkpoint_method, None
    return d.get("method"), d.get("error")


def supports_pp(architectures: Any, version: Any) -> bool | None:
    """Whether vLLM's model class for ``architectures`` (the first one the release registers)
    implements ``SupportsPP`` (``ModelRegistry.is_pp_supported_model``); None when no listed
    architecture is in the release's generated table (the Transformers fallback, remote code ...)."""
    table = (checks(version).get("pipeline_parallel") or {}).get("supports_pp") or {}
    for arch in architectures or ():
        if isinstance(arch, str) and arch in table:
            return bool(table[arch])
    return None


def draft_inherits_pp(version: Any) -> bool:
    """True when the release gives the drafter the target's ``pipeline_parallel_size``
    (``SpeculativeConfig.create_draft_parallel_config``: 0.28-0.29), so the drafter's own
    architecture must support pipeline parallelism too."""
    return bool((checks(version).get("pipeline_parallel") or {}).get("draft_inherits_pp"))


def engram_layers(info, version: Any) -> bool | None:
    """Whether vLLM ``version`` finds Engram n-gram embedding layers in the model ``info``
    (``vllm/config/engram.py model_has_engram_layers``: its architecture is in
    ``_NGRAM_LAYER_FIELDS`` and that ``hf_text_config`` field is non-empty). None when the
    release's ``checks.json`` does not record the table (before 0.32, or not dumped)."""
    fields = load(version, NAME).get("engram_layer_fields")
    if not isinstance(fields, dict) or info is None:
        return None
    archs = list(getattr(info, "architectures", None) or [])
    field = fields.get(archs[0]) if archs else None
    return bool(field and _text_config(info).get(field))


def supports_replayssm(arch: str | None, version: Any) -> bool | None:
    """Whether architecture ``arch`` implements ``SupportsReplaySSM`` in vLLM ``version``
    (``ModelConfig.supports_replayssm``); None when unknown (no table in ``checks.json``, or
    no architecture)."""
    archs = load(version, NAME).get("replayssm")
    if not isinstance(archs, list) or not arch:
        return None
    return arch in archs
