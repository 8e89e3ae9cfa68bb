from __future__ import annotations

from wizard.rules.helpers import eagle_drafter, tensor_shape
from wizard.rules.registry import Rule, Severity, register


@register
class DrafterOwnEmbedTokens(Rule):
    r"""EAGLE drafter has its own embed_tokens (used instead of the target's)

    ## What it does

    Detects ``embed_tokens`` in the drafter's safetensors and says what the
    selected vLLM does: it shares the target's embedding only when the drafter has none or the
    weights are identical (``torch.equal``); otherwise it keeps the drafter's.

    ## Why it matters

    Exporters that save an untrained (random) or stale embedding produce a
    drafter that loads fine and is almost never accepted (TorchSpec#38: poor acceptance; SGLang
    was unaffected because it always uses the target's).

    ## Example

    A converted EAGLE3 drafter with a random ``embed_tokens.weight``.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-own-embed","num_speculative_tokens":3}'
    ```

    ## Use instead

    Export the drafter without ``embed_tokens`` (vLLM then shares the
    target's), or copy the target's embedding into it.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Re-exporting the checkpoint is outside the serve config: no automatic fix.

    ## Source

    docs/vllm-rules.md R124 (V1 ``_maybe_share_embeddings``, V2
    ``maybe_share_target_embed``, 0.32/0.33); https://github.com/lightseekorg/TorchSpec/issues/38
    """

    id = "SD220"
    severity = Severity.WARNING
    fields = ("speculative_config.model",)
    phase = "run"

    def check(self, ctx):
        d = eagle_drafter(ctx)
        if d is None or d.has_embed_tokens is not True:
            return
        t = ctx.target
        shape = tensor_shape(d, "embed_tokens.weight")
        tshape = [t.vocab_size, t.hidden_size] if t is not None and t.vocab_size and t.hidden_size else None
        if shape and tshape and shape != tshape:
            detail = (f"its shape {shape} differs from the target's [{tshape[0]}, {tshape[1]}], so vLLM {ctx.version} "
                      "cannot share and uses the drafter's embedding")
        else:
            detail = (f"vLLM {ctx.version} uses it instead of the target's unless the weights are byte-identical "
                      "(torch.equal); the log then says 'Detected EAGLE model with distinct embed_tokens weights'")
        yield self.finding(
            f"Drafter {d.short_name()} ships embed_tokens: {detail}. If the exporter saved untrained or random "
            "embeddings, acceptance collapses with no error (TorchSpec#38). Re-export without embed_tokens "
            "(vLLM then shares the target's) or copy the target's embedding, and check the acceptance rate.",
        )
