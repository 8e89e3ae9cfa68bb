"""Step 1 · Hardware: detected GPUs (NVML) or a catalog entry, count, parallelism, vLLM version."""

from __future__ import annotations

import html

import gradio as gr

from wizard.ui import services

GIB = 1024**3


def gib(n_bytes: float) -> str:
    """Bytes as GiB with one decimal: the one memory unit of the hardware step (dropdown and table)."""
    return f"{n_bytes / GIB:.1f} GiB"


def _catalog_choices() -> tuple[list, str | None]:
    try:
        hw = services.hardware_catalog()
    except services.Unavailable as err:
        return [("unknown (hardware rules stay quiet)", "unknown")], str(err)
    out = [("unknown (hardware rules stay quiet)", "unknown")]
    for h in hw:
        cc = f"SM {h.compute_capability[0]}.{h.compute_capability[1]}" if getattr(h, "compute_capability", None) else h.vendor
        out.append((f"{h.name} — {gib(h.memory_bytes)}, {cc}", h.name))
    return out, None


def _detected_md() -> str:
    try:
        gpus = services.detected_gpus()
    except services.Unavailable as err:
        return f"**Detected GPUs:** GPU discovery {html.escape(str(err))}."
    if not gpus:
        return "**Detected GPUs:** none on this machine (no NVIDIA driver/GPU). Choose the target hardware below."
    rows = []
    for g in gpus:
        name = getattr(g, "name", g)
        mem = getattr(g, "memory_total_bytes", None) or getattr(g, "memory_bytes", None)
        cc = getattr(g, "compute_capability", None)
        rows.append(f"| {name} | {gib(mem) if mem else '?'} | {'.'.join(map(str, cc)) if cc else '?'} |")
    return "**Detected GPUs**\n\n| GPU | memory | compute capability |\n|---|---|---|\n" + "\n".join(rows)


def detected_spec() -> str | None:
    """'NAMExN' of the GPUs on this machine when the catalog knows them (wizard.hardware.nvml), else None."""
    try:
        gpus = services.detected_gpus()
        if not gpus:
            return None
        from wizard.hardware.nvml import match_catalog_name

        name = match_catalog_name(gpus[0].name)
        return f"{name}x{len(gpus)}" if name else None
    except Exception:
        return None


def build(ui) -> None:
    choices, missing = _catalog_choices()
    ui.c["hw_detected"] = gr.Markdown(_detected_md())
    with gr.Row():
        ui.field("gpu.name", gr.Dropdown(choices, value="unknown", label="GPU (catalog)", elem_id="f-gpu-name",
                                         allow_custom_value=True, scale=3,
                                         info=missing or "What the deployment runs on; drives KV dtypes and memory."),
                 to_form=lambda v: v or "unknown", source="gpu")
        # no minimum/precision here: Gradio would reject or round what was typed; the step
        # validates the count itself (whole number >= 1) and says so instead
        ui.field("gpu.count", gr.Number(1, label="GPU count", elem_id="f-gpu-count", scale=1,
                                        info="whole number ≥ 1"),
                 to_form=lambda v: int(v or 1), source="gpu")
    with gr.Row():
        ui.field("tensor_parallel_size", gr.Textbox(label="tensor_parallel_size", placeholder="1 (default)",
                                                    elem_id="f-tensor_parallel_size"))
        ui.field("pipeline_parallel_size", gr.Textbox(label="pipeline_parallel_size", placeholder="1 (default)",
                                                      elem_id="f-pipeline_parallel_size"))
        known, default = services.versions()
        ui.field("vllm_version", gr.Dropdown(known, value=default, label="vLLM version to check against",
                                             elem_id="f-vllm_version", allow_custom_value=True), source="setting")
    ui.c["hw_facts"] = gr.Markdown(elem_id="sw-hw-facts")


def update(ui, state, ev, full: bool, changed: str | None) -> dict:
    if not full and not (changed or "").startswith("gpu"):
        return {}
    from wizard.ui.state import gpu_count_problem

    problem = gpu_count_problem(state)
    h = ev.hardware
    if h is None:
        md = "_Hardware unknown: rules that depend on GPU memory or compute capability stay quiet._"
    else:
        cc = ".".join(map(str, h.compute_capability)) if h.compute_capability else "—"
        kv = ", ".join(h.kv_cache_dtypes) or "—"
        md = (
            "| GPU | memory / device | compute capability | count | bf16 | fp8 KV | KV dtypes |\n|---|---|---|---|---|---|---|\n"
            f"| {h.name} | {gib(h.memory_bytes)} | {cc} | {h.count} | {'yes' if h.supports_bf16 else 'no'} | "
            f"{'yes' if h.fp8_kv else 'no'} | {kv} |"
            + (f"\n\n_source: {h.source}_" if h.source else "")
        )
    if problem:
        md = f"**⚠ {problem}**\n\n" + md
    return {ui.c["hw_facts"]: md}
