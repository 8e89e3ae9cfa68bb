"""The `vllm serve` command line and its single options, speculative_config included (SD000-SD029, SD170-SD199).

The vllm serve command line: how options are spelled and typed, their bounds, the models it names, and options speculation forbids (SD000-SD019).

The `vllm serve` command line (phase P in docs/vllm-rules.md: vLLM's argument parser, and
config-time checks of single options): how ``--speculative-config`` and deprecated options are
written (rules that read ``ServeConfig.import_notes``, set by wizard/io/collector.py), ill-typed and
out-of-bounds values, options the parser does not know, stray positionals, models that could not
be inspected, and ``--kv-sharing-fast-prefill``, which hidden-state drafters forbid.

The numeric bounds mirror the pydantic field constraints of vLLM 0.32 (``vllm/config/cache.py``,
``scheduler.py``, ``parallel.py``, ``model.py``); the option list is the real ``vllm serve``
parser of each release 0.28-0.33, dumped into ``wizard/data/vllm/<X.Y>/serve_options.json``.

Keys and values inside speculative_config that vLLM checks at config time (SD020-SD029).

Keys and values inside ``speculative_config`` that vLLM checks at config time: unknown keys
(R009), KV dtype names (R007, R014), numeric bounds (R011, R012), ``tensor_parallel_size`` inside
the speculative config (R013), attention backend names (R015) and sampler enums (R016).

Structured outputs, reasoning, compilation and observability options (SD170-SD199).

Checks of ``StructuredOutputsConfig``, ``ReasoningConfig``, ``CompilationConfig`` and
``ObservabilityConfig`` beyond their field types (the generic option rules SD010/SD011/SD015/SD016
check those): names looked up in a registry at config time, such as ``--reasoning-parser``.
"""

ID_RANGES = (("SD000", "SD019"), ("SD020", "SD029"), ("SD170", "SD199"))
