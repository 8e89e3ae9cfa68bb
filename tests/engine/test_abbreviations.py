"""Abbreviated options are what vLLM runs (wizard.engine.abbreviations).

vLLM's parser is argparse with ``allow_abbrev``: ``--kv-cache-d fp8`` is ``--kv-cache-dtype fp8``,
and ``--spec-me ngram --spec-tok 3`` is ``--spec-method ngram --spec-tokens 3`` in 0.22+
(vllm/engine/arg_utils.py ``create_speculative_config``). The importer keeps an abbreviation raw;
the context build moves it where the full spelling goes, per release, so the rules see what runs,
and SD013 still asks for the full spelling with a fix that sets the same key. The oracle tests ask
vLLM 0.32's own parser and config build what it builds from the abbreviations.
"""

from __future__ import annotations

import pytest

from wizard import api
from wizard.config import apply_patch
from wizard.context import resolve_context
from wizard.engine.abbreviations import abbreviation_rewrite
from wizard.io.argv import parse_command
from wizard.vllm.versions import parse_version

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _cfg(words: str):
    return parse_command(f"vllm serve {LLAMA} {words}")


def _spec(cfg):
    return cfg.speculative_config.model_dump(exclude_none=True) if cfg.speculative_config else None


def test_abbreviations_become_the_speculative_config_in_a_release_that_has_the_shorthands():
    cfg = _cfg("--spec-me ngram --spec-tok 3")
    assert _spec(cfg) is None and cfg.extra_args == {"spec_me": "ngram", "spec_tok": "3"}  # the importer keeps them raw
    out, _ = abbreviation_rewrite(cfg, parse_version("0.32.0"))
    assert _spec(out) == {"method": "ngram", "num_speculative_tokens": 3}
    assert out.extra_args == {}
    # the same as the full spelling
    assert _spec(out) == _spec(_cfg("--spec-method ngram --spec-tokens 3"))


def test_no_rewrite_where_the_release_has_no_shorthands_or_the_prefix_is_ambiguous():
    assert abbreviation_rewrite(_cfg("--spec-me ngram --spec-tok 3"), parse_version("0.21.0")) is None
    # --spec-m is --spec-method or --spec-model: argparse refuses it (SD013 says so)
    assert abbreviation_rewrite(_cfg("--spec-m ngram"), parse_version("0.32.0")) is None
    assert abbreviation_rewrite(_cfg("--max-num-s 8"), parse_version("0.32.0")) is None  # max-num-seqs / -scheduled...


def test_abbreviations_of_modelled_options_become_the_fields():
    cfg = _cfg("--kv-cache-d fp8 --max-num-seq 8 --gpu-mem 0.8 --no-enable-pre --max-model-l 4k")
    out, _ = abbreviation_rewrite(cfg, parse_version("0.14.1"))
    assert (out.kv_cache_dtype, out.max_num_seqs, out.gpu_memory_utilization, out.enable_prefix_caching,
            out.max_model_len) == ("fp8", 8, 0.8, False, 4000)  # 4k: the option's human-readable int type
    assert out.extra_args == {}
    full = _cfg("--kv-cache-dtype fp8 --max-num-seqs 8 --gpu-memory-utilization 0.8 --no-enable-prefix-caching "
                "--max-model-len 4k")
    assert out.model_dump(exclude={"import_notes"}) == full.model_dump(exclude={"import_notes"})
    # 0.32 has --kv-cache-dtype-skip-layers too: --kv-cache-d is ambiguous there and stays raw
    out32, where = abbreviation_rewrite(cfg, parse_version("0.32.0"))
    assert out32.kv_cache_dtype is None and out32.extra_args == {"kv_cache_d": "fp8"} and out32.max_num_seqs == 8
    assert where == {"max_num_seqs": "extra_args.max_num_seq", "gpu_memory_utilization": "extra_args.gpu_mem",
                     "enable_prefix_caching": "extra_args.enable_pre", "max_model_len": "extra_args.max_model_l"}


def test_an_option_given_in_full_or_a_value_its_type_refuses_is_left_raw():
    out = abbreviation_rewrite(_cfg("--kv-cache-dtype auto --kv-cache-d fp8 --max-num-seq abc"), parse_version("0.14.1"))
    assert out is None


def test_the_cpu_refusal_of_an_abbreviated_kv_dtype_is_found():
    # schema conformance case kv_cache_dtype:valid_last:prefix: vLLM 0.14's CPU platform refuses fp8_inc
    # with chunked prefill / prefix caching, however the option is spelled
    rules = {f.rule for f in api.check(_cfg("--kv-cache-d fp8_inc"), vllm_version="0.14.1", gpu="cpu",
                                       allow_hub=False).findings}
    assert "SD241" in rules and "SD013" in rules


def test_a_key_the_speculative_config_sets_is_left_raw():
    cfg = _cfg("""--speculative-config '{"method":"ngram","num_speculative_tokens":2}' --spec-tok 3 --spec-mo x/y""")
    out, _ = abbreviation_rewrite(cfg, parse_version("0.32.0"))
    assert _spec(out) == {"method": "ngram", "num_speculative_tokens": 2, "model": "x/y"}
    assert out.extra_args == {"spec_tok": "3"}


def test_empty_or_none_method_is_left_raw():
    assert abbreviation_rewrite(_cfg("--spec-me None"), parse_version("0.32.0")) is None


def test_check_sees_the_speculation_and_sd013_fix_sets_the_key():
    rep = api.check(_cfg("--spec-me ngram --spec-tok 3"), vllm_version="0.32.0", gpu="H100", allow_hub=False)
    rules = [f.rule for f in rep.findings]
    assert rules.count("SD013") == 2
    assert "SD091" in rules  # ngram turns async scheduling off: the speculation is seen
    assert rep.command == f"vllm serve {LLAMA} --spec-me ngram --spec-tok 3"  # as written
    assert "--speculative-config" in rep.long_command and '"num_speculative_tokens":3' in rep.long_command
    fixes = {f.fields[0]: f.fixes[0] for f in rep.findings if f.rule == "SD013"}
    assert fixes["extra_args.spec_tok"].set == {"speculative_config.num_speculative_tokens": 3}
    assert fixes["extra_args.spec_me"].set == {"speculative_config.method": "ngram"}
    fixed = _cfg("--spec-me ngram --spec-tok 3")
    for p in fixes.values():
        fixed = apply_patch(fixed, p)
    assert _spec(fixed) == {"method": "ngram", "num_speculative_tokens": 3} and fixed.extra_args == {}
    rep2 = api.check(fixed, vllm_version="0.32.0", gpu="H100", allow_hub=False)
    assert "SD013" not in [f.rule for f in rep2.findings] and rep2.long_command == ""


def test_context_keeps_the_written_config():
    cfg = _cfg("--spec-me ngram --spec-tok 3")
    ctx = resolve_context(cfg, parse_version("0.32.0"), None, allow_hub=False)
    assert ctx.written_config is cfg and _spec(ctx.config) == {"method": "ngram", "num_speculative_tokens": 3}


@pytest.mark.vllm
def test_vllm_builds_the_same_speculation_from_the_abbreviations(oracle, tmp_path):
    from factory import make_tiny_llama

    from wizard.vllm.versions import installed_vllm

    make_tiny_llama(tmp_path / "t", num_hidden_layers=2, dtype="bfloat16")
    words = [str(tmp_path / "t"), "--spec-me", "ngram", "--spec-tok", "3", "--max-model-len", "256", "--enforce-eager"]
    v = oracle.check_argv(words)
    assert v.accepted, v.short_message()
    ctx = resolve_context(parse_command(["vllm", "serve", *words]), installed_vllm(), None, allow_hub=False)
    assert (v.resolved["method"], v.resolved["num_speculative_tokens"]) == (
        ctx.config.speculative_config.method, ctx.config.speculative_config.num_speculative_tokens) == ("ngram", 3)


@pytest.mark.vllm
def test_vllm_builds_the_same_engine_from_abbreviated_options(oracle, tmp_path):
    from factory import make_tiny_llama

    from wizard.vllm.versions import installed_vllm

    make_tiny_llama(tmp_path / "t", num_hidden_layers=2, dtype="bfloat16")
    words = [str(tmp_path / "t"), "--max-model-l", "200", "--max-num-bat", "512", "--enforce-eager"]
    v = oracle.check_argv(words)
    assert v.accepted, v.short_message()
    cfg = resolve_context(parse_command(["vllm", "serve", *words]), installed_vllm(), None, allow_hub=False).config
    assert (v.resolved["max_model_len"], v.resolved["max_num_batched_tokens"]) == (
        cfg.max_model_len, cfg.max_num_batched_tokens) == (200, 512)
