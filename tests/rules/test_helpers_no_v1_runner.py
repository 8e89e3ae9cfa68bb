"""The runner helpers (wizard/rules/helpers.py ``uses_v1_runner`` / ``v2_blockers`` /
``async_incompatibility``) and the V1-only rules on a release without Model Runner V1.

The fact "this release has no V1 runner" comes from ``method_support.has_v1_runner`` (the
release's proposers.json ``v1_runner``); here it is forced per test, so these tests hold whether
or not the generated table says so yet. 0.34 removed V1 (docs/release-0.34.md §1.1).
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from wizard import api
from wizard.mechanisms import method_support
from wizard.rules import helpers as H
from wizard.vllm import releases

ENGINE = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = ('{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}')


@pytest.fixture
def no_v1(monkeypatch):
    """has_v1_runner False from 0.34 on (what 0.34's proposers.json says), True before."""
    real = method_support.has_v1_runner

    def fake(version):
        return False if Version(releases.release_of(version)) >= Version("0.34") else real(version)

    monkeypatch.setattr(method_support, "has_v1_runner", fake)


def _ctx(command: str, version: str, gpu: str | None = "H100"):
    return api.resolve(api.load(command=command), vllm_version=version, gpu=gpu, allow_hub=False)


def _findings(command: str, version: str, gpu: str | None = "H100", rule: str | None = None):
    report = api.check(api.load(command=command), vllm_version=version, gpu=gpu, allow_hub=False)
    return [f for f in report.findings if rule is None or f.rule == rule]


@pytest.mark.parametrize("command,gpu", [
    ("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {e} --speculative-config '{s}'", "H100"),
    ("vllm serve {e} --speculative-config '{s}'", "cpu"),
    ("vllm serve {e} --speculative-config '{{\"method\":\"suffix\",\"num_speculative_tokens\":3}}'", "H100"),
])
def test_helpers_no_v1_runner_on_a_release_without_it(no_v1, command, gpu):
    cmd = command.format(e=ENGINE, s=EAGLE3)
    old, new = _ctx(cmd, "0.33", gpu), _ctx(cmd, "0.34", gpu)
    assert H.has_v1(old) and not H.has_v1(new)
    assert H.uses_v1_runner(old)  # forced, CPU, suffix: V1 on 0.33
    assert not H.uses_v1_runner(new) and H.v2_blockers(new) == []


def test_helpers_removed_keys_make_no_v1_findings(no_v1):
    """disable_padded_drafter_batch / use_heterogeneous_vocab are unknown keys on 0.34 (SD020
    alone reports them): no async refusal, no V2 blocker."""
    cmd = (f"vllm serve {ENGINE} --async-scheduling --speculative-config '{{\"method\":\"draft_model\","
           "\"model\":\"meta-llama/Llama-3.2-1B-Instruct\",\"num_speculative_tokens\":3,"
           "\"disable_padded_drafter_batch\":true,\"use_heterogeneous_vocab\":true}'")
    old, new = _ctx(cmd, "0.33"), _ctx(cmd, "0.34")
    assert H.async_incompatibility(old) == "disable_padded_drafter_batch=True"
    assert "heterogeneous-vocabulary draft models" in H.v2_blockers(old)
    assert H.async_incompatibility(new) is None and H.v2_blockers(new) == []
    rules = {f.rule for f in _findings(cmd, "0.34")}
    assert not rules & {"SD090", "SD091", "SD092", "SD096", "SD097"}, rules


def test_helpers_async_incompatibility_unchanged_before_0_33(no_v1):
    cmd = f"vllm serve {ENGINE} --speculative-config '{{\"method\":\"ngram\",\"num_speculative_tokens\":3}}'"
    assert H.async_incompatibility(_ctx(cmd, "0.32")) == "ngram-based speculative decoding"
    assert H.async_incompatibility(_ctx(cmd, "0.34")) is None


def test_helpers_sd307_no_v1_prompt_logprobs_sentence(no_v1):
    cmd = f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {ENGINE} --speculative-config '{EAGLE3}'"
    old = _findings(cmd, "0.33", rule="SD307")
    new = _findings(cmd, "0.34", rule="SD307")
    assert any("prompt_logprobs" in f.message for f in old)
    assert new and not any("prompt_logprobs" in f.message or "V1" in f.message for f in new)


def test_helpers_sd096_exact_messages_on_0_34(no_v1):
    base = f"vllm serve {ENGINE}"
    for value in ("0", "true", "false", "2"):
        f, = _findings(f"VLLM_USE_V2_MODEL_RUNNER={value} {base}", "0.34", rule="SD096")
        assert f.severity.value == "error"
        assert f.message == (f"VLLM_USE_V2_MODEL_RUNNER={value} is no longer supported: Model Runner V1 has been "
                             "removed. Unset this variable.")
    f, = _findings(f"VLLM_USE_V2_MODEL_RUNNER=1 {base}", "0.34", rule="SD096")
    assert f.severity.value == "info" and "redundant" in f.message
    assert not _findings(f"VLLM_USE_V2_MODEL_RUNNER=0 {base}", "0.33", rule="SD096")
