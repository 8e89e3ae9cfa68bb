from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DFLASH, DSPARK, EAGLE3, dspark_takes_as_deepseek_v4, is_allowed


@register
class DsparkWithAnotherDrafter(Rule):
    r"""method dspark with a drafter that is no DSpark checkpoint (0.25-0.33)

    ## What it does

    With ``"method":"dspark"`` vLLM 0.25-0.33 handles the named DSpark drafters (Qwen3, Qwen3-Omni,
    Gemma 4, K3) and takes every other drafter for a DeepSeek-V4(.1) DSpark draft: it rewrites
    the draft config's ``model_type`` to ``deepseek_v4``, its architectures to
    ``DSparkDraftModel`` and copies the target's quantization. A drafter without any DSpark
    architecture (a DFlash, EAGLE-3 or plain model checkpoint) beside a target that is no
    DeepSeek-V4 is reported.

    ## Why it matters

    No error names the mix-up: the configuration builds, the target loads, and then the drafter's
    weights are loaded into DeepSeek-V4's DSpark class, which they do not fit; the engine stops.
    From 0.34 vLLM compares the method with the checkpoint's declared speculator itself (SD059).

    ## Example

    A DFlash drafter given with the DSpark method:

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dspark","model":"z-lab/Qwen3-8B-DFlash-b16","num_speculative_tokens":7}'
    ```

    ## Use instead

    The method the checkpoint was trained for:

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dflash","model":"z-lab/Qwen3-8B-DFlash-b16","num_speculative_tokens":7}'
    ```

    ## Fix safety

    Safe: the checkpoint's own method (DFlash / EAGLE-3, read from its architectures) loads its
    weights as trained; otherwise n-gram, which needs no drafter.

    ## Source

    vllm/config/speculative.py ``__post_init__`` DSpark branch ("DeepSeek-V4(.1) DSpark reuses the
    full target config and its weights ship in the target checkpoint", 0.32 L1432-1453; read in
    the 0.25, 0.26, 0.28, 0.30 and 0.33 wheels); found by the UI state-machine test
    (tests/test_ui_state_machine.py, suggest.drafter_fit: "it is a dflash drafter, not one for dspark").
    """

    id = "SD762"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "load"

    def check(self, ctx):
        spec, d, t = ctx.spec, ctx.drafter, ctx.target
        if spec is None or ctx.method != DSPARK or spec.model is None or d is None or d is t or not d.has_config:
            return
        if not dspark_takes_as_deepseek_v4(ctx.version, d.architectures, getattr(t, "model_type", None)):
            return
        archs = list(d.architectures or ())
        own = DFLASH if any("DFlash" in a for a in archs) else EAGLE3 if (
            any(EAGLE3 in a.lower() for a in archs) or d.model_type == EAGLE3) else None
        fixes = [Patch(description=f"Use method {own} (the checkpoint's own)", set={"speculative_config.method": own})] \
            if own and is_allowed(own, ctx.version) else []
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation (no drafter model)"))
        yield self.finding(
            f"method 'dspark' with the drafter {spec.model!r} ({d.model_type}, {archs}), which is no DSpark checkpoint: "
            f"vLLM {ctx.version} takes it for a DeepSeek-V4 DSpark draft (model_type deepseek_v4, DSparkDraftModel, "
            "the target's quantization) and loading its weights into that class fails after the target has loaded."
            + (f" It is a {own} checkpoint." if own else ""),
            fixes=fixes)
