"""CUDA-graph sizes with speculation: the mirror against each release's own code.

``tests/data/vllm_samples/<X.Y>/cudagraph.json`` holds the outputs of the release's real
``_set_cudagraph_sizes``, ``adjust_cudagraph_sizes_for_spec_decode`` and V1
``CudagraphDispatcher`` on sampled inputs (``scripts/gen_mechanism_tables.py``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from wizard.mechanisms.cudagraph import capture_plan

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "vllm_samples"
RELEASES = ["0.28", "0.29", "0.30", "0.31", "0.32", "0.33"]


def _plan(rel, x):
    return capture_plan(
        rel, max_num_seqs=x["max_num_seqs"], num_speculative_tokens=x["k"],
        max_num_batched_tokens=x["max_num_batched_tokens"], cudagraph_mode=x["mode"],
        max_cudagraph_capture_size=x["max_cudagraph_capture_size"],
        cudagraph_capture_sizes=x["cudagraph_capture_sizes"], blackwell=x["blackwell"], runner="v1")


@pytest.mark.parametrize("rel", RELEASES)
def test_mirror_matches_release_code(rel):
    samples = json.loads(gzip.decompress((SAMPLES / rel / "cudagraph.json.gz").read_bytes()))["samples"]
    assert len(samples) > 100
    mismatches = []
    for x in samples:
        p = _plan(rel, x)
        if "error" in x:
            ok = p.error is not None
        elif "v1_error" in x:
            ok = p.error is not None and list(p.sizes) == x["sizes"]
        else:
            ok = (list(p.sizes) == x["sizes"] and p.max_size == x["max"]
                  and list(p.runner_sizes) == x["v1_sizes"] and p.runner_max_size == x["v1_max"]
                  and ("v1_decode" not in x or [list(r) for r in p.decode] == x["v1_decode"]))
        if not ok:
            mismatches.append((x, p))
    assert not mismatches, mismatches[:2]


def test_eagle_k7_on_256_seqs_graphs_only_64_requests():
    # 0.32, H100, defaults: ceiling min(256*8*2, 512) = 512 tokens -> 512 // 8 = 64 requests
    p = capture_plan("0.32", max_num_seqs=256, num_speculative_tokens=7, max_num_batched_tokens=8192)
    assert p.max_size == 512 and p.decode_query_len == 8
    assert p.max_graph_requests == 64 and p.eager_from == 65
    assert p.decode == ((1, 64, "FULL"), (65, 256, "NONE"))
    assert any("65 or more requests" in n for n in p.notes)


def test_v1_rounds_to_multiples_of_1_plus_k():
    # k=4 -> sizes are multiples of 5; 512 is not, so the largest graph is 500 tokens = 100 requests
    p = capture_plan("0.32", max_num_seqs=128, num_speculative_tokens=4, max_num_batched_tokens=8192)
    assert p.max_size == 512 and p.runner_max_size == 500
    assert all(s % 5 == 0 for s in p.runner_sizes)
    assert p.eager_from == 101


def test_blackwell_default_ceiling_is_1024():
    p = capture_plan("0.32", max_num_seqs=256, num_speculative_tokens=3, max_num_batched_tokens=8192, blackwell=True)
    assert p.max_size == 1024 and p.eager_from is None


def test_uniform_decode_sizes_appear_from_029():
    # 0.29 appends n*(1+k) decode sizes off the 8/16-token stride; 0.28 does not
    new = capture_plan("0.29", max_num_seqs=16, num_speculative_tokens=2, cudagraph_mode="PIECEWISE")
    old = capture_plan("0.28", max_num_seqs=16, num_speculative_tokens=2, cudagraph_mode="PIECEWISE")
    assert 3 in new.sizes and 3 not in old.sizes


def test_user_sizes_that_cannot_round_raise():
    p = capture_plan("0.32", max_num_seqs=8, num_speculative_tokens=9, cudagraph_capture_sizes=[1, 2, 4, 8])
    assert p.error and "multiple of 10" in p.error


def test_backend_without_uniform_batch_support_downgrades_to_piecewise():
    p = capture_plan("0.32", max_num_seqs=64, num_speculative_tokens=3, backend_cg_support="UNIFORM_SINGLE_TOKEN_DECODE")
    assert p.mode == "PIECEWISE" and any("UNIFORM_BATCH" in n for n in p.notes)


def test_v2_runner_needs_no_rounding():
    p = capture_plan("0.32", max_num_seqs=128, num_speculative_tokens=4, runner="v2")
    assert p.runner_max_size == 512 and p.eager_from == 103  # 102 * 5 = 510 <= 512


def test_enforce_eager_and_bad_mode_never_raise():
    assert capture_plan("0.33", enforce_eager=True, num_speculative_tokens=3).eager_from == 1
    assert capture_plan("0.33", cudagraph_mode="SOMETIMES").error


@pytest.mark.vllm
def test_installed_vllm_computes_the_same_sizes():
    """Call the installed vLLM's own ``VllmConfig._set_cudagraph_sizes`` and
    ``CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`` (imported for real, CPU platform:
    no Blackwell) and compare with the mirror."""
    from types import SimpleNamespace as NS

    from vllm.config.compilation import CompilationConfig, CUDAGraphMode
    from vllm.config.vllm import VllmConfig

    from wizard.vllm.versions import installed_vllm

    inst = installed_vllm()
    if inst is None:
        pytest.skip("no vLLM installed")
    for mns, k, mnbt in [(256, 7, 8192), (128, 4, 8192), (16, 2, 2048), (512, 0, 8192), (64, 3, 256)]:
        cc = CompilationConfig(cudagraph_mode=CUDAGraphMode.FULL_AND_PIECEWISE)
        spec = NS(num_speculative_tokens=k, num_speculative_tokens_per_batch_size=None,
                  uses_dynamic_speculative_decoding=lambda: False) if k else None

        class Self:
            num_speculative_tokens = property(VllmConfig.num_speculative_tokens.fget)
            uniform_decode_query_len = property(VllmConfig.uniform_decode_query_len.fget)

        s = Self()
        s.model_config, s.compilation_config = NS(enforce_eager=False), cc
        s.scheduler_config = NS(max_num_seqs=mns, max_num_batched_tokens=mnbt)
        s.speculative_config, s.diffusion_config, s.performance_mode = spec, None, "balanced"
        s.parallel_config = NS(tensor_parallel_size=1)
        VllmConfig._set_cudagraph_sizes(s)
        plan = capture_plan(inst.short, max_num_seqs=mns, num_speculative_tokens=k, max_num_batched_tokens=mnbt)
        assert list(plan.sizes) == list(cc.cudagraph_capture_sizes), (mns, k)
        if k:
            cc.adjust_cudagraph_sizes_for_spec_decode(1 + k)
        assert list(plan.runner_sizes) == list(cc.cudagraph_capture_sizes), (mns, k)
        assert plan.runner_max_size == cc.max_cudagraph_capture_size
