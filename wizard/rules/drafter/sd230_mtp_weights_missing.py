from __future__ import annotations

from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class MtpWeightsMissing(Rule):
    r"""MTP layers declared but their weights are missing

    ## What it does

    With method mtp and a target whose config declares MTP layers, flags a
    checkpoint whose tensor list lacks them (``ModelInfo.has_mtp_weights`` false) — typical of
    quantized exports that drop the MTP head.

    ## Why it matters

    Config time accepts it; loading fails: "MTP speculative decoding layer N
    weights missing from checkpoint".

    ## Example

    ```sh
    vllm serve ./tiny-dsv3-mtp1-stripped \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    Use a checkpoint that ships the MTP layers, or another method.

    ```sh
    vllm serve ./tiny-dsv3-mtp1-full \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    n-gram changes acceptance.

    ## Source

    vllm/model_executor/models/deepseek_mtp.py load_weights (0.32/0.33); docs/vllm-rules.md R126/R043.
    """

    id = "SD230"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "load"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP:
            return
        m = ctx.view.drafter
        if m is None or m.has_mtp_weights is not False:
            return
        n = ctx.view.mtp_layers
        if not n:
            return
        yield self.finding(
            f"{m.short_name()} declares {n} MTP layer(s) but its checkpoint has no MTP tensors: loading fails with "
            "'MTP speculative decoding layer ... weights missing from checkpoint'. Use the checkpoint with MTP "
            "weights (quantized exports often drop them) or another method.",
            fixes=[ngram_fix(ctx)])
