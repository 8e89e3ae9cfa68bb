from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


@register
class MambaCacheOptions(Rule):
    r"""Mamba (state-space) cache options that need another option

    ## What it does

    ``--mamba-ssu-algorithm`` (any algorithm) needs ``--mamba-backend flashinfer``;
    ``--enable-mamba-cache-stochastic-rounding`` needs ``--mamba-ssm-cache-dtype float16``. vLLM
    checks both whatever the model (a dense target included).

    ## Why it matters

    vLLM raises while building the config: "Mamba SSU algorithm selection is only supported
    with the FlashInfer backend.", "Stochastic rounding for Mamba cache requires the SSM cache to
    be float16.".

    ## Example

    ```sh
    vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --mamba-ssu-algorithm auto
    ```

    ## Use instead

    ```sh
    vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --mamba-ssu-algorithm auto --mamba-backend flashinfer
    ```

    ## Fix safety

    Adding the option the first one needs changes the kernel / the SSM state dtype; removing
    the first keeps vLLM's defaults.

    ## Source

    vllm/config/mamba.py ``MambaConfig.validate_ssu_algorithm``; vllm/config/vllm.py
    ``VllmConfig.__post_init__`` (stochastic rounding); read in 0.32; docs/vllm-rules.md R195, R385
    (0.28-0.33). Found by the schema corpus
    (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD210"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.mamba_ssu_algorithm", "extra_args.enable_mamba_cache_stochastic_rounding")
    phase = "config"

    def check(self, ctx):
        algo = option(ctx, "mamba_ssu_algorithm")
        backend = option(ctx, "mamba_backend")
        if isinstance(algo, str) and algo.lower() != "none" and str(backend or "triton").lower() != "flashinfer":
            yield self.finding(
                "Mamba SSU algorithm selection is only supported with the FlashInfer backend: set "
                "--mamba-backend flashinfer, or omit --mamba-ssu-algorithm.",
                fields=[option_path(ctx, "mamba_ssu_algorithm")],
                fixes=[set_option_patch(ctx, "mamba_backend", "flashinfer", "Add --mamba-backend flashinfer"),
                       set_option_patch(ctx, "mamba_ssu_algorithm", None, "Remove --mamba-ssu-algorithm")])
        if truthy(option(ctx, "enable_mamba_cache_stochastic_rounding")) and \
                option(ctx, "mamba_ssm_cache_dtype") != "float16":
            yield self.finding(
                "Stochastic rounding for Mamba cache requires the SSM cache to be float16: set "
                "--mamba-ssm-cache-dtype float16, or drop --enable-mamba-cache-stochastic-rounding.",
                fields=[option_path(ctx, "enable_mamba_cache_stochastic_rounding")],
                fixes=[set_option_patch(ctx, "mamba_ssm_cache_dtype", "float16", "Add --mamba-ssm-cache-dtype float16"),
                       set_option_patch(ctx, "enable_mamba_cache_stochastic_rounding", None,
                                        "Remove --enable-mamba-cache-stochastic-rounding")])
