"""vLLM's native multi-node export (``export --to multinode``, wizard/io/multinode.py) and the layout
rules SD125/SD126: each node's command, its re-import, and (marker ``vllm``) vLLM 0.32's own
parser + serve validator + config build on every node's argv -- DeepSeek-V3 MTP on 2 nodes x 8
H200 (TP8 PP2 and TP16) and Qwen3-235B-A22B EAGLE3 with DP 8 x EP -- and the layouts vLLM refuses
are the ones SD125 refuses."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from wizard import api
from wizard.config import config_from_dict
from wizard.io.forms import FORMATS, export
from wizard.io.multinode import node_commands
from wizard.io.scaleout import export_scaleout

HF = Path(__file__).parent / "data" / "hf"
DS_DIR = HF / "deepseek-ai--DeepSeek-V3"
MTP = {"method": "mtp", "num_speculative_tokens": 1}
EAGLE3 = {"method": "eagle3", "model": "qwen3-235b-a22b-eagle3", "num_speculative_tokens": 3}
HEAD = "10.0.0.1"


def _ds(**kw):
    return config_from_dict({"model": "deepseek-ai/DeepSeek-V3", "speculative_config": dict(MTP), **kw})


def _qwen(drafter="qwen3-235b-a22b-eagle3", **kw):
    return config_from_dict({"model": "Qwen/Qwen3-235B-A22B", "speculative_config": {**EAGLE3, "model": drafter},
                             "tensor_parallel_size": 2, "data_parallel_size": 8,
                             "extra_args": {"enable_expert_parallel": True}, **kw})


def _opt(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


# ---- layouts -----------------------------------------------------------------------------------

def test_tp8_pp2_two_nodes():
    nodes = node_commands(_ds(tensor_parallel_size=8, pipeline_parallel_size=2), {"hardware": "H200x8", "head_address": HEAD})
    assert [n.rank for n in nodes] == [0, 1] and [n.serves for n in nodes] == [True, False]
    for n in nodes:
        assert _opt(n.args, "--nnodes") == "2" and _opt(n.args, "--node-rank") == str(n.rank)
        assert _opt(n.args, "--master-addr") == HEAD and _opt(n.args, "--distributed-executor-backend") == "mp"
        assert ("--headless" in n.args) == (n.rank > 0)
        assert json.loads(_opt(n.args, "--speculative-config")) == MTP
        assert n.gpus == 8 and n.env["VLLM_HOST_IP"] == "$NODE_IP"


def test_tp16_over_two_nodes_and_the_tp_warning():
    cfg = _ds(tensor_parallel_size=16)
    nodes = node_commands(cfg, {"gpus_per_node": 8})
    assert len(nodes) == 2 and all(_opt(n.args, "--nnodes") == "2" for n in nodes)
    node0 = api.load(command=nodes[0].argv)
    rep = api.check(node0, gpu="H200x8", vllm_version="0.32", allow_hub=False)
    sd126 = [f for f in rep.findings if f.rule == "SD126"]
    assert [f.severity.value for f in sd126] == ["warning"] and "spans 2 nodes" in sd126[0].message
    assert sd126[0].fixes[0].set == {"tensor_parallel_size": 8, "pipeline_parallel_size": 2}


def test_dp8_ep_two_nodes():
    nodes = node_commands(_qwen(), {"hardware": "H200x8", "head_address": HEAD, "dp_rpc_port": 13345})
    assert len(nodes) == 2
    for n in nodes:
        assert _opt(n.args, "--data-parallel-size") == "8" and _opt(n.args, "--data-parallel-size-local") == "4"
        assert _opt(n.args, "--data-parallel-address") == HEAD and _opt(n.args, "--data-parallel-rpc-port") == "13345"
        assert "--enable-expert-parallel" in n.args and "--nnodes" not in n.args
    assert "--headless" not in nodes[0].args and _opt(nodes[0].args, "--data-parallel-start-rank") is None
    assert "--headless" in nodes[1].args and _opt(nodes[1].args, "--data-parallel-start-rank") == "4"


def test_dp_replica_larger_than_a_node_uses_nnodes():
    cfg = _ds(tensor_parallel_size=16, data_parallel_size=2, extra_args={"enable_expert_parallel": True})
    nodes = node_commands(cfg, {"gpus_per_node": 8})
    assert [_opt(n.args, "--node-rank") for n in nodes] == ["0", "1", "2", "3"]
    assert all(_opt(n.args, "--nnodes") == "4" for n in nodes)


def test_one_node_needs_no_multi_node_options():
    nodes = node_commands(_ds(tensor_parallel_size=8), {"gpus_per_node": 8})
    assert len(nodes) == 1 and not any(a in nodes[0].args for a in ("--nnodes", "--headless", "--master-addr"))


def test_layouts_vllm_refuses_raise():
    with pytest.raises(ValueError, match="do not divide the world size 16"):
        node_commands(_ds(tensor_parallel_size=8, pipeline_parallel_size=2), {"gpus_per_node": 8, "nodes": 3})
    with pytest.raises(ValueError, match="mp backend"):
        node_commands(_ds(tensor_parallel_size=16, extra_args={"distributed_executor_backend": "ray"}), {})


def test_typo_sizes_are_refused_in_one_line():
    with pytest.raises(ValueError, match="more than the 256 one export writes"):
        node_commands(_ds(tensor_parallel_size=1_000_000_000), {})
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "wizard", "export", "--to", "multinode", "--", "vllm", "serve", "m/x",
                        "-dp", "1000000000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nodes" in r.stderr and not r.stdout


def test_cli_gpu_is_the_node_size(capsys):
    from wizard.cli import main

    assert main(["export", "--to", "multinode", "--gpu", "H200x4", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3",
                 "-tp", "4", "-pp", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("vllm serve") == 2 and "--nnodes 2" in out and "2 node(s) x 4 GPU(s)" in out


def test_existing_multi_node_options_are_replaced():
    cfg = _ds(tensor_parallel_size=8, pipeline_parallel_size=2,
              extra_args={"nnodes": 4, "node_rank": 3, "headless": True, "master_addr": "h"})
    nodes = node_commands(cfg, {"gpus_per_node": 8})
    assert [n.args.count("--nnodes") for n in nodes] == [1, 1]
    assert "--headless" not in nodes[0].args and _opt(nodes[0].args, "--master-addr") == "h"


def test_each_node_reimports_with_every_option_and_checks_clean():
    """Round trip: each node's argv re-imports to the configuration plus that node's options only."""
    cfg = _ds(tensor_parallel_size=8, pipeline_parallel_size=2, max_model_len=32768, kv_cache_dtype="fp8",
              env={"VLLM_USE_V2_MODEL_RUNNER": "0"})
    for n in node_commands(cfg, {"hardware": "H200x8", "head_address": HEAD}):
        back = api.load(command=n.argv)
        assert back.model == cfg.model and back.max_model_len == 32768 and back.kv_cache_dtype == "fp8"
        assert back.speculative_config == cfg.speculative_config
        assert str(back.extra_args["nnodes"]) == "2" and str(back.extra_args["node_rank"]) == str(n.rank)
        assert ("headless" in back.extra_args) == (n.rank > 0)
        rep = api.check(back, gpu="H200x8", vllm_version="0.32", allow_hub=False)
        assert not [f.rule for f in rep.findings if f.rule in ("SD125", "SD126", "SD127")]


def test_shell_text_and_forms():
    assert "multinode" in FORMATS
    text = export(_ds(tensor_parallel_size=8, pipeline_parallel_size=2), "multinode")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert len(lines) == 2
    words = [shlex.split(ln) for ln in lines]  # the shell would see $HEAD_IP / $NODE_IP expanded
    assert words[0][0] == "VLLM_HOST_IP=$NODE_IP" and words[0][1:3] == ["vllm", "serve"]
    assert "--headless" in words[1] and '"$HEAD_IP"' in lines[1]
    assert export_scaleout(_ds(tensor_parallel_size=16), "multi-node", gpus_per_node=8).count("vllm serve") == 2
    text = export_scaleout(_qwen(), "multinode", hardware="H200x8", ifname="eth0")
    assert "GLOO_SOCKET_IFNAME=eth0 NCCL_SOCKET_IFNAME=eth0" in text


# ---- vLLM 0.32's own verdict on each node's argv -----------------------------------------------

@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Local model folders vLLM reads at config time (config.json only; no weights needed)."""
    root = tmp_path_factory.mktemp("multinode")
    targets = yaml.safe_load((Path(__file__).parents[1] / "presets" / "models" / "targets.yaml").read_text())
    qcfg = next(t for t in targets if t["id"] == "Qwen/Qwen3-235B-A22B")["config"]
    q = root / "Qwen3-235B-A22B"
    q.mkdir()
    (q / "config.json").write_text(json.dumps(qcfg))
    d = root / "qwen3-235b-a22b-eagle3"
    d.mkdir()
    # SpecForge's Qwen3 MoE EAGLE3 template (tests/data/hf/SOURCES.md) at Qwen3-235B's hidden size
    dcfg = json.loads((HF / "sgl-project--SpecForge" / "configs" / "qwen3-30B-A3B-eagle3.json").read_text())
    (d / "config.json").write_text(json.dumps({**dcfg, "hidden_size": 4096}))
    return {"ds": str(DS_DIR), "qwen": str(q), "drafter": str(d)}


def _verdicts(oracle, cfg, model_dir, opts):
    out = []
    for n in node_commands(cfg, opts):
        args = [model_dir, *n.args[1:]]
        out.append((n.rank, oracle.check_argv(args, timeout=600)))
    return out


@pytest.mark.vllm
@pytest.mark.parametrize("layout", [{"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
                                    {"tensor_parallel_size": 16}], ids=["tp8-pp2", "tp16"])
def test_vllm_accepts_every_deepseek_node(oracle, folders, layout):
    got = _verdicts(oracle, _ds(**layout), folders["ds"], {"hardware": "H200x8", "head_address": HEAD})
    assert len(got) == 2
    for rank, v in got:
        assert v.verdict == "accepted", (rank, v.short_message(400))
        assert v.resolved["method"] == "mtp"


@pytest.mark.vllm
def test_vllm_accepts_every_qwen_dp_ep_node(oracle, folders):
    cfg = _qwen(drafter=folders["drafter"])
    got = _verdicts(oracle, cfg, folders["qwen"], {"hardware": "H200x8", "head_address": HEAD})
    assert len(got) == 2
    for rank, v in got:
        assert v.verdict == "accepted", (rank, v.short_message(400))
        assert v.resolved["method"] == "eagle3" and v.resolved["num_speculative_tokens"] == 3


#: layouts vLLM refuses, as node argv after the model (SD125 must refuse each, and pass the good ones)
REFUSED = {
    "nnodes_3": "-tp 8 -pp 2 --nnodes 3 --master-addr 10.0.0.1",
    "node_rank_2": "-tp 8 -pp 2 --nnodes 2 --node-rank 2 --master-addr 10.0.0.1",
    "ray_executor": "-tp 8 -pp 2 --nnodes 2 --distributed-executor-backend ray",
}
ACCEPTED = {
    "rank1_headless": "-tp 8 -pp 2 --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --headless",
    "dp_over_nnodes": "-dp 16 --enable-expert-parallel --nnodes 2 --node-rank 1 --headless",
    # refused only when `vllm serve` starts the processes (SD127), not by the config build
    "dp_groups": "-dp 4 --data-parallel-size-local 1 --nnodes 2 --enable-expert-parallel",
}


@pytest.mark.vllm
@pytest.mark.parametrize("name", [*REFUSED, *ACCEPTED])
def test_sd125_refuses_what_vllm_refuses(oracle, folders, name):
    words = shlex.split(REFUSED.get(name) or ACCEPTED[name])
    v = oracle.check_argv([folders["ds"], *words], timeout=600)
    rep = api.check(api.load(command=["vllm", "serve", "deepseek-ai/DeepSeek-V3", *words]), gpu="cpu",
                    vllm_version="0.32", allow_hub=False)
    wizard_refuses = any(f.rule == "SD125" for f in rep.findings)
    assert v.verdict in ("accepted", "rejected"), v.short_message(300)
    assert (v.verdict == "rejected") == (name in REFUSED) == wizard_refuses, (v.short_message(300), rep.findings)
