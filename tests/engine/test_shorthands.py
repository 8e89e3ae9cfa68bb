"""Abbreviated ``--spec-*`` shorthands are the speculation vLLM runs (wizard.engine.shorthands).

vLLM's parser is argparse with ``allow_abbrev``: ``--spec-me ngram --spec-tok 3`` is
``--spec-method ngram --spec-tokens 3`` in 0.22+ (vllm/engine/arg_utils.py
``create_speculative_config``). The importer keeps the abbreviation raw; the context build moves it
into ``speculative_config`` per release, so the rules see the speculation, and SD013 still asks for
the full spelling with a fix that sets the same key. The last test asks vLLM 0.32's own parser and
config build (the oracle) for the method and k it builds from the abbreviations.
"""

from __future__ import annotations

import pytest

from wizard import api
from wizard.config import apply_patch
from wizard.context import resolve_context
from wizard.engine.shorthands import shorthand_rewrite
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
    out = shorthand_rewrite(cfg, parse_version("0.32.0"))
    assert _spec(out) == {"method": "ngram", "num_speculative_tokens": 3}
    assert out.extra_args == {}
    # the same as the full spelling
    assert _spec(out) == _spec(_cfg("--spec-method ngram --spec-tokens 3"))


def test_no_rewrite_where_the_release_has_no_shorthands_or_the_prefix_is_ambiguous():
    assert shorthand_rewrite(_cfg("--spec-me ngram --spec-tok 3"), parse_version("0.21.0")) is None
    # --spec-m is --spec-method or --spec-model: argparse refuses it (SD013 says so)
    assert shorthand_rewrite(_cfg("--spec-m ngram"), parse_version("0.32.0")) is None
    assert shorthand_rewrite(_cfg("--max-num-seq 8"), parse_version("0.32.0")) is None


def test_a_key_the_speculative_config_sets_is_left_raw():
    cfg = _cfg("""--speculative-config '{"method":"ngram","num_speculative_tokens":2}' --spec-tok 3 --spec-mo x/y""")
    out = shorthand_rewrite(cfg, parse_version("0.32.0"))
    assert _spec(out) == {"method": "ngram", "num_speculative_tokens": 2, "model": "x/y"}
    assert out.extra_args == {"spec_tok": "3"}


def test_empty_or_none_method_is_left_raw():
    assert shorthand_rewrite(_cfg("--spec-me None"), parse_version("0.32.0")) is None


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
