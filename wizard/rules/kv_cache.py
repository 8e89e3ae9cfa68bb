"""KV-cache dtype rules, target and drafter separately (SD200-SD219).

vLLM resolves two KV dtypes: the target's (``--kv-cache-dtype``, or what the checkpoint forces
under ``auto``, docs/vllm-rules.md R101) and the drafter's (``speculative_config.kv_cache_dtype``,
else inherited from the target, R105). Neither is checked against the hardware or the drafter's
attention layout at config time (R104): attention-backend selection fails at load (R107-R109).
These rules predict those load-time failures from :class:`~wizard.context.CheckContext`.

Hardware facts come only from ``ctx.hardware`` (:class:`~wizard.hardware.Hardware`); with no
hardware given, GPU-dependent checks stay quiet or emit at most an info finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, is_eagle_head, is_noncausal, use_ngram, uses_draft_kv_cache

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = [
    "MLA_ONLY_KV",
    "DRAFT_KV_FIELD_SINCE",
    "is_fp8_kv",
    "safe_drafter_kv",
    "has_draft_kv_field",
]

#: KV layouts only sparse-MLA backends accept (docs/vllm-rules.md §7 MLA table).
MLA_ONLY_KV = frozenset({"fp8_ds_mla", "nvfp4_ds_mla"})
#: First version known to accept ``speculative_config.kv_cache_dtype``. The field is in the 0.32
#: and 0.33 sources (``SpeculativeConfig.kv_cache_dtype``); it was added by vllm-project/vllm
#: PR #48787 (merged 2026-07-15) and is used on 0.28.0 in vllm-project/vllm issue #54690. The
#: exact first release between is not verified, so older versions are treated as lacking it.
DRAFT_KV_FIELD_SINCE = "0.28"
#: First version whose attention backends accept fp8 KV with non-causal attention: in 0.32
#: TRITON_ATTN and FLASHINFER declare ``supports_non_causal`` and list fp8 KV dtypes
#: (vllm/v1/attention/backends/triton_attn.py, flashinfer.py). Reports up to 0.28 (PR #48787,
#: issues #41559, #54690) had none; the release in between that added it is not verified.
NONCAUSAL_FP8_SINCE = "0.32"
#: Quantization methods whose checkpoints carry fp8 KV scales (``BaseKVCacheMethod``), which
#: refuse ``fp8_e5m2`` KV (vllm/model_executor/layers/attention/attention.py, 0.32).
_FP8_CKPT_QUANT = frozenset({"fp8", "modelopt", "modelopt_fp4", "modelopt_mixed", "fbgemm_fp8", "ptpc_fp8", "quark", "mxfp8"})
#: CPU attention backend KV dtypes (R109, vllm/platforms/cpu.py 0.32/0.33).
CPU_KV = frozenset({"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"})


def is_fp8_kv(dtype: str | None) -> bool:
    """True for the dense fp8 KV dtypes (fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_per_token_head);
    False for the MLA-only ``fp8_ds_mla`` layout and everything else."""
    return bool(dtype) and dtype.startswith("fp8") and dtype not in MLA_ONLY_KV


def safe_drafter_kv(ctx: "CheckContext") -> str:
    """The drafter KV dtype to suggest when the inherited one is unusable: 'bfloat16' when the
    model runs in bf16 (or the dtype is unknown: nearly every current checkpoint is bf16, and
    it is the value PR #48787 documents), else 'auto' (= the model dtype, avoids a float KV
    dtype that differs from the model dtype, R102)."""
    md = ctx.model_dtype()
    return "bfloat16" if md in (None, "bfloat16") else "auto"


def explicit_model_kv(ctx: "CheckContext") -> str:
    """A non-quantized KV dtype spelled explicitly (not 'auto'), for when the checkpoint forces
    fp8 under auto (R101): 'float16' for fp16 models, else 'bfloat16'."""
    return "float16" if ctx.model_dtype() == "float16" else "bfloat16"


def has_draft_kv_field(ctx: "CheckContext") -> bool:
    """Whether this vLLM version has ``speculative_config.kv_cache_dtype`` (see DRAFT_KV_FIELD_SINCE)."""
    return ctx.version.at_least(DRAFT_KV_FIELD_SINCE)


def _drafter_is_mla(ctx: "CheckContext") -> bool | None:
    """Whether the drafter's attention is MLA. MTP layers are part of the target (same layout).
    None = unknown drafter."""
    if ctx.method == MTP:
        return ctx.target.use_mla if ctx.target is not None else None
    d = ctx.drafter
    if d is None:
        return None
    return bool(d.use_mla)


def _explicit_draft_kv(ctx: "CheckContext") -> str | None:
    spec = ctx.spec
    return spec.kv_cache_dtype if spec is not None and spec.kv_cache_dtype else None


@register
class DrafterKvDtypeUnusable(Rule):
    """SD200 — the drafter's KV dtype is one its attention backend cannot use.

    **What it does.** Resolves the drafter's effective KV dtype the way vLLM does
    (``speculative_config.kv_cache_dtype``, else inherited from the target's effective dtype,
    which includes a checkpoint-forced fp8 under ``auto``) and flags three load-time failures:

    * a non-causal drafter (dflash, dspark) with an fp8 KV cache on a GPU without an fp8
      non-causal backend (``Hardware.fp8_noncausal_kv`` false);
    * an MLA-only layout (``fp8_ds_mla``, ``nvfp4_ds_mla``) inherited by a dense (non-MLA) drafter;
    * a drafter-only fp8 KV cache on a GPU without fp8 attention (``Hardware.fp8_kv`` false).

    **Why it matters.** The drafter gets its own attention backend; when none accepts its KV
    dtype vLLM stops with "No valid attention backend found" (or crashes in the kernel), after
    the target has loaded.

    **Anti-pattern.**
        vllm serve RedHatAI/GLM-5.2-NVFP4-FP8 --tensor-parallel-size 4 --kv-cache-dtype fp8 \\
          --speculative-config '{"method":"dspark","model":"GLM-5.2-speculator.dspark","num_speculative_tokens":7}'

    **Best practice.** Keep the target's dtype (most of the KV memory) and give the drafter its
    own: ``--speculative-config.kv_cache_dtype bfloat16`` (or inside the JSON). On versions
    without that field, change the global ``--kv-cache-dtype``.

    **Fix safety.** Setting the drafter's dtype is safe (the drafter cache is small; outputs are
    unchanged). The global alternative changes the target's KV memory (unsafe for capacity).

    Source: docs/vllm-rules.md R104, R105, R107, R014; vllm-project/vllm PR #48787,
    issues #48380, #41559, #54690.
    """

    id = "SD200"
    title = "Drafter KV-cache dtype unusable by the drafter's attention"
    severity = Severity.ERROR
    fields = ("speculative_config.kv_cache_dtype", "kv_cache_dtype")
    topic = "kv_cache"
    phase = "load"
    why = (
        "The drafter inherits the target's KV dtype unless speculative_config.kv_cache_dtype is set. "
        "Non-causal drafters have no fp8 backend on most GPUs, dense drafters cannot use MLA-only "
        "layouts, and GPUs without fp8 attention cannot run an fp8 drafter cache: startup fails."
    )
    bad = (
        "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_ds_mla "
        "--speculative-config '{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'"
    )
    good = (
        "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_ds_mla "
        "--speculative-config '{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3,\"kv_cache_dtype\":\"bfloat16\"}'"
    )
    source = "docs/vllm-rules.md R104/R105/R107; vllm-project/vllm PR #48787, issues #48380, #41559, #54690"
    fix_safety = "Setting speculative_config.kv_cache_dtype is safe; changing the global dtype changes target KV capacity."

    def check(self, ctx):
        if ctx.spec is None or not uses_draft_kv_cache(ctx.method):
            return
        dkv = ctx.drafter_kv_dtype()
        tkv = ctx.target_kv_dtype()
        explicit = _explicit_draft_kv(ctx)
        hw = ctx.hardware
        reason = None
        severity = Severity.ERROR
        if dkv in MLA_ONLY_KV and ctx.method != MTP:
            mla = _drafter_is_mla(ctx)
            if mla is False:
                reason = (f"the drafter is a dense (non-MLA) model but its KV dtype is '{dkv}', a layout only "
                          "sparse-MLA backends accept: every backend answers 'kv_cache_dtype not supported' "
                          "and vLLM stops with 'No valid attention backend found'")
            elif mla is None:
                reason = (f"the drafter's KV dtype is '{dkv}', an MLA-only layout; unless the drafter is an MLA "
                          "model (its config could not be read) no attention backend accepts it")
                severity = Severity.WARNING
        elif is_fp8_kv(dkv) and is_noncausal(ctx.method):
            if not ctx.version.at_least(NONCAUSAL_FP8_SINCE):
                reason = (f"the {ctx.method} drafter is non-causal and vLLM {ctx.version} has no attention backend with "
                          "both non-causal attention and fp8 KV (PR #48787): drafter backend selection fails "
                          "('No valid attention backend found') or the kernel faults at warm-up")
            elif hw is None:
                reason = (f"the {ctx.method} drafter is non-causal and its KV dtype is '{dkv}'; only some GPUs have a "
                          "non-causal fp8 backend (TRITON_ATTN/FLASHINFER in 0.32); give --gpu to check")
                severity = Severity.INFO
            elif hw.vendor != "cpu" and not hw.fp8_noncausal_kv:
                reason = (f"the {ctx.method} drafter is non-causal and its KV dtype is '{dkv}', but {hw.name} has no "
                          "attention backend with both non-causal attention and fp8 KV: drafter backend selection "
                          "fails ('No valid attention backend found'), or the kernel faults at warm-up")
        elif is_fp8_kv(dkv) and explicit and not is_fp8_kv(tkv) and hw is not None and hw.vendor != "cpu" and not hw.fp8_kv:
            reason = (f"speculative_config.kv_cache_dtype is '{dkv}' but {hw.name} has no attention backend with fp8 KV")
        if reason is None:
            return
        yield self.finding(self._message(ctx, reason, dkv, tkv, explicit), severity=severity,
                           fixes=self._fixes(ctx, dkv, tkv, explicit))

    def _message(self, ctx, reason, dkv, tkv, explicit):
        origin = "set in speculative_config.kv_cache_dtype" if explicit else (
            f"inherited from the target's '{tkv}'" + (" (forced by the checkpoint's KV quantization under auto)"
                                                       if (ctx.config.kv_cache_dtype or "auto") == "auto" else ""))
        msg = f"Drafter KV dtype '{dkv}' ({origin}): {reason}."
        if not has_draft_kv_field(ctx) and not explicit:
            msg += (f" vLLM {ctx.version} has no speculative_config.kv_cache_dtype (added by PR #48787; present from "
                    f"about {DRAFT_KV_FIELD_SINCE}): the only remedy there is a different global --kv-cache-dtype.")
        return msg

    def _fixes(self, ctx, dkv, tkv, explicit):
        fixes = []
        if explicit and not is_fp8_kv(tkv) and tkv not in MLA_ONLY_KV:
            fixes.append(Patch(description="Drop speculative_config.kv_cache_dtype so the drafter inherits the target's KV dtype",
                               unset=["speculative_config.kv_cache_dtype"]))
        if has_draft_kv_field(ctx):
            val = safe_drafter_kv(ctx)
            fixes.append(Patch(description=f"Keep the target's KV dtype and set the drafter's to {val} "
                                           f"(--speculative-config.kv_cache_dtype {val})",
                               set={"speculative_config.kv_cache_dtype": val}))
        else:
            forced = ctx.target is not None and bool(ctx.target.kv_cache_quant)
            val = explicit_model_kv(ctx) if forced else "auto"
            fixes.append(Patch(description=f"This vLLM version has no drafter KV dtype: set the global --kv-cache-dtype {val} "
                                           "(the target's KV cache grows)",
                               set={"kv_cache_dtype": val}, unset=["speculative_config.kv_cache_dtype"]))
        return fixes


@register
class Fp8KvWithoutFp8Attention(Rule):
    """SD201 — fp8 KV cache on a GPU without an fp8 attention backend.

    **What it does.** Flags a target KV dtype in the fp8 family (set with ``--kv-cache-dtype``,
    or forced by the checkpoint's ``kv_cache_scheme``/``kv_cache_quant_algo`` under ``auto``)
    when ``ctx.hardware`` says the GPU has no fp8 attention (``Hardware.fp8_kv`` false, e.g.
    V100). Quiet without hardware.

    **Why it matters.** vLLM accepts the dtype at config time and fails at attention-backend
    selection ("kv_cache_dtype not supported" for every backend) or in the kernel.

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8`` on 2 x V100.

    **Best practice.** Leave the KV cache at ``auto`` (the model dtype) on such GPUs; when the
    checkpoint forces fp8 under auto, spell the model dtype (``--kv-cache-dtype bfloat16``).

    **Fix safety.** Unsafe for capacity: the KV cache doubles in bytes per token.

    Source: docs/vllm-rules.md R104, R107, §7; 1CatAI/1Cat-vLLM PR #54.
    """

    id = "SD201"
    title = "fp8 KV cache on a GPU without fp8 attention"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "load"
    why = "No attention backend on this GPU accepts fp8 KV; vLLM fails at backend selection after loading weights."
    bad = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8"
    good = "vllm serve Qwen/Qwen3-8B"
    example_gpu = "V100"
    source = "docs/vllm-rules.md R104/R107 and §7; https://github.com/1CatAI/1Cat-vLLM/pull/54"
    fix_safety = "Changes KV memory per token (capacity); outputs stay the same or improve."

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor == "cpu" or hw.fp8_kv:
            return
        tkv = ctx.target_kv_dtype()
        if not is_fp8_kv(tkv):
            return
        forced = (ctx.config.kv_cache_dtype or "auto") == "auto"
        val = explicit_model_kv(ctx) if forced else "auto"
        how = "forced by the checkpoint's KV quantization under --kv-cache-dtype auto" if forced else "set with --kv-cache-dtype"
        yield self.finding(
            f"KV dtype '{tkv}' ({how}) needs an fp8 attention backend, and {hw.name}"
            f"{f' (SM {hw.sm})' if hw.sm else ''} has none: attention-backend selection fails at load.",
            fixes=[Patch(description=f"Use --kv-cache-dtype {val} (model-dtype KV cache)", set={"kv_cache_dtype": val})],
        )


@register
class Fp8E5m2Unsupported(Rule):
    """SD202 — ``fp8_e5m2`` KV with FLASH_ATTN or with an fp8 checkpoint.

    **What it does.** Flags ``fp8_e5m2`` as the target's or the drafter's KV dtype when (a) that
    side's attention backend is pinned to ``FLASH_ATTN`` (which never supports e5m2), or (b)
    the target checkpoint is fp8-quantized (its quantization method registers KV scales).

    **Why it matters.** (a) backend validation fails; (b) vLLM raises "fp8_e5m2 kv-cache is not
    supported with fp8 checkpoints" while building the attention layers.

    **Anti-pattern.** ``vllm serve RedHatAI/Llama-3.1-8B-Instruct-FP8 --kv-cache-dtype fp8_e5m2``

    **Best practice.** Use ``fp8_e4m3`` (``fp8``) where the GPU has fp8 attention, or ``auto``.

    **Fix safety.** ``auto`` is safe for outputs, costs KV capacity.

    Source: vllm/model_executor/layers/attention/attention.py (0.32: "fp8_e5m2 kv-cache is not
    supported with fp8 checkpoints"); docs/vllm-rules.md R107; 1CatAI/1Cat-vLLM PR #54.
    """

    id = "SD202"
    title = "fp8_e5m2 KV cache with FLASH_ATTN or an fp8 checkpoint"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "load"
    why = "FLASH_ATTN never accepts fp8_e5m2, and fp8 checkpoints refuse it at layer construction."
    bad = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e5m2 --attention-backend FLASH_ATTN"
    good = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 --attention-backend FLASH_ATTN"
    source = "vllm/model_executor/layers/attention/attention.py (0.32); docs/vllm-rules.md R107; https://github.com/1CatAI/1Cat-vLLM/pull/54"
    fix_safety = "auto changes KV capacity only."

    def _fp8_ckpt(self, ctx) -> bool:
        q = (ctx.config.quantization or "").lower()
        t = ctx.target
        qm = (t.quant_method or "").lower() if t is not None else ""
        if q in _FP8_CKPT_QUANT or qm in _FP8_CKPT_QUANT:
            return True
        return qm == "compressed-tensors" and t is not None and bool(t.kv_cache_quant)

    def check(self, ctx):
        tkv = ctx.target_kv_dtype()
        backend = (ctx.config.attention_backend or "").upper()
        hw = ctx.hardware
        alt = "fp8_e4m3" if hw is not None and hw.fp8_kv else "auto"
        if tkv == "fp8_e5m2":
            problems = []
            if backend == "FLASH_ATTN":
                problems.append("the FLASH_ATTN backend never supports fp8_e5m2")
            if self._fp8_ckpt(ctx):
                problems.append("the checkpoint is fp8-quantized and vLLM raises 'fp8_e5m2 kv-cache is not supported with fp8 checkpoints'")
            if problems:
                fixes = [Patch(description=f"Use --kv-cache-dtype {alt}", set={"kv_cache_dtype": alt})]
                if alt != "auto":
                    fixes.append(Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"}))
                yield self.finding("KV dtype fp8_e5m2: " + "; ".join(problems) + ".", fixes=fixes)
        spec = ctx.spec
        if spec is not None and uses_draft_kv_cache(ctx.method) and ctx.drafter_kv_dtype() == "fp8_e5m2" and tkv != "fp8_e5m2":
            if (spec.attention_backend or "").upper() == "FLASH_ATTN":
                yield self.finding(
                    "Drafter KV dtype fp8_e5m2 with speculative_config.attention_backend FLASH_ATTN, which never supports e5m2.",
                    fields=["speculative_config.kv_cache_dtype", "speculative_config.attention_backend"],
                    fixes=[Patch(description="Let the drafter inherit the target's KV dtype", unset=["speculative_config.kv_cache_dtype"])],
                )


@register
class MlaOnlyKvOnDenseTarget(Rule):
    """SD203 — ``fp8_ds_mla`` / ``nvfp4_ds_mla`` on a target without MLA attention.

    **What it does.** Flags the sparse-MLA KV layouts when the target model does not use MLA
    (``ModelInfo.use_mla`` false).

    **Why it matters.** vLLM accepts it at config time (R104) and every attention backend
    refuses it at load: "No valid attention backend found".

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_ds_mla``

    **Best practice.** Use ``fp8`` (or ``auto``) for dense models; the ``_ds_mla`` layouts are
    for DeepSeek-V3.2-style sparse MLA.

    **Fix safety.** ``auto`` is safe for outputs (more KV memory); ``fp8`` keeps the memory.

    Source: docs/vllm-rules.md R104, §7 (MLA backends), E49.
    """

    id = "SD203"
    title = "MLA-only KV layout on a non-MLA target"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "load"
    why = "Only sparse-MLA backends accept fp8_ds_mla/nvfp4_ds_mla; a dense model finds no attention backend."
    bad = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_ds_mla"
    good = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8"
    source = "docs/vllm-rules.md R104 and §7 (verified E49: accepted at config time)"
    fix_safety = "auto: safe (more KV memory); fp8: keeps memory, needs fp8 attention."

    def check(self, ctx):
        tkv = ctx.target_kv_dtype()
        if tkv not in MLA_ONLY_KV or ctx.target is None or ctx.target.use_mla:
            return
        fixes = [Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})]
        if ctx.hardware is None or ctx.hardware.fp8_kv:
            fixes.append(Patch(description="Use --kv-cache-dtype fp8 (dense fp8 KV)", set={"kv_cache_dtype": "fp8"}))
        yield self.finding(
            f"KV dtype '{tkv}' is a sparse-MLA layout but {ctx.target.short_name()} "
            f"({', '.join(ctx.target.architectures) or ctx.target.model_type}) has no MLA attention: no backend accepts it.",
            fixes=fixes,
        )


@register
class CpuKvDtype(Rule):
    """SD204 — KV dtypes the CPU attention backend does not support.

    **What it does.** On CPU (``Hardware.vendor == 'cpu'``) flags, for the target and the
    drafter: dtypes outside {auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2} (error); fp8
    on an MLA model (error); fp8 with a head size not divisible by 32 (error); any fp8 (warning:
    needs x86 AVX-512 or AMX, which the wizard cannot see).

    **Why it matters.** 0.32 fails at the first forward (NotImplementedError), 0.33 at backend
    selection.

    **Anti-pattern.** ``vllm serve Qwen/Qwen3-8B --kv-cache-dtype nvfp4`` on CPU.

    **Best practice.** ``auto`` on CPU unless the host has AVX-512/AMX.

    **Fix safety.** ``auto`` only changes KV memory.

    Source: vllm/platforms/cpu.py, vllm/v1/attention/backends/cpu_attn.py (0.32/0.33); docs/vllm-rules.md R109.
    """

    id = "SD204"
    title = "KV-cache dtype not supported by the CPU backend"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "load"
    why = "The CPU attention backend accepts only auto/bf16/fp16/fp8 (fp8 with AVX-512 or AMX and head_size % 32 == 0)."
    bad = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype nvfp4"
    good = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype auto"
    example_gpu = "cpu"
    source = "vllm/platforms/cpu.py, vllm/v1/attention/backends/cpu_attn.py (0.32/0.33); docs/vllm-rules.md R109"
    fix_safety = "auto only changes KV memory."

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor != "cpu":
            return
        sides = [("kv_cache_dtype", ctx.target_kv_dtype(), ctx.target)]
        if ctx.spec is not None and uses_draft_kv_cache(ctx.method) and _explicit_draft_kv(ctx):
            sides.append(("speculative_config.kv_cache_dtype", ctx.drafter_kv_dtype(),
                          ctx.target if ctx.method == MTP else ctx.drafter))
        for field, kv, info in sides:
            fix = Patch(description=f"Use {field} auto", set={field: "auto"})
            if kv not in CPU_KV:
                yield self.finding(f"KV dtype '{kv}' ({field}) is not supported by the CPU attention backend "
                                   "(auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2).", fields=[field], fixes=[fix])
                continue
            if not is_fp8_kv(kv):
                continue
            if info is not None and info.use_mla:
                yield self.finding(f"KV dtype '{kv}' ({field}): MLA attention on CPU supports only auto/bfloat16/float16.",
                                   fields=[field], fixes=[fix])
            elif info is not None and info.head_dim and info.head_dim % 32:
                yield self.finding(f"KV dtype '{kv}' ({field}): fp8 KV on CPU needs head_size divisible by 32; "
                                   f"{info.short_name()} has head_dim {info.head_dim}.", fields=[field], fixes=[fix])
            elif not hw.fp8_kv:
                yield self.finding(f"KV dtype '{kv}' ({field}): fp8 KV on CPU needs an x86 host with AVX-512 or AMX "
                                   f"('FP8 KV cache on CPU requires x86 with AVX-512 or AMX'); this host's ISA is "
                                   f"{hw.isa or 'unknown'}.", fields=[field], fixes=[fix])


@register
class QuantizedKvWithSpeculation(Rule):
    """SD205 — TurboQuant/UltraQuant KV cache together with speculative decoding.

    **What it does.** Warns when the target's or the drafter's KV dtype is a ``turboquant_*``
    or ``ultraquant_*`` layout and speculation is on.

    **Why it matters.** The reported combination produced degenerate token loops: MTP stayed
    broken, n-gram became clean only with backports and ``prompt_lookup_min`` 8.

    **Anti-pattern.** ``--kv-cache-dtype turboquant_3bit_nc`` with MTP or n-gram.

    **Best practice.** bf16 or fp8 KV with speculation; for n-gram, a high ``prompt_lookup_min``.

    **Fix safety.** ``auto`` costs KV capacity.

    Source: https://github.com/vllm-project/vllm/issues/40831
    """

    id = "SD205"
    title = "TurboQuant/UltraQuant KV cache with speculative decoding"
    severity = Severity.WARNING
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "run"
    why = "Speculative verification over aggressively quantized KV has produced repetition loops (vllm#40831)."
    bad = ("vllm serve Qwen/Qwen3-8B --kv-cache-dtype turboquant_3bit_nc "
           "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    good = ("vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8 "
            "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    source = "https://github.com/vllm-project/vllm/issues/40831"
    fix_safety = "auto costs KV capacity; outputs become correct."

    def check(self, ctx):
        if ctx.spec is None:
            return
        kv = ctx.target_kv_dtype()
        if not kv.startswith(("turboquant", "ultraquant")):
            return
        extra = ""
        if use_ngram(ctx.method):
            extra = " For n-gram, a prompt_lookup_min of 8 avoided the loops in the report."
        elif ctx.method == MTP:
            extra = " MTP stayed broken in the report even with the fixes."
        yield self.finding(
            f"KV dtype '{kv}' with speculative method '{ctx.method}': reported to produce degenerate token loops "
            f"(vllm#40831).{extra}",
            fixes=[Patch(description="Use --kv-cache-dtype auto (or fp8)", set={"kv_cache_dtype": "auto"})],
        )


@register
class Fp8KvWithoutScales(Rule):
    """SD206 — fp8 KV cache on a checkpoint without calibrated KV scales.

    **What it does.** Warns when ``--kv-cache-dtype`` is set to a dense fp8 dtype and the target
    checkpoint declares no KV quantization (no ``kv_cache_scheme``/``kv_cache_quant_algo``, so
    no ``k_scale``/``v_scale``). Quiet when the target is unknown.

    **Why it matters.** vLLM falls back to scale 1.0; accuracy can drop (reasoning especially)
    and, with speculation, drafter acceptance can collapse (Gemma 4 MTP ran at ~0.2%).

    **Anti-pattern.** ``--kv-cache-dtype fp8_e4m3`` on a weight-only FP8 checkpoint.

    **Best practice.** Use fp8 KV only with calibrated scales; otherwise ``auto``. Validate
    acceptance with bf16 KV first.

    **Fix safety.** ``auto`` costs KV capacity.

    Source: https://github.com/sgl-project/sgl-cookbook/pull/237 (SGLang, same fallback to
    scale 1.0 in vLLM: vllm/model_executor/layers/quantization/kv_cache.py);
    https://github.com/vllm-project/vllm/issues/41789
    """

    id = "SD206"
    title = "fp8 KV cache without calibrated KV scales"
    severity = Severity.WARNING
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "run"
    why = "Without k_scale/v_scale vLLM uses 1.0; accuracy and speculative acceptance can drop."
    bad = "vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3"
    good = "vllm serve Qwen/Qwen3-8B"
    source = "https://github.com/sgl-project/sgl-cookbook/pull/237; https://github.com/vllm-project/vllm/issues/41789"
    fix_safety = "auto costs KV capacity."

    def check(self, ctx):
        kv = ctx.config.kv_cache_dtype
        t = ctx.target
        if not is_fp8_kv(kv) or t is None or t.kv_cache_quant:
            return
        if any(n.endswith(("k_scale", "v_scale")) for n in t.tensors):
            return
        spec_note = ""
        if ctx.spec is not None and uses_draft_kv_cache(ctx.method):
            dkv = ctx.drafter_kv_dtype()
            if dkv == kv:
                spec_note = (f" With speculation ({ctx.method}) the drafter's KV cache inherits '{kv}' and is just as "
                             "uncalibrated: acceptance near zero was reported (vllm#41789); validate with bf16 KV first.")
            elif is_fp8_kv(dkv):
                spec_note = (f" With speculation ({ctx.method}) the drafter's KV cache is '{dkv}' "
                             "(speculative_config.kv_cache_dtype), also without calibrated scales: acceptance near zero "
                             "was reported (vllm#41789); validate with bf16 KV first.")
            else:
                spec_note = (f" The drafter's KV cache is '{dkv}' (speculative_config.kv_cache_dtype), so drafting is "
                             "unaffected, but the target verifies against the uncalibrated fp8 cache.")
        yield self.finding(
            f"--kv-cache-dtype {kv} on {t.short_name()}, whose checkpoint declares no KV-cache quantization "
            f"(no calibrated k/v scales): vLLM uses scale 1.0 and accuracy may degrade.{spec_note}",
            fixes=[Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})],
        )


@register
class CheckpointFp8KvMtpBelowSm90(Rule):
    """SD207 — checkpoint-forced fp8 KV with MTP on a GPU below SM 9.0.

    **What it does.** When ``--kv-cache-dtype`` is ``auto`` and the target checkpoint forces fp8
    KV (``kv_cache_scheme``), flags MTP on a GPU with compute capability below 9.0 (e.g. L4,
    SM 8.9). Quiet without hardware.

    **Why it matters.** The user asked for auto and got fp8 silently; MTP then ran fp8 attention
    kernels that only exist for SM90+: CUDA illegal memory access.

    **Anti-pattern.** NuExtract3-FP8 (compressed-tensors, kv_cache_scheme) with MTP on an L4.

    **Best practice.** Spell the KV dtype (``--kv-cache-dtype bfloat16``), or serve the BF16
    checkpoint with ``--quantization fp8``, or use a build with PR #45038.

    **Fix safety.** Costs KV capacity.

    Source: https://github.com/vllm-project/vllm/issues/44879; docs/vllm-rules.md R101.
    """

    id = "SD207"
    title = "Checkpoint forces fp8 KV; MTP on a GPU below SM 9.0"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "run"
    why = "kv_cache_scheme turns auto into fp8; MTP's fp8 attention path then faults below SM90 (vllm#44879)."
    bad = ("vllm serve ./tiny-dsv3-mtp1-ct-fp8kv "
           "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    good = ("vllm serve ./tiny-dsv3-mtp1-ct-fp8kv --kv-cache-dtype bfloat16 "
            "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    example_gpu = "L4"
    # a DeepSeek-V3-shaped MTP checkpoint (scaled down, config only) whose compressed-tensors
    # quantization_config carries a kv_cache_scheme, like NuExtract3-FP8 in vllm#44879
    example_models = {"./tiny-dsv3-mtp1-ct-fp8kv": {"config": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 128,
        "intermediate_size": 256, "moe_intermediate_size": 64, "n_routed_experts": 4, "n_shared_experts": 1,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "num_hidden_layers": 2, "first_k_dense_replace": 1,
        "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 32, "q_lora_rank": None,
        "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "vocab_size": 512,
        "max_position_embeddings": 2048, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor",
                                                    "dynamic": False, "symmetric": True}}}, "tensors": {}}}
    source = "https://github.com/vllm-project/vllm/issues/44879; docs/vllm-rules.md R101"
    fix_safety = "Costs KV capacity."

    def check(self, ctx):
        hw = ctx.hardware
        t = ctx.target
        if ctx.spec is None or ctx.method != MTP or t is None or not t.kv_cache_quant:
            return
        if (ctx.config.kv_cache_dtype or "auto") != "auto" or hw is None or hw.vendor != "nvidia":
            return
        if hw.sm is None or hw.sm >= 90:
            return
        val = explicit_model_kv(ctx)
        yield self.finding(
            f"{t.short_name()} declares KV-cache quantization, so --kv-cache-dtype auto becomes "
            f"'{ctx.target_kv_dtype()}'; MTP's fp8 attention path needs SM 9.0+, and {hw.name} is SM {hw.sm}: "
            "illegal memory access at run time (vllm#44879).",
            fixes=[Patch(description=f"Spell the KV dtype: --kv-cache-dtype {val}", set={"kv_cache_dtype": val})],
        )


@register
class Fp8KvEagleOldVersions(Rule):
    """SD208 — fp8 KV cache with an EAGLE drafter on vLLM before 0.11.

    **What it does.** Flags a target fp8 KV cache with eagle/eagle3 on versions before the
    drafter KV dtype was aligned with the target's (vllm-project/vllm PR #24505).

    **Why it matters.** The server starts, then requests fail with "query and key must have the
    same dtype" inside flash-attention.

    **Best practice.** Upgrade, or keep KV at auto with EAGLE on those versions.

    **Fix safety.** ``auto`` costs KV capacity.

    **Anti-pattern.** ``vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8 --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'``

    Source: https://github.com/vllm-project/vllm/issues/21177 (0.9.2), PR #24505.
    """

    id = "SD208"
    title = "fp8 KV with EAGLE on vLLM < 0.11"
    severity = Severity.ERROR
    versions = "<0.11"
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "run"
    why = "Before PR #24505 the EAGLE drafter's query dtype did not match an fp8 KV cache: requests return 500."
    bad = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8 --speculative-config "
           "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    good = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
            "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    example_version = "0.10.0"
    source = "https://github.com/vllm-project/vllm/issues/21177; PR #24505"
    fix_safety = "auto costs KV capacity."

    def check(self, ctx):
        if ctx.spec is None or not is_eagle_head(ctx.method):
            return
        kv = ctx.target_kv_dtype()
        if not is_fp8_kv(kv):
            return
        yield self.finding(
            f"KV dtype '{kv}' with method {ctx.method} on vLLM {ctx.version}: requests fail with "
            "'query and key must have the same dtype' (fixed by PR #24505); upgrade or use auto KV.",
            fixes=[Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})],
        )
