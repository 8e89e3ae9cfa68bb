from __future__ import annotations

from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import arch_prefix


@register
class DrafterMissingArchitectures(Rule):
    r"""Drafter config.json has no architectures

    ## What it does

    Flags an EAGLE/EAGLE3/DFlash drafter whose config.json was read and has no
    (or an empty) ``architectures`` list.

    ## Why it matters

    vLLM falls back to the Hugging Face default and renames it
    (``EagleLlamaModel``), which is not a registered class: "Model architectures [...] are not
    supported".

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-architectures","num_speculative_tokens":3}'
    ```

    ## Use instead

    Add the architecture, e.g. ``["LlamaForCausalLMEagle3"]``.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    The real fix is in the drafter's config.json; the offered n-gram fallback changes acceptance.

    ## Source

    https://github.com/vllm-project/vllm/pull/30987; docs/vllm-rules.md R032.
    """

    id = "SD226"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or arch_prefix(ctx.method) is None:
            return
        d = ctx.drafter
        if d is None or d is ctx.target or not d.has_config or d.speculators_config:
            return
        if d.architectures:
            return
        yield self.finding(
            f"Drafter {d.short_name()} has no 'architectures' in config.json: vLLM falls back to a default class name "
            "that is not registered ('Model architectures [...] are not supported'). Add e.g. "
            "\"architectures\": [\"LlamaForCausalLMEagle3\"] to the drafter's config.json.", fixes=[ngram_fix(ctx)])
