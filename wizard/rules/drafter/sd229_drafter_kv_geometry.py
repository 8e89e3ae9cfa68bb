from __future__ import annotations

from wizard.models.info import ModelInfo
from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import needs_drafter_checkpoint, uses_draft_kv_cache


@register
class DrafterKvGeometry(Rule):
    r"""Drafter KV page size incompatible with the target's (vLLM < 0.32)

    ## What it does

    Compares bytes per token of one KV layer (KV heads x head_dim) of drafter
    and target; when neither divides the other, vLLM before 0.32 cannot build one KV cache.

    ## Why it matters

    AngelSlim's Qwen3-4B EAGLE3 drafter (head_dim 80) next to the target
    (head_dim 128) failed to allocate a unified KV cache. 0.32's
    ``unify_kv_cache_spec_page_size`` pads non-MLA pages instead (verified in the 0.32 source);
    when that arrived is not verified, so older versions are treated as lacking it.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-head-dim-40","num_speculative_tokens":3}'
    ```

    ## Use instead

    Use a drafter whose head_dim and KV heads give a compatible page size,
    or vLLM 0.32+.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Upgrading vLLM is safe; the offered n-gram fallback changes acceptance.

    ## Source

    vllm/v1/core/kv_cache_utils.py (0.32); https://github.com/Tencent/AngelSlim/issues/5
    """

    id = "SD229"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("speculative_config.model",)
    phase = "load"

    @staticmethod
    def _per_token(m: "ModelInfo") -> int | None:
        heads = m.num_key_value_heads or m.num_attention_heads
        hd = m.head_dim or (m.hidden_size // m.num_attention_heads if m.hidden_size and m.num_attention_heads else None)
        return heads * hd if heads and hd else None

    def check(self, ctx):
        if ctx.spec is None or not (needs_drafter_checkpoint(ctx.method) and uses_draft_kv_cache(ctx.method)):
            return
        d, t = ctx.drafter, ctx.target
        if d is None or t is None or d is t or t.use_mla or d.use_mla:
            return
        a, b = self._per_token(t), self._per_token(d)
        if not a or not b or a == b or a % b == 0 or b % a == 0:
            return
        yield self.finding(
            f"Drafter {d.short_name()} stores {b} KV elements per token per layer (KV heads x head_dim "
            f"{d.head_dim}), the target {a} (head_dim {t.head_dim}): neither divides the other, and vLLM {ctx.version} "
            "cannot unify the page sizes into one KV cache (fixed by page padding in 0.32).", fixes=[ngram_fix(ctx)])
