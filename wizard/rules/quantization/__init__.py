"""The target's quantization method: its name, the checkpoint, the dtype (SD160-SD169).

``ModelConfig._verify_quantization`` and ``VllmConfig._get_quantization_config`` (docs/vllm-rules.md
§10.12, §10.26, R209-R211, R374) and ``get_quant_config`` (vllm/model_executor/model_loader/
weight_utils.py), with the per-method facts generated from each release's quantization config
classes (``checks.json``). Drafter quantization is the ``drafter`` family / mechanisms.
"""

ID_RANGE = ("SD160", "SD169")
