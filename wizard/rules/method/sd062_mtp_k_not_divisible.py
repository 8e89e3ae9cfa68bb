from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import mtp_n_predict, path_detects
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class MtpKNotDivisible(Rule):
    """num_speculative_tokens must be divisible by the MTP layers

    ## What it does

    With ``n_predict`` MTP layers (``num_nextn_predict_layers`` ...) and
    ``k > n_predict``, k must be a multiple of n_predict so the layers can be reused in turn.

    ## Why it matters

    vLLM raises ``num_speculative_tokens:3 must be divisible by n_predict=2``.

    ## Example

    k=3 on a checkpoint with 2 MTP layers.

    ```sh
    vllm serve ./tiny-dsv3-mtp2 --speculative-config '{"method":"mtp","num_speculative_tokens":3}'
    ```

    ## Use instead

    k = n_predict (best acceptance) or a multiple.

    ```sh
    vllm serve ./tiny-dsv3-mtp2 --speculative-config '{"method":"mtp","num_speculative_tokens":2}'
    ```

    ## Fix safety

    Changes k (the draft length).

    ## Source

    vllm/config/speculative.py ``__post_init__`` n_predict block (0.32 L1478-1507,
    0.33 L1584-1618); docs/vllm-rules.md R041 (E36).
    """

    id = "SD062"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or path_detects(ctx):
            return
        k = spec.num_speculative_tokens
        n = mtp_n_predict(ctx)
        if not isinstance(k, int) or not n or k <= n or k % n == 0:
            return
        fixes = [Patch(description=f"Set num_speculative_tokens={n}", set={"speculative_config.num_speculative_tokens": n})]
        lower = (k // n) * n
        if lower > n:
            fixes.append(Patch(description=f"Set num_speculative_tokens={lower}", set={"speculative_config.num_speculative_tokens": lower}))
        yield self.finding(f"num_speculative_tokens:{k} must be divisible by n_predict={n} (the checkpoint's MTP layers).",
                           fixes=fixes)
