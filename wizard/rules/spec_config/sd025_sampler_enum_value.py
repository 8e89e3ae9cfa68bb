from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import field_spec

#: closed-Literal SpeculativeConfig keys other rules own (SD040 the method, SD021 the KV dtype)
_OWNED_ELSEWHERE = ("method", "kv_cache_dtype")


@register
class SamplerEnumValue(Rule):
    r"""Sampler option is not an allowed value

    ## What it does

    ``rejection_sample_method`` in {standard, synthetic, block} (0.33 adds
    ``fly``); ``draft_sample_method`` in {greedy, probabilistic}; on 0.33
    ``draft_lm_head_quantization`` in {fp8, nvfp4}; every other closed ``Literal`` key of the
    release's ``SpeculativeConfig`` (``constraints.json``, e.g. ``moe_backend``) in its literals.

    ## Why it matters

    These are Literal fields: pydantic rejects any other string.

    ## Example

    ``"rejection_sample_method": "typical"`` (a removed V0 sampler).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"typical"}'
    ```

    ## Use instead

    Leave them unset (standard / greedy) unless you benchmark alternatives.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"standard"}'
    ```

    ## Fix safety

    The default (standard, greedy) is lossless; it may change acceptance.

    ## Source

    vllm/config/speculative.py Literal fields (0.32, 0.33); docs/vllm-rules.md §2.1, R016 (F28).
    """

    id = "SD025"
    severity = Severity.ERROR
    fields = ("speculative_config.rejection_sample_method", "speculative_config.draft_sample_method")
    topic = "spec_fields"
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        given = given_keys(ctx)
        allowed = {
            "rejection_sample_method": ("standard", "synthetic", "block") + (("fly",) if ctx.version.at_least("0.33") else ()),
            "draft_sample_method": ("greedy", "probabilistic"),
        }
        if ctx.version.at_least("0.33"):
            allowed["draft_lm_head_quantization"] = ("fp8", "nvfp4")
        for key in given:
            spec = field_spec("SpeculativeConfig", key, ctx.version) if isinstance(key, str) else None
            if key in allowed or key in _OWNED_ELSEWHERE or spec is None or not spec.literals or spec.open:
                continue
            if given[key] is None and "none" in spec.kinds:
                continue
            if all(isinstance(x, str) for x in spec.literals):
                allowed[key] = tuple(spec.literals)
        for key, opts in allowed.items():
            if key not in given or given[key] in opts:
                continue
            path = f"speculative_config.{key}"
            near = closest(given[key], opts)
            fixes = []
            # the value of a sibling field written under this key (docs spell "rejection_sample_method:
            # probabilistic", the draft sampler's value): name the key that takes it
            other = next((k2 for k2, o2 in allowed.items() if k2 != key and k2 not in given and given[key] in o2), None)
            hint = ""
            if other:
                hint = f" ({given[key]!r} is a value of {other}: did you mean {other}?)"
                fixes.append(Patch(description=f"Move it to {other}", set={f"speculative_config.{other}": given[key]},
                                   unset=[path]))
            if near:
                fixes.append(Patch(description=f"Use {near}", set={path: near}))
            fixes.append(Patch(description=f"Remove {key} (vLLM's default)", unset=[path]))
            yield self.finding(
                f"{path}={given[key]!r} is not allowed by vLLM {ctx.version}; use one of {', '.join(opts)}{hint}.",
                fields=[path],
                fixes=fixes,
            )
