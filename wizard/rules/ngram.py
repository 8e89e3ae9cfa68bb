"""n-gram (prompt lookup) speculation at config time (docs/vllm-rules.md R062, R070)."""

from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import use_ngram
from wizard.rules.spec_fields import given_keys

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"


def _sc(**kw) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


@register
class NgramLookupBounds(Rule):
    """SD070 — ``prompt_lookup_min`` greater than ``prompt_lookup_max`` (R070).

    **What it does.** For ngram / ngram_gpu: an error when min > max (after vLLM copies a single
    given bound into the other); an info when only one bound is given, because vLLM then sets
    both to the same value (``prompt_lookup_max: 3`` alone means min = max = 3).

    **Why it matters.** vLLM raises ``prompt_lookup_min=5 must be <= prompt_lookup_max=2``; the
    silent copy surprises users who expected vLLM's default on the other side.

    **Anti-pattern.** ``{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":5,"prompt_lookup_max":2}``

    **Best practice.** Give both bounds, e.g. min 2, max 5.

    **Fix safety.** Safe: swaps/aligns the bounds the user wrote.

    Source: vllm/config/speculative.py ``__post_init__`` n-gram block (0.32, 0.33);
    docs/vllm-rules.md R070 (E01-E03, F11).
    """

    id = "SD070"
    title = "n-gram lookup bounds are inconsistent"
    severity = Severity.ERROR
    fields = ("speculative_config.prompt_lookup_min", "speculative_config.prompt_lookup_max")
    topic = "ngram"
    phase = "config"
    why = "vLLM requires prompt_lookup_min <= prompt_lookup_max."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, prompt_lookup_min=5, prompt_lookup_max=2)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, prompt_lookup_min=2, prompt_lookup_max=5)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R070"
    fix_safety = "Safe."

    def check(self, ctx):
        if ctx.spec is None or not use_ngram(ctx.method):
            return
        g = given_keys(ctx)
        lo, hi = g.get("prompt_lookup_min"), g.get("prompt_lookup_max")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (x for x in (lo, hi) if x is not None)):
            return  # SD022 reports bad values
        if lo is not None and hi is not None:
            if lo > hi:
                yield self.finding(
                    f"prompt_lookup_min={lo} must be <= prompt_lookup_max={hi}: vLLM rejects it at config time.",
                    fixes=[Patch(description=f"Swap them (min {hi}, max {lo})",
                                 set={"speculative_config.prompt_lookup_min": hi, "speculative_config.prompt_lookup_max": lo}),
                           Patch(description=f"Set prompt_lookup_min={hi}", set={"speculative_config.prompt_lookup_min": hi})],
                )
            return
        if lo is None and hi is None:
            return
        given, other, v = ("prompt_lookup_max", "prompt_lookup_min", hi) if hi is not None else ("prompt_lookup_min", "prompt_lookup_max", lo)
        yield self.finding(
            f"Only {given}={v} is given: vLLM sets {other}={v} too (not its default of 5), so n-grams of exactly {v} tokens are matched.",
            fields=[f"speculative_config.{other}"],
            severity=Severity.INFO,
            title="n-gram: one lookup bound copies the other",
        )


@register
class NgramIgnoredKeys(Rule):
    """SD071 — drafter options that n-gram speculation ignores (R062).

    **What it does.** With method ngram / ngram_gpu, ``max_model_len``, ``draft_tensor_parallel_size``,
    ``kv_cache_dtype``, ``quantization``, ``attention_backend`` and ``revision`` in
    ``speculative_config`` have no effect (there is no drafter model).

    **Why it matters.** vLLM accepts them silently; the user believes e.g. the draft KV dtype or
    length limit is applied.

    **Anti-pattern.** ``{"method":"ngram","num_speculative_tokens":3,"max_model_len":4096}``

    **Best practice.** Remove them.

    **Fix safety.** Safe: vLLM ignores them anyway.

    Source: vllm/config/speculative.py ``__post_init__`` (ngram branch reuses the target config),
    0.32 and 0.33; docs/vllm-rules.md R062 (G09, G10, F17).
    """

    id = "SD071"
    title = "Option ignored by n-gram speculation"
    severity = Severity.WARNING
    fields = ("speculative_config",)
    topic = "ngram"
    phase = "config"
    why = "n-gram has no drafter model, so drafter options do nothing."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, max_model_len=4096)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R062"
    fix_safety = "Safe."

    _KEYS = ("max_model_len", "draft_tensor_parallel_size", "kv_cache_dtype", "quantization", "attention_backend",
             "revision", "code_revision", "moe_backend")

    def check(self, ctx):
        if ctx.spec is None or not use_ngram(ctx.method):
            return
        g = given_keys(ctx)
        keys = [k for k in self._KEYS if k in g]
        if not keys:
            return
        paths = [f"speculative_config.{k}" for k in keys]
        yield self.finding(
            f"{', '.join(keys)} in speculative_config {'is' if len(keys) == 1 else 'are'} ignored by "
            f"{ctx.method} speculation (there is no drafter model).",
            fields=paths,
            fixes=[Patch(description="Remove the ignored keys", unset=paths)],
        )
