from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, is_allowed


@register
class IndexShareNotMtp(Rule):
    r"""index_share_for_mtp_iteration needs method mtp

    ## What it does

    Flags the key when the method vLLM runs is not mtp.

    ## Why it matters

    vLLM raises ``index_share_for_mtp_iteration is only supported with
    method='mtp'``.

    ## Example

    Copying an MTP recipe's options into an n-gram config.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"index_share_for_mtp_iteration":true}'
    ```

    ## Use instead

    Use it only with MTP.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the option has no effect elsewhere.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1574, 0.33 L1704); R073 (E63).
    From 0.34 the generic "{option} is not supported with speculative method" check
    (vllm/config/speculative.py:1394-1401) replaces this message: SD058.
    """

    id = "SD049"
    severity = Severity.ERROR
    versions = "<0.34"  # 0.34: SD058 (speculative.py:1394)
    fields = ("speculative_config.index_share_for_mtp_iteration",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.index_share_for_mtp_iteration is None:
            return
        if ctx.method == MTP or not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"index_share_for_mtp_iteration is only supported with method='mtp' (vLLM will run {ctx.method}).",
            fixes=[Patch(description="Remove index_share_for_mtp_iteration", unset=["speculative_config.index_share_for_mtp_iteration"])],
        )
