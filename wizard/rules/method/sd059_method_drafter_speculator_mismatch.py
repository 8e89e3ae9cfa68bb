from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import dspark_archs, declared_speculator, has_no_model, is_allowed


@register
class MethodDrafterSpeculatorMismatch(Rule):
    r"""The written method does not match the speculator the drafter declares (0.34)

    ## What it does

    From vLLM 0.34 a drafter's model class may declare its speculator
    (``speculator_config_class``): DFlash, DFlash2, XPress, LiLiCorr, Muse Glimmer and Laguna
    DFlash drafters declare dflash; Qwen3 / Qwen3-Omni / Kimi-K3 / Mistral-Large-4 DSpark
    drafters dspark; the Gemma 4 MTP drafter mtp. When ``method`` is written and differs from
    the declared one, vLLM stops. (With ``method`` unset vLLM takes the declared one; before 0.34
    an explicit ``draft_model`` was re-detected instead, SD045.)

    ## Why it matters

    vLLM 0.34 raises ``speculative_config requested method='X', but the draft model '...' is a
    'Y' checkpoint (model_type=..., architectures=[...]). Pass a matching method or a matching
    draft checkpoint. Use method='Y' if that is what you intended.`` at config time. On 0.33 the
    same command ran (``draft_model`` was silently switched to the checkpoint's method).

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"draft_model","model":"./tiny-dflash-sd059","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"dflash","model":"./tiny-dflash-sd059","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Writing the declared method is what the checkpoint was trained for (and what 0.33 ran for
    ``draft_model``); check the drafter is the one you meant.

    ## Source

    vllm/v1/worker/gpu/spec_decode/speculator_config.py:401-438 (``_resolve_checkpoint_config_class``,
    message :418) with the declaring model classes (model_executor/models/registry.py:686-754);
    vLLM 0.34.
    """

    id = "SD059"
    severity = Severity.ERROR
    versions = ">=0.34"
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.method is None or spec.model is None:
            return  # unset: vLLM takes the declared speculator
        method = ctx.method
        if not is_allowed(method, ctx.version) or has_no_model(method):
            return
        d = ctx.drafter
        if d is None or d is ctx.target or not d.has_config:
            return
        archs = list(dspark_archs(d.architectures, d.model_type))  # the draft ModelConfig's (hf_config_override)
        declared = declared_speculator(archs, ctx.version)
        if declared is None or declared == method:
            return
        yield self.finding(
            f"speculative_config requested method={spec.method!r}, but the draft model {spec.model!r} is a {declared!r} "
            f"checkpoint (model_type={d.model_type!r}, architectures={archs}). Pass a matching method or "
            f"a matching draft checkpoint. Use method={declared!r} if that is what you intended.",
            fixes=[Patch(description=f"Use method {declared}", set={"speculative_config.method": declared})])
