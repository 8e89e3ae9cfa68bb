from __future__ import annotations

from wizard.config import Patch
from wizard.models.info import ModelInfo
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import use_eagle


def is_hybrid(m: "ModelInfo | None") -> bool:
    """Hybrid attention: recurrent (Mamba/GDN) layers, or mixed per-layer attention types."""
    if m is None:
        return False
    if m.num_mamba_layers:
        return True
    return bool(m.layer_types) and len(set(m.layer_types)) > 1


@register
class PrefixCachingHybridSpeculation(Rule):
    r"""Prefix caching + EAGLE-family speculation on a hybrid-attention target

    ## What it does

    Warns when the target mixes attention types (sliding + full, or
    Mamba/GDN layers) and an EAGLE-family method runs with prefix caching on (given, or the
    release's default: on for decoders, on for hybrid recurrent targets only from 0.28,
    ``ctx.view.prefix_caching``).

    ## Why it matters

    Gemma 4 (hybrid groups) showed 0% prefix hits with EAGLE3/DFlash; on
    hybrid GDN models the EAGLE last-block drop recomputes one large aligned block on every hit
    (30-40% batch throughput lost).

    ## Example

    ```sh
    vllm serve openai/gpt-oss-120b \
      --speculative-config '{"method":"eagle3","model":"nvidia/gpt-oss-120b-Eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    Measure the prefix-cache hit rate with speculation on; consider
    ``disable_eagle_block_drop`` (experimental) or weigh speculation against reuse.

    ```sh
    vllm serve openai/gpt-oss-120b --no-enable-prefix-caching \
      --speculative-config '{"method":"eagle3","model":"nvidia/gpt-oss-120b-Eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Both fixes change speed only.

    ## Source

    https://github.com/vllm-project/vllm/issues/40624, https://github.com/vllm-project/vllm/issues/53670
    """

    id = "SD305"
    severity = Severity.WARNING
    fields = ("enable_prefix_caching", "speculative_config.method")
    phase = "run"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not use_eagle(ctx.method) or not ctx.view.prefix_caching:  # off, or unknown
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
