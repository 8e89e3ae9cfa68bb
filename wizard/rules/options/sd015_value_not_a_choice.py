from __future__ import annotations

import difflib

from wizard.rules.optionvalues import fix_patch, option_problems
from wizard.rules.registry import Rule, Severity, register


def _typo_fix(value, fix) -> bool:
    """True when ``fix`` reads as a correction of a typo in ``value`` ('xgrammer' -> 'xgrammar',
    'FCFS' -> 'fcfs'), not as a different setting that shares letters ('float8' -> 'float')."""
    if not isinstance(value, str) or not isinstance(fix, str):
        return True
    a, b = value.lower(), fix.lower()
    if a == b:
        return True
    if a.startswith(b) and any(c.isdigit() for c in a[len(b):]):
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


@register
class ValueNotAChoice(Rule):
    """Option value is not one of vLLM's choices

    ## What it does

    Checks every option the command sets against the ``Literal`` values and ``Enum`` members of
    the config-class field that receives it in the checked vLLM release, read from the generated
    ``wizard/data/vllm/<X.Y>/constraints.json``: ``--dtype`` (``ModelConfig.dtype``),
    ``--max-lora-rank``, ``--lora-dtype``, ``--scheduling-policy``, ``--logprobs-mode``,
    ``--runner``, ``--convert``, ``--prefix-caching-hash-algo``, ``-O`` / ``--optimization-level``,
    and keys inside config objects: ``--structured-outputs-config '{"backend": ...}'``,
    ``--compilation-config '{"mode": ..., "cudagraph_mode": ...}'`` (mode and CUDA-graph mode
    names are read case-insensitively, as vLLM's ``before`` validators do).

    ## Why it matters

    vLLM raises a pydantic ``ValidationError`` ("Input should be 'auto', 'half', 'float16' ...",
    "Input should be 1, 8, 16, 32 ...") while building its config: the server never starts.

    ## Example

    ``--dtype float8`` (fp8 is a quantization or a KV-cache dtype, not a model dtype).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float8
    ```

    ## Use instead

    One of the listed values, or leave the option out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype auto
    ```

    ## Fix safety

    The nearest allowed value: the nearest number for numeric choices (``--max-lora-rank 24`` ->
    32), the corrected spelling of a typo (``xgrammer`` -> ``xgrammar``); otherwise the option is
    unset so vLLM's default applies (``--dtype float8`` -> auto). A different value changes
    behaviour (a larger LoRA rank reserves more memory): review it.

    ## Source

    Literal / Enum field types of the config classes behind ``vllm serve``, per release 0.28-0.33
    (``scripts/dump_vllm_constraints.py``; inventory R512-R553: vllm/config/model.py
    ``ModelDType``, ``LogprobsMode``, ``RunnerOption``, ``ConvertOption``; config/lora.py
    ``MaxLoRARanks``, ``LoRADType``; config/scheduler.py ``SchedulerPolicy``;
    config/structured_outputs.py ``StructuredOutputsBackend``; config/compilation.py
    ``CompilationMode``, ``CUDAGraphMode`` with ``validate_mode_before`` /
    ``validate_cudagraph_mode_before``; config/vllm.py ``OptimizationLevel``).
    """

    id = "SD015"
    severity = Severity.ERROR
    fields = ("dtype",)
    phase = "config"

    def check(self, ctx):
        for p in option_problems(ctx):
            if p.kind != "choice":
                continue
            fixes = []
            if p.fix is not None and _typo_fix(p.value, p.fix):
                fixes.append(fix_patch(ctx, p, p.fix, f"Use {p.fix!r} for {p.path}"))
            fixes.append(fix_patch(ctx, p, None, f"Unset {p.path} (vLLM's default applies)"))
            if p.fix is not None and not _typo_fix(p.value, p.fix):
                fixes.append(fix_patch(ctx, p, p.fix, f"Use {p.fix!r} for {p.path}"))
            yield self.finding(
                f"{p.path}={p.value!r} is not a value {p.owner} accepts in vLLM {ctx.version} ({p.message}); vLLM "
                "rejects it while building its config (pydantic ValidationError).",
                fields=[p.path], fixes=fixes)
