"""Model sanity (issue #20 item 6): a checkpoint config.json value vLLM cannot build the model from
is an SD007 error naming the key and the file, for the target and the drafter, inside
``text_config`` too. That covers a size that is 0, null, negative, NaN, inf or 10^18, heads that
do not divide, a missing ``architectures``, and a NaN/inf/zero RoPE factor. The real config files
of the repository (tests/data/hf, presets/models) give no finding at all.

The breakage family takes real config.json files and breaks one field each way (inf is written as
``1e999``, NaN as ``NaN``, as a hand edit or a broken exporter leaves them), then checks the
folder through :func:`wizard.api.check`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from factory import HF

from wizard import api
from wizard.context import clear_model_cache
from wizard.io.argv import parse_command
from wizard.models.catalog import entries, lookup
from wizard.models.config_json import info_from_config
from wizard.models.local import inspect_folder

NGRAM = '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
INF, NAN = float("inf"), float("nan")
DELETE = object()


# ---- helpers -----------------------------------------------------------------------------------

def write_folder(folder: Path, cfg: Any, name: str = "config.json") -> Path:
    """``cfg`` as ``folder/name``, with inf written 1e999 and NaN as NaN (what json.loads reads back)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(cfg, allow_nan=True).replace("-Infinity", "-1e999").replace("Infinity", "1e999")
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def check(argv: list[str]):
    try:
        return api.check(parse_command(argv), allow_hub=False)
    finally:
        clear_model_cache()


def check_target(folder: Path):
    return check(["vllm", "serve", str(folder), "--speculative-config", NGRAM])


def sd007(report) -> list:
    return [f for f in report.findings if f.rule == "SD007"]


def _is_model_config(d: Any) -> bool:
    return isinstance(d, dict) and bool({"model_type", "architectures", "hidden_size", "dim"} & set(d))


def real_configs() -> list[Path]:
    """Every model config of tests/data/hf (targets, variants, EAGLE/EAGLE3 drafter configs, params.json)."""
    return [f for f in sorted(HF.rglob("*.json")) if _is_model_config(json.loads(f.read_text(encoding="utf-8")))]


REAL = real_configs()
CATALOG = sorted({e.id for e in entries()})


def _id(p: Path) -> str:
    return str(p.relative_to(HF))


# ---- no false alarm on real checkpoints ---------------------------------------------------------

def test_the_sweep_sees_the_real_configs():
    # 38 JSON files under tests/data/hf, 33 of them model configs (the rest: indexes, layouts, vLLM ground truth)
    assert len(REAL) >= 30 and len(CATALOG) >= 60, (len(REAL), len(CATALOG))


@pytest.mark.parametrize("path", REAL, ids=_id)
def test_real_config_has_no_problem(path):
    info = info_from_config(json.loads(path.read_text(encoding="utf-8")), id=str(path),
                            native_mistral=path.name == "params.json")
    assert info.errors == [] and info.config_problems == [], info.errors


@pytest.mark.parametrize("path", REAL, ids=_id)
def test_real_config_as_a_local_target_gives_no_sd007(path, tmp_path):
    folder = write_folder(tmp_path / "m", json.loads(path.read_text(encoding="utf-8")),
                          "params.json" if path.name == "params.json" else "config.json")
    report = check_target(folder)
    assert not sd007(report), [f.message for f in sd007(report)]


DRAFTERS = [p for p in REAL if "eagle" in str(p).lower()]


@pytest.mark.parametrize("path", DRAFTERS, ids=_id)
def test_real_drafter_config_gives_no_sd007(path, tmp_path):
    drafter = write_folder(tmp_path / "d", json.loads(path.read_text(encoding="utf-8")))
    method = "eagle3" if "eagle3" in str(path).lower() else "eagle"
    report = check(["vllm", "serve", str(HF / "meta-llama--Llama-3.1-8B-Instruct"), "--speculative-config",
                    json.dumps({"method": method, "model": str(drafter), "num_speculative_tokens": 3})])
    assert not sd007(report), [f.message for f in sd007(report)]


@pytest.mark.parametrize("model_id", CATALOG)
def test_catalog_models_have_no_problem(model_id):
    info = lookup(model_id)
    assert info is not None and info.errors == [] and info.config_problems == [], info and info.errors


def test_catalog_targets_check_without_sd007():
    for e in entries("target"):
        report = check(["vllm", "serve", e.id, "--speculative-config", NGRAM])
        assert not sd007(report), (e.id, [f.message for f in sd007(report)])


# ---- the breakage family ------------------------------------------------------------------------

#: base name -> (fixture file, where the sizes are: "" top level / "text_config.")
BASES = {
    "llama-3.1-8b": ("meta-llama--Llama-3.1-8B-Instruct/config.json", ""),            # dense GQA, no head_dim
    "qwen3-30b-a3b": ("Qwen--Qwen3-30B-A3B/config.json", ""),                         # MoE, heads*head_dim != hidden
    "deepseek-v3": ("deepseek-ai--DeepSeek-V3/config.json", ""),                      # MLA + MoE + MTP, yarn
    "gpt-oss-20b": ("openai--gpt-oss-20b/config.no-quantization-variant.json", ""),   # MoE, sliding, explicit head_dim
    "gemma-3-27b": ("google--gemma-3-27b-it/config.json", "text_config."),            # multimodal: text_config
    "devstral-2": ("mistralai--Devstral-Small-2-24B-Instruct/config.json", "text_config."),  # multimodal, rope_parameters
}
ALL = (0, None, -1, INF, NAN, 10 ** 18)
NOT_NULL = (0, -1, INF, NAN, 10 ** 18)   # null is legal: vLLM falls back (head_dim, kv heads, context)
NOT_ZERO = (-1, INF, NAN, 10 ** 18)      # 0 and null are legal (no experts, MoE-only MLP width)
SIZES = {
    "hidden_size": ALL, "num_hidden_layers": ALL, "num_attention_heads": ALL, "vocab_size": ALL,
    "num_key_value_heads": NOT_NULL, "head_dim": NOT_NULL, "max_position_embeddings": NOT_NULL,
    "kv_lora_rank": NOT_NULL, "intermediate_size": NOT_NULL, "moe_intermediate_size": NOT_ZERO,
    "num_local_experts": NOT_ZERO, "num_experts": NOT_ZERO, "n_routed_experts": NOT_ZERO,
    "num_experts_per_tok": NOT_ZERO,
}
MOE = {"qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b"}


def _base(name: str) -> tuple[dict[str, Any], str]:
    file, prefix = BASES[name]
    return json.loads((HF / file).read_text(encoding="utf-8")), prefix


def _set(cfg: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(cfg)
    *parents, last = dotted.split(".")
    d = cfg
    for p in parents:
        d = d[p]
    if value is DELETE:
        d.pop(last, None)
    else:
        d[last] = value
    return cfg


def _has(cfg: dict[str, Any], dotted: str) -> bool:
    d: Any = cfg
    for p in dotted.split("."):
        if not isinstance(d, dict) or p not in d:
            return False
        d = d[p]
    return True


def _shown(v: Any) -> str:
    return {None: "null", INF: "inf"}.get(v, "NaN" if v != v else repr(v)) if not isinstance(v, list) else repr(v)


def _breakages() -> list[tuple[str, str, Any]]:
    """(base, dotted key in the file, value): one broken field per folder."""
    out: list[tuple[str, str, Any]] = []
    for name in BASES:
        cfg, prefix = _base(name)
        for key, values in SIZES.items():
            where = prefix + key
            # a multimodal text_config that omits vocab_size (transformers' default): write a broken one in
            if not _has(cfg, where) and not (prefix and key == "vocab_size"):
                continue
            for v in values:
                if key == "intermediate_size" and v == 0 and name in MOE:
                    continue  # legal for a MoE model (the experts have their own width)
                out.append((name, where, v))
        for rope in ("rope_scaling", "rope_parameters"):
            if _has(cfg, prefix + rope + ".factor"):
                out += [(name, prefix + rope + ".factor", v) for v in (0, -1, INF, NAN)]
        for theta in (prefix + "rope_theta", prefix + "rope_parameters.rope_theta"):
            if _has(cfg, theta):
                out += [(name, theta, v) for v in (0, INF, NAN)]
        out += [(name, "architectures", v) for v in (DELETE, None, [], "LlamaForCausalLM")]
    return out


BREAKAGES = _breakages()


def test_the_family_is_large_enough():
    assert len(BREAKAGES) >= 250, len(BREAKAGES)
    assert {k for _, k, _ in BREAKAGES} >= {"text_config.vocab_size", "text_config.hidden_size",
                                               "text_config.rope_parameters.factor", "rope_scaling.factor",
                                               "n_routed_experts", "num_local_experts", "num_experts", "kv_lora_rank"}


@pytest.mark.parametrize("base,key,value", BREAKAGES,
                         ids=[f"{b}-{k}-{'removed' if v is DELETE else _shown(v)}" for b, k, v in BREAKAGES])
def test_one_broken_field_is_an_sd007_error_naming_it(base, key, value, tmp_path):
    cfg, _ = _base(base)
    folder = write_folder(tmp_path / base, _set(cfg, key, value))
    report = check_target(folder)
    errs = [f for f in sd007(report) if f"'{key}'" in f.message]
    assert report.verdict == "error" and errs, [(f.rule, f.message) for f in report.findings]
    f = errs[0]
    assert f.severity.value == "error" and f.fields == ["model"] and "config.json" in f.message
    assert str(folder) in f.message and "right folder" in f.message, f.message
    # the same fact, structured, on the ModelInfo
    info = inspect_folder(folder)
    (p,) = [p for p in info.config_problems if p.key == key]
    assert p.file == "config.json" and p.why and p.fix and p.message in info.errors
    if value is None:
        assert p.value == "null"
    elif value is DELETE:
        assert p.value == "missing"
    elif isinstance(value, float) and value != value:
        assert p.value.startswith("NaN")
    elif value == INF:
        assert p.value.startswith("inf")
    elif value == 10 ** 18:
        assert "beyond any real model" in p.why


def _non_divisor(n: int) -> int:
    return next(k for k in range(3, n) if n % k)


@pytest.mark.parametrize("base", ["llama-3.1-8b", "qwen3-30b-a3b", "gpt-oss-20b", "gemma-3-27b", "devstral-2"])
def test_kv_heads_that_do_not_divide_the_heads(base, tmp_path):
    cfg, prefix = _base(base)
    heads = (cfg["text_config"] if prefix else cfg)["num_attention_heads"]
    kv = _non_divisor(heads)
    report = check_target(write_folder(tmp_path / base, _set(cfg, prefix + "num_key_value_heads", kv)))
    msgs = [f.message for f in sd007(report)]
    assert report.verdict == "error" and any(f"'{prefix}num_key_value_heads' is {kv}; it must divide num_attention_heads"
                                             in m for m in msgs), msgs


def test_heads_that_do_not_divide_the_hidden_size_without_head_dim(tmp_path):
    cfg, _ = _base("llama-3.1-8b")  # 4096 hidden, 32 heads, 8 KV heads, no head_dim
    report = check_target(write_folder(tmp_path / "m", _set(cfg, "num_attention_heads", 24)))
    msgs = [f.message for f in sd007(report)]
    assert any("'num_attention_heads' is 24; it does not divide hidden_size (4096)" in m for m in msgs), msgs
    assert not any("num_key_value_heads" in m for m in msgs)  # 8 divides 24


@pytest.mark.parametrize("base,changes", [
    ("qwen3-30b-a3b", {"num_attention_heads": 24}),           # explicit head_dim: heads need not divide hidden
    ("gpt-oss-20b", {"num_attention_heads": 56}),             # idem (head_dim 64, hidden 2880)
    ("gemma-3-27b", {"text_config.num_attention_heads": 80}),  # 16 KV heads divide 80; 5376 % 80 != 0
    ("deepseek-v3", {"num_attention_heads": 100, "num_key_value_heads": 100}),  # MLA: no head_dim, 7168 % 100 != 0
    ("deepseek-v3", {"num_key_value_heads": 48}),             # MLA: KV heads are not grouped-query heads
    ("llama-3.1-8b", {"num_key_value_heads": None}),          # null: transformers uses num_attention_heads
    ("llama-3.1-8b", {"head_dim": None, "max_position_embeddings": None}),
    ("qwen3-30b-a3b", {"intermediate_size": 0}),              # a MoE model's dense width may be 0
    ("deepseek-v3", {"n_routed_experts": 0}),                 # 0 experts: a dense model
    ("deepseek-v3", {"kv_lora_rank": None}),                  # null: not MLA
    ("llama-3.1-8b", {"rope_scaling": None}),
])
def test_legal_shapes_stay_quiet(base, changes, tmp_path):
    cfg, _ = _base(base)
    for k, v in changes.items():
        cfg = _set(cfg, k, v)
    report = check_target(write_folder(tmp_path / base, cfg))
    assert not sd007(report), [f.message for f in sd007(report)]


def test_attention_free_and_hybrid_models_need_no_heads(tmp_path):
    mamba = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 768, "num_hidden_layers": 24,
             "vocab_size": 50280, "state_size": 16, "intermediate_size": 1536, "num_attention_heads": None}
    assert not sd007(check_target(write_folder(tmp_path / "mamba", mamba)))
    hybrid = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
              "full_attention_interval": 4, "vocab_size": 151936, "num_experts": 512, "num_experts_per_tok": 10,
              "moe_intermediate_size": 512, "intermediate_size": 5120, "linear_num_key_heads": 16}
    assert not sd007(check_target(write_folder(tmp_path / "hybrid", hybrid)))


# ---- the drafter --------------------------------------------------------------------------------

EAGLE3 = HF / "sgl-project--SpecForge/configs/llama3-8B-eagle3.json"
TARGET = HF / "meta-llama--Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("key,value", [("hidden_size", 0), ("vocab_size", None), ("num_hidden_layers", -1),
                                       ("draft_vocab_size", 0), ("num_attention_heads", NAN),
                                       ("num_key_value_heads", 7), ("max_position_embeddings", INF),
                                       ("rope_theta", NAN)])
def test_broken_drafter_config_is_an_error_on_the_drafter_field(key, value, tmp_path):
    drafter = write_folder(tmp_path / "d", _set(json.loads(EAGLE3.read_text()), key, value))
    report = check(["vllm", "serve", str(TARGET), "--speculative-config",
                    json.dumps({"method": "eagle3", "model": str(drafter), "num_speculative_tokens": 3})])
    errs = [f for f in sd007(report) if f"'{key}'" in f.message]
    assert report.verdict == "error" and errs, [(f.rule, f.message) for f in report.findings]
    assert errs[0].fields == ["speculative_config.model"] and "config.json" in errs[0].message


def test_drafter_without_architectures(tmp_path):
    drafter = write_folder(tmp_path / "d", _set(json.loads(EAGLE3.read_text()), "architectures", DELETE))
    # EAGLE3: SD226 says what vLLM makes of it; SD007 does not repeat it
    report = check(["vllm", "serve", str(TARGET), "--speculative-config",
                    json.dumps({"method": "eagle3", "model": str(drafter), "num_speculative_tokens": 3})])
    assert report.verdict == "error" and any("'architectures'" in f.message for f in report.errors)
    assert not sd007(report)
    # a draft model (no EAGLE wrapping): SD007 reports it
    small = write_folder(tmp_path / "s", _set(json.loads((HF / "meta-llama--Llama-3.2-1B-Instruct/config.json")
                                                         .read_text()), "architectures", []))
    report = check(["vllm", "serve", str(TARGET), "--speculative-config",
                    json.dumps({"method": "draft_model", "model": str(small), "num_speculative_tokens": 3})])
    errs = [f for f in sd007(report) if "'architectures' is [] (empty)" in f.message]
    assert errs and errs[0].fields == ["speculative_config.model"], [(f.rule, f.message) for f in report.findings]


# ---- other files and values ---------------------------------------------------------------------

@pytest.mark.parametrize("key,value", [("dim", 0), ("n_heads", None), ("vocab_size", -1), ("n_kv_heads", 7),
                                       ("n_layers", NAN)])
def test_mistral_params_json_names_its_own_keys(key, value, tmp_path):
    params = json.loads((HF / "mistralai--Devstral-Small-2507/params.json").read_text())
    report = check_target(write_folder(tmp_path / "m", _set(params, key, value), "params.json"))
    assert any(f"params.json: '{key}' is" in f.message for f in sd007(report)), [f.message for f in report.findings]


def test_huge_integers_do_not_crash(tmp_path):
    cfg, _ = _base("llama-3.1-8b")
    cfg = _set(_set(cfg, "hidden_size", 10 ** 400), "rope_scaling.factor", 10 ** 400)
    cfg["rope_theta"] = -(10 ** 400)
    report = check_target(write_folder(tmp_path / "m", cfg))
    msgs = [f.message for f in sd007(report)]
    assert any("'hidden_size' is a 401-digit number; beyond any real model" in m for m in msgs), msgs
    assert any("'rope_theta' is" in m for m in msgs), msgs


def test_per_layer_type_rope_parameters(tmp_path):
    cfg, _ = _base("llama-3.1-8b")
    cfg.pop("rope_scaling")
    cfg["rope_parameters"] = {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                              "sliding_attention": {"rope_type": "default", "rope_theta": NAN}}
    msgs = [f.message for f in sd007(check_target(write_folder(tmp_path / "m", cfg)))]
    assert any("'rope_parameters.sliding_attention.rope_theta' is NaN" in m for m in msgs), msgs
    assert not any("full_attention" in m for m in msgs)


def test_problems_come_in_file_order_with_architectures_last():
    info = info_from_config({"model_type": "llama", "hidden_size": NAN, "num_hidden_layers": 0, "vocab_size": 10},
                            id="x")
    assert [p.key for p in info.config_problems] == ["hidden_size", "num_hidden_layers", "architectures"]
    assert info.errors == [p.message for p in info.config_problems]
    assert info.hidden_size is None and info.num_hidden_layers is None  # never guessed
