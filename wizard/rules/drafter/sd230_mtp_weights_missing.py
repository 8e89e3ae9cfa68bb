from __future__ import annotations

from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP

#: 0.34 removed deepseek_mtp.py's per-layer completeness check (the ledger pair 0.33.0 -> 0.34.0);
#: the default loader's ``track_weights_loading`` (model_loader/default_loader.py 0.34 L608-613)
#: still refuses the unloaded MTP parameters
_GENERIC_CHECK_SINCE = "0.34"


@register
class MtpWeightsMissing(Rule):
    r"""MTP layers declared but their weights are missing

    ## What it does

    With method mtp and a target whose config declares MTP layers, flags a
    checkpoint whose tensor list lacks them (``ModelInfo.has_mtp_weights`` false) — typical of
    quantized exports that drop the MTP head.

    ## Why it matters

    Config time accepts it; loading fails: "MTP speculative decoding layer N
    weights missing from checkpoint" (0.34: "Following weights were not initialized from
    checkpoint").

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

    vllm/model_executor/models/deepseek_mtp.py load_weights (0.32/0.33, L520-537); 0.34:
    vllm/model_executor/model_loader/default_loader.py ``track_weights_loading`` (L608-613);
    docs/vllm-rules.md R126/R043.
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
        said = ("'Following weights were not initialized from checkpoint: {...}' (the model loader's own check; "
                "0.34 dropped the MTP-specific one)" if ctx.version.at_least(_GENERIC_CHECK_SINCE)
                else "'MTP speculative decoding layer ... weights missing from checkpoint'")
        yield self.finding(
            f"{m.short_name()} declares {n} MTP layer(s) but its checkpoint has no MTP tensors: loading fails with "
            f"{said}. Use the checkpoint with MTP weights (quantized exports often drop them) or another method.",
            fixes=[ngram_fix(ctx)])
