"""vLLM's recipes as a corpus: every speculative mode of vllm-project/recipes (extracted by
scripts/recipes_to_presets.py into tests/data/recipes/speculative_recipes.json, commit recorded there)
is checked offline on 0.32 and 0.33 on the hardware it names. The recipes the wizard refuses are
listed here with the reason (docs/recipes.md): a new refusal or a refusal that disappears fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from wizard import api
from wizard.io.presets import list_presets

ROOT = Path(__file__).resolve().parents[1]
CORPUS = json.loads((ROOT / "tests" / "data" / "recipes" / "speculative_recipes.json").read_text(encoding="utf-8"))
ENTRIES = CORPUS["entries"]

#: entry id -> the error rules the wizard reports on 0.32 and 0.33, and why vLLM is right to refuse
REFUSED = {
    # attention_config.use_fp4_indexer_cache and the B12X_MLA_SPARSE backend are not in AttentionConfig /
    # AttentionBackendEnum of vLLM 0.32 or 0.33 (generated serve_options/backends tables): the DGX Spark
    # GB10 mode needs a later vLLM build
    "deepseek-v4-flash-dspark-dgx-spark-gb10": {"SD016", "SD024"},
    # --quantization ascend is registered by the vllm-ascend platform plugin, not by vLLM
    # (vllm/model_executor/layers/quantization QUANTIZATION_METHODS of 0.32/0.33): an Ascend NPU recipe
    "qwen3-8-27b-qwen3-5-mtp-default": {"SD160"},
}


def test_corpus_is_recorded_with_its_commit():
    assert CORPUS["source"] == "https://github.com/vllm-project/recipes"
    assert len(CORPUS["commit"]) == 40
    assert len(ENTRIES) >= 60 and len({e["recipe"] for e in ENTRIES}) >= 50
    methods = set()
    for e in ENTRIES:
        cfg = api.load(command=e["argv"])
        assert cfg.speculative_config is not None, e["id"]
        methods.add(cfg.speculative_config.method)
    assert {"mtp", "eagle3", "dspark", "dflash"} <= methods


@pytest.mark.parametrize("release", ["0.32", "0.33"])
def test_every_recipe_is_checked_and_refusals_are_the_known_ones(release):
    refused = {}
    for e in ENTRIES:
        report = api.check(api.load(command=e["argv"]), vllm_version=release, gpu=e["hardware"], allow_hub=False)
        if report.verdict == "error":
            refused[e["id"]] = {f.rule for f in report.errors}
    assert refused == REFUSED


def test_presets_one_per_recipe_entry():
    presets = list_presets(ROOT / "presets" / "recipes")
    assert len(presets) == len(ENTRIES)
    by_name = {p.name: p for p in presets}
    for e in ENTRIES:
        p = by_name[f"recipe-{e['id']}"]
        assert p.sources and CORPUS["commit"] in p.sources[0]
        assert p.config.speculative_config is not None, p.name


def test_extraction_follows_the_site(tmp_path):
    """Modes, per-hardware overrides, a mode's variant checkpoint, the site's TP auto-fit and
    flag items with spaces, on a small recipe written here."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from recipes_to_presets import read_recipes

    (tmp_path / "models" / "acme").mkdir(parents=True)
    (tmp_path / "taxonomy.yaml").write_text(
        "hardware_profiles:\n  h200: {brand: NVIDIA, generation: hopper, gpu_count: 8, vram_gb: 1128}\n"
        "  mi300x: {brand: AMD, gpu_count: 8, vram_gb: 1536}\n", encoding="utf-8")
    (tmp_path / "models" / "acme" / "Big.yaml").write_text("""
model: {model_id: acme/Big, base_args: ["--trust-remote-code", "--max-model-len auto"]}
variants:
  default: {vram_minimum_gb: 400}
  fused: {model_id: acme/Big-Fused, vram_minimum_gb: 100, extra_args: ["--kv-cache-dtype", "fp8"]}
features:
  spec_decoding:
    modes:
      mtp:
        args: ["--speculative-config", '{"method":"mtp","num_speculative_tokens":2}']
        hardware_overrides:
          amd: {args: ["--speculative-config", '{"method":"mtp","num_speculative_tokens":1}']}
      dspark:
        variants: [fused]
        args: ["--speculative-config", '{"method":"dspark","num_speculative_tokens":7}']
""", encoding="utf-8")
    got = {e["id"]: e for e in read_recipes(tmp_path)}
    assert sorted(got) == ["big-dspark-default", "big-mtp-amd", "big-mtp-default"]
    mtp = got["big-mtp-default"]
    assert mtp["argv"][:6] == ["vllm", "serve", "acme/Big", "--trust-remote-code", "--max-model-len", "auto"]
    assert mtp["argv"][-2:] == ["--tensor-parallel-size", "8"] and mtp["hardware"] == "H200x8"
    assert got["big-mtp-amd"]["hardware"] == "MI300Xx8" and '"num_speculative_tokens":1' in got["big-mtp-amd"]["argv"][-3]
    ds = got["big-dspark-default"]
    assert ds["argv"][2] == "acme/Big-Fused" and "--kv-cache-dtype" in ds["argv"]
    assert "--tensor-parallel-size" not in ds["argv"]  # 100 GB fits one 141 GB GPU: TP 1
