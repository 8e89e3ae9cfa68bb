from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import field_spec

#: closed-Literal SpeculativeConfig keys other rules own (SD040 the method, SD021 the KV dtype)
_OWNED_ELSEWHERE = ("method", "kv_cache_dtype")
#: the sampler keys whose values users swap (docs spell "rejection_sample_method: probabilistic")
_SAMPLERS = ("rejection_sample_method", "draft_sample_method")


@register
class SamplerEnumValue(Rule):
    r"""Sampler option is not an allowed value

    ## What it does

    Every closed ``Literal`` key of the release's ``SpeculativeConfig`` must hold one of that
    release's literals (``constraints.json``, generated from each release): e.g.
    ``rejection_sample_method`` in {strict, probabilistic, synthetic} (0.20), {standard,
    synthetic} (0.21-0.23), {standard, synthetic, block} (0.24-0.32), plus ``fly`` (0.33);
    ``draft_sample_method`` (from 0.21) in {greedy, gumbel} (0.21), {greedy, probabilistic}
    (0.22+); ``draft_lm_head_quantization`` in {fp8, nvfp4} (0.33); ``moe_backend``. A value of
    the other sampler key ("probabilistic" under ``rejection_sample_method`` on 0.22+) is named.

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

    vllm/config/speculative.py Literal fields of every release 0.20-0.33 (``wizard/data/vllm/<X.Y>/constraints.json``,
    scripts/dump_vllm_constraints.py); docs/vllm-rules.md §2.1, R016 (F28). The per-release
    values were a hand list (0.22+'s) until session 2026-12-03, which refused 0.20's
    ``probabilistic`` and 0.21's ``gumbel``.
    """

    id = "SD025"
    severity = Severity.ERROR
    fields = ("speculative_config.rejection_sample_method", "speculative_config.draft_sample_method")
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        given = given_keys(ctx)
        allowed: dict[str, tuple[str, ...]] = {}
        # every closed Literal key given, plus the two sampler keys (a value written under the wrong one
        # is named below), with the release's own literals (constraints.json)
        for key in [*given, *(k for k in _SAMPLERS if k not in given)]:
            if not isinstance(key, str) or key in _OWNED_ELSEWHERE:
                continue
            spec = field_spec("SpeculativeConfig", key, ctx.version)
            if spec is None or not spec.literals or spec.open:
                continue
            if key in given and given[key] is None and "none" in spec.kinds:
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
