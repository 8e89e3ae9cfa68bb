from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE, EAGLE3


@register
class EagleMethodWithEagle3Drafter(Rule):
    r"""method eagle with an EAGLE3 drafter

    ## What it does

    Flags method ``eagle`` (EAGLE-1) when the drafter's architecture (or its
    speculators config) is EAGLE3.

    ## Why it matters

    An explicit ``eagle`` is not re-detected (R026), so the target does not
    capture aux hidden states, the drafter's fc projection is skipped and acceptance length is
    exactly 1.0 — slower than no speculation (SGLang#21272, same trap).

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the drafter is used as trained.

    ## Source

    https://github.com/sgl-project/sglang/pull/21272 (translated); docs/vllm-rules.md R026/R032.
    """

    id = "SD227"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != EAGLE:
            return
        d = ctx.drafter
        if d is None or d is ctx.target:
            return
        smt = d.speculators_model_type
        if any(EAGLE3 in a.lower() for a in d.architectures) or smt.lower() in (EAGLE3, "peagle"):
            yield self.finding(
                f"method 'eagle' but drafter {d.short_name()} is an EAGLE3 model ({', '.join(d.architectures) or smt}): "
                "its aux hidden states are never captured, acceptance length stays 1.0.",
                fixes=[Patch(description="Use method eagle3", set={"speculative_config.method": EAGLE3})])
