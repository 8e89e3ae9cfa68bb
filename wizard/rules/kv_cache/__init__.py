"""KV-cache dtypes of target and drafter, KV-cache groups and page sizes (SD030-SD039, SD200-SD219, SD720-SD739).

KV-cache dtype against the checkpoint and the model dtype, at config time (SD030-SD039).

The KV-cache dtype against the checkpoint and the model dtype at config time (R101-R103):
checkpoints that force a quantized KV cache under ``auto``, float KV dtypes that differ from the
model dtype (0.33), nvfp4 KV with MLA.

KV-cache dtypes the attention backends accept at load time, target and drafter (SD200-SD219).

KV-cache dtypes at load time, target and drafter separately.

vLLM resolves two KV dtypes: the target's (``--kv-cache-dtype``, or what the checkpoint forces
under ``auto``, docs/vllm-rules.md R101) and the drafter's (``speculative_config.kv_cache_dtype``,
else inherited from the target, R105). Neither is checked against the hardware or the drafter's
attention layout at config time (R104): attention-backend selection fails at load (R107-R109).
These rules predict those load-time failures from :class:`~wizard.context.CheckContext`.

Hardware facts come only from ``ctx.hardware`` (:class:`~wizard.hardware.Hardware`); with no
hardware given, GPU-dependent checks stay quiet or emit at most an info finding.

KV-cache groups and page sizes of target plus drafter (SD720-SD739).

Rules built on :mod:`wizard.mechanisms.kv_groups`: vLLM splits target and drafter layers into
KV-cache groups of one spec each, unifying page sizes; some mixes cannot be unified, and the
drafting code of most proposers assumes all drafter layers share one group.
"""

ID_RANGES = (("SD030", "SD039"), ("SD200", "SD219"), ("SD720", "SD739"))
