from __future__ import annotations

from wizard.config import Patch
from wizard.rules.optionvalues import option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register


def _divisors_near(world: int, nnodes: int) -> int | None:
    """The node count closest to ``nnodes`` that divides ``world`` (above 1), or None."""
    best = None
    for n in range(2, min(world, 4096) + 1):
        if world % n == 0 and (best is None or abs(n - nnodes) < abs(best - nnodes)):
            best = n
    return best


@register
class MultiNodeLaunchOptions(Rule):
    r"""Native multi-node options vLLM refuses (``--nnodes``, ``--node-rank``, ``--headless``)

    ## What it does

    Checks the options of one node of vLLM's own multi-node launch (no Ray) the way
    ``EngineArgs.create_engine_config`` reads them: ``--nnodes`` above 1 needs
    ``--data-parallel-backend mp``, must divide the whole world size (DP x PP x TP x
    prefill-context-parallel), ``--node-rank`` must lie in ``0..nnodes-1``, the executor must be
    ``mp``, ``uni`` or ``external_launcher``; ``--headless`` takes no
    ``--data-parallel-hybrid-lb``. (What ``vllm serve`` refuses once the config is built:
    SD127.)

    ## Why it matters

    vLLM stops before loading with "Invalid data-parallel launch options: `--nnodes 3` must
    evenly divide the total world size (16)", "`--node-rank` must be between 0 and 1", "nnodes
    > 1 can only be set when distributed executor backend is mp, uni or external_launcher" --
    on one node of the group, while the others wait for it at the rendezvous.

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --nnodes 3 --node-rank 0 --master-addr 10.0.0.1 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Review: the suggested node count divides the world size, but the machines to run it on are
    yours to provide; removing ``--distributed-executor-backend ray`` switches to vLLM's own
    multiprocessing launcher (every node then runs ``vllm serve``, ``--headless`` beyond rank 0:
    ``wizard export --to multinode``).

    ## Source

    vllm/engine/arg_utils.py ``create_engine_config`` (0.32 L2339-L2400: backend, world size,
    node rank; L2339: headless hybrid LB), vllm/config/parallel.py ``ParallelConfig.__post_init__``
    (0.32 L1088-L1095: executor); the same checks in 0.28-0.33; vLLM 0.32's verdicts on these
    layouts in tests/test_multinode.py. Layout: ``wizard/engine/layout.py``.
    """

    id = "SD125"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.nnodes", "extra_args.node_rank", "extra_args.headless")
    phase = "config"

    def check(self, ctx):
        lay = ctx.view.layout
        for name, msg in lay.refusals():
            fixes: list[Patch] = []
            if name == "nnodes":
                n = _divisors_near(lay.world, lay.nnodes)
                if n is not None and n != lay.nnodes:
                    fixes.append(set_option_patch(ctx, "nnodes", n, f"Use --nnodes {n} (divides the world size "
                                                                    f"{lay.world})"))
            elif name == "node_rank":
                fixes.append(set_option_patch(ctx, "node_rank", lay.nnodes - 1,
                                              f"Use --node-rank {lay.nnodes - 1} (the last node)"))
            elif name == "data_parallel_backend":
                fixes.append(set_option_patch(ctx, "data_parallel_backend", None,
                                              "Remove --data-parallel-backend (vLLM's default mp)"))
            elif name == "distributed_executor_backend":
                fixes.append(set_option_patch(ctx, "distributed_executor_backend", "mp",
                                              "Use --distributed-executor-backend mp"))
            else:
                fixes.append(set_option_patch(ctx, name, None, "Remove --" + name.replace("_", "-")))
            yield self.finding(f"Invalid multi-node launch options: {msg}", fields=[option_path(ctx, name)],
                               fixes=fixes)
