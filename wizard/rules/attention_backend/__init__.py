"""Attention-backend selection for the target and the drafter, separately (SD700-SD719).

Rules built on :mod:`wizard.mechanisms.attention_backend`: vLLM picks a backend per model from
the platform's priority list (or validates a pinned one) with each backend's declared support,
per release (tables generated from vLLM's backend classes). The drafter never inherits
``--attention-backend`` (0.28-0.33); it gets ``speculative_config.attention_backend`` or its own
auto-selection with its own KV dtype and, for DFlash/DSpark, non-causal attention.

KV-dtype failures are reported by SD200 (drafter) and SD201 (target), kernel refusals on CPU by
SD204/SD240; these rules cover the rest (head sizes, non-causal, sinks, MLA, pinned backends).
"""

ID_RANGE = ("SD700", "SD719")
