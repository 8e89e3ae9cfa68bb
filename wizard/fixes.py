"""Patches several rules and the launcher's diagnosis offer in the same words.

Kept here so a rule, the startup diagnosis and the UI propose exactly the same change.
"""

from __future__ import annotations

from wizard.config import Patch
from wizard.vllm.methods import NGRAM

__all__ = ["ngram_fallback", "pin_shared_backend", "NGRAM_LOOKUP"]

# prompt_lookup_min/max for the fallback: vLLM's default is 5/5 (only 5-gram matches, see
# vllm/config/speculative.py __post_init__); 2..5 also catches short repeats.
NGRAM_LOOKUP = (2, 5)


def ngram_fallback(k: int | None = None, description: str = "Use n-gram speculation instead") -> Patch:
    """Replace the whole speculative_config by n-gram speculation with ``k`` draft tokens
    (default 3; tokens) and lookup bounds :data:`NGRAM_LOOKUP`. Needs no drafter weights or
    drafter KV cache; acceptance depends on repetition in the prompt."""
    k = k if isinstance(k, int) and k > 0 else 3
    return Patch(
        description=description,
        set={"speculative_config": {"method": NGRAM, "num_speculative_tokens": k,
                                    "prompt_lookup_min": NGRAM_LOOKUP[0], "prompt_lookup_max": NGRAM_LOOKUP[1]}},
    )


def pin_shared_backend(backend: str) -> Patch:
    """Pin ``--attention-backend`` to ``backend``, one that accepts both the target and the
    drafter (replaces a backend vLLM imposed: a model's lock, or the target's inherited by the
    drafter)."""
    return Patch(description=f"Pin --attention-backend {backend} (accepted by the target and the drafter)",
                 set={"attention_backend": backend})
