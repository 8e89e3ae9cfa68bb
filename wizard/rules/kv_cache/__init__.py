"""KV-cache dtypes the attention backends accept at load time, target and drafter (SD200-SD219).

KV-cache dtypes at load time, target and drafter separately.

vLLM resolves two KV dtypes: the target's (``--kv-cache-dtype``, or what the checkpoint forces
under ``auto``, docs/vllm-rules.md R101) and the drafter's (``speculative_config.kv_cache_dtype``,
else inherited from the target, R105). Neither is checked against the hardware or the drafter's
attention layout at config time (R104): attention-backend selection fails at load (R107-R109).
These rules predict those load-time failures from :class:`~wizard.context.CheckContext`.

Hardware facts come only from ``ctx.hardware`` (:class:`~wizard.hardware.Hardware`); with no
hardware given, GPU-dependent checks stay quiet or emit at most an info finding.
"""

ID_RANGE = ("SD200", "SD219")
