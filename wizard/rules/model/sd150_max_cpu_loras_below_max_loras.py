from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


@register
class MaxCpuLorasBelowMaxLoras(Rule):
    """max_cpu_loras below max_loras

    ## What it does

    With ``--enable-lora``, checks ``--max-cpu-loras`` (when given and positive: EngineArgs
    passes 0 or less as "unset") against ``--max-loras`` (default 1): the CPU cache must hold at
    least as many adapters as a batch may use.

    ## Why it matters

    vLLM refuses to build the config: "max_cpu_loras (2) must be >= max_loras (16)."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-loras 16 --max-cpu-loras 2
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-loras 16 --max-cpu-loras 16
    ```

    ## Fix safety

    Raising ``max_cpu_loras`` to ``max_loras`` costs host memory per cached adapter; unsetting
    it lets vLLM use ``max_loras``.

    ## Source

    vllm/config/lora.py ``LoRAConfig._validate_lora_config`` (0.28 L121, 0.32 L123, 0.33 L124;
    inventory R190); vllm/engine/arg_utils.py ``create_engine_config`` (``max_cpu_loras`` > 0
    else None).
    """

    id = "SD150"
    severity = Severity.ERROR
    fields = ("max_cpu_loras", "max_loras")
    phase = "config"

    def check(self, ctx):
        if not truthy(ctx.config.enable_lora):
            return
        cpu, loras = option(ctx, "max_cpu_loras"), option(ctx, "max_loras", 1)
        if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu <= 0:
            return
        if not isinstance(loras, int) or isinstance(loras, bool) or loras < 1 or cpu >= loras:
            return
        yield self.finding(
            f"max_cpu_loras={cpu} is smaller than max_loras={loras}; vLLM rejects it ('max_cpu_loras ({cpu}) must be "
            f">= max_loras ({loras})').",
            fixes=[set_option_patch(ctx, "max_cpu_loras", loras, f"Set --max-cpu-loras {loras}"),
                   set_option_patch(ctx, "max_cpu_loras", None, "Unset --max-cpu-loras (vLLM uses max_loras)")])
