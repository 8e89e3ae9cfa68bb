"""The vllm serve command line: how options are spelled and typed, their bounds, the models it names, and options speculation forbids (SD000-SD019).

The `vllm serve` command line (phase P in docs/vllm-rules.md: vLLM's argument parser, and
config-time checks of single options): how ``--speculative-config`` and deprecated options are
written (rules that read ``ServeConfig.import_notes``, set by wizard/io/collector.py), ill-typed and
out-of-bounds values, options the parser does not know, stray positionals, models that could not
be inspected, and ``--kv-sharing-fast-prefill``, which hidden-state drafters forbid.

The numeric bounds mirror the pydantic field constraints of vLLM 0.32 (``vllm/config/cache.py``,
``scheduler.py``, ``parallel.py``, ``model.py``); the option list is the real ``vllm serve``
parser of each release 0.28-0.33, dumped into ``wizard/data/vllm/<X.Y>/serve_options.json``.
"""

ID_RANGE = ("SD000", "SD019")
