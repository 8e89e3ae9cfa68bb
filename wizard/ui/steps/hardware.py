"""Step 1 · Hardware: detected GPUs (NVML) or a catalog entry, count, parallelism, vLLM version."""

from __future__ import annotations

import html

import gradio as gr

from wizard import suggest
from wizard.ui import services
from wizard.ui.core import WizardUI
from wizard.ui.state import gpu_count_problem

__all__ = ["build", "wire", "facts_md", "gib", "detected_md"]

GIB = 1024**3
PATHS = ("gpu.name", "gpu.count", "tensor_parallel_size", "pipeline_parallel_size", "vllm_version")


def gib(n_bytes: float) -> str:
    """Bytes as GiB with one decimal: the one memory unit of the hardware step (dropdown and table)."""
    return f"{n_bytes / GIB:.1f} GiB"


def _catalog_choices() -> list:
    out = [("unknown (hardware checks skipped)", "unknown")]
    for h in services.hardware_catalog():
        cc = f"SM {h.compute_capability[0]}.{h.compute_capability[1]}" if h.compute_capability else h.vendor
        out.append((f"{h.name} — {gib(h.memory_bytes)}, {cc}", h.name))
    return out


def detected_md() -> str:
    gpus = services.detected_gpus()
    if not gpus:
        return "**Detected GPUs:** none on this machine (no NVIDIA driver/GPU). Choose the hardware to plan for below."
    rows = []
    for g in gpus:
        mem = getattr(g, "memory_total_bytes", None)
        cc = getattr(g, "compute_capability", None)
        rows.append(f"| {html.escape(str(g.name))} | {gib(mem) if mem else '?'} | {'.'.join(map(str, cc)) if cc else '?'} |")
    return "**Detected GPUs**\n\n| GPU | memory | compute capability |\n|---|---|---|\n" + "\n".join(rows)


def build(ui: WizardUI) -> None:
    ui.c["hw_detected"] = gr.Markdown(detected_md())
    with gr.Row():
        ui.field("gpu.name", gr.Dropdown(_catalog_choices(), value="unknown", label="GPU (catalog)", elem_id="f-gpu-name",
                                         allow_custom_value=True, scale=3, min_width=240,
                                         info="What the deployment runs on; drives memory, KV dtypes and backends."),
                 to_form=lambda v: v or "unknown", source="gpu")
        # no minimum/precision here: Gradio would reject or round what was typed; the step
        # validates the count itself (whole number >= 1) and says so instead
        ui.field("gpu.count", gr.Number(1, label="GPU count", elem_id="f-gpu-count", scale=1, min_width=120,
                                        info="whole number ≥ 1"),
                 to_form=lambda v: int(v or 1), source="gpu")
    with gr.Row():
        ui.field("tensor_parallel_size", gr.Textbox(label="tensor_parallel_size", placeholder="1 (default)", min_width=180,
                                                    elem_id="f-tensor_parallel_size"))
        ui.field("pipeline_parallel_size", gr.Textbox(label="pipeline_parallel_size", placeholder="1 (default)",
                                                      min_width=180, elem_id="f-pipeline_parallel_size"))
        known, default = services.versions()
        ui.field("vllm_version", gr.Dropdown(known, value=default, label="vLLM version to check against",
                                             elem_id="f-vllm_version", allow_custom_value=True, min_width=200,
                                             info=f"releases the rules know: {', '.join(known)}"),
                 source="setting")
    ui.c["hw_facts"] = gr.Markdown(elem_id="sw-hw-facts")
    ui.react("hardware", PATHS, [ui.c["hw_facts"]], lambda ui_, st, ev: {ui_.c["hw_facts"]: facts_md(st, ev)})


def facts_md(state: dict, ev) -> str:
    """The chosen hardware: memory, compute capability, and the KV-cache dtypes the selected vLLM
    release has an attention backend for on it (:func:`wizard.suggest.kv_dtypes`)."""
    problem = gpu_count_problem(state)
    h = ev.hardware
    if ev.hardware_error:
        md = f"**Hardware checks are skipped:** {html.escape(ev.hardware_error.splitlines()[0][:300])}"
    elif h is None:
        md = ("**Hardware unknown: hardware checks are skipped** (memory fit, KV-cache dtypes, attention backends, "
              "compute capability). Choose a GPU above to turn them on.")
    else:
        version, _ = services.version_of(state)
        cc = ".".join(map(str, h.compute_capability)) if h.compute_capability else "—"
        kv = [c for c in suggest.kv_dtypes(version, h) if c.usable]
        kv_txt = ", ".join(f"{c.dtype}" for c in kv) or "—"
        md = ("| GPU | memory / device | compute capability | count | bf16 |\n|---|---|---|---|---|\n"
              f"| {h.name} | {gib(h.memory_bytes)} | {cc} | {h.count} | {'yes' if h.supports_bf16 else 'no'} |\n\n"
              f"KV-cache dtypes with an attention backend on {h.name} in vLLM {version} (128-dim heads): {kv_txt}"
              + (f"\n\n_source: {h.source}_" if h.source else ""))
    if problem:
        md = f"**⚠ {problem}**\n\n" + md
    if ev.version_error:
        md = f"**⚠ {html.escape(ev.version_error)}**\n\n" + md
    return md


def wire(ui: WizardUI) -> None:
    for path in PATHS:
        ui.bind(path)
