"""The rules that mirror vLLM's config-time checks (docs/vllm-rules.md phases P and C).

Offline: catalog ids and tiny local folders (``conformance_corpus.build_models``). Each test
asserts the rule id, severity, fields and the key part of the message, and the version or
hardware differences between vLLM 0.32 and 0.33 / CPU and GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard import api
from wizard.config import apply_patch, config_from_dict
from wizard.rules.registry import Severity

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
E3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
DSV3 = "deepseek-ai/DeepSeek-V3"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from conformance_corpus import build_models

    return build_models(tmp_path_factory.mktemp("cfgtime"))


def run(data=None, command=None, version="0.32", gpu=None):
    cfg = api.load(command=command) if command else config_from_dict(data)
    return cfg, api.check(cfg, vllm_version=version, gpu=gpu, allow_hub=False)


def by(report, rule):
    return [f for f in report.findings if f.rule == rule]


def sc(**kw):
    return kw


# ---- spec_fields ---------------------------------------------------------------------------

def test_unknown_key_legacy_and_033_only_fields():
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, xpress_topc=8,
                                                         speculative_disable_by_batch_size=4)})
    f = {tuple(x.fields)[0]: x for x in by(r, "SD020")}
    assert set(f) == {"speculative_config.xpress_topc", "speculative_config.speculative_disable_by_batch_size"}
    assert "only from vLLM 0.33" in f["speculative_config.xpress_topc"].message
    assert "Unexpected keyword argument" in f["speculative_config.xpress_topc"].message
    # on 0.33 xpress_topc is a field (its misuse is R048, load of another rule), not an unknown key
    _, r33 = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, xpress_topc=8)}, version="0.33")
    assert not by(r33, "SD020")


def test_unknown_key_typo_gets_rename_fix():
    cfg, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_token=3)})
    (f,) = by(r, "SD020")
    assert f.fixes[0].set == {"speculative_config.num_speculative_tokens": 3}
    fixed = apply_patch(cfg, f.fixes[0])
    assert fixed.speculative_config.num_speculative_tokens == 3
    assert not api.check(fixed, vllm_version="0.32", allow_hub=False).errors


@pytest.mark.parametrize("value,expected", [("fp8_e4m3fn", "fp8_e4m3"), ("fp9", None), ("FP8", "fp8"), ("bf16", "bfloat16")])
def test_kv_dtype_values_and_closest_fix(value, expected):
    _, r = run({"model": LLAMA, "kv_cache_dtype": value})
    (f,) = by(r, "SD021")
    assert f.severity == Severity.ERROR and f.fields == ["kv_cache_dtype"]
    if expected:
        assert f.fixes[0].set == {"kv_cache_dtype": expected}


def test_kv_dtype_version_sets_and_drafter_wording():
    _, r32 = run({"model": LLAMA, "kv_cache_dtype": "octave_k3v4"})
    _, r33 = run({"model": LLAMA, "kv_cache_dtype": "octave_k3v4"}, version="0.33")
    assert by(r32, "SD021") and not by(r33, "SD021")
    d = {"model": LLAMA, "speculative_config": sc(method="eagle3", model=E3, num_speculative_tokens=3, kv_cache_dtype="fp9")}
    (f32,) = by(run(d)[1], "SD021")
    r33 = run(d, version="0.33")[1]
    assert not by(r33, "SD021")  # 0.33 takes any str at config time; fails when the cache is allocated (SD027)
    (f33,) = by(r33, "SD027")
    assert "at config time" in f32.message and "drafter's KV cache is allocated" in f33.message
    assert f33.fields == ["speculative_config.kv_cache_dtype"]


def test_numeric_bounds_and_non_numbers():
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=0, prompt_lookup_min=0,
                                                         draft_tensor_parallel_size=0)})
    fields = sorted(x.fields[0] for x in by(r, "SD022"))
    assert fields == ["speculative_config.draft_tensor_parallel_size", "speculative_config.num_speculative_tokens",
                      "speculative_config.prompt_lookup_min"]
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens="three")})
    (f,) = by(r, "SD022")
    assert "not an integer" in f.message
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens="3")})
    assert not by(r, "SD022")  # pydantic coerces "3" (E: F06)


def test_tp_in_spec_renames_when_allowed():
    _, r = run({"model": LLAMA, "tensor_parallel_size": 2,
                "speculative_config": sc(method="eagle3", model=E3, num_speculative_tokens=3, tensor_parallel_size=2)})
    (f,) = by(r, "SD023")
    assert f.fixes[0].set == {"speculative_config.draft_tensor_parallel_size": 2}
    assert f.fixes[0].unset == ["speculative_config.tensor_parallel_size"]


def test_attention_backend_names():
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, attention_backend="flashinfer")})
    assert not by(r, "SD024")  # case-insensitive, as vLLM upper()s it
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, attention_backend="FLASH-ATTN")})
    (f,) = by(r, "SD024")
    assert f.fixes[0].set == {"speculative_config.attention_backend": "FLASH_ATTN"}


def test_rejection_method_fly_is_033_only():
    d = {"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, rejection_sample_method="fly")}
    assert by(run(d)[1], "SD025")
    assert not by(run(d, version="0.33")[1], "SD025")


def test_float_kv_mismatch_only_on_033():
    d = {"model": LLAMA, "kv_cache_dtype": "float16"}
    assert not by(run(d)[1], "SD031")
    (f,) = by(run(d, version="0.33")[1], "SD031")
    assert 'incompatible with dtype="bfloat16"' in f.message
    assert not by(run({**d, "dtype": "float16"}, version="0.33")[1], "SD031")


def test_nvfp4_with_mla():
    (f,) = by(run({"model": DSV3, "kv_cache_dtype": "nvfp4"})[1], "SD032")
    assert f.fixes[0].set == {"kv_cache_dtype": "auto"}
    assert not by(run({"model": DSV3, "kv_cache_dtype": "nvfp4_ds_mla"})[1], "SD032")
    assert not by(run({"model": LLAMA, "kv_cache_dtype": "nvfp4"})[1], "SD032")


def test_checkpoint_forced_fp8_is_info(models):
    (f,) = by(run({"model": models["target_modelopt"]})[1], "SD030")
    assert f.severity == Severity.INFO and "fp8_e4m3" in f.message


def test_lookup_failure_is_reported_with_field():
    _, r = run({"model": LLAMA, "speculative_config": sc(method="eagle3", model="nobody/not-a-drafter-xyz", num_speculative_tokens=3)})
    (f,) = by(r, "SD009")
    assert f.fields == ["speculative_config.model"] and f.severity == Severity.WARNING
    assert "local folder" in f.message and "catalog id" in f.message


# ---- cli syntax (import notes) ---------------------------------------------------------------

def test_malformed_json_shows_position_and_correction():
    cfg, r = run(command=f"vllm serve {LLAMA} --speculative-config \"{{'method':'ngram','num_speculative_tokens':3}}\"")
    (f,) = by(r, "SD002")
    assert "position" in f.message and '{"method":"ngram","num_speculative_tokens":3}' in f.message.replace(" ", "")
    fixed = apply_patch(cfg, f.fixes[0])
    assert not by(api.check(fixed, vllm_version="0.32", allow_hub=False), "SD002")
    assert fixed.speculative_config.method == "ngram"


def test_json_and_dotted_merge_fix():
    cfg, r = run(command=f"vllm serve {LLAMA} --speculative-config '{{\"method\":\"ngram\",\"prompt_lookup_max\":4}}' "
                         "--speculative-config.num_speculative_tokens 3")
    (f,) = by(r, "SD003")
    assert "drops the whole JSON object" in f.message
    merged = apply_patch(cfg, f.fixes[0])
    assert merged.speculative_config.method == "ngram" and merged.speculative_config.prompt_lookup_max == 4
    assert merged.speculative_config.num_speculative_tokens == 3


def test_shorthand_conflict_fix_drops_the_shorthand():
    cfg, r = run(command=f"vllm serve {LLAMA} --spec-method ngram --speculative-config '{{\"method\":\"ngram\",\"num_speculative_tokens\":3}}'")
    (f,) = by(r, "SD005")
    fixed = apply_patch(cfg, f.fixes[0])
    assert "spec_method" not in fixed.extra_args and not by(api.check(fixed, allow_hub=False), "SD005")


def test_shorthand_conflict_from_a_dict():
    cfg, r = run({"model": LLAMA, "spec_method": "ngram", "speculative_config": sc(method="ngram", num_speculative_tokens=3)})
    (f,) = by(r, "SD005")
    assert f.fields == ["speculative_config.method"]
    assert not by(api.check(apply_patch(cfg, f.fixes[0]), allow_hub=False), "SD005")


def test_deprecated_flags_are_errors_with_modern_spelling():
    _, r = run(command=f"vllm serve {LLAMA} --speculative-model '[ngram]' --num-speculative-tokens 3")
    (f,) = by(r, "SD006")
    assert f.severity == Severity.ERROR and "--speculative-config.num_speculative_tokens" in f.message


# ---- method ---------------------------------------------------------------------------------

def test_method_case_and_version_sets():
    (f,) = by(run({"model": LLAMA, "speculative_config": sc(method="EAGLE3", model=E3, num_speculative_tokens=3)})[1], "SD040")
    assert f.fixes[0].set == {"speculative_config.method": "eagle3"}
    d = {"model": LLAMA, "speculative_config": sc(method="medusa", model=E3, num_speculative_tokens=3)}
    assert not by(run(d)[1], "SD040")
    (f33,) = by(run(d, version="0.33")[1], "SD040")
    assert "removed in 0.33" in f33.message


def test_mtp_alias_warning():
    (f,) = by(run({"model": DSV3, "speculative_config": sc(method="deepseek_mtp", num_speculative_tokens=1)})[1], "SD041")
    assert f.severity == Severity.INFO and f.fixes[0].set == {"speculative_config.method": "mtp"}  # docs/severity.md


def test_detection_overrides_explicit_method():
    (f,) = by(run({"model": LLAMA, "speculative_config": sc(method="draft_model", model=E3, num_speculative_tokens=3)})[1], "SD045")
    assert "vLLM will run eagle3 because the path contains 'eagle3'" in f.message


def test_dsv3_as_draft_model_becomes_mtp():
    (f,) = by(run({"model": DSV3, "speculative_config": sc(model=DSV3, num_speculative_tokens=1)})[1], "SD045")
    assert "will run mtp" in f.message


def test_drafter_arch_not_registered(models):
    (f,) = by(run({"model": models["target"], "speculative_config": sc(method="eagle", model=models["draft_qwen3"], num_speculative_tokens=3)})[1], "SD046")
    assert "EagleQwen3ForCausalLM" in f.message and f.fixes[0].set == {"speculative_config.method": "eagle3"}
    assert not by(run({"model": models["target"], "speculative_config": sc(method="eagle3", model=models["draft"], num_speculative_tokens=3)})[1], "SD046")


def test_missing_model_and_missing_k():
    assert by(run({"model": LLAMA, "speculative_config": sc(method="eagle3", num_speculative_tokens=3)})[1], "SD042")
    assert by(run({"model": LLAMA, "speculative_config": sc(method="ngram")})[1], "SD043")
    assert by(run({"model": LLAMA, "speculative_config": sc(method="eagle3")})[1], "SD044")
    # suffix defaults k; MTP with a model is SD061, not SD043
    assert not by(run({"model": LLAMA, "speculative_config": sc(method="suffix")})[1], "SD043")


def test_vocab_mismatch_and_hetero(models):
    d = {"model": models["target"], "speculative_config": sc(model=models["draft_v1024"], num_speculative_tokens=3)}
    (f,) = by(run(d)[1], "SD048")
    assert "target 512, draft 1024" in f.message
    assert f.fixes[0].set == {"speculative_config.use_heterogeneous_vocab": True}
    d["speculative_config"]["method"] = "eagle"
    assert not by(run(d)[1], "SD048")  # not applied to eagle (R063)


def test_suffix_is_a_warning_about_the_package():
    (f,) = by(run({"model": LLAMA, "speculative_config": sc(method="suffix")})[1], "SD054")
    assert f.severity == Severity.WARNING and "arctic-inference" in f.message


# ---- mtp ------------------------------------------------------------------------------------

def test_mtp_rules(models):
    assert by(run({"model": LLAMA, "speculative_config": sc(method="mtp", num_speculative_tokens=1)})[1], "SD060")
    assert by(run({"model": DSV3, "speculative_config": sc(method="mtp", model=DSV3)})[1], "SD061")
    (f,) = by(run({"model": models["dsv3_mtp2"], "speculative_config": sc(method="mtp", num_speculative_tokens=3)})[1], "SD062")
    assert "divisible by n_predict=2" in f.message
    assert by(run({"model": models["dsv3_mtp0"], "speculative_config": sc(method="mtp", num_speculative_tokens=1)})[1], "SD063")
    (w,) = by(run({"model": DSV3, "speculative_config": sc(method="mtp", num_speculative_tokens=2)})[1], "SD064")
    assert w.severity == Severity.WARNING
    # a path that makes vLLM pick eagle is not MTP (E27)
    assert not by(run({"model": models["target"], "speculative_config": sc(method="mtp", model=models["eagle-llama-draft"], num_speculative_tokens=1)})[1], "SD060")


# ---- ngram / parallel ---------------------------------------------------------------------------

def test_ngram_bounds_and_copy_info():
    (f,) = by(run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, prompt_lookup_max=3)})[1], "SD070")
    assert f.severity == Severity.INFO and "prompt_lookup_min=3" in f.message
    (e,) = by(run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, prompt_lookup_min=5, prompt_lookup_max=2)})[1], "SD070")
    assert e.severity == Severity.ERROR


def test_ngram_ignored_keys():
    (f,) = by(run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, draft_tensor_parallel_size=2, kv_cache_dtype="fp8")})[1], "SD071")
    assert set(f.fields) == {"speculative_config.draft_tensor_parallel_size", "speculative_config.kv_cache_dtype"}
    _, r = run({"model": LLAMA, "speculative_config": sc(method="ngram", num_speculative_tokens=3, draft_tensor_parallel_size=2)})
    assert not by(r, "SD080")  # vLLM ignores the draft TP for ngram (G10)


def test_draft_tp_and_heads(models):
    assert by(run({"model": LLAMA, "speculative_config": sc(method="eagle3", model=E3, num_speculative_tokens=3, draft_tensor_parallel_size=2)})[1], "SD080")
    (f,) = by(run({"model": models["target"], "tensor_parallel_size": 4, "speculative_config": sc(model=models["draft"], num_speculative_tokens=3)})[1], "SD081")
    assert "(2)" in f.message and f.fixes[0].set == {"speculative_config.draft_tensor_parallel_size": 1}


def test_spec_max_len(models):
    d = {"model": models["target"], "max_model_len": 512, "speculative_config": sc(model=models["draft"], num_speculative_tokens=3, max_model_len=1024)}
    (f,) = by(run(d)[1], "SD082")
    assert "target_max_model_len=512" in f.message
    d["speculative_config"]["max_model_len"] = 4096
    (f,) = by(run(d)[1], "SD082")
    assert "max_position_embeddings=2048" in f.message


# ---- scheduling -----------------------------------------------------------------------------

def test_async_scheduling_032_vs_033_and_cpu():
    d = {"model": LLAMA, "async_scheduling": True, "speculative_config": sc(method="ngram", num_speculative_tokens=3)}
    assert by(run(d)[1], "SD090")
    assert not by(run(d, version="0.33", gpu="H100")[1], "SD090")  # V2 runner accepts (E54 on 0.33)
    assert by(run(d, version="0.33", gpu="cpu")[1], "SD090")  # CPU -> V1 runner
    e = {"model": LLAMA, "async_scheduling": True, "speculative_config": sc(method="eagle3", model=E3, num_speculative_tokens=3)}
    assert not by(run(e)[1], "SD090")
    (i,) = by(run(e, gpu="cpu")[1], "SD091")
    assert i.severity == Severity.INFO and "CPU platform forces" in i.message


def test_v1_only_features_on_cpu():
    d = {"model": LLAMA, "speculative_config": sc(method="dspark", model=E3, num_speculative_tokens=3)}
    assert by(run(d, gpu="cpu")[1], "SD092")
    assert not by(run(d, gpu="H100")[1], "SD092")


def test_batched_tokens_formula_differs_by_version():
    d = {"model": LLAMA, "max_num_seqs": 1, "max_num_batched_tokens": 3,
         "speculative_config": sc(method="eagle3", model=E3, num_speculative_tokens=3)}
    assert not by(run(d)[1], "SD093")  # 0.32: 0 extra slots for eagle (E59)
    assert by(run(d, version="0.33")[1], "SD093")  # 0.33: k lookahead tokens


def test_lora_budget_uses_cpu_defaults():
    d = {"model": LLAMA, "enable_lora": True, "speculative_config": sc(method="ngram", num_speculative_tokens=16)}
    assert not by(run(d)[1], "SD094")  # hardware unknown: defaults unknown
    (f,) = by(run(d, gpu="cpu")[1], "SD094")  # 2048 < 128 * 17
    assert "2176" in f.message


def test_v2_runner_forced():
    d = {"model": LLAMA, "env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "speculative_config": sc(method="ngram", num_speculative_tokens=3)}
    (f,) = by(run(d, gpu="cpu")[1], "SD096")
    assert "requires Triton" in f.message and f.fixes[0].unset == ["env.VLLM_USE_V2_MODEL_RUNNER"]
    assert not by(run(d, gpu="H100")[1], "SD096")
    d["speculative_config"]["parallel_drafting"] = True
    assert "parallel drafting" in by(run(d, gpu="H100")[1], "SD096")[0].message


def test_per_request_metrics_without_spec():
    cfg, r = run(command=f"vllm serve {LLAMA} --per-request-spec-decode-metrics summary")
    (f,) = by(r, "SD095")
    assert not by(api.check(apply_patch(cfg, f.fixes[0]), allow_hub=False), "SD095")


# ---- docs ------------------------------------------------------------------------------------

def test_docs_rules_md_is_generated():
    from wizard.rules.docs import render_rules

    committed = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules("markdown"), "regenerate: python -m wizard rules --format markdown > docs/rules.md"


def test_render_rules_formats():
    from wizard.rules.docs import render_rules

    data = json.loads(render_rules("json"))
    ids = [r["id"] for r in data["rules"]]
    assert "SD040" in ids and ids == sorted(ids)
    sd040 = next(r for r in data["rules"] if r["id"] == "SD040")
    assert "## What it does" in sd040["details"]
    # the keys scripts read before the docstring became the documentation, now derived from it
    assert set(sd040) >= {"id", "title", "severity", "versions", "fields", "family", "why", "bad", "good", "source",
                          "fix_safety", "phase", "example_hardware", "example_models", "details", "example_gpu",
                          "example_version", "module"}
    assert sd040["bad"].startswith("vllm serve") and '"EAGLE3"' in sd040["bad"] and sd040["why"] and sd040["source"]
    assert sd040["family"] == "method" and sd040["module"].startswith("wizard.rules.method.")
    # the index groups the rules by family, from the folders and their ID_RANGES
    markdown = render_rules("markdown")
    assert "| [method](#family-method) | SD040-SD079, SD760-SD779 | " in markdown and "## Family `method`" in markdown
    sd503 = next(r for r in data["rules"] if r["id"] == "SD503")
    assert sd503["example_gpu"] == "H100" and sd503["example_hardware"] == {"used_bytes": 40 << 30}
    assert "SD040  [error]" in render_rules("text")
    with pytest.raises(ValueError):
        render_rules("html")
