"""Step 4 · KV cache: target and drafter kv_cache_dtype, memory knobs, and which attention
backend vLLM selects for each (why a KV-dtype check did not fire, or why it did).

The dtype lists are every ``CacheDType`` of the release that has an attention backend for the
model on the chosen hardware (:func:`wizard.suggest.kv_dtypes`, from the attention-backend
mechanism); a value typed by hand stays selectable and the rules judge it.
"""

from __future__ import annotations

import html

import gradio as gr

from wizard import suggest
from wizard.ui import services
from wizard.ui.core import WizardUI
from wizard.vllm.methods import uses_draft_kv_cache

__all__ = ["build", "wire", "kv_choices", "backends_md", "kv_md", "model_dtypes_md"]

SPEC = "speculative_config."
CHOICE_PATHS = ("gpu.", "vllm_version", "model", "allow_hub", "dtype", "tensor_parallel_size", SPEC + "method", SPEC + "model")
NOTE_PATHS = CHOICE_PATHS + ("kv_cache_dtype", SPEC + "kv_cache_dtype", SPEC + "attention_backend")
FIELDS = ("kv_cache_dtype", SPEC + "kv_cache_dtype", "kv_sharing_fast_prefill", "enable_prefix_caching", "enforce_eager",
          "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "block_size")


def kv_choices(ev, version, role: str = "target") -> list[str]:
    """KV dtypes vLLM ``version`` accepts that have an attention backend for the target (or the
    drafter) on the hardware and that the check does not refuse in this configuration
    (:func:`wizard.suggest.checked_kv_dtypes`); every one of them when the hardware is unknown."""
    ctx = ev.ctx if ev is not None else None
    if ctx is not None:
        return suggest.iter_usable(suggest.checked_kv_dtypes(ctx, role))
    return suggest.iter_usable(suggest.kv_dtypes(version, ev.hardware if ev is not None else None))


def build(ui: WizardUI) -> None:
    c = ui.c
    with gr.Row():
        ui.field("kv_cache_dtype", gr.Dropdown(["auto"], value="auto", label="Target kv_cache_dtype", min_width=200,
                                               allow_custom_value=True, elem_id="f-kv_cache_dtype"),
                 to_form=lambda v: v or "auto")
        ui.field(SPEC + "kv_cache_dtype", gr.Dropdown(["inherit"], value="inherit", label="Drafter kv_cache_dtype",
                                                      allow_custom_value=True, min_width=200,
                                                      elem_id="f-speculative_config-kv_cache_dtype"),
                 to_form=lambda v: v or "inherit")
    c["kv_md"] = gr.Markdown(elem_id="sw-kv-md")
    with gr.Row():
        ui.field("kv_sharing_fast_prefill", gr.Checkbox(False, label="kv_sharing_fast_prefill", min_width=200,
                                                        elem_id="f-kv_sharing_fast_prefill"), to_form=bool)
        ui.field("enable_prefix_caching", gr.Dropdown(["(default)", "true", "false"], value="(default)", min_width=180,
                                                      label="enable_prefix_caching", elem_id="f-enable_prefix_caching"),
                 to_form=lambda v: "(default)" if v is None else str(v).lower())
        ui.field("enforce_eager", gr.Checkbox(False, label="enforce_eager", elem_id="f-enforce_eager", min_width=150),
                 to_form=bool)
    with gr.Row():
        ui.field("gpu_memory_utilization", gr.Textbox(label="gpu_memory_utilization (0-1]", placeholder="vLLM default",
                                                      min_width=220, elem_id="f-gpu_memory_utilization"))
        ui.field("max_num_seqs", gr.Textbox(label="max_num_seqs", placeholder="vLLM default", min_width=150,
                                            elem_id="f-max_num_seqs"))
    with gr.Row():
        ui.field("max_num_batched_tokens", gr.Textbox(label="max_num_batched_tokens", placeholder="vLLM default",
                                                      min_width=220, elem_id="f-max_num_batched_tokens"))
        ui.field("block_size", gr.Textbox(label="block_size (tokens)", placeholder="vLLM default", min_width=150,
                                          elem_id="f-block_size"))
    f = ui.fields
    ui.react("kv", CHOICE_PATHS, [f["kv_cache_dtype"], f[SPEC + "kv_cache_dtype"]], _choices)
    ui.react("kv", NOTE_PATHS, [c["kv_md"]], lambda ui_, st, ev: {ui_.c["kv_md"]: kv_md(ev)})


def _choices(ui: WizardUI, state: dict, ev) -> dict:
    version, _ = services.version_of(state)
    cfg = state.get("config") or {}
    cur = cfg.get("kv_cache_dtype") or "auto"
    spec = cfg.get("speculative_config") if isinstance(cfg.get("speculative_config"), dict) else {}
    dcur = spec.get("kv_cache_dtype") or "inherit"
    choices = kv_choices(ev, version)
    dch = ["inherit"] + kv_choices(ev, version, role="drafter")
    cur, dcur = str(cur), str(dcur)
    return {ui.fields["kv_cache_dtype"]: gr.Dropdown(choices=choices + ([cur] if cur not in choices else []), value=cur),
            ui.fields[SPEC + "kv_cache_dtype"]: gr.Dropdown(choices=dch + ([dcur] if dcur not in dch else []), value=dcur)}


def backends_md(ev) -> str:
    """Which attention backend vLLM selects for the target and the drafter with their KV dtypes
    (:func:`wizard.suggest.backends`): the reason a KV-dtype finding fired, or did not."""
    if ev is None or ev.ctx is None:
        return ""
    if ev.hardware is None:
        return ("_Attention backends: not checked (hardware unknown). Choose a GPU in step 1 to see which backend "
                "vLLM selects for each KV dtype._")
    lines = []
    for b in suggest.backends(ev.ctx):
        who = "Target" if b.role == "target" else "Drafter"
        facts = ", ".join(f"{k}={v}" for k, v in b.layout.items() if k not in ("kv_cache_dtype",))
        if b.backend:
            lines.append(f"- {who}: KV **{html.escape(b.kv_cache_dtype)}** → backend **{html.escape(b.backend)}** "
                         f"on {html.escape(ev.hardware.name)} in vLLM {html.escape(str(ev.ctx.version))}"
                         + (f" (layout: {html.escape(facts)})" if facts else "")
                         + ("" if b.certain else " — not certain: some facts unknown"))
            for name, why in list(b.rejected.items())[:3]:
                lines.append(f"  - tried {html.escape(name)} first: {html.escape(why)}")
        else:
            lines.append(f"- {who}: KV **{html.escape(b.kv_cache_dtype)}** → **no backend**: {html.escape(b.error or '?')}")
        for n in b.notes:
            lines.append(f"  - {html.escape(n)}")
    return "**Attention backends** (why a KV-dtype check fired, or did not):\n" + "\n".join(lines) if lines else ""


def model_dtypes_md(ctx) -> str:
    """The dtype the target and the draft model run in, from the core (``ctx.view.model_dtype``,
    ``ctx.view.drafter_dtype``: vLLM builds the draft model with the target's dtype)."""
    v = ctx.view
    t = v.model_dtype or "unknown (the target's checkpoint is not known)"
    md = f"Model dtype: target **{html.escape(t)}**"
    if ctx.spec is not None and v.drafter_dtype:
        own = v.drafter.torch_dtype if v.drafter is not None and v.drafter is not ctx.target else None
        md += (f", drafter **{html.escape(v.drafter_dtype)}** (vLLM builds the draft model with the target's dtype"
               + (f"; its checkpoint's own {html.escape(str(own))} is not used" if own and str(own) != v.drafter_dtype else "")
               + ")")
    return md


def kv_md(ev) -> str:
    if ev is None or ev.ctx is None:
        return "_Choose a target model to see the effective KV dtypes._"
    ctx = ev.ctx
    try:
        t = ctx.target_kv_dtype()
        d = ctx.drafter_kv_dtype() if ctx.spec is not None and uses_draft_kv_cache(ctx.method) else None
        md = f"Effective KV dtype (as vLLM resolves it): target **{t}**" + (f", drafter **{d}**" if d else "")
    except Exception as err:  # derive needs facts it may not have
        md = f"Effective KV dtype unknown: {html.escape(str(err))}"
    md += "  \n" + model_dtypes_md(ctx)
    if ev.hardware is None:
        md += "  \n_Hardware unknown: every dtype vLLM knows is listed; choose a GPU in step 1 to narrow them._"
    b = backends_md(ev)
    return md + ("\n\n" + b if b else "")


def wire(ui: WizardUI) -> None:
    for path in FIELDS:
        ui.bind(path)
