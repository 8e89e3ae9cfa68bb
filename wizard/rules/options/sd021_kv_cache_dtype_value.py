from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import field_spec
from wizard.vllm.versions import kv_cache_dtypes


@register
class KvCacheDtypeValue(Rule):
    """KV-cache dtype is not a value vLLM knows

    ## What it does

    Checks both KV dtypes against ``CacheDType`` of the selected version
    (19 values in 0.32; 0.33 adds the three ``octave_*`` names).

    ## Why it matters

    0.32 rejects an unknown ``--kv-cache-dtype`` when parsing the command
    line and an unknown drafter dtype at config time. 0.33 accepts any drafter string at config
    time (its ``SpeculativeConfig.kv_cache_dtype`` is ``CacheDType | str``) and fails when the
    drafter's cache is built: that load-time case is SD027.

    ## Example

    ``--kv-cache-dtype fp8_e4m3fn`` (a torch name, not a vLLM one), ``fp9``,
    ``int8``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8_e4m3fn
    ```

    ## Use instead

    Use a listed value; ``auto`` follows the model dtype.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8_e4m3
    ```

    ## Fix safety

    The suggested closest value changes the cache precision only when the
    typo was ambiguous; check memory and accuracy if it is a quantized dtype.

    ## Source

    vllm/config/cache.py ``CacheDType``; vllm/config/speculative.py field
    ``kv_cache_dtype`` (0.32 CacheDType | None, 0.33 CacheDType | str | None);
    docs/vllm-rules.md R007, R014 (E42, E45, C15).
    """

    id = "SD021"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype", "speculative_config.kv_cache_dtype")
    phase = "config"

    _ALIASES = {"fp8_e4m3fn": "fp8_e4m3", "fp8_e5m2fn": "fp8_e5m2", "half": "float16", "fp16": "float16",
                "bf16": "bfloat16", "float32": "auto", "fp32": "auto", "float": "auto", "int8": "int8_per_token_head",
                "e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2"}

    def check(self, ctx):
        allowed = kv_cache_dtypes(ctx.version)
        cands = [("kv_cache_dtype", ctx.config.invalid_values.get("kv_cache_dtype", ctx.config.kv_cache_dtype))]
        spec_field = field_spec("SpeculativeConfig", "kv_cache_dtype", ctx.version)
        # a release whose SpeculativeConfig.kv_cache_dtype also takes any str (0.33) fails at load: SD027
        if ctx.spec is not None and not (spec_field is not None and spec_field.open):
            cands.append(("speculative_config.kv_cache_dtype",
                          ctx.config.invalid_values.get("speculative_config.kv_cache_dtype", ctx.spec.kv_cache_dtype)))
        for path, value in cands:
            if value is None or value in allowed:
                continue
            s = str(value).strip()
            best = self._ALIASES.get(s.lower()) or closest(s, allowed, default="auto")
            if path.startswith("speculative_config") and ctx.version.at_least("0.33"):
                when = "vLLM 0.33 accepts it at config time but fails when the drafter's KV cache is built"
            elif path.startswith("speculative_config"):
                when = "vLLM rejects it at config time ('Input should be 'auto', ...')"
            else:
                when = "vLLM rejects it when parsing the command line (invalid choice)" if not ctx.version.at_least("0.33") \
                    else "vLLM rejects it at config time ('Invalid kv_cache_dtype')"
            yield self.finding(
                f"{path}={value!r} is not a KV-cache dtype of vLLM {ctx.version}; {when}. "
                f"Valid: {', '.join(allowed)}.",
                fields=[path],
                fixes=[Patch(description=f"Use {best}", set={path: best})],
            )
