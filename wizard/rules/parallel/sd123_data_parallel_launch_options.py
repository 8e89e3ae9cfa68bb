from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


@register
class DataParallelLaunchOptions(Rule):
    r"""Data-parallel load-balancing flags without the data-parallel setup they need

    ## What it does

    Flags ``--data-parallel-rank`` or ``--data-parallel-external-lb`` with
    ``--data-parallel-size`` 1 (EngineArgs turns a given rank into external LB, which
    ``ParallelConfig`` allows only with more than one rank), ``--data-parallel-hybrid-lb``
    without ``--data-parallel-size-local``, and ``--data-parallel-multi-port-external-lb``
    with ``--data-parallel-size`` below 2.

    ## Why it matters

    vLLM stops before loading: "data_parallel_external_lb can only be set when
    data_parallel_size > 1", "`--data-parallel-hybrid-lb` requires
    `--data-parallel-size-local`", "--data-parallel-multi-port-external-lb requires
    --data-parallel-size > 1".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --data-parallel-rank 1
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Removing the load-balancing flag is safe with a single data-parallel rank (there is
    nothing to balance); sizing the deployment is left to the user.

    ## Source

    vllm/config/parallel.py ``ParallelConfig.__post_init__`` (external LB, 0.28-0.33);
    vllm/engine/arg_utils.py ``create_engine_config`` (hybrid LB, 0.28-0.33);
    vllm/entrypoints/openai/dp_supervisor.py (0.28), vllm/entrypoints/launchers/dp_supervisor.py
    (0.29-0.33) for multi-port LB; conformance ``benchmarks/conformance_schema.py`` on 0.32.
    """

    id = "SD123"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("data_parallel_size", "extra_args.data_parallel_rank", "extra_args.data_parallel_external_lb",
              "extra_args.data_parallel_hybrid_lb", "extra_args.data_parallel_multi_port_external_lb")
    phase = "config"

    def check(self, ctx):
        try:
            dp = int(option(ctx, "data_parallel_size", 1) or 1)
        except (TypeError, ValueError):
            return
        rank = option(ctx, "data_parallel_rank")
        ext = truthy(option(ctx, "data_parallel_external_lb"))
        if truthy(option(ctx, "data_parallel_multi_port_external_lb")):
            if dp < 2:
                yield self.finding(
                    "Error: --data-parallel-multi-port-external-lb requires --data-parallel-size > 1.",
                    fixes=[set_option_patch(ctx, "data_parallel_multi_port_external_lb", None,
                                            "Remove --data-parallel-multi-port-external-lb")])
            return
        if (ext or rank is not None) and dp <= 1:
            names = [n for n, v in (("data_parallel_rank", rank is not None), ("data_parallel_external_lb", ext)) if v]
            fix = set_option_patch(ctx, names[0], None, "Remove --" + names[0].replace("_", "-"))
            if len(names) == 2:
                fix = fix.model_copy(update={"description": "Remove --data-parallel-rank and --data-parallel-external-lb"})
                extra = dict(ctx.config.extra_args)
                for n in names:
                    extra.pop(n, None)
                fix = fix.model_copy(update={"set": {"extra_args": extra}} if extra else {"set": {}, "unset": ["extra_args"]})
            flag = "--data-parallel-rank" if rank is not None else "--data-parallel-external-lb"
            yield self.finding(
                f"{flag} with --data-parallel-size {dp}: data_parallel_external_lb can only be set when "
                "data_parallel_size > 1.", fixes=[fix])
            return
        if truthy(option(ctx, "data_parallel_hybrid_lb")) and option(ctx, "data_parallel_size_local") is None:
            yield self.finding(
                "`--data-parallel-hybrid-lb` requires `--data-parallel-size-local` (the number of data-parallel "
                "ranks on this node).",
                fixes=[set_option_patch(ctx, "data_parallel_hybrid_lb", None, "Remove --data-parallel-hybrid-lb")])
