"""Limits of a hardware platform's kernels (SD240-SD299).

What a platform's kernels can run (e.g. the head sizes of vLLM's CPU attention backend).
"""

ID_RANGE = ("SD240", "SD299")
