"""The target model: its config checks, LoRA limits, its quantization method (SD100-SD119, SD150-SD169).

The target model's own config checks: its length, its code, its dtype (SD100-SD119).

What ``ModelConfig`` verifies at config time from the options and the checkpoint's config.json
(docs/vllm-rules.md §10.12): ``max_model_len`` against the length vLLM derives from the config
(RoPE scaling, sliding window, ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``), custom-code checkpoints that
need ``--trust-remote-code``, reasoning parsers. Facts per release come from the generated
``wizard/data/vllm/<X.Y>/checks.json`` (:mod:`wizard.vllm.checks`).

LoRA limits (SD150-SD159).

``LoRAConfig`` checks beyond its field types (docs/vllm-rules.md §10.10); the field types and
bounds themselves (``max_loras`` >= 1, ``max_lora_rank`` values, ``lora_dtype``) are the generic
option rules SD010/SD011/SD015. LoRA together with speculation is SD302 / SD094.

The target's quantization method: its name, the checkpoint, the dtype (SD160-SD169).

``ModelConfig._verify_quantization`` and ``VllmConfig._get_quantization_config`` (docs/vllm-rules.md
§10.12, §10.26, R209-R211, R374) and ``get_quant_config`` (vllm/model_executor/model_loader/
weight_utils.py), with the per-method facts generated from each release's quantization config
classes (``checks.json``). Drafter quantization is the ``drafter`` family / mechanisms.
"""

ID_RANGES = (("SD100", "SD119"), ("SD150", "SD159"), ("SD160", "SD169"))
