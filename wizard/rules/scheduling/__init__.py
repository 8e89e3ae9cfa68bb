"""Async scheduling, the model runner, token budgets and lookahead slots (SD090-SD099).

Scheduler-level checks that involve speculation (docs/vllm-rules.md R081-R084, R086-R089).

Which model runner vLLM picks matters here: the V1 runner is used on the CPU platform (no
Triton CPU backend), when ``VLLM_USE_V2_MODEL_RUNNER=0``, and when a V2-unsupported feature is
present (suffix, custom_class, medusa/mlp_speculator, parallel drafting other than
dflash/dspark, heterogeneous vocabularies). Without hardware in the context the GPU case is
assumed (V2 when nothing blocks it).
"""

ID_RANGE = ("SD090", "SD099")
