"""``view.mtp_layers``: n_predict as vLLM's ``SpeculativeConfig.hf_config_override`` sets it
(vllm/config/speculative.py 0.32 L661-1000: DeepSeek-V3 -> deepseek_mtp with n_predict =
num_nextn_predict_layers; Qwen3-Next -> qwen3_next_mtp with n_predict = num_nextn_predict_layers)."""

from __future__ import annotations

from helpers import LLAMA, ctx, model

DSV3 = {**LLAMA, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 2}


def test_deepseek_v3_mtp_layers_from_num_nextn():
    t = model(DSV3)
    c = ctx({"speculative_config": {"method": "mtp", "num_speculative_tokens": 2}}, target=t, drafter=t)
    assert c.view.drafter is t  # MTP without a separate model: the target's layers draft
    assert c.view.mtp_layers == 2


def test_plain_llama_has_no_mtp_layers():
    t = model(LLAMA)
    c = ctx({"speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}, target=t, drafter=t)
    assert c.view.mtp_layers is None


def test_planner_and_route_agree_with_the_view():
    """Resolved disagreement: plan/memory.py read ModelInfo.mtp_layers before the rewrite's key,
    mechanisms/apply.py the rewrite first; both now read ``view.mtp_layers``."""
    from wizard.plan.memory import drafter_kv_layers
    t = model(DSV3)
    c = ctx({"speculative_config": {"method": "mtp", "num_speculative_tokens": 2}}, target=t, drafter=t)
    assert drafter_kv_layers(c, "mtp", c.drafter)[1] == c.view.mtp_layers == 2
