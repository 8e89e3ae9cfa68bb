"""Drafter tensor parallelism and lengths (SD080-SD089).

Drafter parallelism and length limits at config time (docs/vllm-rules.md R055, R056, R058, R059).
"""

ID_RANGE = ("SD080", "SD089")
