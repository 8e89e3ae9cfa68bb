"""Defects a new-user trial found in the rules: SD022's title for a value that is not a number
(B) and the silent rewrites of the speculative config (I: a JSON boolean for k, a repeated JSON
key), checked against the installed vLLM where it is there."""

from __future__ import annotations

import pytest

from wizard import api

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _found(spec_json: str, rule: str):
    rep = api.check(api.load(command=f"vllm serve {LLAMA} --speculative-config '{spec_json}'"), vllm_version="0.32",
                    allow_hub=False)
    return [f for f in rep.findings if f.rule == rule]


def test_sd022_title_fits_the_value_type():
    [word] = _found('{"method":"ngram","num_speculative_tokens":"three"}', "SD022")
    assert word.title == "speculative_config value is not an integer"
    assert "('Input should be ...')" not in word.message and "unable to parse string as an integer" in word.message
    [zero] = _found('{"method":"ngram","num_speculative_tokens":0}', "SD022")
    assert zero.title == "speculative_config number out of range" and "Input should be greater than 0" in zero.message


def test_bool_k_and_repeated_json_key_are_said_not_silently_rewritten():
    cfg = api.load(command=f"vllm serve {LLAMA} --speculative-config '{{\"method\":\"ngram\",\"num_speculative_tokens\":true}}'")
    assert cfg.speculative_config.num_speculative_tokens == 1  # what vLLM runs
    [note] = [n for n in cfg.import_notes if n.kind == "bool_as_number"]
    assert note.field == "speculative_config.num_speculative_tokens" and note.detail == {
        "key": "num_speculative_tokens", "value": True, "read_as": 1}
    [f] = _found('{"method":"ngram","num_speculative_tokens":true}', "SD022")
    assert f.severity.value == "info" and "runs num_speculative_tokens=1" in f.message
    [f] = _found('{"method":"eagle3","method":"ngram","num_speculative_tokens":2}', "SD004")
    assert f.severity.value == "info" and f.fields == ["speculative_config.method"] and "'ngram'" in f.message
    # the same key once, or a number: nothing said
    assert not _found('{"method":"ngram","num_speculative_tokens":1}', "SD004")
    assert not _found('{"method":"ngram","num_speculative_tokens":1}', "SD022")
    # a note is made once, also when a configuration is rebuilt from its own dump
    from wizard.config import config_from_dict

    again = config_from_dict(cfg.model_dump())
    assert [n.kind for n in again.import_notes].count("bool_as_number") == 1


@pytest.mark.vllm
@pytest.mark.parametrize("text,method,k", [
    ('{"method":"ngram","num_speculative_tokens":true}', "ngram", 1),
    ('{"method":"eagle3","method":"ngram","num_speculative_tokens":2}', "ngram", 2),
    ('{"method":"ngram","num_speculative_tokens":2,"num_speculative_tokens":3}', "ngram", 3),
])
def test_what_the_wizard_says_is_what_vllm_does(text, method, k):
    """vLLM 0.32's own parser (json.loads: the last repeated key wins) and SpeculativeConfig
    (pydantic lax mode: true -> 1) build the configuration the wizard says it runs."""
    pytest.importorskip("vllm")
    from vllm.config.speculative import SpeculativeConfig
    from vllm.engine.arg_utils import EngineArgs
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    ns = EngineArgs.add_cli_args(FlexibleArgumentParser()).parse_args(["--model", LLAMA, "--speculative-config", text])
    built = SpeculativeConfig(**ns.speculative_config)
    assert (built.method, built.num_speculative_tokens, type(built.num_speculative_tokens)) == (method, k, int)
    cfg = api.load(command=f"vllm serve {LLAMA} --speculative-config '{text}'")
    assert (cfg.speculative_config.method, cfg.speculative_config.num_speculative_tokens) == (method, k)
    said = _found(text, "SD022") + _found(text, "SD004")
    assert said and all(f.severity.value == "info" for f in said)
