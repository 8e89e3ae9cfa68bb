"""Drafter checkpoints: EAGLE heads, embeddings, aux layers, MTP weights, page sizes (SD220-SD239).

Drafter checkpoints: EAGLE/EAGLE3 heads, embeddings, aux layers, MTP weights, page sizes.

These are vLLM's *load-time* failures and silent acceptance killers (docs/vllm-rules.md §1.9,
R120-R127): they need model facts, which come only from ``ctx.target`` / ``ctx.drafter``
(:class:`~wizard.models.info.ModelInfo`: config fields, and tensor names/shapes from safetensors
headers). A rule whose facts are unknown (``None``) stays quiet rather than guessing.
"""

ID_RANGE = ("SD220", "SD239")
