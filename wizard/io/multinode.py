"""vLLM's native multi-node launch (no Ray): one ``vllm serve`` per node, rank 0 serving the API,
the others ``--headless``.

    from wizard.io.multinode import node_commands
    nodes = node_commands(cfg, {"gpus_per_node": 8, "head_address": "10.0.0.1"})
    nodes[1].args      # the words after `vllm serve` on node 1
    export_scaleout(cfg, "multinode", hardware="H200x8")   # the shell text

Two layouts, as vLLM 0.28-0.33 document and parse them (vllm/engine/arg_utils.py
``create_engine_config``, 0.32 L2339-L2520; docs/serving/parallelism_scaling.md and
docs/serving/data_parallel_deployment.md):

* **TP x PP across nodes** (``data_parallel_size`` 1, or one DP replica larger than a node):
  every node runs the same command with ``--nnodes N --node-rank R --master-addr HEAD``
  (``--master-port`` when given) and ``--distributed-executor-backend mp`` unless the config
  names one; ranks above 0 add ``--headless``. vLLM checks that ``N`` divides the world size
  (DP x PP x TP) and infers each node's data-parallel rank from its node rank.
* **DP (x EP) with replicas that fit a node**: ``--data-parallel-size-local L`` on every node
  (``L = GPUs per node / (TP x PP)``, the largest divisor of DP not above it),
  ``--data-parallel-address HEAD`` (and ``--data-parallel-rpc-port`` when given); node R > 0
  adds ``--headless --data-parallel-start-rank R*L``. ``--enable-expert-parallel`` and the rest
  of the configuration are the same on every node.

Every node's arguments are ``to_argv`` of a copy of the ServeConfig with these options set in
``extra_args`` (multi-node options the config already holds are replaced), so the checks and the
oracle see exactly what each node runs (``tests/test_multinode.py`` gives each node's argv to
vLLM 0.32's own parser and config build). The environment each node needs: ``VLLM_HOST_IP`` =
that node's own address (vLLM's ``get_ip``), ``GLOO_SOCKET_IFNAME`` / ``NCCL_SOCKET_IFNAME``
when ``ifname`` is given (vLLM's troubleshooting guide for hosts with several NICs), and the
configuration's ``env``.

Options (besides those of :mod:`wizard.io.scaleout`): ``head_address`` (default ``$HEAD_IP``),
``master_port``, ``dp_rpc_port``, ``nodes`` (TP x PP layout: the node count), ``dp_local``
(DP layout: ranks per node), ``ifname``, ``node_ip`` (default ``$NODE_IP``).
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from wizard.config import ServeConfig
from wizard.engine.layout import layout_of
from wizard.engine.options import user_options
from wizard.io.deploy import draft_tp_note, gpus_per_node, port_of, serve_args, with_fields

__all__ = ["NodeCommand", "node_commands", "multinode", "MULTI_NODE_OPTIONS", "MAX_NODES"]

#: the launch options this export sets per node (replaced when the configuration has them)
MULTI_NODE_OPTIONS = ("nnodes", "node_rank", "master_addr", "master_port", "headless", "data_parallel_size_local",
                      "data_parallel_start_rank", "data_parallel_address", "data_parallel_rpc_port", "data_parallel_rank")

_VAR = re.compile(r"^\$[A-Za-z_][A-Za-z0-9_]*$")

#: Most nodes one export writes: beyond this a size is a typo (``-tp 1000000000``), not a cluster.
MAX_NODES = 256


@dataclass
class NodeCommand:
    """One node's launch: its rank, whether it serves the API, the words after ``vllm serve``,
    its environment and the GPUs it uses."""

    rank: int
    serves: bool
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    gpus: int = 0

    @property
    def argv(self) -> list[str]:
        return ["vllm", "serve", *self.args]


def _sh(token: str) -> str:
    """Shell quoting that leaves a bare ``$VAR`` expandable (``"$HEAD_IP"``)."""
    return f'"{token}"' if _VAR.match(token) else shlex.quote(token)


def _int_opt(opts: dict[str, Any], name: str, default: int | None = None) -> int | None:
    v = opts.get(name, default)
    if v is None:
        return None
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {v!r} is not a number") from None
    if n < 1:
        raise ValueError(f"{name}: {n} must be >= 1")
    return n


def _bound(n: int, what: str) -> None:
    if n > MAX_NODES:
        raise ValueError(f"{what} needs {n} nodes, more than the {MAX_NODES} one export writes: lower the parallel "
                         "sizes (a typo?), or give gpus_per_node")


def node_commands(cfg: ServeConfig, opts: dict[str, Any] | None = None) -> list[NodeCommand]:
    """Each node's command (see the module docstring).

    Raises:
        ValueError: a layout vLLM refuses (the message says why and what to change).
    """
    opts = dict(opts or {})
    lay = layout_of(user_options(cfg))
    per_node = gpus_per_node(cfg, opts)
    head = str(opts.get("head_address") or cfg.extra_args.get("master_addr") or "$HEAD_IP")
    master_port = _int_opt(opts, "master_port", cfg.extra_args.get("master_port"))
    rpc_port = _int_opt(opts, "dp_rpc_port", cfg.extra_args.get("data_parallel_rpc_port"))
    if lay.executor == "ray" or lay.dp_backend == "ray":
        raise ValueError("the configuration uses Ray (--distributed-executor-backend / --data-parallel-backend ray); "
                         "native multi-node needs vLLM's mp backend: remove the option, or export --to ray")
    inner = lay.world_within_dp
    base_extra: dict[str, Any] = {k: None for k in MULTI_NODE_OPTIONS}
    per_node_extra: list[dict[str, Any]] = []
    if lay.dp > 1 and inner <= per_node:
        local = _int_opt(opts, "dp_local") or per_node // inner
        local = max(1, min(local, lay.dp))
        while lay.dp % local:
            local -= 1
        n = lay.dp // local
        _bound(n, f"data_parallel_size {lay.dp} / {local} rank(s) per node")
        for r in range(n):
            e: dict[str, Any] = {"data_parallel_size_local": local, "data_parallel_address": head}
            if rpc_port is not None:
                e["data_parallel_rpc_port"] = rpc_port
            if r:
                e.update(headless=True, data_parallel_start_rank=r * local)
            per_node_extra.append(e)
        gpus = local * inner
    else:
        world = lay.world
        n = _int_opt(opts, "nodes") or max(1, math.ceil(world / per_node))
        if world % n:
            raise ValueError(f"{n} nodes do not divide the world size {world} (DP {lay.dp} x PP {lay.pp} x TP {lay.tp}); "
                             "vLLM refuses it ('--nnodes must evenly divide the total world size'): change the node "
                             "count or the parallel sizes")
        _bound(n, f"world size {world} over {per_node} GPU(s) per node")
        if world // n > per_node:
            raise ValueError(f"{world} GPUs over {n} nodes is {world // n} per node, more than the {per_node} a node has: "
                             f"use {math.ceil(world / per_node)} nodes (nodes=...) or more GPUs per node")
        for r in range(n):
            e = {"nnodes": n, "node_rank": r, "master_addr": head} if n > 1 else {}
            if n > 1 and master_port is not None:
                e["master_port"] = master_port
            if n > 1 and lay.executor is None:
                e["distributed_executor_backend"] = "mp"
            if r:
                e["headless"] = True
            per_node_extra.append(e)
        gpus = world // n
    env_base = {}
    if opts.get("ifname"):
        env_base = {"GLOO_SOCKET_IFNAME": str(opts["ifname"]), "NCCL_SOCKET_IFNAME": str(opts["ifname"])}
    node_ip = str(opts.get("node_ip", "$NODE_IP"))
    out: list[NodeCommand] = []
    for r, e in enumerate(per_node_extra):
        node_cfg = with_fields(cfg, extra={**base_extra, **e})
        env = {"VLLM_HOST_IP": node_ip, **env_base, **{str(k): str(v) for k, v in cfg.env.items()}} \
            if len(per_node_extra) > 1 else {str(k): str(v) for k, v in cfg.env.items()}
        out.append(NodeCommand(rank=r, serves=r == 0, args=serve_args(node_cfg), env=env, gpus=gpus))
    return out


def multinode(cfg: ServeConfig, opts: dict[str, Any]) -> str:
    """The shell text: one command per node, with the layout and what every node needs."""
    nodes = node_commands(cfg, opts)
    lay = layout_of(user_options(cfg))
    port = port_of(cfg, opts)
    dp_form = lay.dp > 1 and lay.world_within_dp <= gpus_per_node(cfg, opts)
    lines = ["#!/bin/sh",
             f"# Native multi-node vLLM (no Ray) for {cfg.model}, generated by SpecWizard.",
             f"# {len(nodes)} node(s) x {nodes[0].gpus} GPU(s): " +
             (f"data_parallel_size {lay.dp} ({lay.dp // len(nodes)} rank(s) per node) x TP {lay.tp} x PP {lay.pp}"
              if dp_form else f"DP {lay.dp} x PP {lay.pp} x TP {lay.tp} = {lay.world} GPUs over --nnodes {len(nodes)}")
             + (", expert parallel" if lay.expert_parallel else "") + "."]
    if len(nodes) == 1:
        lines.append("# The layout fits one node: no multi-node options needed.")
    note = draft_tp_note(cfg)
    if note:
        lines.append(note)
    if len(nodes) > 1:
        lines += [
            "# Every node: the same vLLM version, the model at the same path, and these variables set:",
            "#   HEAD_IP = node 0's address (reachable from every node), NODE_IP = this node's own address;",
            "#   several NICs: GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME = the interface of HEAD_IP's network.",
            f"# Node 0 serves the API on port {port}; the others run --headless (no API server).",
        ]
    for nc in nodes:
        lines.append("")
        lines.append(f"# ---- node {nc.rank}" + (" (serves the API)" if nc.serves else " (--headless)"))
        prefix = " ".join(f"{k}={_sh(v)}" for k, v in nc.env.items())
        cmd = " ".join(_sh(t) for t in nc.argv)
        lines.append(f"{prefix} {cmd}" if prefix else cmd)
    return "\n".join(lines) + "\n"
