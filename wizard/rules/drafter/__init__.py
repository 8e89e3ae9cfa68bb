"""The drafter: its checkpoint, its context length and its quantization (SD220-SD239, SD750-SD759, SD780-SD789).

Drafter checkpoints: EAGLE heads, embeddings, aux layers, MTP weights, page sizes (SD220-SD239).

Drafter checkpoints: EAGLE/EAGLE3 heads, embeddings, aux layers, MTP weights, page sizes.

These are vLLM's *load-time* failures and silent acceptance killers (docs/vllm-rules.md §1.9,
R120-R127): they need model facts, which come only from ``ctx.target`` / ``ctx.drafter``
(:class:`~wizard.models.info.ModelInfo`: config fields, and tensor names/shapes from safetensors
headers). A rule whose facts are unknown (``None``) stays quiet rather than guessing.

A drafter whose context is shorter than the served length (SD750-SD759).

Rules built on :mod:`wizard.mechanisms.drafter_context`, per release and model runner.

Quantized drafters (SD780-SD789).

Rules built on :mod:`wizard.mechanisms.quantized_drafter`: the quantization a drafter loads with,
the device's minimum capability, and ``draft_lm_head_quantization``.
"""

ID_RANGES = (("SD220", "SD239"), ("SD750", "SD759"), ("SD780", "SD789"))
