from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import engram_layers


@register
class EngramWithoutEngramLayers(Rule):
    r"""``--engram-config`` for a model without Engram n-gram embeddings

    ## What it does

    Any ``--engram-config`` (``{}`` included: the option builds an ``EngramConfig``) on a target
    whose architecture is not one vLLM has Engram embeddings for, or whose config lists no n-gram
    layers. The architectures and the config field holding their layer ids come from the
    release itself (``checks.json`` ``engram_layer_fields``, dumped from
    ``vllm/config/engram.py _NGRAM_LAYER_FIELDS``: DeepSeek V4.1 ``engram_layer_ids``, Qwen4-Exp
    ``ple_layer_ids`` in 0.32). A release without that table is not judged.

    ## Why it matters

    vLLM raises while building the config: "EngramConfig requires a model with supported
    Engram embeddings and non-empty n-gram layer ids.".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --engram-config '{"cpu_offload": true}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Safe: the option does nothing for a model without Engram layers except fail.

    ## Source

    vllm/config/engram.py ``EngramConfig.verify_model_config``, vllm/config/vllm.py
    ``_resolve_and_verify_engram_config`` (0.32); docs/vllm-rules.md R172 (0.32-0.33; R173/R174
    in 0.30/0.31 also need CUDA); found by the schema corpus
    (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD102"
    severity = Severity.ERROR
    versions = ">=0.32"
    fields = ("extra_args.engram_config",)
    phase = "config"

    def check(self, ctx):
        if not isinstance(option(ctx, "engram_config"), dict) or ctx.target is None:
            return
        if engram_layers(ctx.target, ctx.version) is not False:
            return
        arch = (ctx.target.architectures or ["?"])[0]
        yield self.finding(
            f"EngramConfig requires a model with supported Engram embeddings and non-empty n-gram layer ids; "
            f"{arch} has none.",
            fields=[option_path(ctx, "engram_config")],
            fixes=[set_option_patch(ctx, "engram_config", None, "Remove --engram-config")])
