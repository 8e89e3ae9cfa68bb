from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EXTRACT_HIDDEN_STATES


@register
class FlyVerification(Rule):
    r"""FLy verification settings are invalid

    ## What it does

    ``rejection_sample_method=fly``: not with extract_hidden_states; k >= 2;
    ``fly_window_size`` < k. (On 0.32 ``fly`` is not a value at all: SD025.)

    ## Why it matters

    vLLM 0.33 rejects it at config time; FLy is also lossy (warning).

    ## Example

    ``"rejection_sample_method":"fly","num_speculative_tokens":1``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":1,"rejection_sample_method":"fly"}'
    ```

    ## Use instead

    Standard verification unless you measured FLy's quality trade-off.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"fly"}'
    ```

    ## Fix safety

    Standard verification is lossless.

    ## Source

    vllm/config/speculative.py ``_verify_args`` (0.33); docs/vllm-rules.md R076 (F28).
    """

    id = "SD052"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("speculative_config.rejection_sample_method",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.rejection_sample_method != "fly":
            return
        k = ctx.k
        std = Patch(description="Use standard verification", unset=["speculative_config.rejection_sample_method"])
        if ctx.method == EXTRACT_HIDDEN_STATES:
            yield self.finding("FLy verification is incompatible with extract_hidden_states.", fixes=[std])
        elif k is not None and k < 2:
            yield self.finding("FLy requires num_speculative_tokens to be at least 2.", fixes=[std])
        elif k is not None and spec.fly_window_size is not None and spec.fly_window_size >= k:
            yield self.finding(f"fly_window_size ({spec.fly_window_size}) must be smaller than num_speculative_tokens ({k}).",
                               fixes=[Patch(description="Let vLLM choose the window", unset=["speculative_config.fly_window_size"]), std])
