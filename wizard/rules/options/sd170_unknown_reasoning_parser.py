from __future__ import annotations

from wizard.rules.helpers import closest
from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import reasoning_parsers


@register
class UnknownReasoningParser(Rule):
    """Unknown reasoning parser

    ## What it does

    Checks ``--reasoning-parser`` against the parsers the checked release registers
    (``ReasoningParserManager``, generated per release into ``checks.json``).

    ## Why it matters

    vLLM refuses to build the config: "Reasoning parser 'nope' not found. Available parsers:
    deepseek_r1, ...". Parser names change between releases.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --reasoning-parser qwen
    ```

    ## Use instead

    ```sh
    vllm serve Qwen/Qwen3-8B --reasoning-parser qwen3
    ```

    ## Fix safety

    The nearest registered name when there is one (check it is the model's format), else the
    option is dropped (no reasoning extraction: the reasoning stays in the content).

    ## Source

    vllm/reasoning/abs_reasoning_parsers.py ``ReasoningParserManager.get_reasoning_parser``
    (called from vllm/config/structured_outputs.py / vllm/engine/arg_utils.py at config time,
    0.28-0.33); registered names per release from ``scripts/dump_vllm_checks.py``.
    """

    id = "SD170"
    severity = Severity.ERROR
    fields = ("reasoning_parser",)
    phase = "config"

    def check(self, ctx):
        name = option(ctx, "reasoning_parser")
        known = reasoning_parsers(ctx.version)
        if not isinstance(name, str) or not name or not known or name in known:
            return
        fixes = []
        near = closest(name, known)
        if near:
            fixes.append(set_option_patch(ctx, "reasoning_parser", near, f"Use --reasoning-parser {near}"))
        fixes.append(set_option_patch(ctx, "reasoning_parser", None, "Drop --reasoning-parser"))
        yield self.finding(
            f"reasoning_parser={name!r} is not a reasoning parser of vLLM {ctx.version}; vLLM rejects it at config time. "
            f"Available: {', '.join(known)}.",
            fixes=fixes)
