"""KV-cache groups and page sizes of target plus drafter (SD720-SD739).

Rules built on :mod:`wizard.mechanisms.kv_groups`: vLLM splits target and drafter layers into
KV-cache groups of one spec each, unifying page sizes; some mixes cannot be unified, and the
drafting code of most proposers assumes all drafter layers share one group.
"""

ID_RANGE = ("SD720", "SD739")
