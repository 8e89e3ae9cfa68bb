"""Fact: which model is the drafter (``view.drafter``).

vllm/config/speculative.py ``SpeculativeConfig.__post_init__`` (0.32, 0.33): for MTP without a
separate ``speculative_config.model`` the draft ModelConfig is the target's (its MTP layers,
after ``hf_config_override``); methods without a draft model (ngram, suffix, custom_class ...)
build none; every other method loads ``speculative_config.model``. The lookup of that name
(:func:`wizard.context.resolve_context`) fills ``ctx.drafter``; this picks what vLLM builds.
"""

from __future__ import annotations

from wizard.models.info import ModelInfo
from wizard.vllm import methods as M

__all__ = ["drafter_info"]


def drafter_info(method: str | None, target: ModelInfo | None, drafter: ModelInfo | None) -> ModelInfo | None:
    """The drafter's ModelInfo as vLLM builds it: the target for MTP layers, None without a
    draft model, else the looked-up drafter (None when unknown)."""
    if method is None or M.has_no_model(method):
        return None
    if M.is_mtp(method) and (drafter is None or drafter is target):
        return target
    return drafter
