from __future__ import annotations

from wizard.fixes import ngram_fallback
from wizard.rules.helpers import mtp_n_predict, path_detects
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class MtpZeroLayers(Rule):
    """Checkpoint has 0 MTP layers

    ## What it does

    ``num_nextn_predict_layers: 0`` (quantized or pruned exports) with MTP.

    ## Why it matters

    vLLM crashes with a bare ``ZeroDivisionError: integer modulo by zero``.

    ## Example

    MTP on a DeepSeek-V3 export that dropped the MTP layers.

    ```sh
    vllm serve ./tiny-dsv3-mtp0 --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    Use a checkpoint with MTP weights, or another method.

    ```sh
    vllm serve ./tiny-dsv3-mtp0 --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    n-gram changes the speed-up.

    ## Source

    vllm/config/speculative.py n_predict block (0.32, 0.33); docs/vllm-rules.md R042 (E38).
    """

    id = "SD063"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != MTP or path_detects(ctx):
            return
        if not isinstance(spec.num_speculative_tokens, int):
            return
        if mtp_n_predict(ctx) != 0:
            return
        yield self.finding(
            "The checkpoint declares 0 MTP layers (num_nextn_predict_layers: 0): vLLM crashes with "
            "'ZeroDivisionError: integer modulo by zero'.",
            fixes=[ngram_fallback(3, "Use n-gram speculation")],
        )
