"""The process layout of one ``vllm serve`` over nodes: world size, nodes, this node's GPUs and
data-parallel ranks, and the launch options vLLM refuses -- one definition, read by the layout
rules (SD125-SD127) as ``ctx.view.layout`` and by the native multi-node export
(:mod:`wizard.io.multinode`).

Mirrors vLLM 0.32 ``EngineArgs.create_engine_config`` (vllm/engine/arg_utils.py L2339-L2520:
the ``--nnodes`` / ``--node-rank`` / ``--data-parallel-*`` resolution, the same in 0.28-0.33),
``ParallelConfig.nnodes_within_dp`` / ``local_world_size`` and ``__post_init__``'s executor
checks (vllm/config/parallel.py L804-L836, L1045-L1095), and ``ServeSubcommand.cmd``'s
``--headless`` check (vllm/entrypoints/cli/serve.py L69-L76).

    lay = layout_of(options)          # options: EngineArgs name -> value (engine.options.user_options)
    lay.world, lay.gpus_here, lay.refusals()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Layout", "layout_of", "EXECUTORS_MULTI_NODE"]

#: executor backends ParallelConfig allows with nnodes > 1 (vllm/config/parallel.py L1088, 0.32)
EXECUTORS_MULTI_NODE = ("mp", "uni", "external_launcher")

_CAP = 1 << 20


def _int(v: Any, default: int | None) -> int | None:
    if isinstance(v, bool):
        return default
    if isinstance(v, int):
        return min(v, _CAP) if v >= -_CAP else default
    if isinstance(v, str):
        try:
            return _int(int(v.strip()), default)
        except ValueError:
            return default
    return default


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes", "on")
    return bool(v)


@dataclass(frozen=True)
class Layout:
    """Launch-time parallel options of one process, as EngineArgs holds them (vLLM defaults)."""

    tp: int = 1
    pp: int = 1
    pcp: int = 1
    dp: int = 1
    nnodes: int = 1
    node_rank: int = 0
    dp_local: int | None = None
    dp_start_rank: int | None = None
    dp_rank: int | None = None
    dp_backend: str = "mp"
    executor: str | None = None
    headless: bool = False
    external_lb: bool = False
    hybrid_lb: bool = False
    api_server_count: int | None = None
    expert_parallel: bool = False

    @property
    def world_within_dp(self) -> int:
        """GPUs of one data-parallel replica: PP x TP x prefill-context-parallel (arg_utils L2359)."""
        return max(self.pp, 1) * max(self.tp, 1) * max(self.pcp, 1)

    @property
    def world(self) -> int:
        """Every GPU of the deployment: DP x the replica's world (arg_utils L2364)."""
        return max(self.dp, 1) * self.world_within_dp

    @property
    def multi_node(self) -> bool:
        return self.nnodes > 1

    @property
    def dp_local_resolved(self) -> int:
        """``data_parallel_size_local`` as vLLM resolves it for internal load balancing: given, or
        inferred from ``--nnodes`` (``max(local_world // world_within_dp, 1)``), else DP; 1 with
        external LB (arg_utils L2401-L2494)."""
        if self.external_lb or self.dp_rank is not None:
            return 1
        if self.dp_local is not None:
            return self.dp_local
        if self.multi_node and self.world % self.nnodes == 0:
            return max((self.world // self.nnodes) // self.world_within_dp, 1)
        return max(self.dp, 1)

    @property
    def gpus_here(self) -> int:
        """GPUs this process uses on its own node: ``world / nnodes`` across nodes (vLLM's
        local world size), else ``data_parallel_size_local x world_within_dp``."""
        if self.multi_node and self.world % self.nnodes == 0:
            return self.world // self.nnodes
        return self.dp_local_resolved * self.world_within_dp

    @property
    def tp_crosses_nodes(self) -> bool:
        """One tensor-parallel group spans nodes: more TP ranks than this node runs."""
        return self.multi_node and self.world % self.nnodes == 0 and self.tp > self.world // self.nnodes

    def refusals(self) -> list[tuple[str, str]]:
        """(option, vLLM's message) for each launch option vLLM 0.28-0.33 refuses while building
        the config (``create_engine_config`` / ``ParallelConfig``), in vLLM's order."""
        out: list[tuple[str, str]] = []
        if self.headless and self.hybrid_lb:
            out.append(("data_parallel_hybrid_lb", "data_parallel_hybrid_lb is not applicable in headless mode"))
        if not self.multi_node:
            return out
        if self.dp_backend != "mp":
            out.append(("data_parallel_backend", f"`--nnodes {self.nnodes}` requires `--data-parallel-backend mp`; got "
                                                 f"`--data-parallel-backend {self.dp_backend}`."))
            return out
        if self.world % self.nnodes != 0:
            out.append(("nnodes", f"`--nnodes {self.nnodes}` must evenly divide the total world size ({self.world})."))
            return out
        if not 0 <= self.node_rank < self.nnodes:
            out.append(("node_rank", f"`--node-rank` must be between 0 and {self.nnodes - 1}; got "
                                     f"`--node-rank {self.node_rank}`."))
            return out
        if self.executor is not None and self.executor not in EXECUTORS_MULTI_NODE:
            out.append(("distributed_executor_backend", "nnodes > 1 can only be set when distributed executor backend "
                                                        "is mp, uni or external_launcher."))
        return out

    def start_refusals(self) -> list[tuple[str, str]]:
        """(option, vLLM's message) for what ``vllm serve`` refuses after the config is built,
        before any weight loads: ``--headless`` with API servers (serve.py ``cmd``), and DP node
        groups that do not divide ``--nnodes`` (``ParallelConfig.nnodes_within_dp``, read when
        the processes start)."""
        out: list[tuple[str, str]] = []
        if self.headless and (self.api_server_count or 0) > 0:
            out.append(("api_server_count", f"--api-server-count={self.api_server_count} cannot be used with --headless "
                                            "(no API servers are started in headless mode)."))
        if self.multi_node and not self.refusals() and not self.external_lb and self.dp_rank is None:
            local = max(self.dp_local_resolved, 1)
            groups = max(self.dp, 1) // local
            if groups >= 1 and self.nnodes % groups != 0:
                out.append(("nnodes", f"Invalid data parallel configuration: nnodes ({self.nnodes}) must be divisible "
                                      f"by the number of data parallel node groups ({groups} = data_parallel_size "
                                      f"{self.dp} / data_parallel_size_local {local})"))
        return out


def layout_of(options: dict[str, Any]) -> Layout:
    """The :class:`Layout` of the options the user set (EngineArgs names; unset = vLLM's default;
    unusable values fall back to the default, the option rules report them)."""
    o = options

    def pos(name: str, default: int) -> int:
        v = _int(o.get(name), default)
        return v if v is not None and v >= 1 else default

    ex = o.get("distributed_executor_backend")
    return Layout(
        tp=pos("tensor_parallel_size", 1), pp=pos("pipeline_parallel_size", 1),
        pcp=pos("prefill_context_parallel_size", 1), dp=pos("data_parallel_size", 1),
        nnodes=pos("nnodes", 1), node_rank=_int(o.get("node_rank"), 0) or 0,
        dp_local=_int(o.get("data_parallel_size_local"), None),
        dp_start_rank=_int(o.get("data_parallel_start_rank"), None),
        dp_rank=_int(o.get("data_parallel_rank"), None),
        dp_backend=str(o.get("data_parallel_backend") or "mp"),
        executor=str(ex) if isinstance(ex, str) and ex not in ("", "None") else None,
        headless=_truthy(o.get("headless", False)),
        external_lb=_truthy(o.get("data_parallel_external_lb", False)),
        hybrid_lb=_truthy(o.get("data_parallel_hybrid_lb", False)),
        api_server_count=_int(o.get("api_server_count"), None),
        expert_parallel=_truthy(o.get("enable_expert_parallel", False)),
    )
