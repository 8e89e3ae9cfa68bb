"""Dump the facts behind vLLM's cross-field config checks, for the vLLM installed in THIS interpreter.

    <venv>/bin/python scripts/dump_vllm_checks.py            # wizard/data/vllm/<X.Y>/checks.json
    <venv>/bin/python scripts/dump_vllm_checks.py --out /tmp/checks.json
    python scripts/gen_vllm_data.py                          # every release (all dumps)

Runs INSIDE the release's own venv (imports vLLM, never ``wizard``). Every value is read from, or
measured by calling, the release's own code; nothing is copied by hand:

* ``max_len``: how ``vllm/config/model.py _get_and_verify_max_len`` derives the model's length
  from RoPE scaling. For each rope type in :data:`ROPE_PROBE_TYPES` the function itself is called
  with a probe config (max_position_embeddings 1000, original_max_position_embeddings 300,
  factor 7) and the answer is recorded as a formula: ``"max_pos"`` (factor not applied),
  ``"max_pos*factor"``, ``"original*factor"`` or ``"original"`` (LongRoPE default), plus the
  length keys ``ModelArchConfigConvertor.derive_max_model_len_and_key`` reads (probed the same
  way, one key at a time), and whether ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` values are read as true.
* ``quantization``: per ``QUANTIZATION_METHODS`` entry, the config class's
  ``get_config_filenames()`` (files ``get_quant_config`` looks for when the checkpoint has no
  ``quantization_config``), whether the class builds without arguments (``quant_cls()``),
  ``get_min_capability()`` and ``get_supported_act_dtypes()`` (R374) when they do not depend on the
  checkpoint (class-level, or instance methods answering a constant on an uninitialised instance),
  and whether it overrides ``override_quantization_method``; ``online_shorthands`` (methods that
  quantize an unquantized checkpoint at load time) and the ``overrides`` list of
  ``ModelConfig._verify_quantization``.
* ``quantization.checkpoints``: what ``ModelConfig._verify_quantization`` decides for a quantized
  checkpoint and each ``--quantization`` value (none included): the release's own method is run on
  a stub holding a real checkpoint's ``quantization_config`` (one per ``quant_method``: the
  checkpoints of ``tests/data/hf`` and the tiny ModelOpt target of the conformance corpus, plus a
  GPTQ and an AWQ config), recording the method vLLM settles on (its ``override_quantization_method``
  chain) or the error it raises.
* ``expert_keys``: the config keys ``get_num_experts`` reads (probed one at a time).
* ``reasoning_parsers``: names registered with ``ReasoningParserManager``.
* ``hf_model_types``: ``model_type`` values this release's transformers + vLLM's own config
  registry know without remote code (others need ``--trust-remote-code``).
* ``architectures``: ``ModelRegistry.get_supported_archs()``.
* ``pipeline_parallel``: ``supports_pp`` -- per registered architecture whether its model class
  implements ``SupportsPP`` (``ModelRegistry.is_pp_supported_model``, asked by
  ``ModelConfig.verify_with_parallel_config``; the class is imported in this process and judged
  by ``vllm.model_executor.models.interfaces.supports_pp``, the function the registry's
  ``_ModelInfo`` uses; architectures whose module does not import here are left out), and
  ``draft_inherits_pp``: the ``pipeline_parallel_size`` ``SpeculativeConfig.
  create_draft_parallel_config`` gives the drafter for a target with PP 2, i.e. whether the
  drafter's own ``verify_with_parallel_config`` sees the target's PP.
* ``replayssm``: the registered architectures whose model class implements ``SupportsReplaySSM``
  (``interfaces.supports_replayssm``, the registry's ``_ModelInfo.supports_replayssm``, asked by
  ``VllmConfig`` for ``--use-replayssm``; 0.32+, absent before), judged like ``supports_pp``.
* ``engram_layer_fields``: ``vllm/config/engram.py _NGRAM_LAYER_FIELDS`` -- architecture -> the
  ``hf_text_config`` field holding its n-gram embedding layer ids (``EngramConfig.
  verify_model_config``: any other model is refused when ``--engram-config`` is given; 0.32+).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dump_vllm_serve_options import default_out, installed_version, patch_cpu_platform, release_key  # noqa: E402

GENERATOR = "scripts/dump_vllm_checks.py"

#: rope types probed (HF transformers' ROPE_INIT_FUNCTIONS names plus vLLM's own spellings)
ROPE_PROBE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "su", "llama3", "deepseek_yarn",
                    "deepseek_llama_scaling", "mrope", "ntk", "llama4")
_MAX_POS, _ORIG, _FACTOR = 1000, 300, 7.0


def _formula(value: Any) -> str:
    table = {_MAX_POS: "max_pos", _MAX_POS * _FACTOR: "max_pos*factor", _ORIG * _FACTOR: "original*factor",
             _ORIG: "original"}
    try:
        return table.get(float(value), f"other:{value}")
    except (TypeError, ValueError):
        return f"other:{value}"


def _config_module():
    """``vllm.config.model`` (0.11+), or ``vllm.config`` itself, where 0.10 keeps ModelConfig and
    ``_get_and_verify_max_len``."""
    try:
        from vllm.config import model
    except ImportError:
        import vllm.config as model
    return model


def _probe_rope(rope_type: str) -> str:
    model_mod = _config_module()

    fn = model_mod._get_and_verify_max_len
    rp = {"rope_type": rope_type, "factor": _FACTOR, "original_max_position_embeddings": _ORIG}
    hf = types.SimpleNamespace(model_type="llama", rope_parameters=rp, rope_scaling=rp, max_position_embeddings=_MAX_POS,
                               original_max_position_embeddings=_ORIG)
    hf.get_text_config = lambda *a, **k: hf
    hf.to_dict = lambda: dict(vars(hf))
    arch = types.SimpleNamespace(derived_max_model_len_and_key=(float(_MAX_POS), "max_position_embeddings"))
    params = inspect.signature(fn).parameters
    kw = {"hf_config": hf, "tokenizer_config": None, "max_model_len": None, "disable_sliding_window": False,
          "sliding_window": None}
    if "model_arch_config" in params:
        kw["model_arch_config"] = arch
    try:
        return _formula(fn(**{k: v for k, v in kw.items() if k in params}))
    except Exception as err:  # noqa: BLE001 - recorded, the rule then stays quiet for this type
        return f"error:{type(err).__name__}"


def _probe_len_keys_old() -> list[str]:
    """<= 0.13: the keys ``_get_and_verify_max_len`` reads from the hf config itself (one at a time)."""
    model_mod = _config_module()

    fn = model_mod._get_and_verify_max_len
    params = inspect.signature(fn).parameters
    keys = []
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len", "n_ctx", "max_len",
                "context_length", "max_length"):
        hf = types.SimpleNamespace(model_type="llama", rope_scaling=None, rope_parameters=None, **{key: 1234})
        hf.get_text_config = lambda *a, _hf=hf, **k: _hf
        hf.to_dict = lambda _hf=hf: dict(vars(_hf))
        kw = {"hf_config": hf, "tokenizer_config": None, "max_model_len": None, "disable_sliding_window": False,
              "sliding_window": None}
        try:
            if fn(**{k: v for k, v in kw.items() if k in params}) == 1234:
                keys.append(key)
        except Exception:  # noqa: BLE001
            continue
    return keys


def _probe_len_keys() -> list[str]:
    """Keys ``derive_max_model_len_and_key`` reads, found by giving it one candidate key at a time."""
    try:
        from vllm.transformers_utils.model_arch_config_convertor import ModelArchConfigConvertorBase as Conv
    except ImportError:
        try:
            from vllm.transformers_utils.model_arch_config_convertor import ModelArchConfigConvertor as Conv
        except ImportError:
            return _probe_len_keys_old()
    cands = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
             "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len", "n_ctx", "max_len",
             "context_length", "max_length")
    keys = []
    for key in cands:
        obj = Conv.__new__(Conv)
        obj.hf_text_config = types.SimpleNamespace(**{key: 1234})
        obj.hf_config = obj.hf_text_config
        try:
            value, found = obj.derive_max_model_len_and_key()
        except Exception:  # noqa: BLE001
            continue
        if value == 1234:
            keys.append(key)
    return keys


def _probe_expert_keys() -> list[str]:
    """Keys ``get_num_experts`` reads (an expert-parallel launch needs one of them > 0)."""
    try:
        from vllm.transformers_utils import model_arch_config_convertor as m

        conv = getattr(m, "ModelArchConfigConvertorBase", None) or getattr(m, "ModelArchConfigConvertor", None)
    except ImportError:  # <= 0.13: ModelConfig.get_num_experts reads hf_text_config itself
        conv = _config_module().ModelConfig
    keys = []
    for key in ("num_experts", "moe_num_experts", "n_routed_experts", "num_local_experts", "n_experts",
                "num_experts_per_tok", "expert_count"):
        obj = conv.__new__(conv)
        obj.hf_text_config = types.SimpleNamespace(**{key: 8})
        obj.hf_config = obj.hf_text_config
        try:
            if obj.get_num_experts() == 8:
                keys.append(key)
        except Exception:  # noqa: BLE001
            continue
    return keys


def _allow_long_values() -> dict[str, bool]:
    import vllm.envs as envs

    out = {}
    for text in ("1", "0", "true", "True", "false", "yes", ""):
        os.environ["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] = text
        try:
            if hasattr(envs, "disable_envs_cache"):
                envs.disable_envs_cache()
            out[text] = bool(envs.environment_variables["VLLM_ALLOW_LONG_MAX_MODEL_LEN"]())
        except Exception:  # noqa: BLE001 - a value the release refuses to parse
            out[text] = False
    os.environ.pop("VLLM_ALLOW_LONG_MAX_MODEL_LEN", None)
    return out


def _dtype_name(d: Any) -> str:
    return str(d).replace("torch.", "")


def _class_level(cls: type, attr: str) -> Any:
    """``cls.attr()`` when it is a class/static method; for an instance method that reads nothing of
    the instance (``ModelOptFp8Config.get_supported_act_dtypes`` returns a constant list) its answer
    on an uninitialised instance; None when it depends on the checkpoint's config (it raises)."""
    try:
        return getattr(cls, attr)()
    except TypeError:
        pass  # an instance method
    except Exception:  # noqa: BLE001
        return None
    try:
        return getattr(cls.__new__(cls), attr)()
    except Exception:  # noqa: BLE001 - reads instance state set from the checkpoint
        return None


def _quantization() -> dict[str, Any]:
    from vllm.model_executor.layers import quantization as q

    methods = list(getattr(q, "QUANTIZATION_METHODS", []))
    out: dict[str, Any] = {}
    base = getattr(q, "QuantizationConfig", None)
    if base is None:
        from vllm.model_executor.layers.quantization.base_config import QuantizationConfig as base
    for m in methods:
        e: dict[str, Any] = {}
        try:
            cls = q.get_quantization_config(m)
        except Exception as err:  # noqa: BLE001
            out[m] = {"error": f"{type(err).__name__}: {err}"[:200]}
            continue
        e["class"] = cls.__name__
        for attr, key in (("get_config_filenames", "config_filenames"), ("get_min_capability", "min_capability"),
                          ("get_supported_act_dtypes", "act_dtypes")):
            v = _class_level(cls, attr)
            if v is None:
                e[key] = None
            else:
                e[key] = [_dtype_name(x) for x in v] if key == "act_dtypes" else (list(v) if key == "config_filenames" else v)
        try:
            cls()
            e["no_arg_init"] = True
        except Exception:  # noqa: BLE001
            e["no_arg_init"] = False
        e["overrides_method"] = cls.override_quantization_method.__func__ is not base.override_quantization_method.__func__ \
            if hasattr(cls.override_quantization_method, "__func__") else False
        out[m] = e
    shorthands: list[str] = []
    try:
        from vllm.config.quantization import _ONLINE_SHORTHANDS

        shorthands = sorted(_ONLINE_SHORTHANDS)
    except Exception:  # noqa: BLE001 - older releases
        pass
    try:
        ckpts = _checkpoint_decisions(methods)
    except Exception as err:  # noqa: BLE001
        ckpts = {"error": f"{type(err).__name__}: {err}"[:200]}
    return {"methods": out, "online_shorthands": shorthands,
            "deprecated": list(getattr(q, "DEPRECATED_QUANTIZATION_METHODS", [])), "checkpoints": ckpts}


ROOT = Path(__file__).resolve().parent.parent

#: checkpoint samples: quant_method -> (source, quantization_config, hf config fields)
_SYNTH = {
    "modelopt": ("tests/conformance_corpus.py target_modelopt",
                 {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
                 {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}),
    "gptq": ("a 4-bit GPTQ checkpoint (AutoGPTQ defaults)",
             {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False},
             {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}),
    "awq": ("a 4-bit AWQ checkpoint (AutoAWQ GEMM defaults)",
            {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
            {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}),
}


def _checkpoint_samples() -> dict[str, tuple[str, dict, dict]]:
    out = {}
    for cfg_path in sorted((ROOT / "tests" / "data" / "hf").glob("*/config.json")):
        try:
            raw = json.loads(cfg_path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        q = raw.get("quantization_config") or (raw.get("text_config") or {}).get("quantization_config")
        if isinstance(q, dict) and q.get("quant_method") and q["quant_method"] not in out:
            out[q["quant_method"]] = (str(cfg_path.relative_to(ROOT)), q, raw)
    for k, v in _SYNTH.items():
        out.setdefault(k, v)
    return out


def _checkpoint_decisions(methods: list[str]) -> dict[str, Any]:
    ModelConfig = _config_module().ModelConfig

    out: dict[str, Any] = {}
    for ckpt, (source, qcfg, raw) in _checkpoint_samples().items():
        hf = types.SimpleNamespace(**{k: v for k, v in raw.items() if isinstance(k, str) and k.isidentifier()})
        hf.to_dict = lambda raw=raw: dict(raw)
        rows: dict[str, Any] = {}
        for user in [None, *methods]:
            stub = types.SimpleNamespace(quantization=user, hf_config=hf, allow_deprecated_quantization=True,
                                         model_arch_config=types.SimpleNamespace(quantization_config=dict(qcfg)))
            try:
                ModelConfig._verify_quantization(stub)
                rows[user or ""] = {"method": stub.quantization}
            except Exception as err:  # noqa: BLE001 - vLLM's verdict for this pair
                rows[user or ""] = {"error": f"{type(err).__name__}: {err}"[:240]}
        out[ckpt] = {"source": source, "decisions": rows}
    return out


def _reasoning_parsers() -> list[str]:
    try:
        from vllm.reasoning import ReasoningParserManager
    except Exception:  # noqa: BLE001
        return []
    names = set()
    for attr in ("reasoning_parsers", "lazy_parsers", "_lazy_parsers"):
        names |= set(getattr(ReasoningParserManager, attr, {}) or {})
    try:
        names |= set(ReasoningParserManager.list_registered())
    except Exception:  # noqa: BLE001
        pass
    return sorted(names)


def _model_types() -> list[str]:
    names = set()
    try:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

        names |= set(CONFIG_MAPPING_NAMES)
    except Exception:  # noqa: BLE001
        pass
    try:
        from vllm.transformers_utils import config as tc

        names |= set(getattr(tc, "_CONFIG_REGISTRY", {}) or {})
    except Exception:  # noqa: BLE001
        pass
    return sorted(names)


def _architectures() -> list[str]:
    try:
        from vllm.model_executor.models import ModelRegistry

        return sorted(ModelRegistry.get_supported_archs())
    except Exception:  # noqa: BLE001
        return []


def _pp_support() -> dict[str, bool]:
    """architecture -> SupportsPP, for every registered architecture whose class imports here."""
    import logging

    from vllm.model_executor.models import ModelRegistry
    from vllm.model_executor.models.interfaces import supports_pp

    logging.disable(logging.WARNING)
    out: dict[str, bool] = {}
    try:
        for arch, model in sorted(ModelRegistry.models.items()):
            try:
                out[arch] = bool(supports_pp(model.load_model_cls()))
            except Exception:  # noqa: BLE001 - a module needing a package or device absent here
                continue
    finally:
        logging.disable(logging.NOTSET)
    return out


def _replayssm_support() -> list[str] | None:
    """Registered architectures whose class supports replay-SSM; None when the release has no
    such interface."""
    import logging

    from vllm.model_executor.models import ModelRegistry
    from vllm.model_executor.models import interfaces

    fn = getattr(interfaces, "supports_replayssm", None)
    if fn is None:
        return None
    logging.disable(logging.WARNING)
    out: list[str] = []
    try:
        for arch, model in sorted(ModelRegistry.models.items()):
            try:
                if fn(model.load_model_cls()):
                    out.append(arch)
            except Exception:  # noqa: BLE001 - a module needing a package or device absent here
                continue
    finally:
        logging.disable(logging.NOTSET)
    return out


def _engram_layer_fields() -> dict[str, str] | None:
    """``_NGRAM_LAYER_FIELDS`` of vllm/config/engram.py; None when the release has no Engram."""
    try:
        from vllm.config import engram
    except Exception:  # noqa: BLE001 - no Engram support in this release
        return None
    fields = getattr(engram, "_NGRAM_LAYER_FIELDS", None)
    return dict(fields) if isinstance(fields, dict) else None


def _draft_inherits_pp() -> bool | None:
    """Whether the drafter's ParallelConfig takes the target's pipeline_parallel_size."""
    try:
        from vllm.config import ParallelConfig, SpeculativeConfig

        target = ParallelConfig(pipeline_parallel_size=2, tensor_parallel_size=1)
        fn = SpeculativeConfig.create_draft_parallel_config
        params = inspect.signature(fn).parameters
        args = [target, 1] + ([None] if "draft_model_config" in params else [])
        return fn(*args).pipeline_parallel_size == 2
    except Exception:  # noqa: BLE001 - recorded as unknown
        return None


def dump_checks() -> dict:
    dist, version = installed_version()
    patch_cpu_platform()
    try:
        import transformers

        tf_version = transformers.__version__
    except Exception:  # noqa: BLE001
        tf_version = None
    return {
        "_comment": (f"Facts of the cross-field config checks of {dist} {version}, read from or measured with that release's "
                     f"own code by {GENERATOR}; do not edit (python scripts/gen_vllm_data.py)."),
        "generator": GENERATOR,
        "distribution": dist,
        "vllm_version": version,
        "release": release_key(version),
        "transformers_version": tf_version,
        "max_len": {"rope_types": {t: _probe_rope(t) for t in ROPE_PROBE_TYPES}, "keys": _probe_len_keys(),
                    "allow_long_values": _allow_long_values()},
        "expert_keys": _probe_expert_keys(),
        "quantization": _quantization(),
        "reasoning_parsers": _reasoning_parsers(),
        "hf_model_types": _model_types(),
        "architectures": _architectures(),
        "pipeline_parallel": {"supports_pp": _pp_support(), "draft_inherits_pp": _draft_inherits_pp()},
        "replayssm": _replayssm_support(),
        "engram_layer_fields": _engram_layer_fields(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output file (default: wizard/data/vllm/<X.Y>/checks.json)")
    args = ap.parse_args(argv)
    data = dump_checks()
    out = Path(args.out) if args.out else default_out("checks.json", data["vllm_version"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out} ({data['distribution']} {data['vllm_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
