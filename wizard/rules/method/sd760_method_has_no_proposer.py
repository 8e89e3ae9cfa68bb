from __future__ import annotations

from wizard.mechanisms import apply as A
from wizard.fixes import ngram_fallback
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
    picks.

    ## Why it matters

    Config validation passes, the target loads (minutes for a large model), and then engine
    start-up dies with ``ValueError: Unknown speculative decoding method: ...``: nothing is
    served.

    ## Example

    IBM's MLP speculator: still an accepted ``method`` value in 0.28-0.32, but no V1 branch and no
    V2 speculator builds it:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"mlp_speculator","model":"./sd760-mlp-speculator"}'
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
    accepted values (that is SD013).
    """

    id = "SD760"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    phase = "load"

    def check(self, ctx):
        r = A.route(ctx)
        if r is None or not r.accepted or r.stage != "proposer" or not r.error:
            return
        yield self.finding(
            f"vLLM {ctx.version}{'' if str(ctx.version) == r.release else f' (by the tables of {r.release})'} accepts "
            f"speculative_config.method {r.method!r}, but its Model Runner {r.runner.upper()} "
            f"has no proposer for it: engine start-up fails with '{r.error}' after the target has loaded.",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (a method this release routes)")])
