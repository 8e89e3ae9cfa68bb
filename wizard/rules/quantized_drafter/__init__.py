"""Quantized drafters (SD780-SD789).

Rules built on :mod:`wizard.mechanisms.quantized_drafter`: the quantization a drafter loads with,
the device's minimum capability, and ``draft_lm_head_quantization``.
"""

ID_RANGE = ("SD780", "SD789")
