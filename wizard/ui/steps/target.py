"""Step 2 · Target model: a catalog entry, a Hub id or a local folder, and its inspected facts.

The Catalog list holds catalog ids only: free text typed there does not become the model;
the step offers the closest catalog ids instead (a Hub id or folder goes in the model box).
"""

from __future__ import annotations

import html

import gradio as gr

from wizard import suggest
from wizard.engine.mtp import mtp_layers, mtp_rewrite
from wizard.plan.kv import describe_layers
from wizard.ui import findings as fp
from wizard.ui import services
from wizard.ui.core import CHANGE_NOTE, WizardUI, sess_of
from wizard.ui.steps import speculation
from wizard.ui.state import set_field

__all__ = ["build", "wire", "facts_md", "catalog_note", "speculators_md"]

GIB = 1024**3
FACT_PATHS = ("model", "allow_hub", "revision")


def build(ui: WizardUI) -> None:
    c = ui.c
    try:
        ids, info = services.catalog_models("target"), "Known models resolve offline, without the Hub."
    except Exception as err:  # a broken catalog file: the box below still works
        ids, info = [], f"catalog unavailable: {err}"
    c["target_catalog"] = gr.Dropdown(ids, value=None, label="Catalog model (offline)", elem_id="sw-target-catalog",
                                      info=info, allow_custom_value=True)
    c["catalog_note"] = gr.Markdown(elem_id="sw-catalog-note")
    ui.field("model", gr.Textbox(label="Target model: Hugging Face id or local folder",
                                 placeholder="meta-llama/Llama-3.1-8B-Instruct or /models/my-llama", elem_id="f-model"),
             after=lambda new, old: speculation.on_target_changed(ui, new, old))
    with gr.Row():
        ui.field("allow_hub", gr.Checkbox(False, label="Look up models on the Hugging Face Hub (metadata only)",
                                          elem_id="f-allow_hub", min_width=220), to_form=bool, source="setting")
        ui.field("max_model_len", gr.Textbox(label="max_model_len (tokens)", placeholder="model's maximum",
                                             elem_id="f-max_model_len", min_width=170))
    with gr.Row():
        ui.field("dtype", gr.Dropdown(["(default)", "auto", "bfloat16", "float16", "float32"], value="(default)",
                                      label="dtype", allow_custom_value=True, elem_id="f-dtype", min_width=170),
                 to_form=lambda v: v or "(default)")
        ui.field("quantization", gr.Textbox(label="quantization", placeholder="from the checkpoint",
                                            elem_id="f-quantization", min_width=170))
    c["target_facts"] = gr.Markdown(elem_id="sw-target-facts")
    ui.react("target", FACT_PATHS, [c["target_facts"]], _facts)


def _facts(ui: WizardUI, state: dict, ev) -> dict:
    if ev.ctx is None:
        return {ui.c["target_facts"]: facts_md(None, None)}
    err = ev.ctx.lookup_errors.get("model")
    md = facts_md(ev.ctx.target, err, ev.ctx.version)
    both = speculators_md(ev.ctx)
    if both:
        return {ui.c["target_facts"]: both}
    if err and ev.ctx.target is None:
        close = suggest.closest_catalog_ids(ev.config.model)
        if close:
            md += "\n\nClosest catalog ids: " + ", ".join(fp.md_code(i) for i in close) + \
                  " (pick one in the Catalog list above)."
    return {ui.c["target_facts"]: md}


def _mtp(info, version) -> str | int:
    """The MTP layer count vLLM's hf_config_override reads (:func:`wizard.engine.mtp.mtp_layers`),
    else the config's own; "unknown" for an MTP-capable config that does not give it (Qwen3-Next
    without num_nextn_predict_layers), "none" for a model without MTP layers."""
    n = mtp_layers(info, version) if version is not None else None
    n = n if n is not None else info.mtp_layers
    if n:
        return n
    rw = mtp_rewrite(info)
    if rw is not None and rw[1] is None:
        return f"unknown (config.json does not say; vLLM runs MTP as {rw[0]})"
    return "none"


def facts_md(info, err: str | None, version=None) -> str:
    """The target's facts as a Markdown table (or why it could not be inspected). ``version``:
    the vLLM release whose tables name a hybrid's recurrent layers (default: the wizard's)."""
    if info is None:
        return f"**Could not inspect the model:** {fp.face_text(err)}" if err else "_Choose a target model to see its facts._"
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
        ("attention", describe_layers(info, version)),
        ("MTP layers", _mtp(info, version)),
        ("KV sharing", kv_share),
        ("quantization", quant),
    ]
    if info.speculators_config:
        rows.append(("speculators_config", "yes (a drafter in speculators format)"))
    md = "| fact | value |\n|---|---|\n" + "\n".join(f"| {k} | {'?' if v is None else v} |" for k, v in rows)
    if info.notes:
        md += "\n\n" + "\n".join(f"- {n}" for n in info.notes)
    return md


def speculators_md(ctx) -> str:
    """Both models when the model box holds a speculators checkpoint (issue #25 item 1), else "".

    vLLM's ``maybe_override_with_speculators`` (vllm/transformers_utils/config.py) serves the
    checkpoint's ``speculators_config.verifier.name_or_path`` as the target and the checkpoint itself as
    ``speculative_config.model`` (:mod:`wizard.engine.speculators`); the step shows the verifier's facts
    (the model that is served) and the drafter's, each under its own heading. A rewrite vLLM refuses
    (``rw.error``) is left to the findings and the plain facts table."""
    rw = getattr(ctx, "speculators", None)
    if rw is None or not getattr(rw, "ok", False):
        return ""
    method = rw.method or "?"
    if rw.parallel_drafting:
        method += " + parallel drafting"
    head = (f"{fp.md_code(rw.speculator)} is a **speculators checkpoint**: vLLM serves its verifier "
            f"{fp.md_code(rw.verifier)} as the target and uses the checkpoint as the drafter "
            f"(method {html.escape(method)}, k = {rw.k if rw.k is not None else '?'}).")
    verr = ctx.lookup_errors.get("model")
    version = getattr(ctx, "version", None)
    return (head + "\n\n**Target (verifier)**\n\n" + facts_md(ctx.target, verr, version) +
            "\n\n**Drafter (the checkpoint)**\n\n" + facts_md(ctx.drafter, None, version))


def catalog_note(value: str, ids: list[str]) -> str:
    """What to say when ``value`` typed in the Catalog list is no catalog id."""
    close = suggest.closest_catalog_ids(value)
    head = f"{fp.md_code(value[:120])} is not a catalog id, so the model was not changed."
    if close:
        return head + " Closest: " + ", ".join(fp.md_code(i) for i in close) + \
               ". Pick one from the list, or type a Hub id or a local folder in the model box below."
    return head + f" The list holds {len(ids)} ids; a Hub id or a local folder goes in the model box below."


def wire(ui: WizardUI) -> None:
    c = ui.c
    for path in ("model", "allow_hub", "max_model_len", "dtype", "quantization"):
        ui.bind(path)
    model_c = ui.fields["model"]
    rs = ui.reactors_for(["model"])
    outs = ui.unique([c["state"], c["panel"], model_c, c["catalog_note"], *[o for r in rs for o in r.outputs],
                      *ui.fields.values()])  # the fields a target change rewrites (ui.rewritten)

    def pick_catalog(state, value, request: gr.Request = None):
        value = str(value or "").strip()
        if not value:  # cleared: nothing to do
            return {c["catalog_note"]: ""}
        ids = services.catalog_models("target")
        if value not in ids:
            return {c["catalog_note"]: catalog_note(value, ids)}
        sess = sess_of(request)
        holder: dict = {}

        def pick(b: dict) -> dict:
            new = speculation.on_target_changed(ui, set_field(b, "model", value), b)
            holder["note"] = new.pop(CHANGE_NOTE, None)
            return new

        base = ui.base(sess, state)
        st = ui.update_field(sess, state, pick)
        out = ui.render(sess, st, rs, note=holder.get("note"))
        out[model_c] = value
        out.update(ui.rewritten(base, out[c["state"]], out))
        out[c["catalog_note"]] = ""
        return out

    ui.on(c["target_catalog"].input, pick_catalog, [c["state"], c["target_catalog"]], outs, trigger_mode="always_last")
