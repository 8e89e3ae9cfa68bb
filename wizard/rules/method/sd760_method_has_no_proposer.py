from __future__ import annotations

from wizard.mechanisms import apply as A
from wizard.fixes import ngram_fallback
from wizard.rules.helpers import unregistered_drafter
from wizard.rules.registry import Rule, Severity, register


@register
class MethodHasNoProposer(Rule):
    r"""The method passes config validation but this release's engine has no proposer for it

    ## What it does

    Follows the resolved method through the release's model-runner choice and proposer chain
    (``wizard.mechanisms.method_support.route``, generated per release from the V1
    ``gpu_model_runner.py`` ``if/elif`` chain and the V2 speculator factory): a method that
    ``SpeculativeConfig`` accepts -- explicitly or auto-detected from the drafter's
    ``model_type`` -- but that reaches the chain's ``else: raise`` branch in the runner vLLM
    picks. Only for a drafter whose architecture the release's model registry resolves: one it
    does not (the MLP speculator's ``MLPSpeculatorPreTrainedModel`` on 0.11-0.32) fails earlier, at
    config time, which SD761 reports instead.

    ## Why it matters

    Config validation passes, the target loads (minutes for a large model), and then engine
    start-up dies with ``ValueError: Unknown speculative decoding method: ...``: nothing is
    served.

    ## Example

    ``mlp_speculator``, still an accepted ``method`` value in 0.28-0.32, with no V1 branch and no
    V2 speculator that builds it, here with a drafter whose architecture is registered (a Llama
    checkpoint; IBM's own ``MLPSpeculatorPreTrainedModel`` is not, SD761):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"mlp_speculator","model":"./sd760-llama-drafter"}'
    ```

    ## Use instead

    A method the release's engine routes (EAGLE-3, draft_model, n-gram):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Changes the speculative method: acceptance and speed differ; output is the same.

    ## Source

    vllm/v1/worker/gpu_model_runner.py (proposer chain, ``Unknown speculative decoding method``)
    and vllm/v1/worker/gpu/spec_decode/__init__.py (V2 factory), 0.28-0.33, generated into
    wizard/data/vllm/<X.Y>/proposers.json; 0.33 removes ``mlp_speculator`` and ``medusa`` from the
    accepted values (that is SD013). The registry check before it: vllm/model_executor/models/registry.py
    (0.32 L706: the ``MLPSpeculatorPreTrainedModel`` entry commented out), per release in
    wizard/data/vllm/history/registered_archs.json.
    """

    id = "SD760"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "load"

    def check(self, ctx):
        r = A.route(ctx)
        if r is None or not r.accepted or r.stage != "proposer" or not r.error:
            return
        if unregistered_drafter(ctx) is not None:
            return  # the drafter's architecture is not registered: config time fails first (SD761)
        yield self.finding(
            f"vLLM {ctx.version}{'' if str(ctx.version) == r.release else f' (by the tables of {r.release})'} accepts "
            f"speculative_config.method {r.method!r}, but its Model Runner {r.runner.upper()} "
            f"has no proposer for it: engine start-up fails with '{r.error}' after the target has loaded.",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (a method this release routes)")])
