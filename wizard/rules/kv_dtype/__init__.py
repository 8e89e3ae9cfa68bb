"""KV-cache dtype against the checkpoint and the model dtype, at config time (SD030-SD039).

The KV-cache dtype against the checkpoint and the model dtype at config time (R101-R103):
checkpoints that force a quantized KV cache under ``auto``, float KV dtypes that differ from the
model dtype (0.33), nvfp4 KV with MLA.
"""

ID_RANGE = ("SD030", "SD039")
