from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import NGRAM, NGRAM_MODEL_NAMES, added_in, allowed_methods, removed_in, traits


@register
class MethodNotAllowed(Rule):
    r"""Unknown speculative method for this vLLM version

    ## What it does

    Checks the value against ``SpeculativeMethod`` of the selected version
    (case-sensitive). 0.33 removed ``medusa`` and ``mlp_speculator`` and added ``step5_mtp``.
    ``[ngram]`` is valid only as ``model``, never as ``method``.

    ## Why it matters

    pydantic rejects it: ``Input should be 'ngram', 'draft_model', ...``.

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

    vllm/config/speculative.py ``SpeculativeMethod`` Literal (0.32, 0.33);
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
        removed = ""
        if removed_in(m):
            removed = f" (removed in {removed_in(m)})"
        elif added_in(m):
            removed = f" (added in {added_in(m)})"
        yield self.finding(
            f"speculative_config.method={m!r} is not a method of vLLM {ctx.version}{removed}; "
            f"vLLM fails with 'Input should be ...'." + (f" Did you mean '{best}'?" if best else ""),
            fixes=fixes,
        )
