"""Scheduler budgets: tokens per step against sequences and length (SD140-SD149).

``SchedulerConfig.verify_max_model_len`` (docs/vllm-rules.md §10.22) with the defaults
``EngineArgs`` fills in first (``_set_default_max_num_seqs_and_batched_tokens_args``). Checks
that involve speculation are the ``scheduling`` family (SD090-SD099).
"""

ID_RANGE = ("SD140", "SD149")
