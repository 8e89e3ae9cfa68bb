"""Multi-token prediction: MTP layers in the checkpoint and the draft length (SD060-SD069).

Multi-token prediction (MTP) at config time: does the target have MTP layers, and is k
compatible with them (docs/vllm-rules.md R027, R030, R031, R041, R042).
"""

ID_RANGE = ("SD060", "SD069")
