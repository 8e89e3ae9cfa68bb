from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys, is_mtp_checkpoint, mtp_n_predict, path_detects, raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, MTP


@register
class MtpWithoutK(Rule):
    r"""MTP needs num_speculative_tokens

    ## What it does

    When vLLM detects MTP (explicit mtp, or a draft checkpoint that
    ``hf_config_override`` turns into ``*_mtp``) and ``model`` is set, ``num_speculative_tokens``
    must be set: the ``k > 1`` comparison runs before the ``n_predict`` default.

    ## Why it matters

    vLLM crashes with a bare ``TypeError: '>' not supported between instances
    of 'NoneType' and 'int'``; the documented "defaults to n_predict" is unreachable.

    ## Example

    ``{"method":"mtp","model":"deepseek-ai/DeepSeek-V3"}``

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","model":"deepseek-ai/DeepSeek-V3"}'
    ```

    ## Use instead

    Always give k for MTP: the number of MTP layers (usually 1).

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","model":"deepseek-ai/DeepSeek-V3","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Safe: k = n_predict is what vLLM documents as the default.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1377, 0.33 L1487);
    docs/vllm-rules.md R031 (H01, H02).
    """

    id = "SD061"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is None or "num_speculative_tokens" in given_keys(ctx):
            return
        rm = raw_method(ctx)
        if rm not in (MTP, DRAFT_MODEL) or path_detects(ctx) or not is_mtp_checkpoint(ctx):
            return
        n = mtp_n_predict(ctx) or 1
        yield self.finding(
            "An MTP drafter needs num_speculative_tokens: without it vLLM crashes with "
            "\"TypeError: '>' not supported between instances of 'NoneType' and 'int'\".",
            fixes=[Patch(description=f"Set num_speculative_tokens={n} (the MTP layers)",
                         set={"speculative_config.num_speculative_tokens": n})],
        )
