"""The speculative method, MTP and n-gram, and which methods each release runs (SD040-SD079, SD760-SD779).

The speculative method: allowed names, aliases, detection, and the options each method accepts (SD040-SD059).

The speculative method: allowed names, aliases, inference, auto-detection and the drafter
architecture vLLM builds for it, plus the per-method option checks of
``SpeculativeConfig.__post_init__`` / ``_verify_args`` (R010, R023-R026, R032, R063, R064,
R071-R077 in docs/vllm-rules.md). All run at config time.

Multi-token prediction: MTP layers in the checkpoint and the draft length (SD060-SD069).

Multi-token prediction (MTP) at config time: does the target have MTP layers, and is k
compatible with them (docs/vllm-rules.md R027, R030, R031, R041, R042).

N-gram speculation: lookup bounds and options it ignores (SD070-SD079).

n-gram (prompt lookup) speculation at config time (docs/vllm-rules.md R062, R070).

Which methods each release's engine really runs (SD760-SD779).

Rules built on :mod:`wizard.mechanisms.method_support`: config validation, the model-runner
choice and the proposer chains of each release.
"""

ID_RANGES = (("SD040", "SD059"), ("SD060", "SD069"), ("SD070", "SD079"), ("SD760", "SD779"))
