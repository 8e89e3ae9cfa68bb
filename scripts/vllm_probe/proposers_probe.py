"""Probe which proposer each release's engine builds for each speculative method.

    python proposers_probe.py VLLM_ROOT

Reads, through :mod:`sourceexec` (nothing imported from vLLM):

* ``SpeculativeMethod`` (``vllm/config/speculative.py``): what config validation accepts;
* the V1 model runner's proposer chain (``GPUModelRunner.__init__``,
  ``vllm/v1/worker/gpu_model_runner.py``) and the V2 runner's ``init_speculator``
  (``vllm/v1/worker/gpu/spec_decode/__init__.py``): each ``if``/``elif`` test is evaluated with
  the release's own ``SpeculativeConfig`` predicates (``use_eagle()``, ``use_dflash()``...);
* the runner choice: ``VllmConfig.use_v2_model_runner`` with
  ``_get_v2_model_runner_unsupported_features`` and ``_get_v1_model_runner_unsupported_features``
  (``vllm/config/vllm.py``), CUDA with Triton and no ``VLLM_USE_V2_MODEL_RUNNER``.

Prints ``{"methods": [...], "v1_chain": [...], "v2_chain": [...], "cases": [...]}``; a case is
one method + drafter variant + option set with the runner it gets and the proposer each runner
would build (or the error).

Releases without Model Runner V1 (0.34+: no ``vllm/v1/worker/gpu_model_runner.py``) are probed by
:func:`main_v2_only`: every platform runs the V2 runner, whose speculator is named by the method's
``SpeculatorConfig`` (``vllm/v1/worker/gpu/spec_decode/speculator_config.py``: ``_CONFIG_BY_METHOD``,
``specialize``, the draft model class's declared ``speculator_config_class``). The table then
carries ``"v1_runner": false``, ``speculator_configs`` (each config class's class attributes:
``speculator_class``, ``supported_options``...), ``declared_speculators`` (draft architecture ->
declared config class) and cases whose ``v1_route`` is None.
"""

from __future__ import annotations

import ast
import itertools
import json
import sys
import types
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sourceexec import Engine, Poison, Unknown, quiet  # noqa: E402

NS = types.SimpleNamespace


class Cfg:
    def __init__(self, name, **values):
        object.__setattr__(self, "_n", name)
        object.__setattr__(self, "_v", values)

    def __getattr__(self, k):
        v = object.__getattribute__(self, "_v")
        if k in v:
            return v[k]
        return Poison(f"{object.__getattribute__(self, '_n')}.{k}")


def literal_values(tp) -> list[str]:
    out = []
    for a in typing.get_args(tp):
        if isinstance(a, str):
            out.append(a)
        else:
            out.extend(literal_values(a))
    return out


def chain(if_node) -> list[tuple[str, ast.AST | None, list[ast.stmt]]]:
    """Flatten an if/elif/else chain into (test source, test node, body)."""
    out = []
    node = if_node
    while True:
        out.append((ast.unparse(node.test), node.test, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse:
            out.append(("else", None, node.orelse))
        break
    return out


def branch_result(body: list[ast.stmt], ns=None, env=None) -> str:
    """What a branch builds: runs nested ``if`` statements with ``ns``/``env`` when given."""
    for st in body:
        if isinstance(st, ast.If) and ns is not None:
            try:
                ok = eval(compile(ast.Expression(st.test), "<branch>", "eval"), ns, env)
            except Exception as e:
                return f"?{type(e).__name__}: {e}"[:200]
            r = branch_result(st.body if ok else st.orelse, ns, env)
            if r != "?":
                return r
            continue
        if isinstance(st, ast.Assign) and any(ast.unparse(t) == "self.drafter" for t in st.targets):
            v = st.value
            return ast.unparse(v.func) if isinstance(v, ast.Call) else ast.unparse(v)
        if isinstance(st, ast.Assign) and ns is not None and all(isinstance(t, ast.Name) for t in st.targets):
            try:  # a local the following tests read (e.g. `architectures = ...`)
                exec(compile(ast.Module(body=[st], type_ignores=[]), "<branch>", "exec"), ns, env)
            except Exception:
                pass
            continue
        if isinstance(st, ast.Return) and isinstance(st.value, ast.Call):
            return ast.unparse(st.value.func)
        if isinstance(st, ast.Raise):
            return "raise: " + (ast.unparse(st.exc)[:160] if st.exc else "")
    if ns is None:
        for st in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(st, (ast.Assign, ast.Return, ast.Raise)) and st is not None:
                r = branch_result([st])
                if r != "?":
                    return r
    return "?"


def _assigns_drafter(stmts) -> bool:
    return any(isinstance(x, ast.Assign) and any(ast.unparse(t) == "self.drafter" for t in x.targets) for x in stmts)


def find_v1_chain(eng):
    ns = eng.ns("vllm.v1.worker.gpu_model_runner")
    cls = ns.defs.get("GPUModelRunner")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    for n in ast.walk(init):  # breadth first: the chain head comes before its elif branches
        if isinstance(n, ast.If) and _assigns_drafter(n.body):
            return chain(n)
    return []


def find_v2_chain(eng):
    mod = "vllm.v1.worker.gpu.spec_decode"
    if eng.module_path(mod) is None:
        return []
    ns = eng.ns(mod)
    fn = ns.defs.get("init_speculator")
    if fn is None:
        return []
    first_if = next((n for n in fn.body if isinstance(n, ast.If)), None)
    return chain(first_if) if first_if else []


def field_defaults(eng, modname, clsname) -> dict:
    """Literal defaults of a config class's fields (``name: T = value`` / ``Field(default=...)``)."""
    node = eng.ns(modname).defs.get(clsname)
    out = {}
    for st in getattr(node, "body", []):
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            v = st.value
            if isinstance(v, ast.Call) and ast.unparse(v.func).split(".")[-1] in ("field", "Field"):
                kw = {k.arg: k.value for k in v.keywords}
                if "default" not in kw:
                    continue
                v = kw["default"]
            try:
                out[st.target.id] = ast.literal_eval(v)
            except Exception:
                continue
    return out


def quant_min_capability(eng) -> dict:
    """``get_min_capability()`` (SM as an int, e.g. 89) of each ``--quantization`` method's config
    class, read from ``get_quantization_config``'s own import table
    (``vllm/model_executor/layers/quantization/__init__.py``)."""
    mod = "vllm.model_executor.layers.quantization"
    ns = eng.ns(mod)
    fn = ns.defs.get("get_quantization_config")
    if fn is None:
        return {}
    where: dict[str, str] = {}
    mapping: dict[str, str] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.ImportFrom):
            base = (mod + "." + n.module) if n.level else n.module
            if n.level > 1:
                base = ".".join(mod.split(".")[: -(n.level - 1)]) + "." + n.module
            for a in n.names:
                where[a.asname or a.name] = f"{base}.{a.name}"
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Name):
                    mapping[k.value] = v.id
    out = {}
    for name, cls_name in mapping.items():
        path = where.get(cls_name)
        if path is None:
            continue
        try:
            cls = eng.get(path)
            out[name] = int(cls.get_min_capability())
        except Unknown as e:
            out[name] = f"?{e}"[:120]
        except Exception as e:
            out[name] = f"!{type(e).__name__}: {e}"[:120]
    return out


def main():
    quiet()
    root = Path(sys.argv[1])
    eng = Engine(root)
    _stub_cuda_platform(eng)
    if eng.module_path("vllm.v1.worker.gpu_model_runner") is None:
        return main_v2_only(eng)
    methods = literal_values(eng.get("vllm.config.speculative.SpeculativeMethod"))
    mtp_types = literal_values(eng.get("vllm.config.speculative.MTPModelTypes"))
    def poisoned(cls, name):
        return type(cls.__name__, (cls,), {"__getattr__": lambda self, k: Poison(f"{name}.{k}")})

    Spec = poisoned(eng.plain_class("vllm.config.speculative", "SpeculativeConfig"), "speculative_config")
    Vllm = poisoned(eng.plain_class("vllm.config.vllm", "VllmConfig"), "vllm_config")
    CompMode = eng.get("vllm.config.compilation.CompilationMode")
    CGMode = eng.get("vllm.config.compilation.CUDAGraphMode")
    v1 = find_v1_chain(eng)
    v2 = find_v2_chain(eng)
    rns = eng.ns("vllm.v1.worker.gpu_model_runner")
    sns = eng.ns("vllm.v1.worker.gpu.spec_decode") if v2 else None

    spec_defaults = field_defaults(eng, "vllm.config.speculative", "SpeculativeConfig")

    def spec_obj(method, model_type, archs, nextn, k, parallel, hetero, adaptive, layer_types):
        s = object.__new__(Spec)
        for a, v in spec_defaults.items():
            try:
                object.__setattr__(s, a, v)
            except Exception:
                pass
        hf = NS(model_type=model_type, num_nextn_predict_layers=nextn, layer_types=layer_types,
                dflash_config={}, is_causal=None)
        vals = dict(method=method, num_speculative_tokens=k, parallel_drafting=parallel,
                    use_heterogeneous_vocab=hetero, enable_adaptive_verification=adaptive,
                    disable_eagle_block_drop=False, num_speculative_tokens_per_batch_size=None,
                    draft_model_config=NS(hf_config=hf, architectures=archs, use_mla=False,
                                          hf_text_config=hf, model_type=model_type),
                    disable_padded_drafter_batch=False, draft_sample_method="greedy",
                    rejection_sample_method="standard", attention_backend=None, kv_cache_dtype=None)
        for a, v in vals.items():
            try:
                object.__setattr__(s, a, v)
            except Exception:
                pass
        return s

    def vllm_obj(spec, pp, async_sched, moe=False):
        v = object.__new__(Vllm)
        vals = dict(
            speculative_config=spec,
            parallel_config=Cfg("parallel_config", distributed_executor_backend="mp", pipeline_parallel_size=pp,
                                prefill_context_parallel_size=1, use_ubatching=False, data_parallel_size=1,
                                decode_context_parallel_size=1, enable_batch_sharded_sampling=False,
                                enable_dbo=False, enable_elastic_ep=False,
                                tensor_parallel_size=1),
            scheduler_config=Cfg("scheduler_config", async_scheduling=async_sched),
            model_config=Cfg("model_config", is_diffusion=False,
                             architectures=["MixtralForCausalLM"] if moe else ["LlamaForCausalLM"],
                             architecture="MixtralForCausalLM" if moe else "LlamaForCausalLM",
                             hf_config=NS(model_type="mixtral" if moe else "llama"), runner_type="generate",
                             is_hybrid=False, is_attention_free=False, is_moe=moe, is_mm_prefix_lm=False,
                             use_mla=False, enforce_eager=False, logits_processors=None,
                             enable_prompt_embeds=False,
                             # the serve defaults (--enable-return-routed-experts off) and a dense
                             # attention-only target: 0.24-0.27 read them in the runner choice
                             enable_return_routed_experts=False, has_inner_state=False,
                             logprobs_mode="raw_logprobs", is_quantized=False),
            attention_config=Cfg("attention_config", hisparse_config=None),
            lora_config=None, kv_transfer_config=None, ec_transfer_config=None, reasoning_config=None,
            compilation_config=Cfg("compilation_config", mode=CompMode.VLLM_COMPILE,
                                   pass_config=Cfg("pass_config", enable_sp=False),
                                   cudagraph_mode=CGMode.FULL_AND_PIECEWISE),
            cache_config=Cfg("cache_config", mamba_cache_mode="none", kv_sharing_fast_prefill=False),
            watermark_config=None,
        )
        for a, val in vals.items():
            try:
                object.__setattr__(v, a, val)
            except Exception:
                pass
        return v

    def route(ch, ns_, env):
        for src, test, body in ch:
            if test is None:
                return branch_result(body, ns_, env)
            try:
                ok = eval(compile(ast.Expression(test), "<chain>", "eval"), ns_, env)
            except Unknown as e:
                return f"?{e}"
            except Exception as e:
                return f"!{type(e).__name__}: {e}"[:200]
            if ok:
                return branch_result(body, ns_, env)
        return "no branch"

    variants = []
    for m in methods:
        if m in mtp_types and m != "mtp":
            continue  # SpeculativeConfig.__post_init__ rewrites these to "mtp"
        mts = [None]
        archs_opts = [["DraftModel"]]
        if m == "mtp":
            mts = ["deepseek_mtp", "qwen3_next_mtp", "gemma4_mtp", "step3p5_mtp"]
        if m in ("eagle", "eagle3"):
            mts = ["llama", "eagle"]
        if m == "dflash":
            archs_opts = [["DFlashDraftModel"], ["DFlash2DraftModel"], ["LiLiCorrDraftModel"]]
        for mt, archs in itertools.product(mts, archs_opts):
            for nextn, k in ((1, 1), (1, 3), (3, 3)) if m == "mtp" else ((1, 3),):
                variants.append((m, mt, archs, nextn, k))
    options = [dict(parallel=False, hetero=False, adaptive=False, pp=1, async_sched=True),
               dict(parallel=True, hetero=False, adaptive=False, pp=1, async_sched=True),
               dict(parallel=False, hetero=True, adaptive=False, pp=1, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=True, pp=1, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=False, pp=2, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=False, pp=1, async_sched=True, moe=True)]
    cases = []
    for (m, mt, archs, nextn, k), opt in itertools.product(variants, options):
        s = spec_obj(m, mt, archs, nextn, k, opt["parallel"], opt["hetero"], opt["adaptive"], None)
        v = vllm_obj(s, opt["pp"], opt["async_sched"], opt.get("moe", False))
        case = {"method": m, "draft_model_type": mt, "architectures": archs, "num_nextn_predict_layers": nextn,
                "k": k, "moe": False, **opt}
        for name, fn in (("v2_unsupported", "_get_v2_model_runner_unsupported_features"),
                         ("v1_unsupported", "_get_v1_model_runner_unsupported_features")):
            f = getattr(Vllm, fn, None)
            try:
                case[name] = f(v) if f else None
            except Unknown as e:
                case[name] = f"?{e}"
            except Exception as e:
                case[name] = f"!{type(e).__name__}: {e}"[:200]
        try:
            case["use_v2"] = Vllm.use_v2_model_runner.fget(v)
        except Unknown as e:
            case["use_v2"] = f"?{e}"
        except Exception as e:
            case["use_v2"] = f"!{type(e).__name__}: {e}"[:200]
        runner = NS(speculative_config=s, vllm_config=v)
        rns["get_pp_group"] = lambda: NS(is_last_rank=True)
        case["v1_route"] = route(v1, rns, {"self": runner})
        case["v2_route"] = route(v2, sns, {"speculative_config": s, "vllm_config": v}) if v2 else None
        cases.append(case)
    try:
        default_v2_archs = sorted(eng.get("vllm.config.vllm.default_v2_model_runner_architectures")())
    except Exception:
        default_v2_archs = None
    out = {
        "default_v2_architectures": default_v2_archs,
        "quantization_min_capability": quant_min_capability(eng),
        "methods": methods,
        "mtp_model_types": mtp_types,
        "v1_chain": [[src, branch_result(body)] for src, _, body in v1],
        "v2_chain": [[src, branch_result(body)] for src, _, body in v2],
        "cases": cases,
    }
    json.dump(out, sys.stdout)


# ------------------------------------------------------------------------------------------
# releases without Model Runner V1 (0.34+)

_CFG_ATTRS = ("base_method", "speculator_class", "supported_options", "uses_target_hidden_states",
              "parallel_drafting", "draft_has_own_vocab", "shares_target_positions", "supports_watermarking",
              "supports_pcp", "proposes_draft_tokens", "adaptive_verification_uses_draft_logits",
              "prefer_dense_token_history", "uses_separate_workspace_lane")

#: draft architectures of the cases, per MTP draft model_type (the registry's MTP classes)
_MTP_ARCHS = {"deepseek_mtp": "DeepSeekMTPModel", "qwen3_next_mtp": "Qwen3NextMTP", "gemma4_mtp": "Gemma4MTPModel",
              "step3p5_mtp": "Step3p5MTP"}


def _abs_module(eng, importer: str, mod: str, level: int) -> str:
    if not level:
        return mod
    pkg = importer.split(".")
    is_pkg = eng.module_path(importer) is not None and eng.module_path(importer).name == "__init__.py"
    base = pkg[: len(pkg) - level + (1 if is_pkg else 0)]
    return ".".join(base + ([mod] if mod else []))


def _model_module(mod: str) -> str:
    return mod if mod.startswith("vllm.") else f"vllm.model_executor.models.{mod}"


def declared_config_class(eng, modname: str, clsname: str, depth: int = 0) -> str | None:
    """Qualified name of ``speculator_config_class`` declared by a model class or one of its bases
    (followed through the module's imports, AST only), None when none is declared."""
    if depth > 12 or eng.module_path(modname) is None:
        return None
    ns = eng.ns(modname)
    node = ns.defs.get(clsname)
    if node is None:
        if clsname in ns.imports:
            mod, attr, level = ns.imports[clsname]
            if attr is not None:
                return declared_config_class(eng, _abs_module(eng, modname, mod, level), attr, depth + 1)
        return None
    if not isinstance(node, ast.ClassDef):
        return None
    for st in node.body:
        targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "speculator_config_class" for t in targets) and st.value is not None:
            v = st.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                return v.value
            if isinstance(v, ast.Name):
                if v.id in ns.defs:
                    return f"{modname}.{v.id}"
                if v.id in ns.imports:
                    mod, attr, level = ns.imports[v.id]
                    return f"{_abs_module(eng, modname, mod, level)}.{attr or v.id}"
            return f"?{ast.unparse(v)}"
    for b in node.bases:
        if isinstance(b, ast.Name):
            found = declared_config_class(eng, modname, b.id, depth + 1)
            if found:
                return found
    return None


def speculative_models(eng) -> dict[str, tuple[str, str]]:
    """``_SPECULATIVE_DECODING_MODELS`` of ``vllm/model_executor/models/registry.py`` (AST)."""
    ns = eng.ns("vllm.model_executor.models.registry")
    st = ns.assigns.get("_SPECULATIVE_DECODING_MODELS")
    out = {}
    if st is None or not isinstance(st.value, ast.Dict):
        return out
    for k, v in zip(st.value.keys, st.value.values):
        if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and len(v.elts) >= 2 \
                and all(isinstance(e, ast.Constant) for e in v.elts[:2]):
            out[k.value] = (v.elts[0].value, v.elts[1].value)
    return out


def _stub_cuda_platform(eng) -> None:
    """A CUDA platform with Triton for the evaluated config code (no device is touched)."""

    class Plat:
        def is_cuda(self):
            return True

        def is_rocm(self):
            return False

        def is_unspecified(self):
            return False

        def __getattr__(self, k):
            return lambda *a, **kw: False

    eng.stubs[("vllm.platforms", "current_platform")] = Plat()
    for m in ("vllm.config.vllm", "vllm.triton_utils", "vllm.triton_utils.importing"):
        eng.stubs[(m, "HAS_TRITON")] = True


def main_v2_only(eng):
    """proposers.json for a release whose engine has only the V2 model runner (the CUDA platform
    stubs are set by :func:`_stub_cuda_platform`)."""
    SCM = "vllm.v1.worker.gpu.spec_decode.speculator_config"
    methods = literal_values(eng.get("vllm.config.speculative.SpeculativeMethod"))
    mtp_types = literal_values(eng.get("vllm.config.speculative.MTPModelTypes"))
    config_by_method = dict(eng.get(f"{SCM}._CONFIG_BY_METHOD"))
    detection_order = list(eng.get(f"{SCM}._CHECKPOINT_DETECTION_ORDER"))
    get_config_class = eng.get(f"{SCM}.get_speculator_config_class")
    spec_node = eng.ns("vllm.config.speculative").defs["SpeculativeConfig"]
    spec_fields = {st.target.id for st in spec_node.body if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)}
    option_names = list(eng.get("vllm.config.speculative._METHOD_SPECIFIC_OPTIONS"))

    def poisoned(cls, name):
        return type(cls.__name__, (cls,), {"__getattr__": lambda self, k: Poison(f"{name}.{k}")})

    Spec = poisoned(eng.plain_class("vllm.config.speculative", "SpeculativeConfig"), "speculative_config")
    Vllm = poisoned(eng.plain_class("vllm.config.vllm", "VllmConfig"), "vllm_config")
    spec_defaults = field_defaults(eng, "vllm.config.speculative", "SpeculativeConfig")
    # the parallel_drafting check of SpeculativeConfig._verify_args, run on its own
    verify = next((n for n in spec_node.body if isinstance(n, ast.FunctionDef) and n.name == "_verify_args"), None)
    parallel_check = next((n for n in ast.walk(verify) if isinstance(n, ast.If)
                           and "parallel_drafting" in ast.unparse(n.test)), None) if verify else None
    sns = eng.ns("vllm.config.speculative")
    for n in ast.walk(parallel_check) if parallel_check is not None else ():
        if isinstance(n, ast.Name) and n.id != "self":
            try:  # exec's LOAD_GLOBAL ignores ModuleNS.__missing__: resolve the names first
                sns[n.id]
            except KeyError:
                pass

    # draft architectures whose model class declares its speculator
    declared = {}
    for arch, (mod, cls) in sorted(speculative_models(eng).items()):
        try:
            q = declared_config_class(eng, _model_module(mod), cls)
        except Exception as e:  # noqa: BLE001 -- recorded, never guessed
            q = f"?{type(e).__name__}: {e}"[:160]
        if q:
            declared[arch] = q

    configs: dict[str, dict] = {}

    def describe(qualname: str):
        name = qualname.rsplit(".", 1)[-1]
        if name in configs:
            return name
        try:
            c = eng.get(qualname)
        except Exception as e:  # noqa: BLE001
            configs[name] = {"module": qualname.rsplit(".", 1)[0], "error": f"{type(e).__name__}: {e}"[:200]}
            return name
        d = {"module": qualname.rsplit(".", 1)[0],
             "bases": [b.__name__ for b in c.__mro__[1:] if b is not object]}
        for a in _CFG_ATTRS:
            v = getattr(c, a, None)
            d[a] = sorted(v) if isinstance(v, (set, frozenset)) else v
        configs[name] = d
        return name

    for q in list(config_by_method.values()) + list(declared.values()):
        if not q.startswith("?"):
            describe(q)

    def spec_obj(method, model_type, archs, n_predict, k, parallel, declared_q):
        s = object.__new__(Spec)
        for a, v in spec_defaults.items():
            try:
                object.__setattr__(s, a, v)
            except Exception:
                pass
        hf = NS(model_type=model_type, n_predict=n_predict, num_nextn_predict_layers=n_predict,
                index_share_for_mtp_iteration=False, layer_types=None, dflash_config={}, is_causal=None)
        vals = dict(method=method, custom_method=None, num_speculative_tokens=k, parallel_drafting=parallel or None,
                    index_share_for_mtp_iteration=None, enable_adaptive_verification=False,
                    num_speculative_tokens_per_batch_size=None,
                    draft_model_config=NS(hf_config=hf, architectures=archs, use_mla=False, hf_text_config=hf,
                                          model_type=model_type, model="org/draft-model",
                                          speculator_config_class=declared_q),
                    draft_sample_method="greedy", rejection_sample_method="standard", attention_backend=None,
                    kv_cache_dtype=None)
        for a, v in vals.items():
            try:
                object.__setattr__(s, a, v)
            except Exception:
                pass
        return s

    def vllm_obj(spec, pp, moe=False):
        v = object.__new__(Vllm)
        vals = dict(
            speculative_config=spec,
            parallel_config=Cfg("parallel_config", distributed_executor_backend="mp", pipeline_parallel_size=pp,
                                prefill_context_parallel_size=1, use_ubatching=False, data_parallel_size=1,
                                decode_context_parallel_size=1, enable_batch_sharded_sampling=False,
                                enable_dbo=False, enable_elastic_ep=False, enable_eplb=False, tensor_parallel_size=1),
            scheduler_config=Cfg("scheduler_config", async_scheduling=True),
            model_config=Cfg("model_config", is_diffusion=False,
                             architectures=["MixtralForCausalLM"] if moe else ["LlamaForCausalLM"],
                             is_hybrid=False, is_moe=moe, enable_prompt_embeds=False, logits_processors=None,
                             is_multimodal_model=False, is_encoder_decoder=False),
            lora_config=None, is_mm_encoder_only=False,
        )
        for a, val in vals.items():
            try:
                object.__setattr__(v, a, val)
            except Exception:
                pass
        return v

    def guarded(fn):
        try:
            return fn()
        except Unknown as e:
            return f"?{e}"
        except Exception as e:  # noqa: BLE001
            return f"!{type(e).__name__}: {e}"[:200]

    variants = []
    for m in methods:
        if m in mtp_types and m != "mtp":
            continue  # SpeculativeConfig.__post_init__ rewrites these to "mtp"
        mts, archs_opts = [None], [["DraftModel"]]
        if m == "mtp":
            mts = list(_MTP_ARCHS)
        if m in ("eagle", "eagle3"):
            mts = ["llama", "eagle"]
        if m == "dflash":
            archs_opts = [["DFlashDraftModel"], ["DFlash2DraftModel"], ["LiLiCorrDraftModel"], ["DFlashQwen3XPressModel"]]
        for mt, archs in itertools.product(mts, archs_opts):
            if m == "mtp":
                archs = [_MTP_ARCHS[mt]]
            for nextn, k in ((1, 1), (1, 3), (3, 3)) if m == "mtp" else ((1, 3),):
                variants.append((m, mt, archs, nextn, k))
    options = [dict(parallel=False, hetero=False, adaptive=False, pp=1, async_sched=True),
               dict(parallel=True, hetero=False, adaptive=False, pp=1, async_sched=True),
               dict(parallel=False, hetero=True, adaptive=False, pp=1, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=True, pp=1, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=False, pp=2, async_sched=True),
               dict(parallel=False, hetero=False, adaptive=False, pp=1, async_sched=True, moe=True)]
    cases = []
    for (m, mt, archs, nextn, k), opt in itertools.product(variants, options):
        declared_q = next((declared[a] for a in archs if a in declared), None)
        s = spec_obj(m, mt, archs, nextn, k, opt["parallel"], declared_q)
        v = vllm_obj(s, opt["pp"], opt.get("moe", False))
        case = {"method": m, "draft_model_type": mt, "architectures": archs, "num_nextn_predict_layers": nextn,
                "k": k, "moe": False, **opt}
        errors = []
        if opt["hetero"] and "use_heterogeneous_vocab" not in spec_fields:
            errors.append("use_heterogeneous_vocab: Unexpected keyword argument (SpeculativeConfig has no such "
                          "field; extra='forbid')")
        if opt["parallel"] and parallel_check is not None:
            def run_check():
                env = {"self": s}
                exec(compile(ast.Module(body=[parallel_check], type_ignores=[]), "<verify>", "exec"), sns, env)
            r = guarded(run_check)
            if isinstance(r, str):
                errors.append(r.lstrip("!").removeprefix("ValueError: "))
        case["config_error"] = "; ".join(errors) or None
        case["v2_unsupported"] = guarded(lambda: Vllm._get_model_runner_unsupported_features(v))
        case["v1_unsupported"] = None
        case["use_v2"] = True
        case["v1_route"] = None
        cfg = guarded(lambda: get_config_class(s))
        if isinstance(cfg, str):
            case["speculator_config"], case["v2_route"] = None, cfg
        else:
            name = describe(f"{cfg.__module__}.{cfg.__name__}") if isinstance(cfg.__module__, str) else cfg.__name__
            case["speculator_config"] = name
            q = getattr(cfg, "speculator_class", None)
            case["v2_route"] = (q.rsplit(".", 1)[-1] if q else
                                "raise: NotImplementedError(f'{speculative_config.method} is not supported yet.')")
            case["supported_options"] = sorted(getattr(cfg, "supported_options", ()) or ())
        cases.append(case)
    out = {
        "v1_runner": False,
        "default_v2_architectures": None,
        "quantization_min_capability": quant_min_capability(eng),
        "methods": methods,
        "mtp_model_types": mtp_types,
        "method_specific_options": option_names,
        "config_by_method": {m: q.rsplit(".", 1)[-1] for m, q in config_by_method.items()},
        "checkpoint_detection_order": detection_order,
        "declared_speculators": {a: q.rsplit(".", 1)[-1] for a, q in declared.items()},
        "speculator_configs": dict(sorted(configs.items())),
        "v1_chain": [],
        "v2_chain": [[f"_CONFIG_BY_METHOD[{m!r}]", configs.get(q.rsplit(".", 1)[-1], {}).get("speculator_class") or "?"]
                     for m, q in config_by_method.items()],
        "cases": cases,
    }
    for row in out["v2_chain"]:
        row[1] = row[1].rsplit(".", 1)[-1]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
