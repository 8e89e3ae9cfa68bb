"""Shared pytest set-up: the tests folder on sys.path (for tests/factory.py), a safe vLLM env."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# vLLM (CPU build) takes most of RAM for KV cache by default; tests run with 1 GiB unless told.
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Never inherit a forced model-runner choice from the caller's shell: on the CPU build
# VLLM_USE_V2_MODEL_RUNNER=1 makes every real vLLM start fail ("Model Runner V2 requires Triton").
os.environ.pop("VLLM_USE_V2_MODEL_RUNNER", None)


@pytest.fixture(scope="module")
def oracle():
    """vLLM's own config build in a long-lived worker process (wizard.vllm.oracle), one per test module;
    skipped when the installed Python has no vLLM."""
    from wizard.vllm.oracle import VllmOracle, vllm_unavailable_reason

    if vllm_unavailable_reason():
        pytest.skip(vllm_unavailable_reason())
    o = VllmOracle()
    yield o
    o.close()
