"""LoRA limits (SD150-SD159).

``LoRAConfig`` checks beyond its field types (docs/vllm-rules.md §10.10); the field types and
bounds themselves (``max_loras`` >= 1, ``max_lora_rank`` values, ``lora_dtype``) are the generic
option rules SD010/SD011/SD015. LoRA together with speculation is SD302 / SD094.
"""

ID_RANGE = ("SD150", "SD159")
