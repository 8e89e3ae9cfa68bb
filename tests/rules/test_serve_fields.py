"""Top-level option checks (wizard/rules/serve_fields.py SD010-SD014), missing local model paths
(SD009), the catalog drafter fix of SD042, SD200 without drafter facts, and the CLI text face."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wizard import api
from wizard.config import apply_patch, config_from_dict

LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"


def _check(cfg_or_cmd, **kw):
    cfg = api.load(command=cfg_or_cmd) if isinstance(cfg_or_cmd, str) else cfg_or_cmd
    kw.setdefault("allow_hub", False)
    return cfg, api.check(cfg, **kw)


def _fired(report, rule):
    return [f for f in report.findings if f.rule == rule]


# ---- SD010 ill-typed values -----------------------------------------------------------------

def test_ill_typed_top_level_value_names_field_value_and_type():
    cfg, rep = _check(LLAMA + " --max-num-seqs abc")
    assert cfg.invalid_values == {"max_num_seqs": "abc"}
    (f,) = _fired(rep, "SD010")
    assert f.severity.value == "error" and f.fields == ["max_num_seqs"]
    assert "'abc'" in f.message and "an integer" in f.message and "max_num_seqs" in f.message
    fixed = apply_patch(cfg, f.fixes[0])
    assert fixed.invalid_values == {} and fixed.max_num_seqs is None
    assert not _fired(api.check(fixed, allow_hub=False), "SD010")


def test_ill_typed_values_from_a_dict_and_the_speculative_config():
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu_memory_utilization": "lots",
                            "enforce_eager": "maybe",
                            "speculative_config": {"method": "ngram", "num_speculative_tokens": "three",
                                                   "enforce_eager": "sometimes"}})
    _, rep = _check(cfg)
    got = {f.fields[0]: f.message for f in _fired(rep, "SD010")}
    assert set(got) == {"gpu_memory_utilization", "enforce_eager", "speculative_config.enforce_eager"}
    assert "a number" in got["gpu_memory_utilization"] and "a boolean" in got["enforce_eager"]
    # num_speculative_tokens "three" stays with SD022 (no duplicate)
    assert [f.fields for f in _fired(rep, "SD022")] == [["speculative_config.num_speculative_tokens"]]


# ---- SD011 bounds ---------------------------------------------------------------------------

@pytest.mark.parametrize("flag,value,fix_set", [
    ("--gpu-memory-utilization", "0", None),
    ("--gpu-memory-utilization", "1.5", None),
    ("--gpu-memory-utilization", "90", {"gpu_memory_utilization": 0.9}),
    ("--max-num-seqs", "0", None),
    ("--max-num-batched-tokens", "0", None),
    ("--max-model-len", "0", None),
    ("--max-model-len", "-2", None),
    ("--tensor-parallel-size", "0", {"tensor_parallel_size": 1}),
    ("--pipeline-parallel-size", "0", {"pipeline_parallel_size": 1}),
    ("--data-parallel-size", "-1", {"data_parallel_size": 1}),
    ("--block-size", "0", None),
])
def test_out_of_bounds_is_an_error_with_a_valid_fix(flag, value, fix_set):
    cfg, rep = _check(f"{LLAMA} {flag} {value}")
    (f,) = _fired(rep, "SD011")
    assert f.severity.value == "error" and value in f.message
    field = flag[2:].replace("-", "_")
    if fix_set:
        assert f.fixes[0].set == fix_set
    else:  # the nearest value inside the bound (0 -> 1), or unset where the bound is strict on a fraction
        assert f.fixes[0].unset == [field] or list(f.fixes[0].set) == [field]
        assert any(x.unset == [field] for x in f.fixes)
    fixed = apply_patch(cfg, f.fixes[0])
    assert not _fired(api.check(fixed, allow_hub=False), "SD011")


@pytest.mark.parametrize("args", ["--max-model-len -1", "--max-model-len auto", "--max-model-len 1k",
                                  "--gpu-memory-utilization 1", "--gpu-memory-utilization 0.05", "--block-size 16",
                                  "--max-num-seqs 1"])
def test_in_bounds_values_are_quiet(args):
    _, rep = _check(f"{LLAMA} {args}")
    assert not _fired(rep, "SD011") and not _fired(rep, "SD010")


def test_absurd_numbers():
    cfg, rep = _check(LLAMA + " --max-num-seqs 99999999999999999999 --speculative-config "
                              "'{\"method\":\"ngram\",\"num_speculative_tokens\":99999999999999999999}'")
    assert {tuple(f.fields) for f in _fired(rep, "SD012")} == {("max_num_seqs",),
                                                               ("speculative_config.num_speculative_tokens",)}
    assert not _fired(rep, "SD011")  # not reported twice
    _, ok = _check(LLAMA + " --max-num-seqs 9007199254740992")
    assert not _fired(ok, "SD012")


# ---- SD013 / SD014 unknown options -----------------------------------------------------------

def test_unknown_option_is_an_error_with_did_you_mean_and_rename():
    cfg, rep = _check(LLAMA + " --max-num-seqz 64")
    (f,) = _fired(rep, "SD013")
    assert f.severity.value == "error" and "did you mean --max-num-seqs" in f.message
    assert f.fixes[0].set == {"max_num_seqs": 64} and f.fixes[0].unset == ["extra_args.max_num_seqz"]
    fixed = apply_patch(cfg, f.fixes[0])
    assert fixed.max_num_seqs == 64 and fixed.extra_args == {}
    _, rep2 = _check(LLAMA + " --frobnicate")
    (g,) = _fired(rep2, "SD013")
    assert "unrecognized arguments: --frobnicate" in g.message and rep2.verdict == "error"


def test_unique_prefix_is_accepted_by_vllm_so_only_a_warning():
    cfg, rep = _check(LLAMA + " --max-num-seq 64")
    (f,) = _fired(rep, "SD013")
    assert f.severity.value == "warning" and "abbreviation of --max-num-seqs" in f.message
    assert apply_patch(cfg, f.fixes[0]).max_num_seqs == 64


def test_ambiguous_prefix_and_removed_options():
    _, rep = _check(LLAMA + " --max-num 3")
    (f,) = _fired(rep, "SD013")
    assert f.severity.value == "error" and "ambiguous" in f.message and "--max-num-seqs" in f.message
    _, rep = _check(LLAMA + " --disable-log-requests")
    (g,) = _fired(rep, "SD013")
    assert "enable-log-requests" in g.message and [x.description for x in g.fixes] == ["Remove --disable-log-requests"]


def test_ambiguous_prefix_fix_fits_its_value():
    """--spec '{...}' is ambiguous (--spec-method/-model/-tokens, --speculative-config): the fix
    offered is the option the value fits, a JSON object -> --speculative-config (it was
    --spec-model, the closest spelling, which put the JSON text in as the drafter's name)."""
    cfg, rep = _check(LLAMA + """ --spec '{"method":"ngram","num_speculative_tokens":3}'""")
    (f,) = _fired(rep, "SD013")
    assert f.fixes[0].description == "Rename to --speculative-config"
    fixed = apply_patch(cfg, f.fixes[0])
    assert fixed.speculative_config.method == "ngram" and fixed.speculative_config.num_speculative_tokens == 3
    assert "spec" not in fixed.extra_args
    _, rep = _check(LLAMA + " --spec 3")
    (g,) = _fired(rep, "SD013")
    assert g.fixes[0].description == "Rename to --spec-tokens"


@pytest.mark.parametrize("args", ["--port 8001 --host 127.0.0.1", "--tokenizer-mode mistral --load-format mistral "
                                  "--config-format mistral", "--compilation-config.mode 3", "--no-enable-prefix-caching",
                                  "--spec-method ngram --spec-tokens 3", "-tp 1", "--served-model-name a b",
                                  "--max_num_seqs 4"])
def test_real_options_are_quiet(args):
    _, rep = _check(f"{LLAMA} {args}")
    assert not _fired(rep, "SD013"), [f.message for f in _fired(rep, "SD013")]


def test_dotted_unknown_head_and_no_prefix_and_old_versions():
    cfg, rep = _check(LLAMA + " --frob.x 3")
    (f,) = _fired(rep, "SD013")
    assert f.severity.value == "error"
    assert apply_patch(cfg, f.fixes[-1]).extra_args == {}
    _, rep = _check(LLAMA + " --no-frob")
    assert [x.severity.value for x in _fired(rep, "SD013")] == ["warning"]
    # every release 0.10-0.33 has its own option list; an older one is not judged
    _, old = _check(LLAMA + " --frobnicate", vllm_version="0.20")
    assert _fired(old, "SD013")
    _, older = _check(LLAMA + " --frobnicate", vllm_version="0.9.2")
    assert not _fired(older, "SD013")


def test_stray_positional():
    cfg, rep = _check(LLAMA + " --enforce-eager yes")
    (f,) = _fired(rep, "SD014")
    assert "'yes'" in f.message and f.severity.value == "error"
    assert "_positional" not in apply_patch(cfg, f.fixes[0]).extra_args
    assert not _fired(rep, "SD013")


# ---- SD009 missing local paths ---------------------------------------------------------------

def test_missing_local_path_is_an_error_hub_id_a_warning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("/models/nothing-here-xyz", "./nothing", "../nothing-xyz", "~/nothing-xyz-123"):
        _, rep = _check(f"vllm serve {name}")
        (f,) = _fired(rep, "SD009")
        assert f.severity.value == "error" and f.title == "Model path does not exist" and f.fixes == []
    _, rep = _check("vllm serve no-such-org/no-such-model-xyz")
    assert [f.severity.value for f in _fired(rep, "SD009")] == ["warning"]
    # a path whose last part is a catalog model offers that id
    cfg, rep = _check("vllm serve /models/Llama-3.1-8B-Instruct")
    (f,) = _fired(rep, "SD009")
    assert f.fixes[0].set == {"model": "meta-llama/Llama-3.1-8B-Instruct"}
    assert not _fired(api.check(apply_patch(cfg, f.fixes[0]), allow_hub=False), "SD009")
    # the drafter too
    _, rep = _check(LLAMA + " --speculative-config '{\"method\":\"eagle3\",\"model\":\"./no-drafter\",\"num_speculative_tokens\":3}'")
    (f,) = _fired(rep, "SD009")
    assert f.fields == ["speculative_config.model"] and f.severity.value == "error"


def test_existing_local_path_without_a_model_is_an_error(tmp_path):
    """An empty folder, a folder of other files, or a plain file is not loadable either (found by a
    new-user trial, 2026-12-04: it was a warning); params.json (Mistral format) and .gguf are left."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "README.md").write_text("x")
    (tmp_path / "c.yaml").write_text("x: 1\n")
    for name, why in (("empty", "no config.json"), ("other", "no config.json"), ("c.yaml", "is a file")):
        _, rep = _check(f"vllm serve {tmp_path / name}")
        (f,) = _fired(rep, "SD009")
        assert f.severity.value == "error" and f.title == "Model path holds no model" and why in f.message
    _, rep = _check(LLAMA + f" --speculative-config '{{\"method\":\"draft_model\",\"model\":\"{tmp_path / 'empty'}\","
                            "\"num_speculative_tokens\":3}'")
    (f,) = _fired(rep, "SD009")
    assert f.fields == ["speculative_config.model"] and f.severity.value == "error"
    (tmp_path / "mistral").mkdir()
    (tmp_path / "mistral" / "params.json").write_text("{}")
    _, rep = _check(f"vllm serve {tmp_path / 'mistral'}")
    assert all(f.title != "Model path holds no model" for f in _fired(rep, "SD009"))


# ---- SD042 / SD200 ---------------------------------------------------------------------------

def test_missing_drafter_first_fix_is_the_catalog_drafter():
    cfg, rep = _check(LLAMA + " --speculative-config '{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'")
    (f,) = _fired(rep, "SD042")
    assert f.fixes[0].set == {"speculative_config.model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"}
    assert "n-gram" in f.fixes[-1].description
    fixed = apply_patch(cfg, f.fixes[0])
    assert not [x for x in api.check(fixed, allow_hub=False).findings if x.severity.value == "error"]
    # no catalog drafter for this target: n-gram only
    _, rep = _check("vllm serve ./tiny --speculative-config '{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'")
    (g,) = _fired(rep, "SD042")
    assert len(g.fixes) == 1 and "n-gram" in g.fixes[0].description


@pytest.mark.parametrize("gpu,fires", [("MI300X", False), ("V100", True), ("L4", False)])
def test_noncausal_drafter_fp8_without_drafter_facts(gpu, fires):
    """Non-causal-ness follows from the method: SD200 needs no drafter config. On an L4 (SM 8.9)
    vLLM 0.32's TRITON_ATTN has non-causal fp8 KV, and on an MI300X ROCM_ATTN has both
    (vllm/v1/attention/backends/rocm_attn.py ``supports_non_causal`` and fp8 in
    ``supported_kv_cache_dtypes``; backend selection over backends.json, ``ctx.view.device_kv``),
    so it stays quiet there; a V100 has no such backend; with vLLM < 0.32 it fires on every GPU."""
    cmd = (LLAMA + " --max-model-len 4096 --kv-cache-dtype fp8 --speculative-config "
           "'{\"method\":\"dflash\",\"model\":\"z-lab/not-in-catalog-xyz\",\"num_speculative_tokens\":3}'")
    _, rep = _check(cmd, gpu=gpu, vllm_version="0.32")
    assert _fired(rep, "SD009")  # the drafter could not be inspected
    assert bool([f for f in _fired(rep, "SD200") if f.severity.value == "error"]) is fires
    _, old = _check(cmd, gpu="L4", vllm_version="0.31")
    assert [f.severity.value for f in _fired(old, "SD200")] == ["error"]


# ---- CLI text face ---------------------------------------------------------------------------

def test_text_output_labels_the_command_and_hides_import_note_paths():
    cmd = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
           "{'method':'ngram','num_speculative_tokens':3}"]
    out = subprocess.run([sys.executable, "-m", "wizard", "check", "--offline", "--", *cmd],
                         capture_output=True, text=True, timeout=120)
    assert "normalised command:\nvllm serve meta-llama/Llama-3.1-8B-Instruct" in out.stdout
    assert "import_notes" not in out.stdout and "Write strict JSON" in out.stdout
    js = subprocess.run([sys.executable, "-m", "wizard", "check", "--offline", "--format", "json", "--", *cmd],
                        capture_output=True, text=True, timeout=120)
    data = json.loads(js.stdout)
    assert any("import_notes.json_malformed" in fx["unset"] for f in data["findings"] for fx in f["fixes"])
    assert "normalised command" not in js.stdout


# ---- vLLM agrees (oracle) --------------------------------------------------------------------

@pytest.mark.vllm
def test_vllm_rejects_what_the_bounds_rules_reject(tmp_path_factory):
    from conformance_corpus import build_models

    from wizard.vllm.crosscheck import compare, rule_phase
    from wizard.vllm.oracle import VllmOracle, engine_kwargs, vllm_unavailable_reason

    if vllm_unavailable_reason():
        pytest.skip(vllm_unavailable_reason())
    models = build_models(tmp_path_factory.mktemp("bounds"))
    base = {"model": models["target"], "max_model_len": 512}
    cases = [
        ({"gpu_memory_utilization": 1.5}, "SD011"),
        ({"max_num_seqs": 0}, "SD011"),
        ({"tensor_parallel_size": 0}, "SD011"),
        ({"max_model_len": 0}, "SD011"),
        ({"max_num_seqs": "abc"}, "SD010"),
    ]
    with VllmOracle() as oracle:
        for extra, rule in cases:
            cfg = config_from_dict({**base, **extra})
            rep = api.check(cfg, gpu="cpu", allow_hub=False)
            fired = [f for f in rep.findings if f.rule == rule and f.severity.value == "error"]
            assert fired and rule_phase(rule) == "config", (extra, [f.rule for f in rep.findings])
            kw, env = engine_kwargs(cfg)
            v = oracle.check_kwargs(kw, env, timeout=300)
            assert v.rejected, (extra, v.verdict, v.short_message(200))
            assert compare(rep, v, kw, env).agreement == "agree"
            fixed = apply_patch(cfg, fired[0].fixes[0])
            kw2, env2 = engine_kwargs(fixed)
            v2 = oracle.check_kwargs(kw2, env2, timeout=300)
            assert v2.accepted, (extra, fired[0].fixes[0].description, v2.short_message(200))


def test_double_dash_form_of_a_short_alias_suggests_its_option():
    """A YAML `tp: 2` reaches argparse as --tp, which no release has; the fix renames it to the
    option whose alias -tp is (it only offered 'Remove --tp', which silently drops TP 2)."""
    cfg, rep = _check(LLAMA + " --tp 2")
    (f,) = _fired(rep, "SD013")
    assert "did you mean --tensor-parallel-size?" in f.message
    assert apply_patch(cfg, f.fixes[0]).tensor_parallel_size == 2
