"""The k (``num_speculative_tokens``) a form offers for a method and target, and the k to fill in
when the method changes: one policy for the UI's Speculation step, ``wizard suggest`` and the
fixes that set a k (SD044).

    k_range("mtp", target)            # KRange(minimum=1, maximum=4, default=1, step=1, why=...)
    default_k("eagle3", target, current=None)   # 3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wizard import resolve
from wizard.models.info import ModelInfo
from wizard.plan.inputs import K_HARD_MAX
from wizard.vllm import methods as M

__all__ = ["KRange", "k_range", "default_k", "mtp_k_step"]


@dataclass(frozen=True)
class KRange:
    """num_speculative_tokens a form offers: ``minimum``..``maximum`` in ``step``s, ``default``
    for a fresh choice of the method, ``why`` in words. ``vllm_max``: the largest k vLLM can run
    with the configured step budget (1 + k <= max_num_batched_tokens and max_model_len, SD026),
    None when the budget is vLLM's default."""

    minimum: int
    maximum: int
    default: int
    step: int
    why: str
    vllm_max: int | None = None


def mtp_k_step(method: str | None, target: ModelInfo | None, drafter: ModelInfo | None) -> tuple[int | None, bool]:
    """(n_predict of the MTP checkpoint, whether k > n reruns its layers) for an MTP method."""
    if not M.is_mtp(method):
        return None, False
    info = drafter if drafter is not None else target
    rw = resolve.mtp_rewrite(info)
    if rw is not None:
        return rw[1], M.repeats_mtp_layer(rw[0])
    if info is not None and info.mtp_layers:
        return info.mtp_layers, True
    return None, True


def k_range(method: str | None, target: ModelInfo | None = None, drafter: ModelInfo | None = None, *,
            max_model_len: int | None = None, max_num_batched_tokens: int | None = None,
            current: int | None = None) -> KRange:
    """The k range for ``method`` on ``target`` (and its ``drafter``, for MTP the target itself).

    * MTP with n layers: multiples of n (SD062); default n; a checkpoint whose k > n reruns the
      same layer (SD064) tops out at max(n, 4) with a note; one trained layer per step
      (step3p5/step5/inkling, R030) at 4n.
    * EAGLE family: 1-8, default 3 (acceptance per position falls with depth).
    * others (draft_model, ngram, suffix ...): 1-10, default 3.
    ``current``: a configured k beyond the top (up to :data:`K_HARD_MAX`) raises the top so the
    form can show it. The vLLM bound (SD026) caps everything.
    """
    n, repeats = mtp_k_step(method, target, drafter)
    step = 1
    if M.is_mtp(method) and n:
        step = n
        default = n
        if repeats:
            top = max(n, 4)
            why = (f"the checkpoint has {n} MTP layer(s); k must be a multiple of {n}" if n > 1 else
                   "one MTP layer, rerun for every further position: acceptance falls fast beyond k=1")
        else:
            top = 4 * n
            why = f"{n} trained MTP layer(s) per step; k must be a multiple of {n}"
    elif M.is_mtp(method):
        top, default, why = 4, 1, "MTP layers of the checkpoint unknown; k = their number is the usual choice"
    elif M.use_eagle(method):
        top, default, why = 8, 3, "acceptance per position falls with depth; 3-5 is typical"
    else:
        top, default, why = 10, 3, "draft tokens per step"
    budget = [b for b in (max_num_batched_tokens, max_model_len) if isinstance(b, int) and not isinstance(b, bool) and b > 1]
    vmax = min(budget) - 1 if budget else None
    if isinstance(current, int) and not isinstance(current, bool) and top < current <= K_HARD_MAX:
        top = current
    if vmax is not None:
        top = max(1, min(top, vmax))
        default = max(1, min(default, vmax))
    return KRange(step, max(step, top), default, step, why, vmax)


def default_k(method: str | None, target: ModelInfo | None = None, drafter: ModelInfo | None = None, *,
              current: Any = None, previous_method: str | None = None) -> Any:
    """The ``num_speculative_tokens`` to use once the method becomes ``method``: the method's
    default (:func:`k_range`; a 1-layer MTP checkpoint gets 1) when ``current`` is unset, still
    ``previous_method``'s default (never chosen by hand), or not a multiple of the MTP layers;
    else ``current`` unchanged."""
    kr = k_range(method, target, drafter)
    prev_default = k_range(previous_method, target).default if previous_method else None
    if current is None or current == prev_default or (isinstance(current, int) and kr.step > 1 and current % kr.step):
        return kr.default
    return current
