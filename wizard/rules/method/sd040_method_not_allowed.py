from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.fixes import ngram_fallback
from wizard.paths import is_local_path
from wizard.resolve import is_custom_proposer_path
from wizard.vllm.constraints import field_spec
from wizard.vllm.methods import (CUSTOM_CLASS, NGRAM, NGRAM_MODEL_NAMES, added_in, allowed_methods, infers_custom_class,
                                 removed_in, traits)


def _open_method(version) -> bool:
    """``method`` is ``SpeculativeMethod | str | None`` with the ``_validate_method`` validator
    (0.34, vllm/config/speculative.py:461, :1625-1634): plugin-registered names pass, others get
    "Unknown speculative method ..."; before, a pydantic Literal ("Input should be ...")."""
    f = field_spec("SpeculativeConfig", "method", version)
    return bool(f is not None and f.open and "_validate_method" in f.validators)


@register
class MethodNotAllowed(Rule):
    r"""Unknown speculative method for this vLLM version

    ## What it does

    Checks the value against ``SpeculativeMethod`` of the selected version
    (case-sensitive). 0.33 removed ``medusa`` and ``mlp_speculator`` and added ``step5_mtp``.
    ``[ngram]`` is valid only as ``model``, never as ``method``. 0.34 removed ``custom_class``
    and its inference: a dotted import path as ``model`` without a method is flagged too.

    ## Why it matters

    pydantic rejects it: ``Input should be 'ngram', 'draft_model', ...``. From 0.34 the field
    also takes plugin-registered names, and vLLM says ``Unknown speculative method 'X'. Built-in
    methods: [...]; registered custom methods: [...]``; a dotted ``model`` fails with ``Invalid
    repository ID or local directory specified``.

    ## Example

    ``"method": "EAGLE3"``, ``"eagle2"``, ``"lookahead"``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"EAGLE3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Lower-case names from docs/vllm-rules.md §2.1.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Lower-casing is safe; a different method changes acceptance.

    ## Source

    vllm/config/speculative.py ``SpeculativeMethod`` Literal (0.32, 0.33); 0.34
    ``_validate_method`` (vllm/config/speculative.py:1625-1634, field :461);
    docs/vllm-rules.md R010 (E12, F04, F31, E69).
    """

    id = "SD040"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        m = given_keys(ctx).get("method")
        if m is None:
            yield from self._dotted_model(ctx)
            return
        allowed = allowed_methods(ctx.version)
        if isinstance(m, str) and m in allowed:
            return
        s = str(m)
        known = traits(s)
        fixes = []
        if s in NGRAM_MODEL_NAMES:
            best = NGRAM
        elif s.lower() in allowed:
            best = s.lower()
        elif known is not None:
            best = None
        else:
            best = closest(s, allowed)
        if best:
            fixes.append(Patch(description=f"Use method {best}", set={"speculative_config.method": best}))
        if ctx.spec.model:
            fixes.append(Patch(description="Remove method (vLLM infers it from the drafter)", unset=["speculative_config.method"]))
        if not fixes:  # '' or a name close to nothing, without a drafter: a method that needs none
            fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation (needs no drafter model)"))
        removed = ""
        if removed_in(m):
            removed = f" (removed in {removed_in(m)})"
        elif added_in(m):
            removed = f" (added in {added_in(m)})"
        if _open_method(ctx.version):
            fails = (f"vLLM fails with 'Unknown speculative method {s!r}. Built-in methods: [...]; registered custom "
                     "methods: [].' unless a plugin registers it (register_speculative_method)")
        else:
            fails = "vLLM fails with 'Input should be ...'"
        yield self.finding(
            f"speculative_config.method={m!r} is not a method of vLLM {ctx.version}{removed}; "
            f"{fails}." + (f" Did you mean '{best}'?" if best else ""),
            fixes=fixes,
        )

    def _dotted_model(self, ctx):
        """0.34: no method and a dotted import path as ``model`` no longer means custom_class
        (0.33 ``_is_custom_proposer_path``, removed with the method): vLLM reads it as a checkpoint."""
        model = ctx.spec.model
        if (infers_custom_class(ctx.version) or removed_in(CUSTOM_CLASS) is None or not is_custom_proposer_path(model)
                or is_local_path(model)):
            return
        yield self.finding(
            f"speculative_config.model={model!r} is a dotted import path without a method: vLLM "
            f"{ctx.version} removed custom_class (removed in {removed_in(CUSTOM_CLASS)}) and no longer infers it, "
            f"so it loads {model!r} as a draft checkpoint and fails with 'Invalid repository ID or local directory "
            f"specified: {model!r}'. Custom proposers are now plugin-registered methods "
            "(register_speculative_method, v1/worker/gpu/spec_decode/speculator_config.py:317).",
            fields=["speculative_config.model"],
            fixes=[ngram_fallback(ctx.spec.num_speculative_tokens, "Use n-gram speculation instead (no drafter checkpoint)")])
