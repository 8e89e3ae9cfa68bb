from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import explicit_draft_kv, is_fp8_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, uses_draft_kv_cache


#: CPU attention backend KV dtypes (R109, vllm/platforms/cpu.py 0.32/0.33).
CPU_KV = frozenset({"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"})


@register
class CpuKvDtype(Rule):
    """KV-cache dtype not supported by the CPU backend

    ## What it does

    On CPU (``Hardware.vendor == 'cpu'``) flags, for the target and the
    drafter: dtypes outside {auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2} (error); fp8
    on an MLA model (error); fp8 with a head size not divisible by 32 (error); any fp8 (warning:
    needs x86 AVX-512 or AMX, which the wizard cannot see).

    ## Why it matters

    0.32 fails at the first forward (NotImplementedError), 0.33 at backend
    selection.

    ## Example

    On CPU:

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype nvfp4
    ```

    ## Use instead

    ``auto`` on CPU unless the host has AVX-512/AMX.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype auto
    ```

    ## Fix safety

    ``auto`` only changes KV memory.

    ## Source

    vllm/platforms/cpu.py, vllm/v1/attention/backends/cpu_attn.py (0.32/0.33); docs/vllm-rules.md R109.
    """

    id = "SD204"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "load"

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor != "cpu":
            return
        sides = [("kv_cache_dtype", ctx.target_kv_dtype(), ctx.target)]
        if ctx.spec is not None and uses_draft_kv_cache(ctx.method) and explicit_draft_kv(ctx):
            sides.append(("speculative_config.kv_cache_dtype", ctx.drafter_kv_dtype(),
                          ctx.target if ctx.method == MTP else ctx.drafter))
        for field, kv, info in sides:
            fix = Patch(description=f"Use {field} auto", set={field: "auto"})
            if kv not in CPU_KV:
                yield self.finding(f"KV dtype '{kv}' ({field}) is not supported by the CPU attention backend "
                                   "(auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2).", fields=[field], fixes=[fix])
                continue
            if not is_fp8_kv(kv):
                continue
            if info is not None and info.use_mla:
                yield self.finding(f"KV dtype '{kv}' ({field}): MLA attention on CPU supports only auto/bfloat16/float16.",
                                   fields=[field], fixes=[fix])
            elif info is not None and info.head_dim and info.head_dim % 32:
                yield self.finding(f"KV dtype '{kv}' ({field}): fp8 KV on CPU needs head_size divisible by 32; "
                                   f"{info.short_name()} has head_dim {info.head_dim}.", fields=[field], fixes=[fix])
            elif not ctx.view.device_kv.fp8:
                yield self.finding(f"KV dtype '{kv}' ({field}): fp8 KV on CPU needs an x86 host with AVX-512 or AMX "
                                   f"('FP8 KV cache on CPU requires x86 with AVX-512 or AMX'); this host's ISA is "
                                   f"{hw.isa or 'unknown'}.", fields=[field], fixes=[fix])
