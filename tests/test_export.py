"""wizard.io.export: every form re-imports to the same config (hypothesis), plus fixed examples."""

from __future__ import annotations

import os
import shlex
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard.config import SERVE_FIELDS, ServeConfig, config_from_dict
from wizard.io.forms import SINGLE_NODE_FORMATS as FORMATS, export
from wizard.io.export import spec_dict, to_argv, to_command, to_dotted_command, to_python, to_yaml
from wizard.privacy import SECRET_OPTION_DESTS, is_secret_env
from wizard.io.argv import parse_command
from wizard.io.collector import CLI, SPEC_SHORTHANDS
from wizard.io.yaml_config import parse_yaml
from wizard.vllm import legacy

# ---- strategies (shared with tests/test_vllm_argparse.py) ----------------------------------

WORD = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_./\-]{0,18}", fullmatch=True)
METHODS = ["ngram", "eagle", "eagle3", "mtp", "draft_model", "suffix", "dflash", "dspark", "deepseek_mtp"]
KV = ["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla"]
_RESERVED = (set(SERVE_FIELDS) | set(SPEC_SHORTHANDS) | set(legacy.SPEC_FLAGS) | CLI.boolean_optional
             | CLI.store_true | CLI.store_boolean | CLI.nargs | CLI.append
             | {"config", "model", "speculative_config", "sc", "hf_token", "help", "optimization_level"})
EXTRA_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda n: n not in _RESERVED and n not in SECRET_OPTION_DESTS and not n.startswith("no_") and not n.endswith("_"))


def spec_strategy(with_extras: bool = True):
    fields = {
        "method": st.sampled_from(METHODS),
        "model": WORD,
        "num_speculative_tokens": st.integers(1, 16),
        "draft_tensor_parallel_size": st.integers(1, 8),
        "kv_cache_dtype": st.sampled_from(KV),
        "max_model_len": st.integers(1, 200000),
        "prompt_lookup_max": st.integers(1, 8),
        "prompt_lookup_min": st.integers(1, 8),
        "enforce_eager": st.booleans(),
        "parallel_drafting": st.booleans(),
        "suffix_decoding_max_spec_factor": st.floats(0.1, 4.0, allow_nan=False),
        "synthetic_acceptance_rates": st.lists(st.floats(0.0, 1.0), max_size=3),
        "revision": WORD,
    }
    if with_extras:
        fields["some_future_key"] = st.one_of(WORD, st.integers(0, 99))
    return st.fixed_dictionaries({}, optional=fields)


def config_strategy(*, extras: bool = True, invalid: bool = True, env: bool = True):
    top = {
        "tokenizer": WORD, "revision": WORD,
        "dtype": st.sampled_from(["auto", "bfloat16", "float16", "float32", "half"]),
        "tensor_parallel_size": st.integers(1, 16), "pipeline_parallel_size": st.integers(1, 8),
        "data_parallel_size": st.integers(1, 8), "max_model_len": st.integers(1, 10**6),
        "max_num_seqs": st.integers(1, 4096), "max_num_batched_tokens": st.integers(1, 10**6),
        "gpu_memory_utilization": st.floats(0.05, 1.0), "kv_cache_dtype": st.sampled_from(KV),
        "kv_sharing_fast_prefill": st.booleans(), "enable_prefix_caching": st.booleans(),
        "enable_chunked_prefill": st.booleans(), "enforce_eager": st.booleans(), "async_scheduling": st.booleans(),
        "enable_lora": st.booleans(), "block_size": st.sampled_from([16, 32, 64]),
        "speculative_config": spec_strategy(with_extras=extras),
    }
    d = st.fixed_dictionaries({"model": WORD}, optional=top)
    if extras:
        d = st.tuples(d, st.dictionaries(EXTRA_NAME, st.one_of(WORD, st.just(True), st.just(False)), max_size=4)).map(
            lambda t: {**t[0], "extra_args": t[1]})
    if invalid:
        d = st.tuples(d, st.sampled_from([{}, {"max_model_len": "lots"}, {"tensor_parallel_size": "two"},
                                          {"speculative_config.num_speculative_tokens": "three"}])).map(_with_invalid)
    if env:
        d = st.tuples(d, st.dictionaries(st.from_regex(r"[A-Z_][A-Z0-9_]{0,12}", fullmatch=True).filter(
                                             lambda n: not is_secret_env(n)),  # credentials export as $VAR
                                         st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
                                         max_size=3)).map(lambda t: {**t[0], "env": t[1]})
    return d.map(config_from_dict)


def _with_invalid(t):
    d, inv = t
    d = dict(d)
    for path, raw in inv.items():
        if path.startswith("speculative_config."):
            d["speculative_config"] = {**(d.get("speculative_config") or {}), path.split(".", 1)[1]: raw}
        else:
            d[path] = raw
    return d


def same(a: ServeConfig, b: ServeConfig) -> None:
    da, db = a.model_dump(), b.model_dump()
    da.pop("import_notes"), db.pop("import_notes")
    assert da == db


# ---- properties -----------------------------------------------------------------------------

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(config_strategy())
def test_roundtrip_command(cfg):
    text = to_command(cfg)
    same(parse_command(text), cfg)
    assert to_command(cfg) == text  # deterministic


@SETTINGS
@given(config_strategy())
def test_roundtrip_dotted(cfg):
    same(parse_command(to_dotted_command(cfg)), cfg)


@SETTINGS
@given(config_strategy())
def test_roundtrip_yaml(cfg):
    same(parse_yaml(to_yaml(cfg)), cfg)


@SETTINGS
@given(config_strategy())
def test_roundtrip_argv_both_entrypoints(cfg):
    c2 = parse_command(to_argv(cfg))
    c3 = parse_command(to_argv(cfg, entrypoint=("python", "-m", "vllm.entrypoints.openai.api_server")))
    for c in (c2, c3):
        d = cfg.model_dump()
        d["env"] = {}
        same(c, ServeConfig.model_validate(d))


# ---- fixed examples -------------------------------------------------------------------------

CFG_TEXT = (
    "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --kv-cache-dtype fp8 "
    "--no-enable-prefix-caching --speculative-config '{\"method\":\"eagle3\",\"model\":\"org/EAGLE3-8B\","
    "\"num_speculative_tokens\":3,\"kv_cache_dtype\":\"bfloat16\"}' --port 8001 --trust-remote-code"
)
CFG = parse_command(CFG_TEXT)


def test_command_form():
    assert to_command(CFG) == (
        "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 "
        "--kv-cache-dtype fp8 --no-enable-prefix-caching --speculative-config "
        "'{\"method\":\"eagle3\",\"model\":\"org/EAGLE3-8B\",\"num_speculative_tokens\":3,\"kv_cache_dtype\":\"bfloat16\"}' "
        "--port 8001 --trust-remote-code"
    )


def test_dotted_form():
    assert to_dotted_command(CFG).split(" --port")[0].endswith(
        "--speculative-config.method eagle3 --speculative-config.model org/EAGLE3-8B "
        "--speculative-config.num_speculative_tokens 3 --speculative-config.kv_cache_dtype bfloat16")


def test_dotted_quotes_strings_that_would_read_as_json():
    cfg = config_from_dict({"model": "m", "speculative_config": {"model": "123", "revision": "1k", "method": "-x"}})
    argv = shlex.split(to_dotted_command(cfg))
    assert argv[3:] == ["--speculative-config.method=-x", "--speculative-config.model", '"123"',
                        "--speculative-config.revision", '"1k"']
    same(parse_command(argv), cfg)


def test_yaml_form():
    assert to_yaml(CFG) == (
        "# vllm serve --config THIS_FILE (written by SpecWizard)\n"
        "# env: VLLM_USE_V2_MODEL_RUNNER=\"1\"\n"
        "model: meta-llama/Llama-3.1-8B-Instruct\n"
        "tensor-parallel-size: 2\n"
        "kv-cache-dtype: fp8\n"
        "no-enable-prefix-caching: true\n"
        "speculative-config:\n"
        "  method: eagle3\n"
        "  model: org/EAGLE3-8B\n"
        "  num_speculative_tokens: 3\n"
        "  kv_cache_dtype: bfloat16\n"
        "port: '8001'\n"
        "trust-remote-code: true\n"
    )


def test_python_form_runs_and_passes_the_same_kwargs(monkeypatch):
    got = {}
    fake = types.ModuleType("vllm")

    class LLM:  # stands in for vllm.LLM: records the keyword arguments
        def __init__(self, **kwargs):
            got.update(kwargs)

    fake.LLM = LLM
    monkeypatch.setitem(sys.modules, "vllm", fake)
    # setenv first so monkeypatch restores (removes) what the exec'd snippet sets: a leaked
    # VLLM_USE_V2_MODEL_RUNNER=1 makes every later CPU vLLM start fail ("requires Triton").
    monkeypatch.setenv("VLLM_USE_V2_MODEL_RUNNER", "unset-by-test")
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER")
    code = to_python(CFG)
    assert code.startswith("import os\n") and "from vllm import LLM\n" in code
    exec(compile(code, "<export>", "exec"), {"__name__": "__main__"})
    assert got == {"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 2, "kv_cache_dtype": "fp8",
                   "enable_prefix_caching": False, "speculative_config": spec_dict(CFG), "trust_remote_code": True}
    assert "\n#   --port 8001\n" in code  # the server's option, not an EngineArgs field: a comment
    import os
    assert os.environ["VLLM_USE_V2_MODEL_RUNNER"] == "1"


def test_invalid_and_raw_values_exported_verbatim():
    cfg = parse_command(["vllm", "serve", "m", "--max-model-len", "lots", "--speculative-config", "[1, 2]", "stray"])
    assert to_argv(cfg) == ["vllm", "serve", "m", "--max-model-len", "lots", "--speculative-config", "[1, 2]", "stray"]
    cfg = parse_command(["vllm", "serve", "m", "--speculative-config", "{bad json"])
    assert to_argv(cfg)[-2:] == ["--speculative-config", "{bad json"]
    same(parse_command(to_command(cfg)), cfg)


def test_shorthand_conflict_is_reproduced():
    cfg = parse_command("vllm serve m --spec-method ngram --speculative-config '{\"method\":\"eagle3\"}'")
    again = parse_command(to_command(cfg))
    assert [n.kind for n in again.import_notes if n.kind != "option_spelling"] == ["shorthand_conflict"]


def test_false_booleans():
    cfg = config_from_dict({"model": "m", "enforce_eager": False, "extra_args": {"headless": False, "foo": False}})
    assert to_argv(cfg) == ["vllm", "serve", "m", "--no-enforce-eager", "--no-foo"]
    assert "no-enforce-eager: true" in to_yaml(cfg) and "headless: false" in to_yaml(cfg)


def test_export_dispatch():
    assert export(CFG, "command") == to_command(CFG)
    assert export(CFG, "dotted") == to_dotted_command(CFG)
    assert export(CFG, "yaml") == to_yaml(CFG)
    assert export(CFG, "python") == to_python(CFG)
    with pytest.raises(KeyError) as err:
        export(CFG, "xml")
    msg = err.value.args[0]
    assert "unknown export format 'xml'" in msg and all(f in msg for f in FORMATS)


def test_export_delegates_scaleout_forms():
    scaleout = pytest.importorskip("wizard.io.scaleout")
    for form in scaleout.SCALEOUT_FORMATS:
        assert export(CFG, form) == scaleout.export_scaleout(CFG, form)


def test_bare_value_option_and_one_value_list_keep_their_meaning(tmp_path):
    """Issue 20 (low): a bare ``--middleware`` (vLLM: "expected one argument", exit 2) used to be
    exported as ``--middleware true`` — an import path vLLM would try to load — and a list option
    with one value lost the ``--`` before stray words, so they joined the list on re-import."""
    from wizard import api
    from wizard.vllm.cli_parse import parse_serve_argv

    cfg = parse_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --middleware --max-num-seqs 8")
    assert cfg.invalid_values == {"middleware": True} and "middleware" not in cfg.extra_args
    cmd = to_command(cfg)
    assert cmd.endswith("--max-num-seqs 8 --middleware") and "true" not in cmd
    assert parse_command(cmd).invalid_values == {"middleware": True}
    found = [f for f in api.check(cfg, allow_hub=False).findings if f.rule == "SD010"]
    assert found and "'argument --middleware: expected one argument'" in found[0].message
    # vLLM's own parser (mirrored) refuses the bare word the same way
    assert "expected one argument" in (parse_serve_argv(["serve", "m", "--middleware"], "0.32").error or "")

    cfg = parse_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --lora-modules a=b -- extra")
    cmd = to_command(cfg)
    assert cmd.endswith("--lora-modules a=b -- extra"), cmd
    again = parse_command(cmd)
    assert again.extra_args == cfg.extra_args


# ---- the Python form is what vllm.LLM takes (trial item 6) --------------------------------------

SERVER_CMD = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8001 --host 0.0.0.0 --api-key '$VLLM_API_KEY' "
              "--enable-auto-tool-choice --tool-call-parser llama3_json "
              "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'")
ABBREV_CMD = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model 4096 --gpu-mem 0.8 -tp 2 --max-num-seqs 12"
TYPED_CMD = ("HF_TOKEN=hf_SeCrEt123456 vllm serve meta-llama/Llama-3.1-8B-Instruct --hf-token hf_SeCrEt654321 "
             "--compilation-config '{\"mode\":3}' --enable-prefix-caching --no-enforce-eager --foo-bar 1 "
             "--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'")


def _llm_kwargs(code: str, monkeypatch) -> dict:
    got: dict = {}
    fake = types.ModuleType("vllm")
    fake.LLM = lambda **kw: got.update(kw)
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    exec(compile(code, "<export>", "exec"), {"__name__": "__main__"})
    return got


def test_python_form_comments_out_server_options(monkeypatch):
    code = to_python(parse_command(SERVER_CMD), "0.32")
    assert _llm_kwargs(code, monkeypatch) == {"model": "meta-llama/Llama-3.1-8B-Instruct",
                                              "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}
    assert ("# `vllm serve` options that vllm.LLM does not take (not EngineArgs fields in vLLM 0.32; the OpenAI "
            "server's own):\n#   --port 8001\n#   --host 0.0.0.0\n#   --api-key \"$VLLM_API_KEY\"\n"
            "#   --enable-auto-tool-choice\n#   --tool-call-parser llama3_json\n") in code


def test_python_form_expands_abbreviations_and_types_values(monkeypatch):
    code = to_python(parse_command(ABBREV_CMD), "0.32")
    assert _llm_kwargs(code, monkeypatch) == {"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 2,
                                              "max_model_len": 4096, "max_num_seqs": 12, "gpu_memory_utilization": 0.8}
    got = _llm_kwargs(to_python(parse_command(TYPED_CMD), "0.32"), monkeypatch)
    assert got == {"model": "meta-llama/Llama-3.1-8B-Instruct", "enable_prefix_caching": True, "enforce_eager": False,
                   "hf_token": "hf_from_env", "compilation_config": {"mode": 3},
                   "kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"}}
    code = to_python(parse_command(TYPED_CMD), "0.32")
    assert "SeCrEt" not in code and "hf_token=os.environ['HF_TOKEN']," in code
    assert "# options vLLM 0.32's parser does not know (LLM() would refuse them):\n#   --foo-bar 1\n" in code


def test_python_form_comment_lines_stay_comments():
    cfg = config_from_dict({"model": "m", "extra_args": {"port": "80\nimport evil", "weird-name!": "x\r\x00y"}})
    code = to_python(cfg, "0.32")
    compile(code, "<export>", "exec")
    assert "import evil" not in [ln.strip() for ln in code.splitlines()]


@pytest.mark.vllm
def test_python_form_builds_real_engine_args():
    """What each export passes to vllm.LLM, given to the installed vLLM's EngineArgs (in a child:
    importing vLLM here would change later tests' process)."""
    import json as _json
    import subprocess

    codes = [to_python(parse_command(c), "0.32") for c in (SERVER_CMD, ABBREV_CMD, TYPED_CMD, CFG_TEXT)]
    child = (
        "import json, os, sys, types\n"
        "from vllm.engine.arg_utils import EngineArgs\n"
        "out = []\n"
        "fake = types.ModuleType('vllm')\n"
        "fake.LLM = lambda **kw: out.append(EngineArgs(**kw))\n"
        "sys.modules['vllm'] = fake\n"
        "os.environ.setdefault('HF_TOKEN', 'hf_x')\n"
        "for code in json.load(sys.stdin):\n"
        "    exec(code, {'__name__': '__main__'})\n"
        "e = out[1]\n"
        "print(json.dumps([len(out), e.max_model_len, e.gpu_memory_utilization, e.tensor_parallel_size,\n"
        "                  type(out[2].compilation_config).__name__, out[0].speculative_config]))\n"
    )
    # HF_HUB_OFFLINE makes EngineArgs resolve the id to a local snapshot (none here); online it reads nothing
    env = {k: v for k, v in os.environ.items() if k not in ("VLLM_USE_V2_MODEL_RUNNER", "HF_HUB_OFFLINE")}
    p = subprocess.run([sys.executable, "-c", child], input=_json.dumps(codes), capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    n, max_len, util, tp, comp, spec = _json.loads(p.stdout.strip().splitlines()[-1])
    assert (n, max_len, util, tp, comp) == (4, 4096, 0.8, 2, "CompilationConfig")
    assert spec == {"method": "ngram", "num_speculative_tokens": 3}


def test_python_form_guards_the_engine_behind_main(monkeypatch):
    """UI trial defect 2: run as a script on the CPU build, a module-level LLM(...) failed ('An attempt
    has been made to start a new process before the current process has finished its bootstrapping
    phase'). The engine is built under ``if __name__ == "__main__"`` (as vLLM's examples do); imported
    as a module (the engine's re-import) the snippet builds nothing."""
    code = to_python(parse_command(SERVER_CMD), "0.32")
    assert 'if __name__ == "__main__":' in code and "    llm = build_llm()" in code
    got: dict = {}
    fake = types.ModuleType("vllm")
    fake.LLM = lambda **kw: got.update(kw)
    monkeypatch.setitem(sys.modules, "vllm", fake)
    exec(compile(code, "<export>", "exec"), {"__name__": "__mp_main__"})
    assert got == {}
