"""Scheduling: async scheduling, the model runner, token budgets (SD090-SD099, SD140-SD149).

Async scheduling, the model runner, token budgets and lookahead slots (SD090-SD099).

Scheduler-level checks that involve speculation (docs/vllm-rules.md R081-R084, R086-R089).

Which model runner vLLM picks matters here: the V1 runner is used on the CPU platform (no
Triton CPU backend), when ``VLLM_USE_V2_MODEL_RUNNER=0``, and when a V2-unsupported feature is
present (suffix, custom_class, medusa/mlp_speculator, parallel drafting other than
dflash/dspark, heterogeneous vocabularies). Without hardware in the context the GPU case is
assumed (V2 when nothing blocks it). A release without Model Runner V1 (0.34,
``wizard.mechanisms.method_support.has_v1_runner``) runs V2 everywhere: none of the V1 refusals
apply, and ``VLLM_USE_V2_MODEL_RUNNER`` other than 1 is an error (SD096).

Scheduler budgets: tokens per step against sequences and length (SD140-SD149).

``SchedulerConfig.verify_max_model_len`` (docs/vllm-rules.md §10.22) with the defaults
``EngineArgs`` fills in first (``_set_default_max_num_seqs_and_batched_tokens_args``). Checks
that involve speculation are SD090-SD099 above.
"""

ID_RANGES = (("SD090", "SD099"), ("SD140", "SD149"))
