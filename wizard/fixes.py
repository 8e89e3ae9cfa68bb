"""Patches several rules and the launcher's diagnosis offer in the same words.

Kept here so a rule, the startup diagnosis and the UI propose exactly the same change.
"""

from __future__ import annotations

from wizard.config import Patch
from wizard.models.catalog import drafters_for
from wizard.vllm.methods import DRAFT_MODEL, NGRAM

__all__ = ["ngram_fallback", "catalog_drafter", "pin_shared_backend", "NGRAM_LOOKUP"]

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


def catalog_drafter(target_id: object, method: str | None, k: int | None = None) -> Patch | None:
    """Set ``speculative_config.model`` to the catalog's first drafter of ``method`` for
    ``target_id`` (a draft model of the same family for draft_model) and, with ``k``,
    ``num_speculative_tokens``; None when the catalog has none."""
    if not isinstance(target_id, str) or not method:
        return None
    for e in drafters_for(target_id):
        if method in e.methods or (method == DRAFT_MODEL and e.draft_for):
            set_ = {"speculative_config.model": e.id}
            if k is not None:
                set_["speculative_config.num_speculative_tokens"] = k
            return Patch(description=f"Use the catalog drafter {e.id}" + (f" with k={k}" if k is not None else ""),
                         set=set_)
    return None


def pin_shared_backend(backend: str) -> Patch:
    """Pin ``--attention-backend`` to ``backend``, one that accepts both the target and the
    drafter (replaces a backend vLLM imposed: a model's lock, or the target's inherited by the
    drafter)."""
    return Patch(description=f"Pin --attention-backend {backend} (accepted by the target and the drafter)",
                 set={"attention_backend": backend})
