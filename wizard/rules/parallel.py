"""Drafter parallelism and length limits at config time (docs/vllm-rules.md R055, R056, R058, R059)."""

from __future__ import annotations

from wizard import resolve
from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, has_no_model
from wizard.rules.spec_fields import given_keys

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_E3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _sc(**kw) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


def _builds_draft_config(ctx) -> bool:
    """vLLM builds a draft ModelConfig (and checks draft TP / length) only when a drafter model exists."""
    return ctx.spec is not None and resolve.drafter_model_name(ctx) is not None and not has_no_model(ctx.method)


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@register
class DraftTpValue(Rule):
    """SD080 — ``draft_tensor_parallel_size`` other than 1 or the target's TP (R055).

    **What it does.** With a drafter model, the drafter TP must be 1 or ``--tensor-parallel-size``.
    n-gram and other model-free methods ignore the value (see SD071).

    **Why it matters.** vLLM raises ``speculative_draft_tensor_parallel_size=2 cannot be other value
    than 1 or target model tensor_parallel_size``.

    **Anti-pattern.** TP 8 target with draft TP 2 "to save communication".

    **Best practice.** 1 for small drafters (EAGLE heads), else leave it unset (= target TP).

    **Fix safety.** Safe: 1 keeps the drafter on one GPU (it is small).

    Source: vllm/config/speculative.py ``_verify_and_get_draft_tp`` (0.32 L1712, 0.33 L1849);
    docs/vllm-rules.md R055 (E20, G10).
    """

    id = "SD080"
    title = "Drafter TP must be 1 or the target's TP"
    severity = Severity.ERROR
    fields = ("speculative_config.draft_tensor_parallel_size",)
    topic = "parallel"
    phase = "config"
    why = "vLLM supports the drafter either unsharded or sharded exactly like the target."
    bad = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, draft_tensor_parallel_size=2)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, draft_tensor_parallel_size=1)
    source = "vllm/config/speculative.py _verify_and_get_draft_tp; docs/vllm-rules.md R055"
    fix_safety = "Safe."

    def check(self, ctx):
        if not _builds_draft_config(ctx):
            return
        v = _int(ctx.spec.draft_tensor_parallel_size)
        if v is None or v < 1 or v in (1, ctx.tp):
            return
        yield self.finding(
            f"speculative_draft_tensor_parallel_size={v} cannot be other value than 1 or target model "
            f"tensor_parallel_size ({ctx.tp}).",
            fixes=[Patch(description="Use draft_tensor_parallel_size=1", set={"speculative_config.draft_tensor_parallel_size": 1}),
                   Patch(description="Remove it (drafter uses the target's TP)", unset=["speculative_config.draft_tensor_parallel_size"])],
        )


@register
class DraftHeadsNotDivisible(Rule):
    """SD081 — the drafter's attention heads are not divisible by its TP (R056).

    **What it does.** The drafter TP defaults to the target TP; vLLM then checks the drafter's
    ``num_attention_heads`` % draft TP == 0 like any model.

    **Why it matters.** A 2-head drafter under TP 4 fails at config time with ``Total number of
    attention heads (2) must be divisible by tensor parallel size (4)``.

    **Anti-pattern.** A tiny draft model with TP 4 and no ``draft_tensor_parallel_size``.

    **Best practice.** ``draft_tensor_parallel_size: 1`` for small drafters.

    **Fix safety.** Safe: the drafter runs on one GPU.

    Source: vllm/config/speculative.py ``_verify_args`` -> ``ModelConfig.verify_with_parallel_config``
    (0.32, 0.33); docs/vllm-rules.md R056 (G01, G02).
    """

    id = "SD081"
    title = "Drafter attention heads not divisible by the drafter TP"
    severity = Severity.ERROR
    fields = ("speculative_config.draft_tensor_parallel_size", "tensor_parallel_size")
    topic = "parallel"
    phase = "config"
    why = "Each TP rank needs a whole number of the drafter's attention heads."
    bad = "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3 " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    good = "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3 " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, draft_tensor_parallel_size=1)
    source = "vllm/config/model.py verify_with_parallel_config; docs/vllm-rules.md R056"
    fix_safety = "Safe."

    def check(self, ctx):
        if not _builds_draft_config(ctx) or ctx.drafter is None:
            return
        dtp = _int(ctx.spec.draft_tensor_parallel_size)
        if dtp is None:
            dtp = ctx.tp
        elif dtp not in (1, ctx.tp):
            return  # SD080
        heads = ctx.drafter.num_attention_heads
        if ctx.method == MTP and ctx.target is not None and ctx.drafter is ctx.target:
            heads = ctx.target.num_attention_heads
        if not heads or dtp <= 1 or heads % dtp == 0:
            return
        yield self.finding(
            f"Total number of attention heads ({heads}) of the drafter must be divisible by its tensor parallel "
            f"size ({dtp}; it defaults to the target's TP).",
            fixes=[Patch(description="Run the drafter unsharded (draft_tensor_parallel_size=1)",
                         set={"speculative_config.draft_tensor_parallel_size": 1})],
        )


def _derived_len(info) -> int | None:
    if info is None or not info.max_position_embeddings:
        return None
    rs = (info.raw_config or {}).get("rope_scaling") or {}
    if isinstance(rs, dict) and (rs.get("rope_type") or rs.get("type")) not in (None, "default", "llama3", "linear", "mrope"):
        return None  # yarn/dynamic change the derived length; stay quiet
    return info.max_position_embeddings


@register
class SpecMaxLenTooLong(Rule):
    """SD082 — ``speculative_config.max_model_len`` above what the drafter or target allows (R058, R059).

    **What it does.** With a drafter model, the speculative ``max_model_len`` must not exceed the
    drafter's derived maximum (``max_position_embeddings``) nor the target's ``max_model_len``
    (``--max-model-len`` or its derived maximum). The drafter check comes first, as in vLLM.

    **Why it matters.** vLLM raises ``User-specified max_model_len (4096) is greater than the derived
    max_model_len`` or ``speculative_max_model_len=... cannot be larger than target_max_model_len=...``.

    **Anti-pattern.** Copying ``--max-model-len`` into the speculative config after lowering the
    target's.

    **Best practice.** Leave it unset: vLLM uses min(drafter, target).

    **Fix safety.** Safe: unset means the largest length both support.

    Source: vllm/config/model.py ``_get_and_verify_max_len``; vllm/config/speculative.py
    ``_maybe_override_draft_max_model_len`` (0.32 L1633, 0.33 L1763); R058, R059 (E21, E22).
    """

    id = "SD082"
    title = "speculative_config.max_model_len is too long"
    severity = Severity.ERROR
    fields = ("speculative_config.max_model_len",)
    topic = "parallel"
    phase = "config"
    why = "The drafter cannot run longer than its own or the target's context."
    bad = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, max_model_len=16384)
    good = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py _maybe_override_draft_max_model_len; docs/vllm-rules.md R058, R059"
    fix_safety = "Safe."

    def check(self, ctx):
        if not _builds_draft_config(ctx):
            return
        v = _int(given_keys(ctx).get("max_model_len"))
        if v is None or v < 1:
            return
        unset = Patch(description="Remove it (vLLM uses min(drafter, target))", unset=["speculative_config.max_model_len"])
        dlen = _derived_len(ctx.drafter)
        if dlen is not None and v > dlen:
            yield self.finding(
                f"User-specified speculative max_model_len ({v}) is greater than the drafter's derived max_model_len "
                f"(max_position_embeddings={dlen}).",
                fixes=[unset, Patch(description=f"Use {dlen}", set={"speculative_config.max_model_len": dlen})],
            )
            return
        tlen = _int(ctx.config.max_model_len) or _derived_len(ctx.target)
        if tlen is not None and v > tlen:
            yield self.finding(
                f"speculative_max_model_len={v} cannot be larger than target_max_model_len={tlen}.",
                fixes=[unset, Patch(description=f"Use {tlen}", set={"speculative_config.max_model_len": tlen})],
            )
