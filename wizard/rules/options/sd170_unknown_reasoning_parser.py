from __future__ import annotations

from wizard.rules.helpers import closest
from wizard.rules.optionvalues import option, option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import reasoning_parsers


@register
class UnknownReasoningParser(Rule):
    """Unknown reasoning parser

    ## What it does

    Checks the reasoning parser vLLM looks up against the parsers the checked release registers
    (``ReasoningParserManager``, generated per release into ``checks.json``): ``--reasoning-parser``,
    else the ``reasoning_parser`` key of ``--reasoning-config`` (0.20+; ``--reasoning-parser``
    overwrites it, ``EngineArgs._set_default_reasoning_config_args``). In 0.20-0.27 a
    ``--reasoning-config`` that names no parser is looked up too, as ``''``, unless it sets both
    ``reasoning_start_str`` and ``reasoning_end_str`` (``ReasoningConfig.initialize_token_ids`` tests
    ``reasoning_parser is not None``; 0.28 tests the name's truth).

    ## Why it matters

    vLLM refuses to build the config: "Reasoning parser 'nope' not found. Available parsers:
    deepseek_r1, ...". Parser names change between releases. In 0.20-0.27 ``--reasoning-config '{}'``
    stops the same way: "Reasoning parser '' not found".

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
    0.28-0.33); vllm/config/reasoning.py ``ReasoningConfig.initialize_token_ids`` (0.20.0-0.27.1:
    ``if self.reasoning_parser is not None and (not reasoning_start_str or not reasoning_end_str)``;
    0.28.0: ``if self.reasoning_parser:``), called from ``VllmConfig.__post_init__``; registered names
    per release from ``scripts/dump_vllm_checks.py``. The empty name was found by the schema corpus
    (``benchmarks/conformance_schema.py``, ``reasoning_config:empty_object``, 0.20-0.27).
    """

    id = "SD170"
    severity = Severity.ERROR
    fields = ("reasoning_parser",)
    phase = "config"

    def check(self, ctx):
        name = option(ctx, "reasoning_parser")
        known = reasoning_parsers(ctx.version)
        if not known:
            return
        if not isinstance(name, str) or not name:
            yield from self._from_reasoning_config(ctx, known)
            return
        if name in known:
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

    def _from_reasoning_config(self, ctx, known):
        """The parser ``--reasoning-config`` names (no ``--reasoning-parser`` given)."""
        rc = option(ctx, "reasoning_config")
        if not isinstance(rc, dict) or not ctx.version.at_least("0.20"):
            return
        name = rc.get("reasoning_parser", "")
        if not isinstance(name, str):
            return  # ill-typed: SD010 / the config class's own check
        both = all(isinstance(rc.get(k), str) and rc.get(k) for k in ("reasoning_start_str", "reasoning_end_str"))
        field = f"{option_path(ctx, 'reasoning_config')}.reasoning_parser"
        if name and name not in known:
            near = closest(name, known)
            yield self.finding(
                f"--reasoning-config reasoning_parser={name!r} is not a reasoning parser of vLLM {ctx.version}; vLLM "
                f"rejects it at config time. Available: {', '.join(known)}.",
                fields=[field],
                fixes=[set_option_patch(ctx, "reasoning_parser", near, f"Use --reasoning-parser {near}")] if near else [])
        elif not name and not both and not ctx.version.at_least("0.28"):
            yield self.finding(
                f"--reasoning-config names no reasoning parser and does not set both reasoning_start_str and "
                f"reasoning_end_str: vLLM {ctx.version} looks the parser up by its empty name and stops while building "
                f"the config (\"Reasoning parser '' not found\"; 0.28 skips the lookup). Name the model's parser "
                "(--reasoning-parser), set both strings, or leave --reasoning-config out.",
                fields=[field],
                fixes=[set_option_patch(ctx, "reasoning_config", None, "Remove --reasoning-config")])
