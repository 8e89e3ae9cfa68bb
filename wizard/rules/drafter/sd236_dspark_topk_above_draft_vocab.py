from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DSPARK
from wizard.vllm.versions import spec_fields


@register
class DsparkTopkAboveDraftVocab(Rule):
    r"""dspark_draft_topk larger than the DSpark drafter's vocabulary

    ## What it does

    With method ``dspark``, flags ``speculative_config.dspark_draft_topk`` above the draft
    vocabulary: the drafter config's ``draft_vocab_size``, else its ``vocab_size`` (the value
    vLLM compares with). Releases whose ``SpeculativeConfig`` has the field (0.28+) check it.

    ## Why it matters

    vLLM refuses the configuration when it builds the draft config: "dspark_draft_topk must be
    between 1 and the draft vocabulary size (151936)".

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dspark","model":"deepseek-ai/dspark_qwen3_8b_block7","num_speculative_tokens":7,"dspark_draft_topk":999999999}'
    ```

    ## Use instead

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dspark","model":"deepseek-ai/dspark_qwen3_8b_block7","num_speculative_tokens":7,"dspark_draft_topk":8}'
    ```

    ## Fix safety

    Removing the key uses the drafter config's own ``dspark_draft_topk`` (or none): safe.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.28.0 L1093-1107, 0.29-0.31 the same check, 0.32
    L1527, 0.33 L1658); 0.34 v1/worker/gpu/spec_decode/dspark/config.py L90-101.
    """

    id = "SD236"
    severity = Severity.ERROR
    fields = ("speculative_config.dspark_draft_topk",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method != DSPARK or "dspark_draft_topk" not in spec_fields(ctx.version):
            return
        topk = spec.dspark_draft_topk
        d = ctx.view.drafter
        if not isinstance(topk, int) or isinstance(topk, bool) or topk < 1 or d is None:
            return
        vocab = d.draft_vocab_size or d.vocab_size
        if not vocab or topk <= vocab:
            return
        yield self.finding(
            f"dspark_draft_topk must be between 1 and the draft vocabulary size ({vocab}); it is {topk}.",
            fixes=[Patch(description="Remove dspark_draft_topk (the drafter config's own applies)",
                         unset=["speculative_config.dspark_draft_topk"])])
