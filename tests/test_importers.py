"""wizard.io.argv / wizard.io.yaml_config: `vllm serve` argv / YAML -> ServeConfig (real values; no vLLM needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard.config import ConfigError
from wizard.io.argv import parse_command
from wizard.io.spec_json import parse_spec_json
from wizard.io.yaml_config import parse_yaml

DATA = Path(__file__).parent / "data"


def kinds(cfg):
    """The importer's notes but the spellings of modelled options (``option_spelling``, rule SD008)."""
    return [n.kind for n in cfg.import_notes if n.kind != "option_spelling"]


def spellings(cfg):
    return [n.detail["option"] for n in cfg.import_notes if n.kind == "option_spelling"]


def note(cfg, kind):
    found = [n for n in cfg.import_notes if n.kind == kind]
    assert found, f"no {kind} note in {cfg.import_notes}"
    return found[0]


# ---- entrypoints, env, quoting ------------------------------------------------------------

def test_vllm_serve_with_env_continuations_and_quotes():
    cmd = (
        "CUDA_VISIBLE_DEVICES=0,1 VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
        "  -tp 2 --max-model-len=32k \\\n"
        "  --speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", "
        "\"num_speculative_tokens\": 3}' \\\n"
        "  --enforce-eager --no-enable-prefix-caching --port 8001\n"
    )
    cfg = parse_command(cmd)
    assert cfg.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert cfg.env == {"CUDA_VISIBLE_DEVICES": "0,1", "VLLM_USE_V2_MODEL_RUNNER": "1"}
    assert cfg.tensor_parallel_size == 2
    assert cfg.max_model_len == 32000
    assert cfg.enforce_eager is True and cfg.enable_prefix_caching is False
    assert cfg.speculative_config.set_keys() == {
        "method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}
    assert cfg.extra_args == {"port": "8001"}
    assert kinds(cfg) == []


def test_python_module_entrypoint_and_model_flag():
    cfg = parse_command("python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B -pp 2 -dp=2 "
                        "--kv_cache_dtype fp8 --gpu-memory-utilization 0.85 -q fp8")
    assert (cfg.model, cfg.pipeline_parallel_size, cfg.data_parallel_size) == ("Qwen/Qwen3-8B", 2, 2)
    assert cfg.kv_cache_dtype == "fp8" and cfg.gpu_memory_utilization == 0.85 and cfg.quantization == "fp8"


def test_bare_argv_list_and_serve_prefix():
    cfg = parse_command(["m/x", "--max-num-seqs", "64", "--trust-remote-code", "--served-model-name", "a", "b"])
    assert cfg.model == "m/x" and cfg.max_num_seqs == 64
    assert cfg.extra_args == {"trust_remote_code": True, "served_model_name": ["a", "b"]}
    assert parse_command(["serve", "m/x"]).model == "m/x"


def test_script_with_export_and_semicolons():
    cfg = parse_command("# launch\nexport HF_HOME=/data; cd /srv && vllm serve m/x --seed 3")
    assert cfg.env == {"HF_HOME": "/data"} and cfg.extra_args == {"seed": "3"}


def test_unknown_options_kept_verbatim_in_order():
    cfg = parse_command("vllm serve m --zeta 1 --alpha=two --beta --no-gamma -x 5 --compilation-config.mode 3 "
                        "--middleware a --middleware b -O3")
    assert list(cfg.extra_args.items()) == [
        ("zeta", "1"), ("alpha", "two"), ("beta", True), ("gamma", False), ("-x", "5"),
        ("compilation_config.mode", "3"), ("middleware", ["a", "b"]), ("optimization_level", "3")]


def test_ill_typed_values_go_to_invalid_values():
    cfg = parse_command("vllm serve m --max-model-len lots -tp two --speculative-config.num_speculative_tokens three")
    assert cfg.invalid_values == {"max_model_len": "lots", "tensor_parallel_size": "two",
                                  "speculative_config.num_speculative_tokens": "three"}
    assert cfg.max_model_len is None


def test_value_missing_for_valued_option():
    cfg = parse_command("vllm serve m --max-model-len --enforce-eager")
    assert cfg.invalid_values == {"max_model_len": True} and cfg.enforce_eager is True


def test_bool_flag_with_literal_value_and_equals():
    cfg = parse_command("vllm serve m --enforce-eager=false --async-scheduling true")
    assert cfg.enforce_eager is False and cfg.async_scheduling is True


@pytest.mark.parametrize("cmd,field", [
    ("vllm serve m --config serve.yaml", "config"),
    ("vllm chat m", "command"),
    ("vllm serve m --speculative-config '{\"method\": ", "command"),
    ("vllm serve --enforce-eager", "model"),
    ("python -m http.server 8000", "command"),
    ("", "model"),
])
def test_unusable_commands_raise_config_error_naming_the_field(cmd, field):
    with pytest.raises(ConfigError) as err:
        parse_command(cmd)
    assert err.value.field == field
    assert field in str(err.value)


def test_argv_with_non_strings_is_a_config_error():
    with pytest.raises(ConfigError, match="command"):
        parse_command(["vllm", "serve", 3])  # type: ignore[list-item]


# ---- speculative config spellings ---------------------------------------------------------

def test_dotted_keys_values_like_vllm():
    cfg = parse_command("vllm serve m --speculative-config.method ngram --speculative_config.prompt-lookup-max 4 "
                        "--speculative-config.num_speculative_tokens=1k -sc.enforce_eager true "
                        "--speculative-config.synthetic_acceptance_rates+ 0.5,0.25")
    sc = cfg.speculative_config
    assert (sc.method, sc.prompt_lookup_max, sc.num_speculative_tokens, sc.enforce_eager) == ("ngram", 4, 1000, True)
    # vLLM's `KEY+` splits on commas and keeps strings; pydantic reads them as floats
    assert sc.synthetic_acceptance_rates == [0.5, 0.25]
    assert kinds(cfg) == [] and spellings(cfg) == ["-sc"]  # the alias -sc: not every release has it (SD008)


def test_json_and_dotted_dotted_wins_and_json_is_kept_in_the_note():
    cfg = parse_command("vllm serve m --speculative-config '{\"method\":\"eagle3\",\"model\":\"org/d\","
                        "\"num_speculative_tokens\":3}' --speculative-config.num_speculative_tokens 5")
    assert cfg.speculative_config.set_keys() == {"num_speculative_tokens": 5}
    n = note(cfg, "json_and_dotted")
    assert n.field == "speculative_config"
    assert n.detail["dropped"] == {"method": "eagle3", "model": "org/d", "num_speculative_tokens": 3}


def test_duplicate_dotted_key_last_wins():
    cfg = parse_command("vllm serve m --speculative-config.num_speculative_tokens 3 "
                        "--speculative-config.num_speculative_tokens 4")
    assert cfg.speculative_config.num_speculative_tokens == 4
    n = note(cfg, "duplicate_key")
    assert n.field == "speculative_config.num_speculative_tokens" and n.detail["values"] == [3, 4]


def test_shorthands_merge_and_conflict():
    cfg = parse_command("vllm serve m --spec-method ngram --spec-tokens 3")
    assert cfg.speculative_config.set_keys() == {"method": "ngram", "num_speculative_tokens": 3}
    assert kinds(cfg) == []
    cfg = parse_command("vllm serve m --spec-model org/a --speculative-config '{\"model\":\"org/b\"}'")
    n = note(cfg, "shorthand_conflict")
    assert n.field == "speculative_config.model"
    assert (n.detail["shorthand_value"], n.detail["config_value"]) == ("org/a", "org/b")
    assert cfg.speculative_config.model == "org/b" and cfg.extra_args == {"spec_model": "org/a"}


def test_deprecated_flags_are_mapped_with_notes():
    cfg = parse_command("vllm serve m --speculative-model org/draft --num-speculative-tokens 5 "
                        "--speculative-draft-tensor-parallel-size 1 --ngram-prompt-lookup-max 4 "
                        "--speculative-max-model-len 2048 --speculative-disable-by-batch-size 8")
    sc = cfg.speculative_config
    assert (sc.model, sc.num_speculative_tokens, sc.draft_tensor_parallel_size, sc.prompt_lookup_max,
            sc.max_model_len) == ("org/draft", 5, 1, 4, 2048)
    assert sc.model_extra == {"disable_by_batch_size": 8}
    notes = {n.detail["old"]: n.detail["new"] for n in cfg.import_notes if n.kind == "deprecated_flag"}
    assert notes["--speculative-model"] == "--speculative-config.model"
    assert notes["--ngram-prompt-lookup-max"] == "--speculative-config.prompt_lookup_max"
    assert len(notes) == 6


def test_deprecated_keys_inside_json_and_mtp_alias_untouched():
    cfg = parse_command("vllm serve m -sc '{\"method\":\"deepseek_mtp\",\"speculative_model\":\"x/y\","
                        "\"ngram_prompt_lookup_max\":3,\"num_lookahead_slots\":2}'")
    sc = cfg.speculative_config
    assert (sc.method, sc.model, sc.prompt_lookup_max, sc.num_speculative_tokens) == ("deepseek_mtp", "x/y", 3, 2)
    olds = sorted(n.detail["old"] for n in cfg.import_notes if n.kind == "deprecated_flag")
    assert olds == ["speculative_config.ngram_prompt_lookup_max", "speculative_config.num_lookahead_slots",
                    "speculative_config.speculative_model"]


@pytest.mark.parametrize("raw,expected,pos", [
    ("{'method': 'ngram', 'num_speculative_tokens': 3}", {"method": "ngram", "num_speculative_tokens": 3}, 1),
    ("{\"method\": \"eagle\", \"enforce_eager\": True, \"model\": None}", {"method": "eagle", "enforce_eager": True, "model": None}, 37),
    ('{"method": "ngram", "num_speculative_tokens": 3,}', {"method": "ngram", "num_speculative_tokens": 3}, 48),
    ("'{\"method\":\"qwen3_next_mtp\",\"num_speculative_tokens\":2}'", {"method": "qwen3_next_mtp", "num_speculative_tokens": 2}, 0),
    ('{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1}', {"method": "mtp", "num_speculative_tokens": 1}, 1),
    ('"{\\"method\\": \\"mtp\\"}"', {"method": "mtp"}, 0),
    ("method:dspark", {"method": "dspark"}, 0),
    ("method=ngram,num_speculative_tokens=3", {"method": "ngram", "num_speculative_tokens": 3}, 0),
    ("{method: eagle3, num_speculative_tokens: 2}", {"method": "eagle3", "num_speculative_tokens": 2}, 1),
])
def test_malformed_json_is_repaired_with_position_and_corrected_text(raw, expected, pos):
    cfg = parse_command(["vllm", "serve", "m", "--speculative-config", raw])
    n = note(cfg, "json_malformed")
    assert n.field == "speculative_config"
    assert n.detail["raw"] == raw and n.detail["position"] == pos
    assert json.loads(n.detail["corrected"]) == expected
    assert cfg.speculative_config.model_dump(exclude_none=True) == {k: v for k, v in expected.items() if v is not None}
    assert "speculative_config" not in cfg.invalid_values


def test_unrepairable_json_keeps_raw_text():
    raw = '{"method": "ngram", "num_speculative_tokens": [1, }'
    cfg = parse_command(["vllm", "serve", "m", "--speculative-config", raw])
    n = note(cfg, "json_malformed")
    assert n.detail["corrected"] is None and n.detail["position"] == 50
    assert cfg.invalid_values == {"speculative_config": raw} and cfg.speculative_config is None


@pytest.mark.parametrize("raw", ["[1, 2]", "3", '"text"'])
def test_json_not_an_object(raw):
    cfg = parse_command(["vllm", "serve", "m", "-sc", raw])
    assert kinds(cfg) == ["not_an_object"]
    assert cfg.invalid_values == {"speculative_config": raw}


def test_speculative_config_none_means_off():
    assert parse_command("vllm serve m --speculative-config None").speculative_config is None


def test_parse_spec_json_never_raises_on_deep_nesting():
    obj, problem = parse_spec_json("[" * 100000)
    assert obj is None and problem["kind"] == "json_malformed"


# ---- public cases (tests/data/public-bugs.jsonl, topic cli_syntax) ---------------------------

def _case(case_id: str) -> dict:
    for line in (DATA / "public-bugs.jsonl").read_text().splitlines():
        if line.strip():
            c = json.loads(line)
            if c["id"] == case_id:
                return c
    raise KeyError(case_id)


def test_public_launcher_escaped_json():
    c = _case("eugr-111-launcher-escapes-speculative-json")
    raw = c["config"]["speculative-config"].split(" (passed through")[0]
    assert raw.startswith("'{")
    cfg = parse_command(["vllm", "serve", c["target_model"], "--speculative-config", raw])
    n = note(cfg, "json_malformed")
    assert json.loads(n.detail["corrected"]) == {"method": "qwen3_next_mtp", "num_speculative_tokens": 2}
    assert cfg.speculative_config.method == "qwen3_next_mtp"
    # the same value after a wrapper re-escaped the inner quotes too
    escaped = raw.replace('"', '\\"')
    cfg2 = parse_command(["vllm", "serve", c["target_model"], "--speculative-config", escaped])
    assert note(cfg2, "json_malformed").detail["corrected"] == n.detail["corrected"]


def test_public_method_colon_dspark():
    c = _case("wtdcode-16-speculative-config-not-json")
    cfg = parse_command(["vllm", "serve", c["target_model"], "--tensor-parallel-size", "4",
                         "--kv-cache-dtype", c["config"]["kv-cache-dtype"], "--speculative-config",
                         c["config"]["speculative-config"]])
    n = note(cfg, "json_malformed")
    assert n.detail["raw"] == "method:dspark" and n.detail["corrected"] == '{"method":"dspark"}'
    assert cfg.speculative_config.method == "dspark" and cfg.kv_cache_dtype == "fp8_ds_mla"


def test_public_dotted_deepseek_mtp_accepted_without_rewrite():
    c = _case("vllm-pr35690-dotted-speculative-keys")
    argv = ["vllm", "serve", c["target_model"]]
    for k, v in c["config"].items():
        argv += [f"--{k}", str(v)]
    cfg = parse_command(argv)
    assert cfg.speculative_config.set_keys() == {"method": "deepseek_mtp", "num_speculative_tokens": 1}
    assert kinds(cfg) == []  # dotted keys are valid; the alias is left for the rules


# ---- YAML -------------------------------------------------------------------------------------

def test_parse_yaml_like_vllm_config_file():
    text = """
model: Qwen/Qwen3-8B
tensor-parallel-size: 2
kv_cache_dtype: fp8
enforce-eager: true
no-enable-prefix-caching: true
revision: 1234
port: 8000
served-model-name: [a, b]
speculative-config:
  method: eagle3
  model: org/drafter
  num-speculative-tokens: 3
"""
    cfg = parse_yaml(text)
    assert (cfg.model, cfg.tensor_parallel_size, cfg.kv_cache_dtype, cfg.revision) == ("Qwen/Qwen3-8B", 2, "fp8", "1234")
    assert cfg.enforce_eager is True and cfg.enable_prefix_caching is False
    assert cfg.extra_args == {"port": 8000, "served_model_name": ["a", "b"]}
    assert cfg.speculative_config.set_keys() == {"method": "eagle3", "model": "org/drafter", "num_speculative_tokens": 3}


def test_parse_yaml_spec_as_json_string_and_env_comment():
    cfg = parse_yaml("# env: VLLM_X=\"1\"\nmodel: m\nspeculative_config: \"{'method': 'ngram'}\"\n")
    assert cfg.env == {"VLLM_X": "1"} and cfg.speculative_config.method == "ngram"
    assert kinds(cfg) == ["json_malformed"]


@pytest.mark.parametrize("text,where", [
    ("model: m\n  bad: [1,\n", "line"),
    ("- a\n- b\n", "mapping"),
    ("", "empty"),
    ("tensor-parallel-size: 2\n", "model"),
])
def test_parse_yaml_errors(text, where):
    with pytest.raises(ConfigError) as err:
        parse_yaml(text, source="serve.yaml")
    assert where in str(err.value)
    assert err.value.field in ("config", "model") and err.value.field in str(err.value)


def test_parse_yaml_error_has_line_and_column():
    with pytest.raises(ConfigError, match=r"line \d+, column \d+"):
        parse_yaml("model: m\nspeculative-config: {method: [\n")


# ---- fuzz: nothing but ConfigError escapes, and it names a field ------------------------------

_TOKENS = st.sampled_from([
    "vllm", "serve", "python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--", "-",
    "--speculative-config", "-sc", "--speculative-config.method", "-sc.num_speculative_tokens", "--spec-method",
    "--spec-tokens", "--speculative-model", "--no-enforce-eager", "--enforce-eager", "-tp", "--max-model-len",
    "1k", "-1", "{", "}", "'", '"', "\\", "=", "{'a': 1}", '{"method": "ngram"}', "method:ngram", "[1]",
    "null", "None", "--served-model-name", "--middleware", "-O", "-O3", "--x.y", "--speculative-config.a+",
    "VAR=1", "export", "env", ";", "&&", "--config", "--no-", "--=", "-sc=", "--speculative-config.=3",
])


def _check_error(err: ConfigError) -> None:
    assert err.field, f"ConfigError without a field: {err}"
    assert err.field in str(err), f"message does not name {err.field!r}: {err}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.lists(st.text(max_size=30), max_size=12),
                 st.lists(_TOKENS, max_size=14), st.lists(_TOKENS, max_size=14).map(" ".join)))
def test_fuzz_parse_command(command):
    try:
        cfg = parse_command(command)
    except ConfigError as err:
        _check_error(err)
        return
    assert cfg.model


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200),
                 st.dictionaries(st.sampled_from(["model", "speculative-config", "tensor-parallel-size", "no-x",
                                                  "speculative-config.method", "port", "enforce-eager"]),
                                 st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                                           st.lists(st.integers(), max_size=3),
                                           st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
                                 max_size=6).map(lambda d: json.dumps(d))))
def test_fuzz_parse_yaml(text):
    try:
        cfg = parse_yaml(text)
    except ConfigError as err:
        _check_error(err)
        return
    assert cfg.model


def test_positional_model_wins_over_a_config_file_model(tmp_path):
    """`vllm serve Qwen/Qwen3-8B --config a.yaml` with `model: meta-llama/...` in the file: vLLM's
    _pull_args_from_config keeps the positional model first ("cli > config") and serve.py sets
    args.model = args.model_tag, so Qwen3-8B is served (the wizard took the file's, the last)."""
    from wizard.io.yaml_config import config_file_args

    y = tmp_path / "a.yaml"
    y.write_text("model: meta-llama/Llama-3.1-8B-Instruct\ntensor-parallel-size: 2\n")
    cfg = parse_command(f"vllm serve Qwen/Qwen3-8B --config {y}", config_file=config_file_args)
    assert cfg.model == "Qwen/Qwen3-8B" and cfg.tensor_parallel_size == 2
    assert "positional" in note(cfg, "duplicate_key").message
    cfg = parse_command(f"vllm serve --config {y}", config_file=config_file_args)
    assert cfg.model == "meta-llama/Llama-3.1-8B-Instruct" and "duplicate_key" not in kinds(cfg)


def test_yaml_model_list_is_read_like_vllms_config_loader():
    """`model: [a, b]`: vLLM's load_config_file writes `--model a b`, argparse takes a and exits on
    b ('unrecognized arguments'); the wizard read the list's text as one model name (SD009 warning)."""
    cfg = parse_yaml("model: [meta-llama/Llama-3.1-8B-Instruct, b]\n")
    assert cfg.model == "meta-llama/Llama-3.1-8B-Instruct" and cfg.extra_args["_positional"] == ["b"]
