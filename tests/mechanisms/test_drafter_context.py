"""Drafter context shorter than the served length, per release (real EAGLE3 / target configs)."""

from __future__ import annotations

from factory import fixture_config, make_model_dir
from wizard.mechanisms.drafter_context import drafter_context, drafter_max_len
from wizard.models.local import inspect_folder


def _drafter(tmp_path, cfg):
    return inspect_folder(make_model_dir(tmp_path / "d", cfg))


def _llama_drafter(tmp_path, mpe=2048, **extra):
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B ships max_position_embeddings 2048 (vLLM #48894)
    cfg = dict(fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json"))
    cfg.pop("rope_scaling", None)
    cfg.update({"max_position_embeddings": mpe, **extra})
    return _drafter(tmp_path, cfg)


def test_eagle3_short_context_is_raised_to_the_target(tmp_path):
    d = _llama_drafter(tmp_path)
    for rel in ("0.28", "0.32", "0.33"):
        r = drafter_context(rel, "eagle3", drafter=d, served_len=131072)
        assert r.outcome == "raised" and r.severity == "info" and r.effective_max_model_len == 131072


def test_draft_model_with_short_context_crashes_before_033_and_reduces_length_in_033(tmp_path):
    d = _llama_drafter(tmp_path, mpe=4096)
    old = drafter_context("0.32", "draft_model", drafter=d, served_len=32768)
    assert old.outcome == "crash_on_long_prompts" and old.severity == "error"
    assert "--max-model-len 4096" in old.fixes
    assert any("V2 speculators" in n for n in old.notes)
    new = drafter_context("0.33", "draft_model", drafter=d, served_len=32768, runner="v2")
    assert new.outcome == "served_length_reduced" and new.effective_max_model_len == 4096
    assert new.severity == "warning"


def test_v1_runner_skips_drafting_for_the_whole_batch_instead(tmp_path):
    """V1 GPUModelRunner._input_fits_in_drafter (every release 0.28-0.33): the batch's longest sequence
    plus k draft tokens (+1 for DFlash) past draft_model_config.max_model_len -> no draft tokens."""
    d = _llama_drafter(tmp_path, mpe=4096)
    for rel in ("0.28", "0.32", "0.33"):
        r = drafter_context(rel, "draft_model", drafter=d, served_len=32768, runner="v1", num_speculative_tokens=3)
        assert r.outcome == "speculation_skipped" and r.severity == "warning", rel
        assert r.skip_from == 4094 and r.effective_max_model_len == 32768
        assert "_input_fits_in_drafter" in r.source
    r = drafter_context("0.32", "dflash", drafter=d, served_len=32768, runner="v1", num_speculative_tokens=8)
    assert r.skip_from == 4096 - 8 - 1 + 1
    # speculative_config.max_model_len moves the gate
    r = drafter_context("0.32", "draft_model", drafter=d, served_len=32768, runner="v1", speculative_max_model_len=2048)
    assert r.outcome == "speculation_skipped" and r.skip_from == 2048


def test_mtp_and_dflash_are_raised_only_from_033(tmp_path):
    d = _llama_drafter(tmp_path, mpe=8192)
    assert drafter_context("0.32", "dflash", drafter=d, served_len=65536).outcome == "crash_on_long_prompts"
    assert drafter_context("0.33", "dflash", drafter=d, served_len=65536).outcome == "raised"
    # a YaRN drafter is not a cache-only RoPE type: 0.33 does not raise it
    yarn = _llama_drafter(tmp_path / "y", mpe=8192,
                          rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192})
    r = drafter_context("0.33", "dflash", drafter=yarn, served_len=65536, runner="v2")
    assert r.outcome == "served_length_reduced"


def test_rope_factor_extends_the_drafter_length(tmp_path):
    d = _llama_drafter(tmp_path, mpe=8192, rope_scaling={"rope_type": "linear", "factor": 4.0})
    assert drafter_max_len(d) == 32768
    assert drafter_context("0.32", "draft_model", drafter=d, served_len=32768).outcome == "ok"


def test_speculative_max_model_len_bounds_and_methods_without_drafter():
    r = drafter_context("0.32", "draft_model", drafter_len=4096, served_len=8192, speculative_max_model_len=6000)
    assert r.outcome == "config_error" and "draft_max_model_len=4096" in r.message
    assert drafter_context("0.32", "ngram", served_len=8192).outcome == "ok"
    assert drafter_context("0.32", "eagle3", served_len=None).outcome == "unknown"
