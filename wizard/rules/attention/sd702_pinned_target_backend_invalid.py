from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class PinnedTargetBackendInvalid(Rule):
    r"""--attention-backend does not accept the target on this GPU

    ## What it does

    Validates the backend pinned with ``--attention-backend`` (or ``--attention-config.backend``,
    ``VLLM_ATTENTION_BACKEND``) against the target's layout on this device, as vLLM does for a
    pinned backend: alone, with its declared support (compute capability, head size, KV dtype,
    sinks, MLA...). Names the backend auto-selection would have picked, and what the drafter gets
    (the drafter never inherits the pin).

    ## Why it matters

    vLLM raises ``Selected backend AttentionBackendEnum.X is not valid for this configuration.
    Reason: [...]`` at load, after the weights.

    ## Example

    FlashAttention pinned on a V100 (SM 7.0; FlashAttention needs SM 8.0):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float16 --attention-backend FLASH_ATTN
    ```

    ## Use instead

    Leave the backend to auto-selection (TRITON_ATTN on a V100):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float16
    ```

    ## Fix safety

    Safe: auto-selection picks a backend that accepts the layout; speed may differ from the pin.

    ## Source

    vllm/platforms/cuda.py ``get_attn_backend_cls`` (a selected backend is validated alone),
    vllm/v1/attention/backend.py ``validate_configuration`` (0.28-0.33, wizard/data/vllm/<X.Y>/backends.json).
    """

    id = "SD702"
    severity = Severity.ERROR
    fields = ("attention_backend",)
    phase = "load"

    def check(self, ctx):
        t_sel, d_sel = A.backends(ctx)
        if t_sel is None or not t_sel.pin_rejected or t_sel.pin_source:  # imposed by vLLM: SD700/SD701
            return
        t_lay, _ = A.layouts(ctx)
        from_auto = A.AB.select_backend(ctx.version, ctx.hardware, t_lay) if t_lay is not None else None
        auto = f" Auto-selection would pick {A.selection_text(from_auto)}." if from_auto is not None else ""
        drafter = "" if d_sel is None else (
            f" The drafter inherits the pin on this release and gets {A.selection_text(d_sel)}." if d_sel.pin_source
            else f" The drafter (it does not inherit the pin) gets {A.selection_text(d_sel)}.")
        fixes = [Patch(description="Drop --attention-backend (auto-selection)", unset=["attention_backend"])]
        yield self.finding(
            f"--attention-backend {t_sel.pinned} does not accept the target on vLLM {ctx.version} / {ctx.hardware.name}: "
            f"{t_sel.rejection()}. vLLM raises 'Selected backend "
            f"AttentionBackendEnum.{t_sel.pinned} is not valid for this configuration' at load.{auto}{drafter}",
            fixes=fixes)
