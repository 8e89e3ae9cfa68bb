from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import is_fp8_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import uses_draft_kv_cache


@register
class Fp8KvWithoutScales(Rule):
    """fp8 KV cache without calibrated KV scales

    ## What it does

    Warns when ``--kv-cache-dtype`` is set to a dense fp8 dtype and the target
    checkpoint declares no KV quantization (no ``kv_cache_scheme``/``kv_cache_quant_algo``, so
    no ``k_scale``/``v_scale``). Quiet when the target is unknown.

    ## Why it matters

    vLLM falls back to scale 1.0; accuracy can drop (reasoning especially)
    and, with speculation, drafter acceptance can collapse (Gemma 4 MTP ran at ~0.2%).

    ## Example

    ``--kv-cache-dtype fp8_e4m3`` on a weight-only FP8 checkpoint.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3
    ```

    ## Use instead

    Use fp8 KV only with calibrated scales; otherwise ``auto``. Validate
    acceptance with bf16 KV first.

    ```sh
    vllm serve Qwen/Qwen3-8B
    ```

    ## Fix safety

    ``auto`` costs KV capacity.

    ## Source

    https://github.com/sgl-project/sgl-cookbook/pull/237 (SGLang, same fallback to
    scale 1.0 in vLLM: vllm/model_executor/layers/quantization/kv_cache.py);
    https://github.com/vllm-project/vllm/issues/41789
    """

    id = "SD206"
    severity = Severity.WARNING
    fields = ("kv_cache_dtype",)
    phase = "run"

    def check(self, ctx):
        kv = ctx.config.kv_cache_dtype
        t = ctx.target
        if not is_fp8_kv(kv) or t is None or t.kv_cache_quant:
            return
        if any(n.endswith(("k_scale", "v_scale")) for n in t.tensors):
            return
        spec_note = ""
        if ctx.spec is not None and uses_draft_kv_cache(ctx.method):
            dkv = ctx.drafter_kv_dtype()
            if dkv == kv:
                spec_note = (f" With speculation ({ctx.method}) the drafter's KV cache inherits '{kv}' and is just as "
                             "uncalibrated: acceptance near zero was reported (vllm#41789); validate with bf16 KV first.")
            elif is_fp8_kv(dkv):
                spec_note = (f" With speculation ({ctx.method}) the drafter's KV cache is '{dkv}' "
                             "(speculative_config.kv_cache_dtype), also without calibrated scales: acceptance near zero "
                             "was reported (vllm#41789); validate with bf16 KV first.")
            else:
                spec_note = (f" The drafter's KV cache is '{dkv}' (speculative_config.kv_cache_dtype), so drafting is "
                             "unaffected, but the target verifies against the uncalibrated fp8 cache.")
        yield self.finding(
            f"--kv-cache-dtype {kv} on {t.short_name()}, whose checkpoint declares no KV-cache quantization "
            f"(no calibrated k/v scales): vLLM uses scale 1.0 and accuracy may degrade.{spec_note}",
            fixes=[Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})],
        )
