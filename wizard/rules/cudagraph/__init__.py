"""CUDA-graph capture sizes when every request verifies 1+k tokens (SD740-SD749).

Rules built on :mod:`wizard.mechanisms.cudagraph`: capture sizes are tokens, a decode step of n
requests is n*(1+k) tokens, and any step larger than the largest captured graph runs eagerly.
"""

ID_RANGE = ("SD740", "SD749")
