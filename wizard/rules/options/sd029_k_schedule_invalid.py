from __future__ import annotations

from typing import Any

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register

_KEY = "num_speculative_tokens_per_batch_size"


def _as_int(x: Any) -> int | None:
    """vLLM's ``int(entry[i])`` (pydantic has already made the items ints for the config; a bool is
    not a batch size here), None when it cannot be one."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, str) and x.strip().lstrip("-").isdigit() and len(x) < 20:
        return int(x.strip())
    return None


def schedule_problems(schedule: Any, k_max: Any) -> tuple[list[str], list[tuple[int, int, int]] | None]:
    """(what vLLM's ``validate_and_normalize_dynamic_sd_schedule`` would raise, and the entries
    sorted by start when they all parse), mirroring vllm/v1/spec_decode/dynamic/utils.py (0.28-0.32
    identical): a non-empty list of (start, end, k) with start, end > 0, start <= end, k >= 0,
    sorted non-overlapping inclusive ranges, the first starting at 1. Entries above
    ``num_speculative_tokens`` are clamped to it (``build_dynamic_sd_schedule_lookup``): reported
    separately by the caller, not a problem."""
    if not isinstance(schedule, (list, tuple)) or not schedule:
        return ["must be a non-empty list of [range_start, range_end, num_speculative_tokens] entries"], None
    parsed: list[tuple[int, int, int]] = []
    problems: list[str] = []
    for entry in schedule:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            problems.append(f"entry {entry!r:.40} is not a 3-item [range_start, range_end, num_speculative_tokens]")
            continue
        a, b, k = (_as_int(x) for x in entry)
        if a is None or b is None or k is None:
            problems.append(f"entry {list(entry)!r:.40} holds a value that is not an integer")
            continue
        if a <= 0 or b <= 0:
            problems.append(f"batch-size range ({a}, {b}) must be positive")
        elif a > b:
            problems.append(f"batch-size range start must be <= end for ({a}, {b}, {k})")
        if k < 0:
            problems.append(f"num_speculative_tokens {k} in ({a}, {b}, {k}) must be >= 0")
        parsed.append((a, b, k))
    if problems:
        return problems, None
    parsed.sort(key=lambda e: e[0])
    prev_end = 0
    for a, b, _ in parsed:
        if a <= prev_end:
            problems.append(f"batch-size ranges overlap at {a} (ranges must be non-overlapping and sorted)")
            break
        prev_end = b
    if parsed[0][0] != 1:
        problems.append(f"the first batch-size range starts at {parsed[0][0]}, not 1 (every runtime batch size "
                        "needs a defined k)")
    return problems, parsed


@register
class KScheduleInvalid(Rule):
    r"""num_speculative_tokens_per_batch_size rejected at engine start

    ## What it does

    Checks the dynamic speculation schedule `speculative_config.num_speculative_tokens_per_batch_size`
    (vLLM 0.28-0.33: a list of inclusive `[range_start, range_end, k]` entries, the k to use while
    that many requests run) the way vLLM's `validate_and_normalize_dynamic_sd_schedule` does: a
    non-empty list of 3-item entries, positive ranges with start <= end, k >= 0, sorted and
    non-overlapping, the first range starting at 1. It also says when an entry asks for more than
    `num_speculative_tokens` (vLLM clamps it silently: `num_speculative_tokens` stays the maximum
    that sizes the buffers).

    ## Why it matters

    The config build accepts any list of integer triples (pydantic checks the types only); the
    ranges are checked when the scheduler builds its batch-size lookup
    (`build_dynamic_sd_schedule_lookup`, called from `Scheduler.__init__`), i.e. after the model has
    loaded and the KV cache was profiled: the engine then stops with `ValueError: The first
    batch-size range must start at 1 ...` or `Batch-size ranges must be non-overlapping and sorted.`

    ## Example

    A schedule that forgets batch size 1:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":4,"num_speculative_tokens_per_batch_size":[[2,16,4],[17,128,2],[129,1024,0]]}'
    ```

    ## Use instead

    Start at 1 (`wizard plan` emits a schedule from the best k per batch size, 0 where no k pays):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":4,"num_speculative_tokens_per_batch_size":[[1,16,4],[17,128,2],[129,1024,0]]}'
    ```

    ## Fix safety

    Starting the first range at 1 keeps the user's k for every batch size they listed. Dropping
    the schedule falls back to the static `num_speculative_tokens` at every batch size (always
    accepted; loses the per-batch k).

    ## Source

    vllm/v1/spec_decode/dynamic/utils.py `validate_and_normalize_dynamic_sd_schedule`,
    `build_dynamic_sd_schedule_lookup` (identical in 0.28.0-0.32.0); vllm/v1/core/sched/scheduler.py
    0.32 L308-314 (where it is called); vllm/config/speculative.py 0.32 L491 (the field).
    """

    id = "SD029"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens_per_batch_size",)
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        schedule = getattr(spec, _KEY, None)
        if schedule is None or not isinstance(schedule, (list, tuple)):
            return  # absent, or not a list at all: SD010 (ill-typed value) reports that
        problems, parsed = schedule_problems(schedule, ctx.k)
        unset = Patch(description="Drop num_speculative_tokens_per_batch_size (static num_speculative_tokens)",
                      unset=[f"speculative_config.{_KEY}"])
        if problems:
            fixes = []
            if parsed is not None and len(problems) == 1 and parsed[0][0] != 1:
                fixed = [[1, parsed[0][1], parsed[0][2]]] + [list(e) for e in parsed[1:]]
                fixes.append(Patch(description="Start the first batch-size range at 1",
                                   set={f"speculative_config.{_KEY}": fixed}))
            fixes.append(unset)
            yield self.finding(
                f"speculative_config.{_KEY}: " + "; ".join(problems) + ". vLLM accepts the config but the scheduler "
                "rejects the schedule at engine start (after the model load): ValueError from "
                "validate_and_normalize_dynamic_sd_schedule.",
                fixes=fixes,
            )
            return
        k = ctx.k
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            over = [e for e in parsed if e[2] > k]
            if over:
                a, b, kk = over[0]
                yield self.finding(
                    f"speculative_config.{_KEY}: ({a}, {b}, {kk}) asks for more than num_speculative_tokens={k}; vLLM "
                    f"clamps every entry to {k} (num_speculative_tokens is the maximum that sizes the drafter's "
                    "buffers). Raise num_speculative_tokens to the schedule's largest k to get it.",
                    severity=Severity.WARNING,
                    fixes=[Patch(description=f"Set num_speculative_tokens to {max(e[2] for e in parsed)}",
                                 set={"speculative_config.num_speculative_tokens": max(e[2] for e in parsed)})],
                )
