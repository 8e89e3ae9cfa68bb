"""The target model's own config checks: its length, its code, its dtype (SD100-SD119).

What ``ModelConfig`` verifies at config time from the options and the checkpoint's config.json
(docs/vllm-rules.md §10.12): ``max_model_len`` against the length vLLM derives from the config
(RoPE scaling, sliding window, ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``), custom-code checkpoints that
need ``--trust-remote-code``, reasoning parsers. Facts per release come from the generated
``wizard/data/vllm/<X.Y>/checks.json`` (:mod:`wizard.vllm.checks`).
"""

ID_RANGE = ("SD100", "SD119")
