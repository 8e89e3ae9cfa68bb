from __future__ import annotations

from wizard.rules.optionvalues import option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class MultiNodeStartRefusals(Rule):
    r"""Multi-node options ``vllm serve`` refuses when it starts the processes

    ## What it does

    Flags what passes vLLM's config build but stops ``vllm serve`` before it loads a weight:
    ``--headless`` with ``--api-server-count`` above 0 (a headless node starts no API server),
    and ``--nnodes`` that is not a multiple of the data-parallel node groups
    (``data_parallel_size / data_parallel_size_local``) with vLLM's internal load balancing.

    ## Why it matters

    The node exits at start with "--api-server-count=2 cannot be used with --headless" or
    "Invalid data parallel configuration: nnodes (2) must be divisible by the number of data
    parallel node groups (4 = data_parallel_size 4 / data_parallel_size_local 1)", and the
    other nodes wait for it until their rendezvous times out.

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 \
      --headless --api-server-count 2
    ```

    ## Use instead

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --headless
    ```

    ## Fix safety

    Safe: a headless node never serves the API; removing ``--data-parallel-size-local`` lets
    vLLM infer it from ``--nnodes`` (``world / nnodes / (TP x PP)`` ranks per node).

    ## Source

    vllm/entrypoints/cli/serve.py ``ServeSubcommand.cmd`` (0.32 L69-L76) and ``run_headless``
    (L181-L220, which reads ``ParallelConfig.node_rank_within_dp``); vllm/config/parallel.py
    ``ParallelConfig.nnodes_within_dp`` (0.32 L808-L832). vLLM 0.32's config build accepts both
    (tests/test_multinode.py). Layout: ``wizard/engine/layout.py``.
    """

    id = "SD127"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.nnodes", "extra_args.headless", "extra_args.api_server_count")
    phase = "load"

    def check(self, ctx):
        lay = ctx.view.layout
        for name, msg in lay.start_refusals():
            if name == "nnodes":
                fix = set_option_patch(ctx, "data_parallel_size_local", None,
                                       "Remove --data-parallel-size-local (vLLM infers it from --nnodes)")
                yield self.finding(msg, fields=[option_path(ctx, "nnodes"), option_path(ctx, "data_parallel_size_local")],
                                   fixes=[fix])
            else:
                yield self.finding(msg, fields=[option_path(ctx, name)],
                                   fixes=[set_option_patch(ctx, name, None, "Remove --" + name.replace("_", "-"))])
