from __future__ import annotations

from wizard.config import Patch
from wizard.rules.optionvalues import set_option_patch
from wizard.rules.registry import Rule, Severity, register


def _fits_patch(ctx, lay, per_node: int) -> list[Patch]:
    """Spread the layout over nodes of ``per_node`` GPUs (``--nnodes``), or over local DP ranks."""
    if lay.dp > 1 and lay.world_within_dp <= per_node and not lay.multi_node:
        local = per_node // lay.world_within_dp
        while local > 1 and lay.dp % local:
            local -= 1
        return [set_option_patch(ctx, "data_parallel_size_local", local,
                                 f"Run {local} data-parallel rank(s) on this node (--data-parallel-size-local {local}; "
                                 "the other nodes join with --headless: wizard export --to multinode)")]
    if lay.world % per_node == 0 and lay.world // per_node > 1:
        n = lay.world // per_node
        return [set_option_patch(ctx, "nnodes", n, f"Spread over {n} nodes of {per_node} GPUs (--nnodes {n}; "
                                                    "wizard export --to multinode writes each node's command)")]
    return []


@register
class LayoutExceedsNode(Rule):
    r"""The parallel layout needs more GPUs on a node than it has, or splits tensor parallelism across nodes

    ## What it does

    With the GPUs of one node known (``--gpu NAMExN``: N per node), compares the GPUs this
    process starts on its node -- ``world / --nnodes`` across nodes, else
    ``data_parallel_size_local x TP x PP`` -- with N: more is an error across nodes (each node is
    the machine named) and a warning on one node (the ``--gpu`` spec may be a plan: SD500
    suggests more GPUs). With ``--nnodes`` above 1, a
    tensor-parallel size above the GPUs each node runs is a warning (TP's all-reduce then
    crosses the inter-node network every layer; vLLM's guide: TP = GPUs per node, PP = nodes).
    Ray placements (``--distributed-executor-backend ray``) are not judged.

    ## Why it matters

    On one node vLLM refuses to build the config: "World size (16) is larger than the number
    of available GPUs (8) in this node. If this is intentional and you are using: - ray, set
    '--distributed-executor-backend ray'. - multiprocessing, set '--nnodes' appropriately."
    Across nodes the workers fail when they open a device the node does not have. TP across
    nodes runs, but every decode step -- and every draft step of the speculator -- waits on
    network all-reduces.

    ## Example

    Four pipeline stages of TP 8 on two nodes of 8 GPUs: 16 GPUs per node.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 4 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 4 --nnodes 4 --node-rank 0 --master-addr 10.0.0.1 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Review: ``--nnodes`` (or ``--data-parallel-size-local``) describes machines you must
    provide and start (every other node runs the same command with its rank and
    ``--headless``); moving TP into PP changes the communication pattern, not the GPU count.

    ## Source

    vllm/config/parallel.py ``ParallelConfig.__post_init__`` (0.32 L1045-L1058: world size vs
    ``device_count`` on CUDA when nnodes is 1); vllm/engine/arg_utils.py
    ``create_engine_config`` (0.32 L2358-L2405: local world size and ``data_parallel_size_local``);
    docs/serving/parallelism_scaling.md (TP = GPUs per node, PP = nodes). Layout:
    ``wizard/engine/layout.py``.
    """

    id = "SD126"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "extra_args.nnodes")
    phase = "config"

    def check(self, ctx):
        hw = ctx.hardware
        lay = ctx.view.layout
        if hw is None or hw.vendor == "cpu" or lay.refusals():
            return
        if lay.executor == "ray" or lay.dp_backend == "ray":
            return
        per_node = hw.count
        here = lay.gpus_here
        if here > per_node:
            where = (f"each of the {lay.nnodes} nodes runs world size {lay.world} / {lay.nnodes} = {here} GPUs"
                     if lay.multi_node else
                     f"this node runs {here} GPUs (" + (f"data_parallel_size_local {lay.dp_local_resolved} x " if lay.dp > 1
                                                       else "") + f"TP {lay.tp} x PP {lay.pp})")
            vllm_says = ("" if lay.multi_node or lay.dp > 1 else
                         f"; on that machine vLLM refuses it: 'World size ({lay.world_within_dp}) is larger than the "
                         f"number of available GPUs ({per_node}) in this node'. A warning, not an error, because the "
                         f"GPU count named may be a plan: name the node you will run on (--gpu {hw.name}x{here})")
            # one node: a warning, the --gpu spec may be the machine you have or the one you plan (SD500's
            # fixes suggest more GPUs); across nodes each node is the given machine: an error
            yield self.finding(f"{where}, but the node has {per_node} {hw.name}{vllm_says}.",
                               fixes=_fits_patch(ctx, lay, per_node),
                               severity=Severity.ERROR if lay.multi_node else Severity.WARNING)
            return
        if lay.tp_crosses_nodes:
            local = lay.world // lay.nnodes
            fixes = []
            if local >= 1 and lay.tp % local == 0:
                pp = lay.pp * (lay.tp // local)
                fixes.append(Patch(description=f"Use TP {local} x PP {pp}: tensor parallelism inside each node, "
                                               "pipeline stages across nodes",
                                   set={"tensor_parallel_size": local, "pipeline_parallel_size": pp}))
            yield self.finding(
                f"tensor_parallel_size {lay.tp} spans {lay.tp // max(local, 1)} nodes of {local} GPUs: every layer's "
                "all-reduce (target and drafter) crosses the inter-node network. Keep TP inside a node and use "
                "pipeline parallelism across nodes, unless the nodes share NVLink (e.g. GB200 NVL72).",
                fields=["tensor_parallel_size", "extra_args.nnodes"], fixes=fixes, severity=Severity.WARNING)
