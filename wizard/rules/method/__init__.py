"""The speculative method: allowed names, aliases, detection, and the options each method accepts (SD040-SD059).

The speculative method: allowed names, aliases, inference, auto-detection and the drafter
architecture vLLM builds for it, plus the per-method option checks of
``SpeculativeConfig.__post_init__`` / ``_verify_args`` (R010, R023-R026, R032, R063, R064,
R071-R077 in docs/vllm-rules.md). All run at config time.
"""

ID_RANGE = ("SD040", "SD059")
