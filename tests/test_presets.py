"""Deployment presets (presets/deployments/*.yaml, wizard/io/presets.py): complete, documented,
and free of error findings on their own hardware."""

from __future__ import annotations

import re

import pytest

from wizard.api import check
from wizard.config import ConfigError, ServeConfig
from wizard.hardware.catalog import parse_gpu_spec
from wizard.io.presets import PRESETS_DIR, Preset, clear_cache, list_presets, load_preset

PRESETS = list_presets()
NAMES = [p.name for p in PRESETS]
URL = re.compile(r"^https://[^\s]+$")


def test_at_least_twelve_presets_with_unique_names():
    assert len(PRESETS) >= 12
    assert len(set(NAMES)) == len(NAMES)
    assert NAMES == sorted(NAMES)
    assert all(isinstance(p, Preset) for p in PRESETS)


def test_presets_cover_the_common_methods_and_hardware():
    methods = {p.config.speculative_config.method for p in PRESETS}
    assert {"eagle3", "mtp", "ngram", "draft_model", "suffix"} <= methods
    vendors = {parse_gpu_spec(p.hardware).vendor for p in PRESETS}
    assert vendors == {"nvidia", "amd", "cpu"}
    assert any((p.config.tensor_parallel_size or 1) >= 8 for p in PRESETS)


@pytest.mark.parametrize("name", NAMES)
def test_preset_is_complete(name):
    cfg, hw, meta = load_preset(name)
    assert isinstance(cfg, ServeConfig)
    assert meta["name"] == name and meta["hardware"] == hw
    assert meta["title"].strip() and "\n" not in meta["rationale"].strip()
    assert 20 <= len(meta["rationale"]) <= 200
    assert meta["sources"] and all(URL.match(s) for s in meta["sources"])
    acc = meta["expected_acceptance"]
    if acc is not None:  # only public figures, each with its URL
        assert URL.match(acc["source"]) and acc["metric"] and acc["value"]
    spec = cfg.speculative_config
    assert spec is not None and spec.method and spec.num_speculative_tokens >= 1
    assert cfg.kv_cache_dtype is not None  # KV dtype chosen explicitly
    # nothing fell aside: every value had the right type
    assert cfg.invalid_values == {} and cfg.import_notes == []
    if spec.method in ("eagle3", "draft_model"):
        assert spec.model and spec.draft_tensor_parallel_size in (1, cfg.tensor_parallel_size or 1)
    if spec.method == "ngram":
        assert spec.prompt_lookup_min <= spec.prompt_lookup_max


@pytest.mark.parametrize("name", NAMES)
def test_preset_hardware_is_a_catalog_name_with_enough_devices(name):
    cfg, hw_spec, _ = load_preset(name)
    hw = parse_gpu_spec(hw_spec)
    base = re.sub(r"x\d+$", "", hw_spec)
    assert hw.name == base, f"use the catalog's own name {hw.name!r}, not {base!r}"
    if hw.vendor != "cpu":
        need = (cfg.tensor_parallel_size or 1) * (cfg.pipeline_parallel_size or 1)
        nodes = int(cfg.extra_args.get("nnodes", 1))  # a multi-node preset's hardware is one node
        assert hw.count * nodes == need


@pytest.mark.parametrize("name", NAMES)
def test_preset_passes_the_rules_with_no_error(name):
    cfg, hw, _ = load_preset(name)
    report = check(cfg, gpu=hw, allow_hub=False)
    errors = [f"{f.rule}: {f.message}" for f in report.errors]
    assert errors == [], f"{name} on {hw}: {errors}"
    assert report.verdict in ("ok", "warning")
    assert cfg.model in report.command


def test_load_preset_returns_a_fresh_config_each_time():
    name = "llama31-8b-eagle3-h100"
    cfg, hw, meta = load_preset(name)
    assert (cfg.model, hw) == ("meta-llama/Llama-3.1-8B-Instruct", "H100-SXMx1")
    assert cfg.speculative_config.model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    assert meta["expected_acceptance"]["value"]["mt_bench"] == 2.77
    cfg.max_model_len = 1
    cfg.speculative_config.num_speculative_tokens = 99
    again, _, _ = load_preset(name + ".yaml")
    assert again.max_model_len == 16384 and again.speculative_config.num_speculative_tokens == 3


def test_unmodelled_options_are_kept_for_export():
    cfg, _, _ = load_preset("devstral-small-ngram-h100")
    assert cfg.extra_args == {"tokenizer_mode": "mistral", "config_format": "mistral", "load_format": "mistral"}
    cpu, hw, _ = load_preset("llama32-1b-ngram-cpu")
    assert hw == "CPU" and cpu.env == {"VLLM_CPU_KVCACHE_SPACE": "4"}


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ConfigError) as err:
        load_preset("no-such-preset")
    assert "no-such-preset" in str(err.value) and "llama31-8b-eagle3-h100" in str(err.value)
    with pytest.raises(ConfigError):
        load_preset("../hardware")


GOOD = """name: {name}
title: T
rationale: a one-line reason that is long enough
hardware: H100x1
expected_acceptance: null
sources: [https://example.org/a]
config:
  model: m/x
  speculative_config: {{method: ngram, num_speculative_tokens: 2}}
"""


def test_bad_yaml_names_the_file(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: broken\nconfig: [unclosed\n", encoding="utf-8")
    clear_cache()
    with pytest.raises(ConfigError) as err:
        list_presets(tmp_path)
    assert str(bad) in str(err.value) and "invalid YAML" in str(err.value) and "line" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_preset("broken", tmp_path)
    assert str(bad) in str(err.value)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("- just\n- a list\n", "must be a mapping"),
        (GOOD.format(name="other"), "must equal the file name"),
        (GOOD.format(name="p").replace("title: T\n", ""), "missing key(s): title"),
        (GOOD.format(name="p").replace("rationale: a one-line", "rationale: |\n  two\n  lines"), "one line"),
        (GOOD.format(name="p").replace("  model: m/x\n", ""), "no target model"),
        (GOOD.format(name="p").replace("expected_acceptance: null", "expected_acceptance: 0.8"), "expected_acceptance"),
        (GOOD.format(name="p").replace("sources: [https://example.org/a]", "sources: nope"), "sources"),
    ],
)
def test_invalid_preset_files_raise_config_error(tmp_path, text, fragment):
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    clear_cache()
    with pytest.raises(ConfigError) as err:
        load_preset("p", tmp_path)
    assert fragment in str(err.value) and "p.yaml" in str(err.value)


def test_valid_custom_directory_and_cache_follows_edits(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text(GOOD.format(name="p"), encoding="utf-8")
    cfg, hw, _ = load_preset("p", tmp_path)
    assert (cfg.model, hw) == ("m/x", "H100x1")
    import os

    p.write_text(GOOD.format(name="p").replace("m/x", "m/y"), encoding="utf-8")
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert load_preset("p", tmp_path)[0].model == "m/y"
    assert [x.name for x in list_presets(tmp_path)] == ["p"]
    assert list_presets(tmp_path / "missing") == []


def test_shipped_directory_is_the_repository_one():
    assert PRESETS_DIR.name == "deployments" and PRESETS_DIR.parent.name == "presets"
    assert sorted(x.stem for x in PRESETS_DIR.glob("*.yaml")) == NAMES
