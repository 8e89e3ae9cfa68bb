"""wizard/suggest.py: what the UI offers (methods, drafters, k, KV dtypes) is a core module, and
`wizard suggest` prints the same thing."""

from __future__ import annotations

import json

import pytest
import subprocess
import sys
from pathlib import Path

from wizard import api, suggest
from wizard.hardware.catalog import parse_gpu_spec
from wizard.vllm.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
V32 = parse_version("0.32.0")


def _ctx(cmd: str, gpu: str | None = "H100-SXM"):
    return api.resolve(api.load(command=cmd), vllm_version=V32, gpu=gpu, allow_hub=False)


def test_methods_for_llama_put_catalog_drafters_and_ngram_first():
    ms = suggest.methods_for(_ctx(f"vllm serve {LLAMA}").target, V32, LLAMA)
    fitting = [m.method for m in ms if m.recommended]
    others = [m.method for m in ms if not m.recommended]
    assert {"eagle3", "ngram"} <= set(fitting) and "mtp" in others
    assert ms.index(next(m for m in ms if m.method == "eagle3")) < ms.index(next(m for m in ms if m.method == "mtp"))
    eagle3 = next(m for m in ms if m.method == "eagle3")
    assert eagle3.drafter == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    assert "no MTP layers" in next(m for m in ms if m.method == "mtp").why


def test_drafters_follow_the_method_family():
    eagle3 = [d.id for d in suggest.drafters_for(LLAMA, "eagle3")]
    assert "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" in eagle3 and "yuhuili/EAGLE-LLaMA3.1-Instruct-8B" not in eagle3
    assert all(d.method == "eagle3" for d in suggest.drafters_for(LLAMA, "eagle3"))


def test_k_range_respects_a_one_layer_mtp_checkpoint():
    """A method's default k follows the checkpoint: DeepSeek-V3 has one MTP layer -> k=1."""
    ctx = _ctx("vllm serve deepseek-ai/DeepSeek-V3 --speculative-config '{\"method\":\"mtp\"}'")
    assert ctx.target.mtp_layers == 1
    kr = suggest.k_range("mtp", ctx.target)
    assert kr.default == 1 and kr.step == 1 and kr.minimum == 1
    eagle = suggest.k_range("eagle3")
    assert (eagle.minimum, eagle.maximum, eagle.default) == (1, 8, 3)
    # vLLM's step budget caps k (1 + k <= max_num_batched_tokens)
    assert suggest.k_range("ngram", max_num_batched_tokens=3).maximum == 2


def test_kv_dtypes_are_narrowed_by_hardware():
    ctx = _ctx(f"vllm serve {LLAMA}")
    a100 = {c.dtype: c for c in suggest.kv_dtypes(V32, parse_gpu_spec("A100-80GB"), ctx.target)}
    h100 = {c.dtype: c for c in suggest.kv_dtypes(V32, parse_gpu_spec("H100-SXM"), ctx.target)}
    unknown = suggest.kv_dtypes(V32, None, ctx.target)
    assert all(c.usable is None for c in unknown)  # hardware unknown: nothing narrowed, nothing claimed
    assert h100["fp8"].usable and h100["fp8"].backend
    assert set(suggest.iter_usable(h100.values())) >= {"auto", "fp8"}
    assert len(suggest.iter_usable(a100.values())) <= len(suggest.iter_usable(h100.values()))


def test_cli_prints_what_the_ui_offers():
    """`wizard suggest` (JSON) lists the same methods, in the same order, as the UI's method dropdown."""
    from wizard.ui import services
    from wizard.ui.state import new_state, set_field
    from wizard.ui.steps.speculation import method_choices

    r = subprocess.run([sys.executable, "-m", "wizard", "suggest", "--format", "json", "--offline", "--vllm-version",
                        "0.32.0", "--gpu", "H100-SXM", "--", "vllm", "serve", LLAMA],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    st = set_field(set_field(new_state("0.32.0"), "model", LLAMA), "gpu.name", "H100-SXM")
    ui_methods = [v for _, v in method_choices(services.evaluate(st), V32)][1:]  # after "none"
    assert [m["method"] for m in data["methods"]] == ui_methods
    assert data["hardware"] == "H100-SXMx1"
    usable = [c["dtype"] for c in data["kv_cache_dtypes"] if c["usable"] is not False or c["dtype"] == "auto"]
    from wizard.ui.steps.kv import kv_choices

    assert usable == kv_choices(services.evaluate(st), V32)


def test_sd001_offers_ngram_only_where_fast_prefill_does_something():
    """Issue 14 fix quality: the second SD001 fix does not trade a method for n-gram to keep a
    flag that does nothing on a model without KV sharing (nor a target's native MTP)."""
    spec = '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    rep = api.check(api.load(command=f"vllm serve {LLAMA} --kv-sharing-fast-prefill --speculative-config '{spec}'"),
                    vllm_version=V32, allow_hub=False)
    sd001 = next(f for f in rep.findings if f.rule == "SD001")
    assert [p.description for p in sd001.fixes] == ["Drop --kv-sharing-fast-prefill"]
    rep = api.check(api.load(command="vllm serve deepseek-ai/DeepSeek-V3 --kv-sharing-fast-prefill "
                                     "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'"),
                    vllm_version=V32, allow_hub=False)
    sd001 = next(f for f in rep.findings if f.rule == "SD001")
    assert all("n-gram" not in p.description for p in sd001.fixes)


# ---- what suggest offers passes check (found by a new-user trial, 2026-12-04) ------------------
OFFERED = [
    ("0.33.0", f"vllm serve {LLAMA} --speculative-config "
               "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'"),
    ("0.33.0", "vllm serve Qwen/Qwen3-8B --speculative-config "
               "'{\"method\":\"dflash\",\"model\":\"z-lab/Qwen3-8B-DFlash-b16\",\"num_speculative_tokens\":7}'"),
    ("0.32.0", "vllm serve Qwen/Qwen3-8B --speculative-config "
               "'{\"method\":\"draft_model\",\"model\":\"Qwen/Qwen3-0.6B\",\"num_speculative_tokens\":3}'"),
]


@pytest.mark.parametrize("version,cmd", OFFERED)
def test_every_offered_kv_dtype_passes_check(version, cmd):
    cfg = api.load(command=cmd)
    base = {f.rule for f in api.check(cfg, vllm_version=version, gpu="H100", allow_hub=False).errors}
    s = api.suggest(cfg, vllm_version=version, gpu="H100", allow_hub=False)
    for path, rows in (("kv_cache_dtype", s.kv_dtypes), ("speculative_config.kv_cache_dtype", s.drafter_kv_dtypes)):
        for d in suggest.iter_usable(rows):
            patched = api.load(data={**cfg.model_dump(exclude_none=True), **(
                {"kv_cache_dtype": d} if path == "kv_cache_dtype" else
                {"speculative_config": {**cfg.speculative_config.model_dump(exclude_none=True), "kv_cache_dtype": d}})})
            new = {f.rule for f in api.check(patched, vllm_version=version, gpu="H100", allow_hub=False).errors} - base
            assert not new, f"{path}={d} is offered but the check refuses it: {new}"


def test_the_float_kv_dtype_033_refuses_is_not_offered_and_says_why():
    ctx = api.resolve(api.load(command=f"vllm serve {LLAMA}"), vllm_version="0.33.0", gpu="H100", allow_hub=False)
    row = next(c for c in suggest.checked_kv_dtypes(ctx) if c.dtype == "float16")
    assert row.usable is False and "SD031" in row.why
    assert "float16" not in suggest.iter_usable(suggest.checked_kv_dtypes(ctx))
    # 0.32 accepted the mismatch (and cast): offered there
    ctx32 = api.resolve(api.load(command=f"vllm serve {LLAMA}"), vllm_version="0.32.0", gpu="H100", allow_hub=False)
    assert "float16" in suggest.iter_usable(suggest.checked_kv_dtypes(ctx32))


def test_no_default_drafter_for_a_method_the_release_removed():
    """0.33 removed mlp_speculator: `suggest` names no default drafter for it there (it named
    ibm-ai-platform/llama3-8b-accelerator while listing no catalog drafter); 0.32 still accepts the
    method in its config, so the catalog's drafter is named there."""
    from wizard import api

    cfg = api.load(command="vllm serve meta-llama/Meta-Llama-3-8B-Instruct --speculative-config '{\"method\":\"mlp_speculator\"}'")
    assert api.suggest(cfg, vllm_version="0.33.0", allow_hub=False).default_drafter is None
    assert api.suggest(cfg, vllm_version="0.32.0", allow_hub=False).default_drafter == "ibm-ai-platform/llama3-8b-accelerator"


def test_suggest_for_an_unreadable_target_marks_nothing_fitting(tmp_path):
    """A truncated config.json: check says SD007 and plan has no fit verdict (exit 2); suggest
    starred every general method as fitting and exited 0. Now it names the problem (the one
    CheckContext.target_problem the plan reads too), stars nothing and exits 2."""
    bad = tmp_path / "corrupt"
    bad.mkdir()
    (bad / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],\n')
    s = api.suggest(api.load(command=f"vllm serve {bad}"), gpu="H100", allow_hub=False)
    assert s.target_problem and "not valid JSON" in s.target_problem
    assert s.methods and not any(m.recommended for m in s.methods)
    assert "could not be read" in s.render_text() and s.as_json()["target_problem"] == s.target_problem
    r = subprocess.run([sys.executable, "-m", "wizard", "suggest", "--gpu", "H100", "--", "vllm", "serve", str(bad)],
                       capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    ok = api.suggest(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), gpu="H100", allow_hub=False)
    assert ok.target_problem is None and any(m.recommended for m in ok.methods)
