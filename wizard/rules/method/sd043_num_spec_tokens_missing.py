from __future__ import annotations

from wizard import resolve
from wizard.config import Patch
from wizard.rules.helpers import given_keys, raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import redetects_explicit_method, CUSTOM_CLASS, DSPARK, MTP, SUFFIX, is_allowed, needs_drafter_checkpoint


@register
class NumSpecTokensMissing(Rule):
    r"""num_speculative_tokens is required

    ## What it does

    Without k, vLLM takes it from the drafter's ``n_predict`` (MTP-rewritten
    configs, Medusa/MLP speculators), DSpark's ``block_size`` or suffix decoding's default.
    Otherwise (n-gram, EAGLE, draft model, ``mtp`` without ``model``) it is an error. The MTP
    case *with* a model is SD061 (a different vLLM failure). A speculators-format drafter
    passed as ``speculative_config.model`` does not supply k: its
    ``speculators_config.proposal_methods[0].speculative_tokens`` is read only when the
    speculator itself is ``--model`` (0.10-0.32; vllm-project/vllm PR #44566, open).

    ## Why it matters

    vLLM raises (0.34 with a draft checkpoint: "A speculative model was provided, but
    `num_speculative_tokens` was not provided", v1/worker/gpu/spec_decode/speculator_config.py
    L223-227) ``num_speculative_tokens must be provided with speculative
    model unless the draft model config contains an n_predict parameter``.

    ## Example

    ``{"method":"ngram"}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","prompt_lookup_max":4}'
    ```

    ## Use instead

    Always set ``num_speculative_tokens`` (3-5 for EAGLE-3, 1-2 for MTP).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","prompt_lookup_max":4,"num_speculative_tokens":3}'
    ```

    ## Fix safety

    Adds k; the value is a starting point to tune.

    ## Source

    vllm/config/speculative.py ``_verify_args`` and the n_predict block (0.32 L1502,
    0.33 L1612); docs/vllm-rules.md R025 (E04, E16, E37, E41).
    """

    id = "SD043"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or "num_speculative_tokens" in given_keys(ctx):
            return
        m = raw_method(ctx)
        if not is_allowed(m, ctx.version) and m != MTP:
            return
        if m == SUFFIX:
            return
        if m == CUSTOM_CLASS:
            default = 3
        elif spec.model is None:
            if needs_drafter_checkpoint(m):
                return  # SD044 reports a drafter method without model and k
            default = 1 if m == MTP else 3
        else:
            if ctx.method == MTP or resolve.mtp_rewrite(ctx.drafter) is not None:
                return  # SD061 (TypeError) covers MTP drafters
            if ctx.drafter is None:
                return  # unknown drafter: it may carry n_predict
            if ctx.method == DSPARK:
                if ctx.drafter.draft_block_size:
                    return
            if ctx.drafter.draft_n_predict:  # a speculators draft's own count is not read here (PR #44566)
                return
            default = 3
        said = ("A speculative model was provided, but `num_speculative_tokens` was not provided"
                if spec.model is not None and not redetects_explicit_method(ctx.version)  # 0.34 speculator_config.py:223-227
                else "num_speculative_tokens must be provided")
        yield self.finding(
            f"speculative_config.num_speculative_tokens is missing and method '{ctx.method or m}' has no "
            f"default: vLLM fails with '{said}'.",
            fixes=[Patch(description=f"Set num_speculative_tokens={default}",
                         set={"speculative_config.num_speculative_tokens": default})],
        )
