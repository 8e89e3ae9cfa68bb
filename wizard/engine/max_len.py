"""Facts: the served ``max_model_len`` (``view.served_max_model_len``) and the drafter's derived
length (``view.drafter_max_len``).

vLLM settles the served length in ``ModelConfig.__post_init__`` through
vllm/config/model.py ``_get_and_verify_max_len`` (0.28-0.33): the given ``--max-model-len``,
else the smallest length key of the (text) config, times the RoPE factor for scaling types whose
length is not pre-scaled -- which types those are is per release (YaRN: original x factor in
0.28/0.29, pre-scaled from 0.30), read from the generated ``wizard/data/vllm/<X.Y>/checks.json``
by :func:`wizard.vllm.checks.derived_max_len`. The draft ``ModelConfig`` goes through the same
function on the drafter's config (vllm/config/speculative.py builds it with ``max_model_len``
unset), so both sides use one derivation here.
"""

from __future__ import annotations

from typing import Any

from wizard.models.info import ModelInfo
from wizard.vllm.checks import derived_max_len

__all__ = ["model_max_len", "served_max_model_len"]


def _positive(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else None


def model_max_len(info: ModelInfo | None, version: Any, hf_overrides: Any = None,
                  disable_sliding_window: bool = False) -> int | None:
    """The length vLLM derives for ``info`` when ``max_model_len`` is unset (None = unknown).
    Without a parsed config.json (a catalog-only entry) its ``max_position_embeddings``."""
    if info is None:
        return None
    if info.raw_config:
        d = derived_max_len(info, version, hf_overrides, disable_sliding_window)
        return d.default
    return _positive(info.max_position_embeddings)


def served_max_model_len(given: Any, target: ModelInfo | None, version: Any, hf_overrides: Any = None,
                         disable_sliding_window: bool = False) -> int | None:
    """``max_model_len`` as ModelConfig settles on it: the given value (>= 1), else the length
    vLLM derives from the target (None when the target is unknown)."""
    mml = _positive(given)
    if mml is not None:
        return mml
    return model_max_len(target, version, hf_overrides, disable_sliding_window)
