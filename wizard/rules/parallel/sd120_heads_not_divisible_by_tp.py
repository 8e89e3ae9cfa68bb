from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int
from wizard.rules.registry import Rule, Severity, register


def valid_tp(heads: int, want: int, devices: int | None) -> int:
    """The tensor-parallel size nearest ``want`` that divides ``heads`` and, when the device count
    is known, fits ``devices`` (ties: the larger one that fits, else the smaller)."""
    divs = [d for d in range(1, heads + 1) if heads % d == 0]
    if devices:
        fit = [d for d in divs if d <= devices]
        divs = fit or [1]
    return min(divs, key=lambda d: (abs(d - want), -d))


@register
class HeadsNotDivisibleByTp(Rule):
    """Attention heads not divisible by the tensor-parallel size

    ## What it does

    Checks that the target's total number of attention heads (``num_attention_heads`` of its
    text config) is a multiple of ``--tensor-parallel-size``: vLLM shards whole heads over the
    tensor-parallel ranks.

    ## Why it matters

    vLLM refuses to build the config: "Total number of attention heads (32) must be divisible by
    tensor parallel size (3)". A TP that does not divide the heads is a typo or a device count
    that does not suit the model (3, 5, 6 or 7 GPUs for a 32- or 64-head model).

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 4
    ```

    ## Fix safety

    The fix is the nearest divisor of the head count that fits the devices given with ``--gpu``
    (e.g. 3 -> 2 or 4): a different TP changes memory per device and speed; spare devices can
    serve another replica (``--data-parallel-size``).

    ## Source

    vllm/config/model.py ``ModelConfig.verify_with_parallel_config`` (0.28 L1368, 0.32 L1546,
    0.33 L1559; inventory R056), called from ``VllmConfig.__post_init__``. Verified with
    ``benchmarks/conformance.py`` on 0.28-0.33.
    """

    id = "SD120"
    severity = Severity.ERROR
    fields = ("tensor_parallel_size",)
    phase = "config"

    def check(self, ctx):
        tp = as_int(ctx.config.tensor_parallel_size)
        target = ctx.target
        heads = target.num_attention_heads if target is not None else None
        if tp is None or tp < 1 or not isinstance(heads, int) or heads < 1 or heads % tp == 0:
            return
        hw = ctx.hardware
        devices = hw.count if hw is not None and hw.vendor != "cpu" else None
        best = valid_tp(heads, tp, devices)
        where = f" that fits the {devices} devices" if devices else ""
        yield self.finding(
            f"tensor_parallel_size={tp} does not divide the {heads} attention heads of {target.short_name()}; vLLM "
            f"rejects it ('Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})').",
            fixes=[Patch(description=f"Use --tensor-parallel-size {best} (the nearest divisor of {heads}{where})",
                         set={"tensor_parallel_size": best})])
