from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import field_spec
from wizard.vllm.versions import kv_cache_dtypes


@register
class DrafterKvDtypeFailsAtLoad(Rule):
    """Drafter KV-cache dtype unknown to vLLM: accepted at config time, fails at load

    ## What it does

    For releases whose ``SpeculativeConfig.kv_cache_dtype`` accepts any string beside the
    ``CacheDType`` values (0.33: ``CacheDType | str | None``, read from the generated
    ``constraints.json``), reports a ``speculative_config.kv_cache_dtype`` that is not a KV-cache
    dtype of the release. Releases that reject it at config time are SD021.

    ## Why it matters

    vLLM builds the config, loads both models (minutes), then fails when the drafter's KV cache
    is allocated with the unknown dtype.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "kv_cache_dtype": "fp9"}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "kv_cache_dtype": "fp8"}'
    ```

    ## Fix safety

    The closest listed value, or unsetting (the drafter inherits ``--kv-cache-dtype``).

    ## Source

    vllm/config/speculative.py field ``kv_cache_dtype`` (0.33: ``CacheDType | str | None``);
    vllm/v1/worker KV-cache allocation of the drafter (0.33); docs/vllm-rules.md R014. Phase
    verified with ``benchmarks/conformance.py``: vllm 0.33.0 builds the config.
    """

    id = "SD027"
    severity = Severity.ERROR
    fields = ("speculative_config.kv_cache_dtype",)
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        f = field_spec("SpeculativeConfig", "kv_cache_dtype", ctx.version)
        if spec is None or f is None or not f.open:
            return
        path = "speculative_config.kv_cache_dtype"
        value = ctx.config.invalid_values.get(path, spec.kv_cache_dtype)
        allowed = kv_cache_dtypes(ctx.version)
        if value is None or value in allowed:
            return
        best = closest(str(value), allowed, default="auto")
        yield self.finding(
            f"{path}={value!r} is not a KV-cache dtype of vLLM {ctx.version}: it builds the config but fails when "
            f"the drafter's KV cache is allocated, after loading both models. Valid: {', '.join(allowed)}.",
            fixes=[Patch(description=f"Use {best}", set={path: best}),
                   Patch(description="Unset it (the drafter inherits --kv-cache-dtype)", unset=[path])])
