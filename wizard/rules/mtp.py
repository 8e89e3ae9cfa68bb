"""Multi-token prediction (MTP) at config time: does the target have MTP layers, and is k
compatible with them (docs/vllm-rules.md R027, R030, R031, R041, R042)."""

from __future__ import annotations

from wizard import resolve
from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.rules.spec_fields import given_keys, raw_method
from wizard.vllm.methods import DRAFT_MODEL, MTP, PATH_MARKERS, is_mtp, repeats_mtp_layer
from wizard.fixes import ngram_fallback

_DSV3 = "vllm serve deepseek-ai/DeepSeek-V3"
_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"


def _sc(**kw) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


def _path_detects(ctx) -> bool:
    """The drafter path contains a substring that makes vLLM pick eagle/eagle3/dflash/dspark."""
    name = resolve.drafter_model_name(ctx)
    p = (name or "").lower()
    return any(s in p for s, _ in PATH_MARKERS)


def _is_mtp_checkpoint(ctx) -> bool | None:
    """True/False when the drafter config is (not) MTP after hf_config_override; None = unknown."""
    d = ctx.drafter
    if d is None:
        return None
    return resolve.mtp_rewrite(d) is not None or is_mtp(d.model_type, ctx.version)


def _n_predict(ctx) -> int | None:
    rw = resolve.mtp_rewrite(ctx.drafter)
    if rw is not None:
        return rw[1]
    if ctx.drafter is not None and is_mtp(ctx.drafter.model_type, ctx.version):
        return ctx.drafter.n_predict if ctx.drafter.n_predict is not None else ctx.drafter.mtp_layers
    return None


@register
class MtpWithoutMtpLayers(Rule):
    """SD060 — method mtp on a checkpoint without MTP layers (R027).

    **What it does.** ``method: mtp`` (or an alias) where the checkpoint vLLM uses as drafter (the
    target when ``model`` is unset) is not an MTP family after ``hf_config_override``: Llama,
    Qwen2/3, R1-Distill, NemotronH with ``num_nextn_predict_layers: 0`` ...

    **Why it matters.** vLLM raises ``NotImplementedError: Unsupported speculative method: 'mtp'``
    at config time.

    **Anti-pattern.** ``vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":"mtp","num_speculative_tokens":1}'``

    **Best practice.** MTP only for checkpoints that ship MTP layers (DeepSeek-V3/R1, MiMo,
    GLM-4.5, Qwen3-Next/3.5 ...); otherwise EAGLE-3 or n-gram.

    **Fix safety.** n-gram changes the speed-up (usually lower), but needs no weights.

    Source: vllm/config/speculative.py ``__post_init__`` fall-through (0.32 L1389, 0.33 L1500);
    docs/vllm-rules.md R027 (E31-E33).
    """

    id = "SD060"
    title = "MTP requested but the checkpoint has no MTP layers"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    topic = "mtp"
    phase = "config"
    why = "vLLM can only run MTP with a checkpoint that has MTP modules."
    bad = _LLAMA + " " + _sc(method="mtp", num_speculative_tokens=1)
    good = _DSV3 + " " + _sc(method="mtp", num_speculative_tokens=1)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R027"
    fix_safety = "n-gram changes the speed-up."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or raw_method(ctx) != MTP:
            return
        if spec.model is None and "num_speculative_tokens" not in given_keys(ctx):
            return  # R025 fires first (SD043)
        if _path_detects(ctx) or _is_mtp_checkpoint(ctx) is not False:
            return
        name = resolve.drafter_model_name(ctx) or ctx.config.model
        mt = ctx.drafter.model_type if ctx.drafter else None
        yield self.finding(
            f"method 'mtp' needs a checkpoint with MTP layers, but {name} (model_type {mt}) has none: "
            "vLLM raises \"Unsupported speculative method: 'mtp'\".",
            fixes=[ngram_fallback(3, "Use n-gram speculation")],
        )


@register
class MtpWithoutK(Rule):
    """SD061 — an MTP drafter with ``model`` given but no ``num_speculative_tokens`` (R031).

    **What it does.** When vLLM detects MTP (explicit mtp, or a draft checkpoint that
    ``hf_config_override`` turns into ``*_mtp``) and ``model`` is set, ``num_speculative_tokens``
    must be set: the ``k > 1`` comparison runs before the ``n_predict`` default.

    **Why it matters.** vLLM crashes with a bare ``TypeError: '>' not supported between instances
    of 'NoneType' and 'int'``; the documented "defaults to n_predict" is unreachable.

    **Anti-pattern.** ``{"method":"mtp","model":"deepseek-ai/DeepSeek-V3"}``

    **Best practice.** Always give k for MTP: the number of MTP layers (usually 1).

    **Fix safety.** Safe: k = n_predict is what vLLM documents as the default.

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1377, 0.33 L1487);
    docs/vllm-rules.md R031 (H01, H02).
    """

    id = "SD061"
    title = "MTP needs num_speculative_tokens"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    topic = "mtp"
    phase = "config"
    why = "vLLM compares k with 1 before applying the n_predict default and crashes."
    bad = _DSV3 + " " + _sc(method="mtp", model="deepseek-ai/DeepSeek-V3")
    good = _DSV3 + " " + _sc(method="mtp", model="deepseek-ai/DeepSeek-V3", num_speculative_tokens=1)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R031"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is None or "num_speculative_tokens" in given_keys(ctx):
            return
        rm = raw_method(ctx)
        if rm not in (MTP, DRAFT_MODEL) or _path_detects(ctx) or not _is_mtp_checkpoint(ctx):
            return
        n = _n_predict(ctx) or 1
        yield self.finding(
            "An MTP drafter needs num_speculative_tokens: without it vLLM crashes with "
            "\"TypeError: '>' not supported between instances of 'NoneType' and 'int'\".",
            fixes=[Patch(description=f"Set num_speculative_tokens={n} (the MTP layers)",
                         set={"speculative_config.num_speculative_tokens": n})],
        )


@register
class MtpKNotDivisible(Rule):
    """SD062 — k larger than the MTP layers and not a multiple of them (R041).

    **What it does.** With ``n_predict`` MTP layers (``num_nextn_predict_layers`` ...) and
    ``k > n_predict``, k must be a multiple of n_predict so the layers can be reused in turn.

    **Why it matters.** vLLM raises ``num_speculative_tokens:3 must be divisible by n_predict=2``.

    **Anti-pattern.** k=3 on a checkpoint with 2 MTP layers.

    **Best practice.** k = n_predict (best acceptance) or a multiple.

    **Fix safety.** Changes k (the draft length).

    Source: vllm/config/speculative.py ``__post_init__`` n_predict block (0.32 L1478-1507,
    0.33 L1584-1618); docs/vllm-rules.md R041 (E36).
    """

    id = "SD062"
    title = "num_speculative_tokens must be divisible by the MTP layers"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    topic = "mtp"
    phase = "config"
    why = "MTP layers are reused round-robin; vLLM needs k to be a multiple of n_predict."
    bad = "vllm serve ./tiny-dsv3-mtp2 " + _sc(method="mtp", num_speculative_tokens=3)
    good = "vllm serve ./tiny-dsv3-mtp2 " + _sc(method="mtp", num_speculative_tokens=2)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R041"
    fix_safety = "Changes k."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or _path_detects(ctx):
            return
        k = spec.num_speculative_tokens
        n = _n_predict(ctx)
        if not isinstance(k, int) or not n or k <= n or k % n == 0:
            return
        fixes = [Patch(description=f"Set num_speculative_tokens={n}", set={"speculative_config.num_speculative_tokens": n})]
        lower = (k // n) * n
        if lower > n:
            fixes.append(Patch(description=f"Set num_speculative_tokens={lower}", set={"speculative_config.num_speculative_tokens": lower}))
        yield self.finding(f"num_speculative_tokens:{k} must be divisible by n_predict={n} (the checkpoint's MTP layers).",
                           fixes=fixes)


@register
class MtpZeroLayers(Rule):
    """SD063 — an MTP-family checkpoint that declares 0 MTP layers (R042).

    **What it does.** ``num_nextn_predict_layers: 0`` (quantized or pruned exports) with MTP.

    **Why it matters.** vLLM crashes with a bare ``ZeroDivisionError: integer modulo by zero``.

    **Anti-pattern.** MTP on a DeepSeek-V3 export that dropped the MTP layers.

    **Best practice.** Use a checkpoint with MTP weights, or another method.

    **Fix safety.** n-gram changes the speed-up.

    Source: vllm/config/speculative.py n_predict block (0.32, 0.33); docs/vllm-rules.md R042 (E38).
    """

    id = "SD063"
    title = "Checkpoint has 0 MTP layers"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    topic = "mtp"
    phase = "config"
    why = "n_predict = 0 makes vLLM divide by zero."
    bad = "vllm serve ./tiny-dsv3-mtp0 " + _sc(method="mtp", num_speculative_tokens=1)
    good = "vllm serve ./tiny-dsv3-mtp0 " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R042"
    fix_safety = "n-gram changes the speed-up."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or _path_detects(ctx):
            return
        if not isinstance(spec.num_speculative_tokens, int):
            return
        if _n_predict(ctx) != 0:
            return
        yield self.finding(
            "The checkpoint declares 0 MTP layers (num_nextn_predict_layers: 0): vLLM crashes with "
            "'ZeroDivisionError: integer modulo by zero'.",
            fixes=[ngram_fallback(3, "Use n-gram speculation")],
        )


@register
class MtpKAboveLayers(Rule):
    """SD064 — k larger than the trained MTP layers (R030).

    **What it does.** Warns when vLLM runs MTP with ``k > n_predict`` (a valid multiple): the same
    MTP layer then runs several times per step.

    **Why it matters.** vLLM warns ``Enabling num_speculative_tokens > 1 will run multiple times of
    forward on same MTP layer, which may result in lower acceptance rate``: later positions are
    predicted by a layer never trained for them, so acceptance drops fast.

    **Anti-pattern.** ``num_speculative_tokens: 3`` on DeepSeek-V3 (1 MTP layer).

    **Best practice.** k = number of MTP layers, unless a benchmark shows a gain.

    **Fix safety.** Changes k (usually speeds up per accepted token).

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1375-1386, 0.33 L1485-1498);
    docs/vllm-rules.md R030 (E35, F15, H03).
    """

    id = "SD064"
    title = "num_speculative_tokens exceeds the trained MTP layers"
    severity = Severity.WARNING
    fields = ("speculative_config.num_speculative_tokens",)
    topic = "mtp"
    phase = "config"
    why = "Reusing one MTP layer for several positions lowers acceptance."
    bad = _DSV3 + " " + _sc(method="mtp", num_speculative_tokens=3)
    good = _DSV3 + " " + _sc(method="mtp", num_speculative_tokens=1)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R030"
    fix_safety = "Changes k."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or _path_detects(ctx):
            return
        k = spec.num_speculative_tokens
        n = _n_predict(ctx)
        rw = resolve.mtp_rewrite(ctx.drafter)
        if rw is not None and not repeats_mtp_layer(rw[0]):
            return
        if not isinstance(k, int) or not n or k <= n or k % n != 0:
            return
        yield self.finding(
            f"num_speculative_tokens={k} but the checkpoint has {n} MTP layer(s): vLLM runs the same MTP layer "
            "several times per step, which lowers acceptance.",
            fixes=[Patch(description=f"Set num_speculative_tokens={n}", set={"speculative_config.num_speculative_tokens": n})],
        )
