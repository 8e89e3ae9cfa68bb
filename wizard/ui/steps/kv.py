"""Step 4 · KV cache: target and drafter kv_cache_dtype (inherit or explicit), memory knobs."""

from __future__ import annotations

import gradio as gr


def kv_choices(ev, version) -> list[str]:
    """KV dtypes vLLM ``version`` accepts, narrowed to what the hardware's backends support."""
    from wizard.vllm.versions import kv_cache_dtypes

    allowed = list(kv_cache_dtypes(version))
    hw = ev.hardware if ev is not None else None
    if hw is not None and hw.kv_cache_dtypes:
        narrowed = [d for d in allowed if d == "auto" or d in hw.kv_cache_dtypes]
        if narrowed:
            return narrowed
    return allowed


def build(ui) -> None:
    with gr.Row():
        ui.field("kv_cache_dtype", gr.Dropdown(["auto"], value="auto", label="Target kv_cache_dtype",
                                               allow_custom_value=True, elem_id="f-kv_cache_dtype"),
                 to_form=lambda v: v or "auto")
        ui.field("speculative_config.kv_cache_dtype", gr.Dropdown(["inherit"], value="inherit",
                                                                  label="Drafter kv_cache_dtype",
                                                                  allow_custom_value=True,
                                                                  elem_id="f-speculative_config-kv_cache_dtype"),
                 to_form=lambda v: v or "inherit")
    ui.c["kv_md"] = gr.Markdown(elem_id="sw-kv-md")
    with gr.Row():
        ui.field("kv_sharing_fast_prefill", gr.Checkbox(False, label="kv_sharing_fast_prefill",
                                                        elem_id="f-kv_sharing_fast_prefill"), to_form=bool)
        ui.field("enable_prefix_caching", gr.Dropdown(["(default)", "true", "false"], value="(default)",
                                                      label="enable_prefix_caching", elem_id="f-enable_prefix_caching"),
                 to_form=lambda v: "(default)" if v is None else str(v).lower())
        ui.field("enforce_eager", gr.Checkbox(False, label="enforce_eager", elem_id="f-enforce_eager"), to_form=bool)
    with gr.Row():
        ui.field("gpu_memory_utilization", gr.Textbox(label="gpu_memory_utilization (0-1]", placeholder="0.9",
                                                      elem_id="f-gpu_memory_utilization"))
        ui.field("max_num_seqs", gr.Textbox(label="max_num_seqs", placeholder="vLLM default", elem_id="f-max_num_seqs"))
        ui.field("max_num_batched_tokens", gr.Textbox(label="max_num_batched_tokens", placeholder="vLLM default",
                                                      elem_id="f-max_num_batched_tokens"))
        ui.field("block_size", gr.Textbox(label="block_size (tokens)", placeholder="vLLM default", elem_id="f-block_size"))


def update(ui, state, ev, full: bool, changed: str | None) -> dict:
    from wizard.vllm.versions import default_version, parse_version

    out: dict = {}
    try:
        version = parse_version(state.get("vllm_version")) if state.get("vllm_version") else default_version()
    except ValueError:
        version = default_version()
    if full or changed in ("gpu.name", "gpu.count", "vllm_version", None):
        choices = kv_choices(ev, version)
        cfg = state.get("config") or {}
        cur = cfg.get("kv_cache_dtype") or "auto"
        dcur = (cfg.get("speculative_config") or {}).get("kv_cache_dtype") or "inherit"
        out[ui.fields["kv_cache_dtype"]] = gr.Dropdown(choices=choices + ([cur] if cur not in choices else []), value=cur)
        dch = ["inherit"] + choices
        out[ui.fields["speculative_config.kv_cache_dtype"]] = gr.Dropdown(
            choices=dch + ([dcur] if dcur not in dch else []), value=dcur)
    relevant = full or changed in (None, "model", "kv_cache_dtype", "speculative_config.kv_cache_dtype",
                                   "speculative_config.method", "speculative_config.model", "gpu.name", "gpu.count")
    if ev.ctx is not None and relevant:
        try:
            t, d = ev.ctx.target_kv_dtype(), ev.ctx.drafter_kv_dtype() if ev.ctx.spec is not None else None
            md = f"Effective KV dtype (as vLLM resolves it): target **{t}**" + (f", drafter **{d}**" if d else "")
        except Exception as err:  # derive needs facts it may not have
            md = f"Effective KV dtype unknown: {err}"
        if ev.hardware is None:
            md += "  \n_Hardware unknown: every dtype vLLM knows is listed; choose a GPU in step 1 to narrow them._"
        out[ui.c["kv_md"]] = md
    return out
