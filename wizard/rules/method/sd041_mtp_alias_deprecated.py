from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, is_mtp


@register
class MtpAliasDeprecated(Rule):
    r"""Deprecated MTP method alias

    ## What it does

    Flags any ``MTPModelTypes`` value other than ``mtp`` as method.

    ## Why it matters

    vLLM logs ``method `deepseek_mtp` is deprecated and replaced with mtp``
    and runs ``mtp``; old recipes keep the alias alive, and it will be removed.

    ## Example

    ``"method": "deepseek_mtp"``

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    ``"method": "mtp"`` (vLLM picks the MTP module from the checkpoint).

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Safe: identical behaviour.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1143, 0.33 L1248);
    docs/vllm-rules.md R023 (E33, E40).
    """

    id = "SD041"
    severity = Severity.INFO  # docs/severity.md: serves correctly; advice
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        m = ctx.spec.method if ctx.spec is not None else None
        if m and m != MTP and is_mtp(m, ctx.version):
            yield self.finding(
                f"method '{m}' is deprecated: vLLM replaces it with 'mtp' (same behaviour).",
                fixes=[Patch(description="Use method mtp", set={"speculative_config.method": MTP})],
            )
