from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys, speculator_options
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import method_specific_options


@register
class OptionNotSupportedBySpeculator(Rule):
    r"""A method-specific option the speculator does not take (0.34)

    ## What it does

    From vLLM 0.34 the options ``dspark_draft_topk``, ``draft_lm_head_quantization``,
    ``index_share_for_mtp_iteration``, ``xpress_topc`` and ``speculator_options`` are checked
    in one place against the ``supported_options`` of the speculator the method and drafter
    select: eagle/eagle3 take ``draft_lm_head_quantization``; mtp also
    ``index_share_for_mtp_iteration`` (the Gemma 4 MTP drafter only that one); dspark
    ``dspark_draft_topk`` and ``draft_lm_head_quantization``; dflash with an XPress drafter
    ``xpress_topc``; dflash, draft_model, ngram, ngram_gpu, suffix and extract_hidden_states
    none (``speculator_options`` is for plugin-registered speculators). Flags each option set
    that the speculator does not take. On 0.33 and older the per-option rules apply (SD049,
    SD053, SD055).

    ## Why it matters

    vLLM 0.34 raises ``{option} is not supported with speculative method '{method}'.`` at
    config time, before anything loads. Several of these were accepted by 0.33 for the same
    method where the option was silently ignored (e.g. ``dspark_draft_topk`` with ngram).

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"xpress_topc":4}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the speculator would not read the option.

    ## Source

    vllm/config/speculative.py:1394-1401 (``_METHOD_SPECIFIC_OPTIONS`` speculative.py:109-115)
    and the ``supported_options`` of v1/worker/gpu/spec_decode/{eagle/config.py:37,
    mtp/config.py:21, gemma4/config.py:11, dspark/config.py:25, xpress/config.py:11,
    speculator_config.py:41} (0.34).
    """

    id = "SD058"
    severity = Severity.ERROR
    versions = ">=0.34"
    fields = ("speculative_config",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        options = method_specific_options(ctx.version)
        if spec is None or not options:
            return
        given = given_keys(ctx)
        set_options = [o for o in options if given.get(o) is not None]
        if not set_options:
            return
        method = ctx.method
        ok = speculator_options(ctx)
        if ok is None:
            return  # vLLM stops before building a speculator: SD040 / SD042 / SD044
        for option in set_options:
            if option in ok:
                continue
            yield self.finding(
                f"{option} is not supported with speculative method {method!r}. vLLM {ctx.version} refuses the "
                "config at startup (this speculator takes "
                + (f"only {', '.join(sorted(ok))})." if ok else "none of the method-specific options)."),
                fields=[f"speculative_config.{option}"],
                fixes=[Patch(description=f"Remove {option}", unset=[f"speculative_config.{option}"])])
