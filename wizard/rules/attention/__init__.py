"""Attention backends, CUDA graphs and the platform's kernels (SD240-SD299, SD700-SD719, SD740-SD749).

Limits of a hardware platform's kernels (SD240-SD299).

What a platform's kernels can run (e.g. the head sizes of vLLM's CPU attention backend).

Attention-backend selection for the target and the drafter, separately (SD700-SD719).

Rules built on :mod:`wizard.mechanisms.attention_backend`: vLLM picks a backend per model from
the platform's priority list (or validates a pinned one) with each backend's declared support,
per release (tables generated from vLLM's backend classes). The drafter never inherits
``--attention-backend`` (0.28-0.33); it gets ``speculative_config.attention_backend`` or its own
auto-selection with its own KV dtype and, for DFlash/DSpark, non-causal attention.

KV-dtype failures are reported by SD200 (drafter) and SD201 (target), kernel refusals on CPU by
SD204/SD240; these rules cover the rest (head sizes, non-causal, sinks, MLA, pinned backends).

CUDA-graph capture sizes when every request verifies 1+k tokens (SD740-SD749).

Rules built on :mod:`wizard.mechanisms.cudagraph`: capture sizes are tokens, a decode step of n
requests is n*(1+k) tokens, and any step larger than the largest captured graph runs eagerly.
"""

ID_RANGES = (("SD240", "SD299"), ("SD700", "SD719"), ("SD740", "SD749"))
