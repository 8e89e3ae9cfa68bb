"""Feature combinations that break speculation (multimodal, LoRA, structured outputs, prefix caching) (SD300-SD399).

Feature combinations with speculative decoding: multimodal targets, pipeline parallelism, LoRA,
structured outputs, prefix caching, CUDA graphs, request sampling parameters.

Most are load- or run-time behaviours from public reports; each rule names the report and, where
the behaviour changed, the version range it applies to (``versions``). Options vLLM has but the
wizard does not model are read from ``config.extra_args`` (e.g. ``structured_outputs_config``,
``language_model_only``, ``override_generation_config``).
"""

ID_RANGES = (("SD300", "SD399"),)
