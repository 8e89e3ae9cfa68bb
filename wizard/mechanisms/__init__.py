"""Models of what vLLM does at load time, per release (0.28 - 0.33); see docs/mechanisms.md.

Each module reads generated tables (``wizard/data/vllm/<X.Y>/``, written by
``scripts/gen_mechanism_tables.py`` from the release's own source) and never imports vLLM:

* :mod:`.attention_backend` -- which attention backend the target and the drafter get, or why none fits;
* :mod:`.kv_groups` -- KV-cache groups and page sizes of target + drafter layers;
* :mod:`.cudagraph` -- CUDA-graph capture sizes when each request verifies 1+k tokens;
* :mod:`.drafter_context` -- a drafter context shorter than the served length;
* :mod:`.method_support` -- which methods get a proposer, which features combine with speculation;
* :mod:`.quantized_drafter` -- quantized drafters and ``draft_lm_head_quantization``.
* :mod:`.eagle3_targets` -- which targets can feed drafters that read auxiliary hidden states (per release).
"""
