"""Step 2 · Target model: a Hub id, a local folder or a catalog entry, and its inspected facts."""

from __future__ import annotations

import gradio as gr

from wizard.ui import services

GIB = 1024**3


def _catalog():
    try:
        return services.catalog_models("target"), None
    except services.Unavailable as err:
        return [], str(err)


def build(ui) -> None:
    ids, missing = _catalog()
    ui.c["target_catalog"] = gr.Dropdown(ids, value=None, label="Catalog model (offline)", elem_id="sw-target-catalog",
                                         info=f"catalog {missing}" if missing else "Known models resolve without the Hub.",
                                         allow_custom_value=True)
    ui.field("model", gr.Textbox(label="Target model: Hugging Face id or local folder",
                                 placeholder="meta-llama/Llama-3.1-8B-Instruct or /models/my-llama",
                                 elem_id="f-model"))
    with gr.Row():
        ui.field("allow_hub", gr.Checkbox(False, label="Look up models on the Hugging Face Hub (metadata only)",
                                          elem_id="f-allow_hub"), to_form=bool, source="setting")
        ui.field("max_model_len", gr.Textbox(label="max_model_len (tokens)", placeholder="model's maximum",
                                             elem_id="f-max_model_len"))
        ui.field("dtype", gr.Dropdown(["(default)", "auto", "bfloat16", "float16", "float32"], value="(default)",
                                      label="dtype", allow_custom_value=True, elem_id="f-dtype"),
                 to_form=lambda v: v or "(default)")
        ui.field("quantization", gr.Textbox(label="quantization", placeholder="from the checkpoint",
                                            elem_id="f-quantization"))
    ui.c["target_facts"] = gr.Markdown(elem_id="sw-target-facts")


def facts_md(info, err: str | None) -> str:
    if info is None:
        return f"**Could not inspect the model:** {err}" if err else "_Choose a target model to see its facts._"
    size = []
    if info.param_count:
        size.append(f"{info.param_count / 1e9:.2f} B params" if info.param_count >= 1e8 else f"{info.param_count:,} params")
    if info.weight_bytes:
        size.append(f"{info.weight_bytes / GIB:.2f} GiB weights")
    kv_share = f"{info.num_kv_shared_layers} layers share KV" if info.num_kv_shared_layers else "no"
    quant = info.quant_method or "none"
    if info.kv_cache_quant:
        quant += f" (KV forced to {info.kv_cache_quant})"
    rows = [
        ("architecture", ", ".join(info.architectures) or info.model_type or "?"),
        ("source", f"{info.source}" + (f" — `{info.path}`" if info.path else "")),
        ("size", ", ".join(size) or "?"),
        ("layers", info.num_hidden_layers),
        ("attention heads / KV heads", f"{info.num_attention_heads} / {info.num_key_value_heads}"),
        ("head_dim", info.head_dim),
        ("hidden_size", info.hidden_size),
        ("vocab", info.vocab_size),
        ("max positions", info.max_position_embeddings),
        ("dtype", info.torch_dtype),
        ("attention", "MLA" if info.use_mla else (f"sliding window {info.sliding_window}" if info.sliding_window else "full")),
        ("MTP layers", info.mtp_layers if info.mtp_layers else "none"),
        ("KV sharing", kv_share),
        ("quantization", quant),
    ]
    if info.speculators_config:
        rows.append(("speculators_config", "yes (a drafter in speculators format)"))
    md = "| fact | value |\n|---|---|\n" + "\n".join(f"| {k} | {'?' if v is None else v} |" for k, v in rows)
    if info.notes:
        md += "\n\n" + "\n".join(f"- {n}" for n in info.notes)
    return md


def update(ui, state, ev, full: bool, changed: str | None) -> dict:
    if ev.ctx is None:
        return {ui.c["target_facts"]: facts_md(None, None)}
    if not full and changed not in ("model", "allow_hub", "revision", None):
        return {}
    return {ui.c["target_facts"]: facts_md(ev.ctx.target, ev.ctx.lookup_errors.get("model"))}
