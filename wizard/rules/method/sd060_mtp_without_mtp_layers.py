from __future__ import annotations

from wizard import resolve
from wizard.fixes import ngram_fallback
from wizard.rules.helpers import given_keys, is_mtp_checkpoint, path_detects, raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, redetects_explicit_method


@register
class MtpWithoutMtpLayers(Rule):
    r"""MTP requested but the checkpoint has no MTP layers

    ## What it does

    ``method: mtp`` (or an alias) where the checkpoint vLLM uses as drafter (the
    target when ``model`` is unset) is not an MTP family after ``hf_config_override``: Llama,
    Qwen2/3, R1-Distill, NemotronH with ``num_nextn_predict_layers: 0`` ...

    ## Why it matters

    vLLM raises ``NotImplementedError: Unsupported speculative method: 'mtp'``
    at config time.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    MTP only for checkpoints that ship MTP layers (DeepSeek-V3/R1, MiMo,
    GLM-4.5, Qwen3-Next/3.5 ...); otherwise EAGLE-3 or n-gram.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    n-gram changes the speed-up (usually lower), but needs no weights.

    ## Source

    vllm/config/speculative.py ``__post_init__`` fall-through (0.32 L1389, 0.33 L1500); 0.34 moved
    method detection into v1/worker/gpu/spec_decode/speculator_config.py and has no fall-through
    (an explicit ``mtp`` is kept, mtp/config.py ``default_model`` = the target): a warning there;
    docs/vllm-rules.md R027 (E31-E33).
    """

    id = "SD060"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or raw_method(ctx) != MTP:
            return
        if spec.model is None and "num_speculative_tokens" not in given_keys(ctx):
            return  # R025 fires first (SD043)
        if path_detects(ctx) or is_mtp_checkpoint(ctx) is not False:
            return
        name = resolve.drafter_model_name(ctx) or ctx.config.model
        mt = ctx.drafter.model_type if ctx.drafter else None
        if not redetects_explicit_method(ctx.version):
            yield self.finding(
                f"method 'mtp' needs a checkpoint with MTP layers, but {name} (model_type {mt}) has none. vLLM "
                f"{ctx.version.short} no longer refuses this at config time (the MTP speculator takes the target "
                "itself as its draft, v1/worker/gpu/spec_decode/mtp/config.py default_model): the draft is built "
                "from an architecture without MTP weights when the model loads, so it fails there or drafts nothing useful.",
                severity=Severity.WARNING,
                fixes=[ngram_fallback(3, "Use n-gram speculation")],
            )
            return
        yield self.finding(
            f"method 'mtp' needs a checkpoint with MTP layers, but {name} (model_type {mt}) has none: "
            "vLLM raises \"Unsupported speculative method: 'mtp'\".",
            fixes=[ngram_fallback(3, "Use n-gram speculation")],
        )
