from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_allowed, parallel_drafting_methods

_UNSET = Patch(description="Remove parallel_drafting (deprecated, no effect)", unset=["speculative_config.parallel_drafting"])


@register
class ParallelDraftingRemoved(Rule):
    r"""parallel_drafting with a method that no longer drafts in parallel (0.34: P-EAGLE and PARD removed)

    ## What it does

    From vLLM 0.34 ``speculative_config.parallel_drafting`` is a deprecated key with no effect:
    dflash and dspark always draft in parallel, and P-EAGLE (eagle/eagle3) and PARD
    (draft_model) are gone. ``true`` with any other method is an error; ``false``, or ``true``
    with dflash/dspark, is accepted with a deprecation warning (INFO). Which methods accept it is
    read per release (:func:`wizard.vllm.methods.parallel_drafting_methods`: the field became
    ``bool | None`` in the release that removed them); up to 0.33 SD231 covers parallel drafting.

    ## Why it matters

    A 0.33 P-EAGLE or PARD command stops at config time on 0.34: "parallel_drafting is only
    supported by the dflash and dspark methods, not 'eagle3'."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"parallel_drafting":true}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Dropping the key drafts sequentially, which is what the method does on 0.34 anyway: safe.

    ## Source

    vllm/config/speculative.py 0.34 L1689-1699 (``_verify_args``; the field became
    ``bool | None = None``, L559).
    """

    id = "SD235"
    severity = Severity.ERROR
    fields = ("speculative_config.parallel_drafting",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.parallel_drafting is None:
            return
        allowed = parallel_drafting_methods(ctx.version)
        method = ctx.method
        if allowed is None or not is_allowed(method, ctx.version):
            return
        if spec.parallel_drafting and method not in allowed:
            yield self.finding(
                f"parallel_drafting is only supported by the dflash and dspark methods, not {method!r}. "
                f"vLLM {ctx.version} removed P-EAGLE and PARD (parallel drafting for eagle/eagle3/draft_model): "
                "it refuses the config at startup.",
                fixes=[Patch(description="Draft sequentially (drop parallel_drafting)",
                             unset=["speculative_config.parallel_drafting"])])
            return
        yield self.finding(
            f"parallel_drafting is deprecated and has no effect in vLLM {ctx.version}: dflash and dspark always "
            "draft in parallel, and no other method supports it. Remove the key.",
            severity=Severity.INFO, fixes=[_UNSET])
