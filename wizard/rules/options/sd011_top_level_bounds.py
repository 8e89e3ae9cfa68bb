from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import ABSURD, as_number
from wizard.rules.optionvalues import fix_patch, option_problems
from wizard.rules.registry import Rule, Severity, register


@register
class TopLevelBounds(Rule):
    """Option value outside vLLM's bounds

    ## What it does

    Checks every option the command sets against the ``ge``/``gt``/``le``/``lt`` bounds of the
    config-class field that receives it in the checked vLLM release, read from the generated
    ``wizard/data/vllm/<X.Y>/constraints.json`` (nothing copied by hand): e.g.
    ``gpu_memory_utilization`` in (0, 1], ``max_num_seqs`` / ``max_num_batched_tokens`` /
    parallel sizes / ``max_loras`` >= 1, ``max_logprobs`` >= -1, ``cpu_offload_gb`` >= 0, and
    keys inside config objects (``--compilation-config '{"decoder_replay_trim_threshold": -1}'``).
    Also ``ModelConfig``'s own validator for ``max_model_len`` (>= 1, or -1 / ``auto``: fit to
    memory).

    ## Why it matters

    vLLM raises a pydantic ``ValidationError`` ("Input should be greater
    than 0", "less than or equal to 1") while building its config: the server never starts.

    ## Example

    ``--gpu-memory-utilization 90`` (a percentage), ``--max-num-seqs 0``, ``--max-logprobs -5``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 90
    ```

    ## Use instead

    Fractions for utilisation (0.9), counts >= 1, or leave the option out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9
    ```

    ## Fix safety

    ``90`` -> ``0.9`` keeps the meaning; otherwise the nearest value inside the bound (``-5`` ->
    ``-1``, ``0`` -> ``1``), or unsetting (vLLM's default) when the bound is strict on a fraction.

    ## Source

    Field constraints of every config class behind ``vllm serve`` per release 0.28-0.33
    (``scripts/dump_vllm_constraints.py`` -> ``constraints.json``; inventory R512-R553, e.g.
    vllm/config/cache.py ``CacheConfig.gpu_memory_utilization`` gt=0 le=1, config/scheduler.py
    ``max_num_seqs`` ge=1, config/lora.py ``max_loras`` ge=1, config/model.py ``max_logprobs``
    ge=-1); config/model.py ``validate_model_config_after`` (max_model_len >= 1; 0.32 L1057,
    0.33 L1070).
    """

    id = "SD011"
    severity = Severity.ERROR
    fields = ("gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "block_size", "tensor_parallel_size",
              "pipeline_parallel_size", "data_parallel_size", "max_model_len")
    phase = "config"

    def check(self, ctx):
        reported = set()
        for p in option_problems(ctx):
            if p.kind != "bound":
                continue
            reported.add(p.path)
            v = as_number(p.spec._number(p.value, False)) if p.spec is not None else None
            if v is not None and abs(v) > ABSURD:
                continue  # SD012
            fixes = []
            if p.path == "gpu_memory_utilization" and v is not None and 10 <= v <= 100:
                fixes.append(fix_patch(ctx, p, round(v / 100, 4), f"Use {v / 100:g} ({v:g} looks like a percentage)"))
            if p.fix is not None:
                fixes.append(fix_patch(ctx, p, p.fix, f"Set {p.path} to {p.fix}"))
            fixes.append(fix_patch(ctx, p, None, f"Unset {p.path} (vLLM's default applies)"))
            yield self.finding(
                f"{p.path}={p.value!r} is outside vLLM {ctx.version}'s bounds for {p.owner} ({p.message}); vLLM rejects "
                "it while building its config (pydantic ValidationError).",
                fields=[p.path], fixes=fixes)
        mml = as_number(ctx.config.max_model_len)
        if (mml is not None and mml < 1 and mml != -1 and abs(mml) <= ABSURD and "max_model_len" not in reported
                and "max_model_len" not in ctx.config.invalid_values):
            yield self.finding(
                f"max_model_len={mml!r}: vLLM requires a positive integer, or -1 / auto (fit to memory); it rejects "
                "it while building ModelConfig ('max_model_len must be a positive integer').",
                fields=["max_model_len"],
                fixes=[Patch(description="Unset max_model_len (vLLM derives it from the model)", unset=["max_model_len"])])
