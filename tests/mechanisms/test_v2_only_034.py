"""vLLM 0.34: Model Runner V1 is removed -- the mechanism tables generated from the 0.34 source
(proposers.json ``v1_runner: false``, the split prefill/decode CUDA-graph sizes, the speculator
configs' features) and the mirrors that read them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from factory import fixture_config, make_model_dir
from wizard.mechanisms.cudagraph import capture_plan
from wizard.mechanisms.drafter_context import drafter_context
from wizard.mechanisms.method_support import V1_REMOVED_ERROR, accepted_methods, has_v1_runner, route
from wizard.mechanisms.quantized_drafter import check_quantized_drafter, drafter_quantization
from wizard.models.local import inspect_folder
from wizard.vllm import releases

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "vllm_samples"


def test_v1_runner_flag():
    assert has_v1_runner("0.33") is True and has_v1_runner("0.32") is True
    assert has_v1_runner("0.34") is False
    t = releases.load("0.34", "proposers.json")
    assert t["v1_runner"] is False and t["v1_chain"] == []
    assert all(c["v1_route"] is None and c["use_v2"] is True for c in t["cases"])


@pytest.mark.parametrize("method,proposer", [
    ("ngram", "NgramGPUSpeculator"), ("ngram_gpu", "NgramGPUSpeculator"), ("suffix", "SuffixSpeculator"),
    ("draft_model", "StandaloneARSpeculator"), ("eagle", "EagleSpeculator"), ("eagle3", "EagleSpeculator"),
    ("mtp", "MTPSpeculator"), ("deepseek_mtp", "MTPSpeculator"), ("dflash", "DFlashSpeculator"),
    ("dspark", "DSparkSpeculator"), ("extract_hidden_states", "ExtractHiddenStatesSpeculator"),
])
def test_every_method_runs_on_v2(method, proposer):
    r = route("0.34", method)
    assert r.ok and r.accepted and r.runner == "v2" and r.proposer == proposer
    assert not r.v2_blockers


def test_cpu_and_pipeline_parallelism_stay_on_v2():
    # 0.33: CPU always V1, suffix always V1; 0.34 has no V1 to fall back to
    assert route("0.33", "suffix").runner == "v1"
    assert route("0.34", "suffix").runner == "v2"
    r = route("0.34", "eagle3", platform="cpu")
    assert r.runner == "v2" and r.ok and any("Triton" in n for n in r.notes)
    assert route("0.34", "eagle3", pipeline_parallel_size=2).ok


def test_forcing_v1_is_a_config_error():
    r = route("0.34", "eagle3", force_runner="v1")
    assert r.stage == "config" and r.error == V1_REMOVED_ERROR and r.runner is None
    assert "Model Runner V1 has been removed" in r.error
    assert route("0.34", "eagle3", force_runner="v2").ok
    assert route("0.33", "eagle3", force_runner="v1").runner == "v1"  # older releases unchanged


def test_removed_options_and_methods():
    assert "custom_class" in accepted_methods("0.33") and "custom_class" not in accepted_methods("0.34")
    assert not route("0.34", "custom_class").accepted
    r = route("0.34", "eagle", parallel_drafting=True)
    assert r.stage == "config" and "only supported by the dflash and dspark methods, not 'eagle'" in r.error
    assert route("0.34", "dflash", parallel_drafting=True).ok
    r = route("0.34", "dspark", heterogeneous_vocab=True)
    assert r.stage == "config" and "use_heterogeneous_vocab" in r.error


def test_declared_speculators_pick_the_speculator():
    assert route("0.34", "dflash", draft_architectures=["DFlash2DraftModel"]).proposer == "DFlash2Speculator"
    assert route("0.34", "dflash", draft_architectures=["LiLiCorrDraftModel"]).proposer == "LiLiCorrSpeculator"
    assert route("0.34", "dflash", draft_architectures=["Qwen3XPressModel"]).proposer == "XPressSpeculator"
    assert route("0.34", "mtp", draft_model_type="gemma4_mtp").proposer == "Gemma4Speculator"
    multi = route("0.34", "mtp", draft_model_type="deepseek_mtp", num_nextn_predict_layers=3, num_speculative_tokens=3)
    assert multi.proposer == "MultiModuleMTPSpeculator"
    t = releases.load("0.34", "proposers.json")
    assert t["declared_speculators"]["Gemma4MTPModel"] == "Gemma4MTPSpeculatorConfig"
    cfgs = t["speculator_configs"]
    assert cfgs["MTPSpeculatorConfig"]["supported_options"] == ["draft_lm_head_quantization",
                                                                "index_share_for_mtp_iteration"]
    assert cfgs["Gemma4MTPSpeculatorConfig"]["supported_options"] == ["index_share_for_mtp_iteration"]
    assert cfgs["XPressSpeculatorConfig"]["supported_options"] == ["xpress_topc"]
    assert cfgs["StandaloneARSpeculatorConfig"]["shares_target_positions"] is False


def test_cudagraph_mirror_matches_034_code():
    samples = json.loads(gzip.decompress((SAMPLES / "0.34" / "cudagraph.json.gz").read_bytes()))["samples"]
    assert len(samples) > 100
    bad = []
    for x in samples:
        p = capture_plan("0.34", max_num_seqs=x["max_num_seqs"], num_speculative_tokens=x["k"],
                         max_num_batched_tokens=x["max_num_batched_tokens"], cudagraph_mode=x["mode"],
                         max_cudagraph_capture_size=x["max_cudagraph_capture_size"],
                         cudagraph_capture_sizes=x["cudagraph_capture_sizes"], blackwell=x["blackwell"],
                         runner="v2", draft_decode_steps=x.get("method") in ("eagle", "eagle3", "mtp", "draft_model"))
        ok = (p.error is not None) if "error" in x else (
            list(p.sizes) == x["sizes"] and p.max_size == x["max"] and [list(r) for r in p.decode] == x["decode"])
        if not ok:
            bad.append((x, p))
    assert not bad, bad[:2]


def test_034_has_no_multiple_of_1_plus_k_rounding():
    # 0.33 V1 rounds k=4 sizes to multiples of 5 (largest graph 500 tokens); 0.34 records request counts
    old = capture_plan("0.33", max_num_seqs=128, num_speculative_tokens=4, runner="v1")
    new = capture_plan("0.34", max_num_seqs=128, num_speculative_tokens=4, runner="v1")
    assert old.runner_max_size == 500
    assert new.runner == "v2" and new.max_graph_requests == 102
    assert new.decode == ((1, 100, "FULL"), (101, 102, "PIECEWISE"), (103, 128, "NONE"))
    assert new.eager_from == 103
    k7 = capture_plan("0.34", max_num_seqs=256, num_speculative_tokens=7)
    assert k7.decode == ((1, 64, "FULL"), (65, 256, "NONE"))
    # SM 10.x: decode request grid up to max_num_seqs within 8192 tokens
    bw = capture_plan("0.34", max_num_seqs=256, num_speculative_tokens=7, blackwell=True)
    assert bw.eager_from is None


def test_features_034():
    f = releases.load("0.34", "features.json")["facts"]
    dc = f["drafter_context"]
    assert dc["v1_length_gate"] is None and dc["raise_positions_condition"] == "self.method != 'draft_model'"
    assert dc["limit_requires_v2"] is False
    lm = f["draft_lm_head_quantization"]
    assert lm["accepted_methods"] == ["dspark", "eagle", "eagle3", "mtp"]
    assert lm["refused_by_configs"] == ["Gemma4MTPSpeculatorConfig"] and lm["v1_unsupported"] is False
    assert lm["dspark_architectures"] == ["DSparkDraftModel", "DSparkV41DraftModel"]
    assert f["mtp_inherits_target_quantization"] is True
    assert f["drafter_quantization"]["dspark_takes_target_quantization"] is True
    assert f["backend_selection"]["drafter_inherits_target_backend"] is True


def test_draft_model_context_reduced_and_eagle_raised(tmp_path):
    cfg = dict(fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json"))
    cfg.pop("rope_scaling", None)
    cfg["max_position_embeddings"] = 4096
    d = inspect_folder(make_model_dir(tmp_path / "d", cfg))
    r = drafter_context("0.34", "draft_model", drafter=d, served_len=32768, runner="v2")
    assert r.outcome == "served_length_reduced" and r.effective_max_model_len == 4096
    assert drafter_context("0.34", "eagle3", drafter=d, served_len=32768).outcome == "raised"


def test_lm_head_quantization_034():
    assert drafter_quantization("0.34", "mtp", target_quantization="fp8") == "fp8"
    v34 = check_quantized_drafter
    assert not v34("0.34", "eagle3", draft_lm_head_quantization="fp8").errors
    assert not v34("0.34", "mtp", draft_lm_head_quantization="fp8").errors
    assert not v34("0.34", "mtp", draft_lm_head_quantization="fp8", runner="v1").errors  # no V1 refusal
    assert any("not supported with speculative method 'draft_model'" in e
               for e in v34("0.34", "draft_model", draft_lm_head_quantization="fp8").errors)
    gemma = NS(model_type="gemma4_mtp", architectures=["Gemma4MTPModel"], quant_method=None)
    assert v34("0.34", "mtp", drafter=gemma, draft_lm_head_quantization="fp8").errors
    # dspark: newly allowed for DeepSeek-V4 drafts, not for self-contained DSpark checkpoints
    assert not v34("0.34", "dspark", draft_lm_head_quantization="fp8").errors
    qwen = NS(model_type="qwen3", architectures=["Qwen3DSparkModel"], quant_method=None)
    assert any("DeepSeek-V4/V4.1 DSpark" in e for e in v34("0.34", "dspark", drafter=qwen,
                                                          draft_lm_head_quantization="fp8").errors)
    assert v34("0.33", "dspark", draft_lm_head_quantization="fp8").errors  # 0.33 unchanged


def test_mamba_state_034_follows_the_cuda_package():
    archs = releases.load("0.34", "mamba_state.json")["architectures"]
    q = archs["Qwen3_5ForCausalLM"]
    assert q["module"] == "qwen3_5" and q["calculator"] == "gated_delta_net_state_shape" and q["num_spec"]
    assert q["source"] == "vllm/models/qwen3_5/nvidia/model.py"
