"""N-gram speculation: lookup bounds and options it ignores (SD070-SD079).

n-gram (prompt lookup) speculation at config time (docs/vllm-rules.md R062, R070).
"""

ID_RANGE = ("SD070", "SD079")
