"""Feature combinations with speculative decoding (SD300-SD349): multimodal targets, pipeline
parallelism, LoRA, structured outputs, prefix caching, CUDA graphs, request sampling parameters.

Most are load- or run-time behaviours from public reports; each rule names the report and, where
the behaviour changed, the version range it applies to (``versions``). Options vLLM has but the
wizard does not model are read from ``config.extra_args`` (e.g. ``structured_outputs_config``,
``language_model_only``, ``override_generation_config``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, MTP, NGRAM, NGRAM_GPU, is_eagle_head, use_eagle

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext
    from wizard.models.info import ModelInfo

__all__ = ["structured_backend", "uses_mrope", "is_hybrid", "is_multimodal", "text_only"]


def _extra(ctx: "CheckContext", name: str) -> Any:
    return ctx.config.extra_args.get(name)


def structured_backend(ctx: "CheckContext") -> str | None:
    """The structured-output backend the user configured (``--structured-outputs-config``
    ``backend``, or the old ``--guided-decoding-backend``), 'auto' when configured without a
    backend, else None (not configured)."""
    so = _extra(ctx, "structured_outputs_config")
    if isinstance(so, str):
        try:
            so = json.loads(so)
        except ValueError:
            return so or None
    if isinstance(so, dict):
        return str(so.get("backend") or "auto")
    g = _extra(ctx, "guided_decoding_backend")
    return str(g) if g else None


def uses_mrope(m: "ModelInfo | None") -> bool:
    """Whether a model's rope config has an ``mrope_section`` (M-RoPE, Qwen2.5-VL style)."""
    if m is None:
        return False
    raw = m.raw_config or {}
    for scope in (raw, raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {}):
        for key in ("rope_scaling", "rope_parameters"):
            r = scope.get(key)
            if isinstance(r, dict) and ("mrope_section" in r or r.get("type") == "mrope" or r.get("rope_type") == "mrope"):
                return True
    return False


def is_hybrid(m: "ModelInfo | None") -> bool:
    """Hybrid attention: recurrent (Mamba/GDN) layers, or mixed per-layer attention types."""
    if m is None:
        return False
    if m.num_mamba_layers:
        return True
    return bool(m.layer_types) and len(set(m.layer_types)) > 1


def is_multimodal(m: "ModelInfo | None") -> bool:
    """``ModelInfo.is_multimodal``, or a config with a vision/audio tower (``vision_config``...)."""
    if m is None:
        return False
    raw = m.raw_config or {}
    return bool(m.is_multimodal or any(isinstance(raw.get(k), dict) for k in ("vision_config", "audio_config", "vision_encoder")))


def text_only(ctx: "CheckContext") -> bool:
    """``--language-model-only`` given: the multimodal tower is not loaded."""
    return bool(_extra(ctx, "language_model_only"))


@register
class MultimodalTargetDraftModelOrParallel(Rule):
    """SD300 — draft_model or parallel drafting (P-EAGLE) with a multimodal target.

    **What it does.** Flags ``method: draft_model`` and ``parallel_drafting: true`` (P-EAGLE,
    PARD) when the target is multimodal and ``--language-model-only`` is not given:

    * a drafter with M-RoPE: error on every version ("does not support M-RoPE yet");
    * vLLM before 0.32: error — startup NotImplementedError/AttributeError, M-RoPE position
      corruption (vllm PR #35714, issue #41743);
    * 0.32+: warning — vLLM proceeds with text-only speculation (images ignored by the drafter,
      lower acceptance on image prompts).

    **Best practice.** Use an EAGLE3/MTP path validated for that VLM, sequential EAGLE3, or
    ``--language-model-only`` for text-only traffic.

    **Fix safety.** ``--language-model-only`` drops image input (unsafe if you serve images).

    **Anti-pattern.** ``vllm serve ./tiny-qwen2.5-vl --speculative-config '{"method":"draft_model","model":"./tiny-qwen2.5-draft","num_speculative_tokens":3}'``

    Source: vllm/v1/spec_decode/llm_base_proposer.py ``_warn_if_multimodal``/``_raise_if_mrope``
    (0.32); docs/vllm-rules.md R128; https://github.com/vllm-project/vllm/pull/35714,
    https://github.com/vllm-project/vllm/issues/41743
    """

    id = "SD300"
    title = "draft_model / parallel drafting with a multimodal target"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.parallel_drafting")
    topic = "combos"
    phase = "load"
    why = "Draft-model and parallel-drafting proposers are text-only; older vLLM fails at startup with VLM targets."
    bad = ("vllm serve ./tiny-qwen2.5-vl --speculative-config "
           "'{\"method\":\"draft_model\",\"model\":\"./tiny-qwen2.5-draft\",\"num_speculative_tokens\":3}'")
    good = ("vllm serve ./tiny-qwen2.5-vl --language-model-only --speculative-config "
            "'{\"method\":\"draft_model\",\"model\":\"./tiny-qwen2.5-draft\",\"num_speculative_tokens\":3}'")
    example_version = "0.31.0"
    # config-only, scaled down: a Qwen2.5-VL target (vision tower, M-RoPE) and a small text Qwen2.5
    # drafter with the same vocabulary, as in vllm PR #35714
    example_models = {
        "./tiny-qwen2.5-vl": {"config": {
            "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": 256,
            "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
            "vocab_size": 1024, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
            "rope_scaling": {"type": "mrope", "mrope_section": [4, 6, 6]},
            "vision_config": {"depth": 2, "hidden_size": 128, "out_hidden_size": 256}}, "tensors": {}},
        "./tiny-qwen2.5-draft": {"config": {
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 128, "intermediate_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
            "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}, "tensors": {}},
    }
    source = "vllm/v1/spec_decode/llm_base_proposer.py (0.32); vllm PR #35714; vllm#41743"
    fix_safety = "--language-model-only disables image input."

    def check(self, ctx):
        spec = ctx.spec
        t = ctx.target
        if spec is None or t is None or not is_multimodal(t) or text_only(ctx):
            return
        method = ctx.method
        parallel = spec.parallel_drafting is True and is_eagle_head(method)
        if method != DRAFT_MODEL and not parallel:
            return
        what = "draft_model speculation" if method == DRAFT_MODEL else f"parallel drafting (P-EAGLE, {method})"
        field = "speculative_config.method" if method == DRAFT_MODEL else "speculative_config.parallel_drafting"
        fixes = []
        if parallel:
            fixes.append(Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"]))
        fixes.append(Patch(description="Serve text only (--language-model-only)", set={"extra_args.language_model_only": True}))
        d = ctx.drafter
        if d is not None and d is not t and uses_mrope(d):
            yield self.finding(f"{what} with drafter {d.short_name()}, which uses M-RoPE: vLLM raises 'Speculative "
                               "Decoding with draft models or parallel drafting does not support M-RoPE yet'.",
                               fields=[field], fixes=fixes)
        elif not ctx.version.at_least("0.32"):
            yield self.finding(f"{what} with multimodal target {t.short_name()} is not supported by vLLM {ctx.version}: "
                               "startup fails (NotImplementedError/AttributeError) or M-RoPE positions are corrupted "
                               "under concurrency (vllm PR #35714, issue #41743).", fields=[field], fixes=fixes)
        else:
            yield self.finding(f"{what} with multimodal target {t.short_name()}: vLLM {ctx.version} proceeds with "
                               "text-only speculation ('does not fully support multimodal models yet'); expect lower "
                               "acceptance on image prompts.", fields=[field], fixes=fixes[-1:], severity=Severity.WARNING)


@register
class MtpPipelineParallel(Rule):
    """SD301 — MTP with pipeline parallelism on vLLM before 0.32.

    **What it does.** Flags method mtp with ``pipeline_parallel_size`` > 1 on versions where
    the draft parallel config inherited the target's PP (0.32 builds it with PP 1, verified in
    ``SpeculativeConfig`` source).

    **Why it matters.** Either create_engine_config fails ("Pipeline parallelism is not
    supported for this model" on the MTP draft) or non-last PP ranks never get accepted-token
    counts and outputs silently diverge from greedy.

    **Best practice.** Use TP instead of PP with MTP on those versions.

    **Fix safety.** Moving PP into TP changes the parallel layout (needs the same GPU count).

    **Anti-pattern.** ``vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 4 --pipeline-parallel-size 2 --speculative-config '{"method":"mtp","num_speculative_tokens":1}'``

    Source: https://github.com/vllm-project/vllm/issues/52069, https://github.com/vllm-project/vllm/issues/44697;
    vllm/config/speculative.py (0.32: draft ParallelConfig(pipeline_parallel_size=1)).
    """

    id = "SD301"
    title = "MTP with pipeline parallelism (vLLM < 0.32)"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("pipeline_parallel_size", "speculative_config.method")
    topic = "combos"
    phase = "config"
    why = "The MTP draft inherited the target's PP size: refused at config time, or silent divergence."
    bad = ("vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 4 --pipeline-parallel-size 2 "
           "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    good = ("vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 "
            "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    example_version = "0.31.0"
    source = "vllm#52069, vllm#44697; vllm/config/speculative.py (0.32)"
    fix_safety = "Changes the parallel layout."

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP or ctx.pp <= 1:
            return
        pp, tp = ctx.pp, ctx.tp
        yield self.finding(
            f"MTP with pipeline_parallel_size {pp} on vLLM {ctx.version}: the MTP draft inherits PP and fails "
            "('not supported for this model'), or non-last PP ranks miss accepted-token counts and outputs diverge "
            "(vllm#52069, vllm#44697). Use tensor parallelism instead.",
            fixes=[Patch(description=f"Use tensor_parallel_size {tp * pp} and no pipeline parallelism",
                         set={"tensor_parallel_size": tp * pp}, unset=["pipeline_parallel_size"])])


@register
class LoraWithSpeculation(Rule):
    """SD302 — LoRA together with speculative decoding on old vLLM.

    **What it does.** ``--enable-lora`` with any speculative config: error before 0.8 (V0 spec
    decode never supported LoRA: shape errors), warning before 0.11 (V1 crashed with concurrent
    requests until the per-token LoRA mapping of PR #21068).

    **Best practice.** Upgrade, or serve LoRA traffic without speculation.

    **Fix safety.** Dropping speculation costs speed only.

    **Anti-pattern.** ``vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'``

    Source: https://github.com/vllm-project/vllm/issues/4872 (0.4.2),
    https://github.com/vllm-project/vllm/issues/20284, PR #21068.
    """

    id = "SD302"
    title = "LoRA with speculative decoding on old vLLM"
    severity = Severity.WARNING
    versions = "<0.11"
    fields = ("enable_lora", "speculative_config")
    topic = "combos"
    phase = "run"
    why = "Old vLLM mis-mapped LoRA adapters over draft tokens: shape errors or crashes under concurrency."
    bad = "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'"
    good = "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora"
    example_version = "0.10.0"
    source = "vllm#4872, vllm#20284, PR #21068"
    fix_safety = "Dropping speculation costs speed only."

    def check(self, ctx):
        if ctx.spec is None or not ctx.config.enable_lora:
            return
        fixes = [Patch(description="Serve LoRA without speculative decoding", unset=["speculative_config"])]
        if not ctx.version.at_least("0.8"):
            yield self.finding(f"LoRA with speculative decoding is not supported by vLLM {ctx.version} (V0): tensor "
                               "shape errors during generation (vllm#4872).", severity=Severity.ERROR, fixes=fixes)
        else:
            yield self.finding(f"LoRA with speculative decoding on vLLM {ctx.version}: crashes once requests run "
                               "concurrently (vllm#20284) until PR #21068; upgrade or disable speculation for LoRA.",
                               fixes=fixes)


@register
class StructuredOutputsWithSpeculation(Rule):
    """SD303 — structured outputs with ngram_gpu + async scheduling, or with P-EAGLE.

    **What it does.** When a structured-output backend is configured
    (``--structured-outputs-config``): warns for ``ngram_gpu`` with async scheduling (grammar-
    illegal drafts accepted: "Failed to advance FSM", HTTP 500, truncated output) and for
    parallel drafting with EAGLE (P-EAGLE: severe acceptance cliff at draft position 1 under
    JSON-schema constraints).

    **Best practice.** Use ``ngram`` (CPU) for grammar traffic; compare P-EAGLE against
    sequential EAGLE3.

    **Fix safety.** Changes speed only.

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --async-scheduling --structured-outputs-config '{"backend":"xgrammar"}' --speculative-config '{"method":"ngram_gpu","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'``

    Source: https://github.com/vllm-project/vllm/issues/49694, https://github.com/vllm-project/vllm/issues/42004
    """

    id = "SD303"
    title = "Structured outputs with ngram_gpu+async or P-EAGLE"
    severity = Severity.WARNING
    fields = ("speculative_config.method", "async_scheduling")
    topic = "combos"
    phase = "run"
    why = "Grammar masks and these drafting modes interact badly: errors under concurrency, or acceptance cliffs."
    bad = ("vllm serve Qwen/Qwen3-8B --async-scheduling --structured-outputs-config '{\"backend\":\"xgrammar\"}' "
           "--speculative-config '{\"method\":\"ngram_gpu\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    good = ("vllm serve Qwen/Qwen3-8B --structured-outputs-config '{\"backend\":\"xgrammar\"}' "
            "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    source = "vllm#49694, vllm#42004"
    fix_safety = "Speed only."

    def check(self, ctx):
        spec = ctx.spec
        backend = structured_backend(ctx)
        if spec is None or backend is None:
            return
        if ctx.method == NGRAM_GPU and ctx.config.async_scheduling is not False:
            yield self.finding(
                f"ngram_gpu with async scheduling and structured outputs ({backend}): the verifier can accept "
                "grammar-illegal draft tokens ('Failed to advance FSM', HTTP 500, truncated output; vllm#49694).",
                fields=["speculative_config.method", "async_scheduling"],
                fixes=[Patch(description="Use CPU n-gram (method ngram) for structured-output traffic"
                             + (" and drop --async-scheduling (CPU n-gram cannot run async)"
                                if ctx.config.async_scheduling is True else ""),
                             set={"speculative_config.method": NGRAM},
                             unset=["async_scheduling"] if ctx.config.async_scheduling is True else [])])
        if spec.parallel_drafting is True and is_eagle_head(ctx.method):
            yield self.finding(
                f"Parallel drafting (P-EAGLE) with structured outputs ({backend}): acceptance falls off a cliff after "
                "draft position 1 under grammar constraints (vllm#42004); compare with sequential EAGLE3.",
                fields=["speculative_config.parallel_drafting"],
                fixes=[Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"])])


@register
class StructuredOutputsOldVersions(Rule):
    """SD304 — speculative decoding and structured-output requests on vLLM before 0.12.

    **What it does.** Warns on any speculative config for versions before 0.12: guided/JSON
    requests could crash the server or fail with grammar errors when drafted tokens violated
    the grammar (0.8.2 guidance parser errors; 0.11.0 crash with 30 concurrent json_object
    requests).

    **Best practice.** Upgrade; or load-test structured-output traffic with speculation and
    disable it for constrained requests.

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'``

    Source: https://github.com/vllm-project/vllm/issues/15554, https://github.com/vllm-project/vllm/issues/27969
    """

    id = "SD304"
    title = "Structured-output requests with speculation on vLLM < 0.12"
    severity = Severity.WARNING
    versions = "<0.12"
    fields = ("speculative_config",)
    topic = "combos"
    phase = "run"
    why = "Spec decode + grammar-constrained requests were still maturing: parser errors and crashes."
    bad = "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'"
    good = "vllm serve Qwen/Qwen3-8B"
    example_version = "0.11.0"
    source = "vllm#15554, vllm#27969"
    fix_safety = "Upgrading is safe."

    def check(self, ctx):
        if ctx.spec is None:
            return
        yield self.finding(
            f"vLLM {ctx.version}: structured-output (guided JSON, json_object) requests with speculative decoding "
            "were reported to fail with grammar errors or crash the server under concurrency (vllm#15554, #27969). "
            "Upgrade or load-test constrained traffic before production.")


@register
class PrefixCachingHybridSpeculation(Rule):
    """SD305 — prefix caching with an EAGLE-family drafter on a hybrid-attention target.

    **What it does.** Warns when the target mixes attention types (sliding + full, or
    Mamba/GDN layers) and an EAGLE-family method runs with prefix caching on (the V1 default).

    **Why it matters.** Gemma 4 (hybrid groups) showed 0% prefix hits with EAGLE3/DFlash; on
    hybrid GDN models the EAGLE last-block drop recomputes one large aligned block on every hit
    (30-40% batch throughput lost).

    **Best practice.** Measure the prefix-cache hit rate with speculation on; consider
    ``disable_eagle_block_drop`` (experimental) or weigh speculation against reuse.

    **Fix safety.** Both fixes change speed only.

    **Anti-pattern.** ``vllm serve openai/gpt-oss-120b --speculative-config '{"method":"eagle3","model":"nvidia/gpt-oss-120b-Eagle3","num_speculative_tokens":3}'``

    Source: https://github.com/vllm-project/vllm/issues/40624, https://github.com/vllm-project/vllm/issues/53670
    """

    id = "SD305"
    title = "Prefix caching + EAGLE-family speculation on a hybrid-attention target"
    severity = Severity.WARNING
    fields = ("enable_prefix_caching", "speculative_config.method")
    topic = "combos"
    phase = "run"
    why = "EAGLE's block drop and hybrid KV groups interact: prefix reuse falls or disappears."
    bad = ("vllm serve openai/gpt-oss-120b --speculative-config "
           "'{\"method\":\"eagle3\",\"model\":\"nvidia/gpt-oss-120b-Eagle3\",\"num_speculative_tokens\":3}'")
    good = ("vllm serve openai/gpt-oss-120b --no-enable-prefix-caching --speculative-config "
            "'{\"method\":\"eagle3\",\"model\":\"nvidia/gpt-oss-120b-Eagle3\",\"num_speculative_tokens\":3}'")
    source = "vllm#40624, vllm#53670"
    fix_safety = "Speed only."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not use_eagle(ctx.method) or ctx.config.enable_prefix_caching is False:
            return
        if spec.disable_eagle_block_drop is True or not is_hybrid(ctx.target):
            return
        t = ctx.target
        kind = "recurrent (Mamba/GDN) layers" if t.num_mamba_layers else "mixed attention layer types"
        yield self.finding(
            f"{t.short_name()} has {kind}; with {ctx.method} speculation and prefix caching, reported prefix hit "
            "rates fell to 0% (Gemma 4, vllm#40624) or every hit recomputed a large block (hybrid GDN, vllm#53670). "
            "Measure the hit rate with speculation on.",
            fixes=[Patch(description="Keep the last block on prefix hits (experimental disable_eagle_block_drop)",
                         set={"speculative_config.disable_eagle_block_drop": True}),
                   Patch(description="Disable prefix caching", set={"enable_prefix_caching": False})])


@register
class DraftModelCudaGraphs(Rule):
    """SD306 — draft_model drafters never replay CUDA graphs (vLLM < 0.32).

    **What it does.** Warns for ``method: draft_model`` without ``enforce_eager`` on versions
    where the drafter's CUDA-graph keys were not initialised (fixed by PR #47460; the 0.32
    source initialises them for DraftModelProposer).

    **Why it matters.** Every draft step runs eagerly; draft_model speculation can be slower
    than no speculation.

    **Best practice.** Upgrade before judging draft_model speed-ups; compare against no-spec.

    **Anti-pattern.** ``vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'``

    Source: https://github.com/vllm-project/vllm/pull/47460; vllm/v1/worker/gpu_model_runner.py (0.32).
    """

    id = "SD306"
    title = "draft_model drafter runs eagerly (vLLM < 0.32)"
    severity = Severity.WARNING
    versions = "<0.32"
    fields = ("speculative_config.method",)
    topic = "combos"
    phase = "run"
    why = "Captured drafter graphs were never dispatched: launch-bound draft steps."
    bad = ("vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --speculative-config "
           "'{\"method\":\"draft_model\",\"model\":\"meta-llama/Llama-3.2-1B-Instruct\",\"num_speculative_tokens\":3}'")
    good = ("vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --speculative-config "
            "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.3-Instruct-70B\",\"num_speculative_tokens\":3}'")
    example_version = "0.31.0"
    source = "https://github.com/vllm-project/vllm/pull/47460"
    fix_safety = "Upgrade: safe."

    def check(self, ctx):
        if ctx.spec is None or ctx.method != DRAFT_MODEL or ctx.config.enforce_eager:
            return
        yield self.finding(
            f"draft_model on vLLM {ctx.version}: the drafter's CUDA graphs are captured but never replayed (PR #47460), "
            "so each draft step runs eagerly and speculation can be net-negative. Benchmark against no speculation.")


_REQUEST_REJECTED = ("min_p", "logit_bias")


@register
class RequestSamplingParamsWithSpeculation(Rule):
    """SD307 — sampling parameters that requests cannot use with speculative decoding.

    **What it does.** With speculation on, vLLM rejects requests with ``min_p`` > 0 or
    ``logit_bias`` (HTTP 400). Errors when ``--override-generation-config`` makes them the
    server-wide default (every request then fails); otherwise an info finding. On vLLM before
    0.8 (V0) ``prompt_logprobs`` requests failed the same way ("Prompt logprob is not supported
    by multi step workers").

    **Fix safety.** Removing the default changes sampling (unsafe for output style).

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --override-generation-config '{"min_p":0.05}' --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'``

    **Best practice.** ``vllm serve Qwen/Qwen3-8B --override-generation-config '{"min_p":0.05}'``

    Source: vllm/sampling_params.py ``_validate_spec_decode`` (0.32/0.33); docs/vllm-rules.md R133;
    https://github.com/vllm-project/vllm/issues/6306
    """

    id = "SD307"
    title = "min_p / logit_bias requests fail with speculative decoding"
    severity = Severity.INFO
    fields = ("speculative_config",)
    topic = "combos"
    phase = "run"
    why = "Per-request validation rejects these sampling parameters while speculation is on."
    bad = ("vllm serve Qwen/Qwen3-8B --override-generation-config '{\"min_p\":0.05}' "
           "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    good = "vllm serve Qwen/Qwen3-8B --override-generation-config '{\"min_p\":0.05}'"
    source = "vllm/sampling_params.py _validate_spec_decode; docs/vllm-rules.md R133; vllm#6306"
    fix_safety = "Changes default sampling."

    def check(self, ctx):
        if ctx.spec is None:
            return
        ov = _extra(ctx, "override_generation_config")
        if isinstance(ov, str):
            try:
                ov = json.loads(ov)
            except ValueError:
                ov = None
        ov = ov if isinstance(ov, dict) else {}
        bad = [k for k in _REQUEST_REJECTED if ov.get(k)]
        v0 = not ctx.version.at_least("0.8")
        if v0 and ov.get("prompt_logprobs") is not None:
            bad.append("prompt_logprobs")
        if bad:
            rest = {k: v for k, v in ov.items() if k not in bad}
            yield self.finding(
                f"--override-generation-config sets {', '.join(bad)} for every request, which vLLM {ctx.version} "
                "rejects while speculative decoding is on: every request fails.",
                fields=["extra_args.override_generation_config", "speculative_config"], severity=Severity.ERROR,
                fixes=[Patch(description=f"Drop {', '.join(bad)} from the server-wide generation defaults",
                             set={"extra_args.override_generation_config": rest} if rest else {},
                             unset=[] if rest else ["extra_args.override_generation_config"])])
            return
        yield self.finding(
            "With speculative decoding on, requests that set min_p > 0 or logit_bias are rejected (HTTP 400: "
            "'not yet supported with speculative decoding').")


@register
class SpecSkippedForSamplingParams(Rule):
    """SD308 — vLLM 0.11-0.13 silently skip speculation for some requests.

    **What it does.** Warns on any speculative config for 0.11 <= version < 0.14: requests with
    logprobs, presence/frequency/repetition penalties or min_p run without speculation.

    **Best practice.** Upgrade if such requests are common; measure speed on real traffic.

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'``

    Source: https://github.com/vllm-project/vllm/issues/34497
    """

    id = "SD308"
    title = "Speculation silently off for logprobs/penalty requests (vLLM 0.11-0.13)"
    severity = Severity.WARNING
    versions = ">=0.11,<0.14"
    fields = ("speculative_config",)
    topic = "combos"
    phase = "run"
    why = "Those releases disabled speculation per request for common sampling parameters."
    bad = "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'"
    good = "vllm serve Qwen/Qwen3-8B"
    example_version = "0.12.0"
    source = "https://github.com/vllm-project/vllm/issues/34497"
    fix_safety = "Upgrading is safe."

    def check(self, ctx):
        if ctx.spec is None:
            return
        yield self.finding(
            f"vLLM {ctx.version} skips speculative decoding for any request with logprobs, presence/frequency/"
            "repetition penalty or min_p (vllm#34497): those requests get no speed-up.")
