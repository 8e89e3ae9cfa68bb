from __future__ import annotations

from wizard import resolve
from wizard.config import Patch
from wizard.rules.helpers import mtp_n_predict, path_detects
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, repeats_mtp_layer


@register
class MtpKAboveLayers(Rule):
    r"""num_speculative_tokens exceeds the trained MTP layers

    ## What it does

    Warns when vLLM runs MTP with ``k > n_predict`` (a valid multiple): the same
    MTP layer then runs several times per step.

    ## Why it matters

    vLLM warns ``Enabling num_speculative_tokens > 1 will run multiple times of
    forward on same MTP layer, which may result in lower acceptance rate``: later positions are
    predicted by a layer never trained for them, so acceptance drops fast.

    ## Example

    ``num_speculative_tokens: 3`` on DeepSeek-V3 (1 MTP layer).

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":3}'
    ```

    ## Use instead

    k = number of MTP layers, unless a benchmark shows a gain.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Changes k (usually speeds up per accepted token).

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1375-1386, 0.33 L1485-1498);
    docs/vllm-rules.md R030 (E35, F15, H03).
    """

    id = "SD064"
    severity = Severity.WARNING
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or path_detects(ctx):
            return
        k = spec.num_speculative_tokens
        n = mtp_n_predict(ctx)
        rw = resolve.mtp_rewrite(ctx.drafter)
        if rw is not None and not repeats_mtp_layer(rw[0]):
            return
        if not isinstance(k, int) or not n or k <= n or k % n != 0:
            return
        yield self.finding(
            f"num_speculative_tokens={k} but the checkpoint has {n} MTP layer(s): vLLM runs the same MTP layer "
            "several times per step, which lowers acceptance.",
            fixes=[Patch(description=f"Set num_speculative_tokens={n}", set={"speculative_config.num_speculative_tokens": n})],
        )
