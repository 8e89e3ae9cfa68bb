"""MoE facts are parsed once, in wizard.models.config_json, into ModelInfo fields; the planner's
cost model reads those fields, never config.json (layering: issue #15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.models.config_json import info_from_config
from wizard.models.resolve import resolve_model
from wizard.plan.cost import moe_facts

HF = Path(__file__).parent / "data" / "hf"
ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("name, experts, top_k, inter, shared, shared_inter, moe_layers", [
    # DeepSeek-V3: 61 layers, first_k_dense_replace 3 -> 58 MoE layers; 1 shared expert of 2048
    ("deepseek-ai--DeepSeek-V3", 256, 8, 2048, 1, 2048, 58),
    # Qwen3-30B-A3B: decoder_sparse_step 1, mlp_only_layers [] -> all 48 layers
    ("Qwen--Qwen3-30B-A3B", 128, 8, 768, None, None, 48),
    # gpt-oss-120b: num_local_experts, experts_per_token; the expert width is intermediate_size
    ("openai--gpt-oss-120b", 128, 4, 2880, None, None, 36),
    ("meta-llama--Llama-3.1-8B-Instruct", None, None, None, None, None, None),
])
def test_moe_fields_of_real_configs(name, experts, top_k, inter, shared, shared_inter, moe_layers):
    m = resolve_model(str(HF / name), allow_hub=False)
    assert (m.num_experts, m.num_experts_per_tok, m.moe_intermediate_size, m.num_shared_experts,
            m.shared_expert_intermediate_size, m.num_moe_layers) == (experts, top_k, inter, shared, shared_inter, moe_layers)


def test_moe_fields_of_other_shapes():
    mixtral = info_from_config({"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_local_experts": 8,
                                "num_experts_per_tok": 2, "intermediate_size": 14336}, id="mixtral")
    assert (mixtral.num_experts, mixtral.num_experts_per_tok, mixtral.moe_intermediate_size, mixtral.num_moe_layers) == (8, 2, 14336, 32)
    glm = info_from_config({"model_type": "glm4_moe", "num_hidden_layers": 46, "hidden_size": 4096, "n_routed_experts": 128,
                            "num_experts_per_tok": 8, "moe_intermediate_size": 1408, "n_shared_experts": 1,
                            "first_k_dense_replace": 1, "intermediate_size": 10944}, id="glm")
    assert (glm.num_moe_layers, glm.num_shared_experts, glm.shared_expert_intermediate_size, glm.intermediate_size) == (45, 1, 1408, 10944)
    qwen2 = info_from_config({"model_type": "qwen2_moe", "num_hidden_layers": 24, "hidden_size": 2048, "num_experts": 60,
                              "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
                              "decoder_sparse_step": 2, "mlp_only_layers": [1]}, id="qwen2")
    # (i + 1) % 2 == 0 -> layers 1, 3, ..., 23; layer 1 is mlp-only -> 11
    assert (qwen2.num_moe_layers, qwen2.num_shared_experts, qwen2.shared_expert_intermediate_size) == (11, 1, 5632)
    # a text_config wrapper (multimodal MoE) is merged like every other field
    wrapped = info_from_config({"model_type": "x", "text_config": {"num_hidden_layers": 4, "hidden_size": 64, "num_experts": 4,
                                                                  "num_experts_per_tok": 2, "moe_intermediate_size": 32}}, id="w")
    assert moe_facts(wrapped) == (4, 2, 4 * 4 * 3 * 64 * 32)


def test_bad_moe_values_are_notes_not_crashes():
    m = info_from_config({"model_type": "x", "num_hidden_layers": 4, "hidden_size": 64, "num_experts": "many",
                          "num_experts_per_tok": 2}, id="bad")
    assert m.num_experts is None and moe_facts(m) == (0, 0, 0.0)
    assert any("num_experts" in n for n in m.notes)


def test_deepseek_routed_expert_parameters():
    m = resolve_model(str(HF / "deepseek-ai--DeepSeek-V3"), allow_hub=False)
    # 58 MoE layers x 256 experts x 3 x 7168 x 2048 = 653.6 B routed parameters (of 671 B)
    assert moe_facts(m) == (256, 8, 58 * 256 * 3 * 7168 * 2048)


def test_planner_reads_no_raw_config():
    """wizard/plan/ uses ModelInfo fields, never the raw config.json dict."""
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "wizard" / "plan").glob("*.py") if "raw_config" in p.read_text()]
    assert offenders == [], offenders
